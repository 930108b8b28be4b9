"""Level 1H: free-space managers (FSHD header, FSSE section list) and the File Space Info
message that names the file's persistent ones.

Spec: "III.H. Disk Format: Level 1H - Free-space Manager" and "IV.A.2.x The File Space Info
Message". A reader needs no free space: these are decoded to verify them (checksums, the
section list's back pointer) where a file declares them, so that damage there is reported as
damage anywhere else is, and for ``purehep inspect``.
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


@dataclass(frozen=True)
class FileSpaceInfo:
    """The File Space Info message (type 0x17, superblock extension only)."""
    version: int
    strategy: int
    persist: bool
    threshold: int
    page_size: int | None
    manager_addresses: tuple       # the persistent managers' headers (undefined ones left out)


PAGE_STRATEGY = 1       # H5F_FSPACE_STRATEGY_PAGE (File Space Info version 1)


def paged_aggregation(ctx, extension_address):
    """The file space page size of a file whose superblock extension (at
    ``extension_address``, None: none) says it uses paged aggregation, else 0: its
    metadata and raw data then each lie in pages of their own (libhdf5's page buffer relies
    on it)."""
    if extension_address is None:
        return 0
    from .object_header import ObjectHeader
    from .context import Cursor
    raw = ObjectHeader.decode(ctx, extension_address).first(0x17)
    if raw is None:
        return 0
    info = decode_file_space_info(Cursor(raw.data, raw.offset, "file space info message", ctx))
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
        addrs = [cur.address() for _ in range(6)] if strategy == 1 else []
        return FileSpaceInfo(version, strategy, strategy == 1, threshold, None,
                             tuple(a for a in addrs if a is not None))
    persist = bool(cur.u8())
    threshold = cur.length()
    page_size = cur.length()
    cur.u16()                      # page end metadata threshold
    cur.address()                  # end of allocated space before the managers were
    addrs = [cur.address() for _ in range(12)] if persist else []
    return FileSpaceInfo(version, strategy, persist, threshold, page_size,
                         tuple(a for a in addrs if a is not None))
