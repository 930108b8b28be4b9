"""Level 1H: free-space managers (FSHD header, FSSE section list) and the File Space Info
message that names the file's persistent ones.

Spec: "III.H. Disk Format: Level 1H - Free-space Manager" and "IV.A.2.x The File Space Info
Message". A reader needs no free space: these are decoded to verify them (checksums, the
section list's back pointer) where a file declares them, so that damage there is reported as
damage anywhere else is, and for ``purehep inspect``. The File Space Info message is also
encoded, for the files purehep creates with libhdf5's file space options (purehep.write.newfile).
"""
from dataclasses import dataclass

from . import checksum

CLIENT_FRACTAL_HEAP, CLIENT_FILE = 0, 1


@dataclass(frozen=True)
class FreeSpaceManager:
    """A free-space manager header (spec III.H "Free-space Manager Header")."""
    address: int
    version: int
    client: int
    total_space: int
    sections: int
    serialized_sections: int
    unserialized_sections: int
    section_classes: int
    shrink_percent: int
    expand_percent: int
    address_space_bits: int
    max_section_size: int
    section_list_address: int | None
    section_list_used: int
    section_list_allocated: int

    @staticmethod
    def size(ctx):
        return 18 + 7 * ctx.sizeof_lengths + ctx.sizeof_offsets

    @classmethod
    def decode(cls, ctx, addr):
        structure = "free-space manager header"
        cur = ctx.cursor(addr, cls.size(ctx), structure)
        cur.signature(b"FSHD")
        version = cur.version((0,))
        checksum.verify(ctx, cur.buf, structure, cur.base)
        client = cur.u8()
        total, nsect, nserial, nghost = cur.length(), cur.length(), cur.length(), cur.length()
        nclasses, shrink, expand, bits = cur.u16(), cur.u16(), cur.u16(), cur.u16()
        max_sect = cur.length()
        sect_addr, used, allocated = cur.address(), cur.length(), cur.length()
        if sect_addr is not None and not 4 + 1 + ctx.sizeof_offsets + 4 <= used <= allocated:
            raise cur.error(f"section list of {used} bytes used, {allocated} allocated")
        return cls(addr, version, client, total, nsect, nserial, nghost, nclasses, shrink,
                   expand, bits, max_sect, sect_addr, used, allocated)

    def section_list(self, ctx):
        """The used bytes of the serialized section list (signature, version and back pointer
        checked, checksum verified), or None when the manager has none."""
        if self.section_list_address is None:
            return None
        structure = "free-space section list"
        cur = ctx.cursor(self.section_list_address, self.section_list_used, structure)
        cur.signature(b"FSSE")
        cur.version((0,))
        checksum.verify(ctx, cur.buf, structure, cur.base)
        if cur.address() != self.address:
            raise cur.error("section list does not point back to its header")
        return cur.buf


def verify_manager(ctx, addr):
    """Decode the manager at ``addr`` and its section list: raises on damage."""
    manager = ctx.cached("fshd", addr, lambda: FreeSpaceManager.decode(ctx, addr))
    manager.section_list(ctx)
    return manager


# File space strategies (H5F_fspace_strategy_t, File Space Info version 1), and what version
# 0's strategies (libhdf5 1.10.0) map to, with whether they persist free space, as libhdf5 maps
# them when it reads a version 0 message
FSM_AGGR, PAGE_STRATEGY, AGGR, NONE = 0, 1, 2, 3
_V0_STRATEGIES = {1: (FSM_AGGR, True), 2: (FSM_AGGR, False), 3: (AGGR, False), 4: (NONE, False)}
DEFAULT_PAGE_SIZE = 4096        # H5F_FILE_SPACE_PAGE_SIZE_DEF
MANAGER_SLOTS = 12              # version 1: six small-section and six large-section managers


@dataclass(frozen=True)
class FileSpaceInfo:
    """The File Space Info message (type 0x17, superblock extension only). ``strategy`` is
    version 1's numbering (a version 0 message's is mapped, with its persistence, as libhdf5
    maps it); ``managers`` the persistent managers' header addresses by slot (None:
    undefined); ``eoa_before_managers`` libhdf5's end of allocated space before its
    self-referential managers were allocated (the end of the file when there are none)."""
    version: int
    strategy: int
    persist: bool
    threshold: int
    page_size: int | None
    managers: tuple = ()
    page_end_threshold: int = 0
    eoa_before_managers: int | None = None

    @property
    def manager_addresses(self):
        """The persistent managers' headers (undefined ones left out)."""
        return tuple(a for a in self.managers if a is not None)

    @classmethod
    def create(cls, strategy, persist, threshold, page_size, eoa):
        """The message libhdf5 writes in a new file: version 1, no manager yet."""
        return cls(1, strategy, bool(persist), threshold, page_size,
                   (None,) * MANAGER_SLOTS if persist else (), 0, eoa if persist else None)

    def encode(self, ctx):
        """The version 1 body (spec IV.A.2.x): strategy, persistence, threshold, page size,
        page end metadata threshold, end of allocated space before the managers, and the
        twelve manager addresses when free space persists."""
        if self.version != 1:
            raise ValueError(f"File Space Info version {self.version} is not written")
        out = bytes((1, self.strategy, int(self.persist)))
        out += ctx.pack_length(self.threshold) + ctx.pack_length(self.page_size)
        out += self.page_end_threshold.to_bytes(2, "little")
        out += ctx.pack_address(self.eoa_before_managers)
        if self.persist:
            slots = tuple(self.managers) + (None,) * (MANAGER_SLOTS - len(self.managers))
            out += b"".join(ctx.pack_address(a) for a in slots)
        return out


def file_space_info(ctx, extension_address):
    """The File Space Info message of the superblock extension at ``extension_address``
    (None: no extension) with its offset in the file, or (None, None) when there is none."""
    if extension_address is None:
        return None, None
    from .object_header import ObjectHeader
    from .context import Cursor
    raw = ObjectHeader.decode(ctx, extension_address).first(0x17)
    if raw is None:
        return None, None
    return decode_file_space_info(Cursor(raw.data, raw.offset, "file space info message",
                                         ctx)), raw.offset


def paged_aggregation(ctx, extension_address):
    """The file space page size of a file whose superblock extension (at
    ``extension_address``, None: none) says it uses paged aggregation, else 0: its
    metadata and raw data then each lie in pages of their own (libhdf5's page buffer relies
    on it)."""
    info = file_space_info(ctx, extension_address)[0]
    if info is None:
        return 0
    paged = info.version >= 1 and info.strategy == PAGE_STRATEGY
    return (info.page_size or 0) if paged else 0


def decode_file_space_info(cur):
    """Decode a File Space Info message body (spec IV.A.2.x). Version 0 comes in two layouts:
    libhdf5 1.10.0's (strategy, threshold and, for strategy 1, six manager addresses) and the
    spec's version 1 layout under version number 0 (pre-release 1.10 files such as
    paged_persist.h5); the body's length tells them apart."""
    version = cur.version((0, 1))
    strategy = cur.u8()
    old = 2 + cur.ctx.sizeof_lengths + (6 * cur.ctx.sizeof_offsets if strategy == 1 else 0)
    if version == 0 and cur.end in (old, old + (-old) % 8):
        threshold = cur.length()
        addrs = tuple(cur.address() for _ in range(6)) if strategy == 1 else ()
        mapped, persist = _V0_STRATEGIES.get(strategy, (strategy, False))
        return FileSpaceInfo(version, mapped, persist, threshold, None, addrs)
    persist = bool(cur.u8())
    threshold = cur.length()
    page_size = cur.length()
    page_end = cur.u16()
    eoa = cur.address()
    addrs = tuple(cur.address() for _ in range(MANAGER_SLOTS)) if persist else ()
    return FileSpaceInfo(version, strategy, persist, threshold, page_size, addrs, page_end, eoa)
