"""Level 0A: the superblock (versions 0-3), format signature search and driver info block.

Spec: "II.A. Disk Format: Level 0A - Format Signature and Superblock" and "II.B. Disk Format:
Level 0B - File Driver Info".
"""
from dataclasses import dataclass

from ..errors import FormatError, TruncatedError, UnsupportedFeatureError
from . import checksum
from .context import Context, Cursor

SIGNATURE = b"\x89HDF\r\n\x1a\n"
WRITE_ACCESS, SWMR_WRITE = 0x01, 0x04  # file consistency flags (read by libhdf5 from version 3)


@dataclass(frozen=True)
class SymbolTableEntry:
    """A symbol table entry (spec III.C): link name offset, object header address, cache."""
    name_offset: int
    header_address: int
    cache_type: int
    btree_address: int | None = None   # cache type 1
    heap_address: int | None = None    # cache type 1
    soft_link_offset: int | None = None  # cache type 2

    @classmethod
    def decode(cls, cur):
        name_offset = cur.uint(cur.ctx.sizeof_offsets)
        header = cur.address()
        cache_type = cur.u32()
        cur.skip(4)
        scratch = Cursor(cur.bytes(16), cur.offset - 16, cur.structure, cur.ctx)
        if cache_type == 1:
            return cls(name_offset, header, 1, scratch.address(), scratch.address())
        if cache_type == 2:
            return cls(name_offset, header, 2, soft_link_offset=scratch.u32())
        return cls(name_offset, header, cache_type)

    @staticmethod
    def size(ctx):
        return 2 * ctx.sizeof_offsets + 24


@dataclass(frozen=True)
class Superblock:
    offset: int                 # absolute offset of the signature
    version: int
    sizeof_offsets: int
    sizeof_lengths: int
    flags: int
    base_address: int
    eof_address: int
    root_address: int
    extension_address: int | None = None     # v2/v3
    driver_info_address: int | None = None   # v0/v1
    free_space_address: int | None = None    # v0/v1
    group_leaf_k: int = 4
    group_internal_k: int = 16
    indexed_storage_k: int = 32
    root_entry: SymbolTableEntry | None = None  # v0/v1

    @classmethod
    def find(cls, source):
        """Search the signature at 0, 512, 1024, 2048, ... and decode the superblock there."""
        offset = locate_signature(source)
        if offset is not None:
            return cls.decode(source, offset)
        raise FormatError("no HDF5 format signature found (not an HDF5 file?)", "superblock", 0)

    @classmethod
    def decode(cls, source, offset):
        head = source.read(offset, min(source.size - offset, 256), "superblock")
        cur = Cursor(head, offset, "superblock")
        cur.skip(8)
        version = cur.version((0, 1, 2, 3))
        if version >= 2:
            return cls._decode_v2(cur, source, offset, version)
        cur.skip(1)  # free-space storage version
        cur.skip(1)  # root group symbol table entry version
        cur.skip(1)
        cur.skip(1)  # shared header message format version
        so, sl = cur.u8(), cur.u8()
        cls._check_sizes(cur, so, sl)
        cur.skip(1)
        leaf_k, internal_k = cur.u16(), cur.u16()
        flags = cur.u32()
        indexed_k = 32
        if version == 1:
            indexed_k = cur.u16()
            cur.skip(2)
        cur.ctx = Context(source, so, sl)
        base, free_space, eof, driver = cur.address(), cur.address(), cur.address(), cur.address()
        root = SymbolTableEntry.decode(cur)
        if leaf_k == 0 or internal_k == 0 or indexed_k == 0:
            raise FormatError("B-tree K value of 0", "superblock", offset)
        return cls(offset, version, so, sl, flags, _base(base, offset), eof if eof is not None else 0,
                   root.header_address, None, driver, free_space, leaf_k, internal_k, indexed_k, root)

    @classmethod
    def _decode_v2(cls, cur, source, offset, version):
        so, sl = cur.u8(), cur.u8()
        cls._check_sizes(cur, so, sl)
        flags = cur.u8()
        cur.ctx = Context(source, so, sl)
        base, ext, eof, root = cur.address(), cur.address(), cur.address(), cur.address()
        end = cur.pos
        stored = cur.u32()
        computed = checksum.lookup3(cur.buf[:end])
        if stored != computed:
            from ..errors import ChecksumError
            raise ChecksumError(f"checksum mismatch (stored {stored:#010x}, computed {computed:#010x})",
                                "superblock", offset)
        if root is None:
            raise FormatError("root group object header address is undefined", "superblock", offset)
        return cls(offset, version, so, sl, flags, _base(base, offset), eof if eof is not None else 0,
                   root, ext)

    @staticmethod
    def _check_sizes(cur, so, sl):
        if so not in (2, 4, 8) or sl not in (2, 4, 8):
            raise cur.error(f"invalid size of offsets/lengths ({so}, {sl})")

    def context(self, source, **options):
        ctx = Context(source, self.sizeof_offsets, self.sizeof_lengths, self.base_address, **options)
        ctx.superblock = self
        return ctx

    def check_file(self, ctx, writing=False):
        """Refuse files that are not complete single files (truncated, family, multi), and,
        for ``writing``, files holding a metadata cache image; for reading, make ``ctx`` read
        metadata through the cache image (``format.cache_image``), as libhdf5 does: its
        dirty entries are the only current copy of their metadata. A writer would leave the
        image stale (libhdf5 loads it on the next open), so modify mode refuses such files."""
        if self.driver_info_address is not None:
            drv = DriverInfo.decode(ctx, self.driver_info_address)
            if drv.driver_id in (b"NCSAfami", b"NCSAmult"):
                raise UnsupportedFeatureError(
                    f"files of the {drv.driver_id.decode()} driver (family/multi/split file sets) "
                    "are not supported; join the members into one file first")
        if self.extension_address is not None:
            from .object_header import ObjectHeader
            ext = ObjectHeader.decode(ctx, self.extension_address)
            image = ext.first(0x18)
            if image is not None and writing:
                raise UnsupportedFeatureError(
                    "the file holds a metadata cache image (libhdf5 1.10 'cache image' "
                    "feature), which changes to the file would leave stale: run h5clear "
                    "--image first, or open it read-only")
            if image is not None:
                _read_through_cache_image(ctx, image)
            if ctx.verify_checksums:
                self._verify_extension_structures(ctx, ext)
        if self.version >= 3 and self.flags & (WRITE_ACCESS | SWMR_WRITE):
            from ..errors import PurehepWarning, warn
            warn(f"{ctx.path or 'the file'} is marked open for writing (a writer that has not "
                 "closed it, or an active SWMR writer): reading what is on disk now",
                 PurehepWarning)
        # libhdf5 compares the stored end-of-file address with the whole file's size
        if self.eof_address > ctx.source.size:
            raise TruncatedError(
                f"the superblock's end-of-file address is {self.eof_address} but the file has "
                f"{ctx.source.size} bytes (truncated file?)", "superblock", self.offset)

    @staticmethod
    def _verify_extension_structures(ctx, ext):
        """Verify what the superblock extension leads to that reading never visits: the
        shared message table with its lists or B-trees, and the persistent free-space
        managers (libhdf5 reads them when it writes); a checksum failure there is damage to
        the file as anywhere else."""
        from . import free_space, sohm
        if ext.first(sohm.SHARED_MESSAGE_TABLE) is not None:
            table = sohm.shared_message_table(ctx)
            for index in table.indexes:
                table.records(index)
        raw = ext.first(0x17)
        if raw is not None:
            info = free_space.decode_file_space_info(
                Cursor(raw.data, raw.offset, "file space info message", ctx))
            for addr in info.manager_addresses:
                free_space.verify_manager(ctx, addr)


def _read_through_cache_image(ctx, raw):
    """Replace ``ctx.source`` by the file with the cache image's entries at their addresses."""
    from . import cache_image, messages
    from ..io.source import OverlaySource
    msg = messages.decode(ctx, raw)
    entries = cache_image.decode(ctx, msg.address, msg.length)
    ctx.source = OverlaySource(ctx.source, {ctx.absolute(e.address): e.data for e in entries})


def _base(stored, sb_offset):
    """libhdf5 treats a superblock found past 0 as the base (user block before it)."""
    if stored is None or stored == 0:
        return sb_offset
    return stored


@dataclass(frozen=True)
class DriverInfo:
    """The driver information block (spec II.B)."""
    version: int
    driver_id: bytes
    info: bytes

    @classmethod
    def decode(cls, ctx, addr):
        cur = ctx.cursor(addr, 16, "driver info block")
        version = cur.version((0,))
        cur.skip(3)
        size = cur.u32()
        driver_id = bytes(cur.bytes(8))
        info = bytes(ctx.read(addr + 16, size, "driver info block"))
        return cls(version, driver_id, info)


# --- encoding ----------------------------------------------------------------------------------

def encode_symbol_table_entry(ctx, name_offset, header_address, btree_address=None,
                              heap_address=None, soft_link_offset=None):
    """A symbol table entry (spec III.C): cache type 1 when the B-tree and heap are given,
    2 for a soft link (its value's local heap offset), else 0."""
    import struct
    out = int(name_offset).to_bytes(ctx.sizeof_offsets, "little")
    out += ctx.pack_address(header_address)
    if soft_link_offset is not None:
        out += struct.pack("<I4xI12x", 2, soft_link_offset)
    elif btree_address is not None:
        scratch = ctx.pack_address(btree_address) + ctx.pack_address(heap_address)
        out += struct.pack("<I4x", 1) + scratch + bytes(16 - len(scratch))
    else:
        out += struct.pack("<I4x", 0) + bytes(16)
    return out


def superblock_size(version, ctx):
    so = ctx.sizeof_offsets
    if version >= 2:
        return 8 + 4 + 4 * so + 4
    return 8 + 16 + (4 if version == 1 else 0) + 4 * so + 2 * so + 24


def encode_superblock(ctx, version, eof_address, root_address, root_btree=None, root_heap=None,
                      base_address=0, group_leaf_k=4, group_internal_k=16, indexed_storage_k=32,
                      extension_address=None):
    """The superblock (spec II.A), versions 0-3; addresses are relative to the base address.
    Versions 0/1 carry the root group's symbol table entry (cache type 1 for a symbol-table
    root); versions 2/3 a checksum and the superblock extension's address (None: none). The
    file consistency flags are written as 0 (closed)."""
    import struct
    so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
    out = bytearray(SIGNATURE)
    if version >= 2:
        out += bytes((version, so, sl, 0))
        out += ctx.pack_address(base_address) + ctx.pack_address(extension_address)
        out += ctx.pack_address(eof_address) + ctx.pack_address(root_address)
        out += struct.pack("<I", checksum.lookup3(bytes(out)))
        return bytes(out)
    out += bytes((version, 0, 0, 0, 0, so, sl, 0))
    out += struct.pack("<HHI", group_leaf_k, group_internal_k, 0)
    if version == 1:
        out += struct.pack("<HH", indexed_storage_k, 0)
    out += ctx.pack_address(base_address) + ctx.pack_address(None)
    out += ctx.pack_address(eof_address) + ctx.pack_address(None)
    out += encode_symbol_table_entry(ctx, 0, root_address, root_btree, root_heap)
    return bytes(out)


def locate_signature(source):
    """Offset of the format signature, searched at 0, 512, 1024, 2048, … (spec II.A: the
    superblock may follow a user block of those sizes), or None."""
    offset = 0
    while offset + len(SIGNATURE) <= source.size:
        if bytes(source.read(offset, 8, "format signature")) == SIGNATURE:
            return offset
        offset = 512 if offset == 0 else offset * 2
    return None
