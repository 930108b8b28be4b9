"""Level 1I: the shared object header message table (SOHM) — SMTB, its indexes, SMLI lists.

Spec: "III.I. Disk Format: Level 1I - Shared Object Header Message Table" and "IV.A.2.p The
Shared Message Table Message" (type 0x0F, only in the superblock extension). Each index names
the message types it tracks, a fractal heap holding the shared messages, and either a list
(SMLI) or a type 7 v2 B-tree of records locating them. A shared message (version 3, kind 1)
gives the 8-byte heap ID directly, so ``get`` reads the index's heap without consulting the
list or B-tree; ``records()`` decodes those too.
"""
from dataclasses import dataclass

from ..errors import FormatError
from . import checksum
from .btree2 import RECORD_TYPES
from .context import Cursor

SIGNATURE_TABLE = b"SMTB"
SIGNATURE_LIST = b"SMLI"
SHARED_MESSAGE_TABLE = 0x0F
INDEX_LIST, INDEX_BTREE = 0, 1
MAX_INDEXES = 8            # the library allows at most 8 (H5O_SHMESG_MAX_NINDEXES)

# Message types an index may track. "Message Type Flags" has bit ``1 << type`` set for each
# (the library's H5O_SHMESG_*_FLAG: dataspace 0x0002, datatype 0x0008, fill value 0x0020,
# filter pipeline 0x0800, attribute 0x1000); the spec's table of bits 0-4 does not match the
# files the library writes (e.g. h5stat_tsohm.h5 stores 0x182a for all five types).
SHAREABLE_TYPES = (0x01, 0x03, 0x05, 0x0B, 0x0C)
TYPE_FLAGS = {t: 1 << t for t in SHAREABLE_TYPES}


@dataclass(frozen=True)
class TableMessage:
    """The Shared Message Table message: version, table address, number of indices."""
    version: int
    table_address: int | None
    nindexes: int


def decode_table_message(cur):
    """Decode a type 0x0F message body (spec IV.A.2.p)."""
    version = cur.version((0,))
    addr = cur.address()
    n = cur.u8()
    return TableMessage(version, addr, n)


@dataclass(frozen=True)
class SharedIndex:
    """One index of the master table (spec III.I fields for index #N)."""
    version: int
    index_type: int
    message_type_flags: int
    min_message_size: int
    list_cutoff: int
    btree_cutoff: int
    nmessages: int
    index_address: int | None
    heap_address: int | None

    def tracks(self, message_type):
        bit = TYPE_FLAGS.get(message_type)
        return bit is not None and bool(self.message_type_flags & bit)


def message_hash(message_type, body):
    """The hash the records store: lookup3 of the encoded message with the message type as
    initial value (the library's H5SM hashing; the spec says only "lookup3")."""
    return checksum.lookup3(bytes(body), message_type)


# a list (SMLI) holds the same records as a type 7 v2 B-tree, decoded by the same function
_RECORD = RECORD_TYPES[7]


def record_size(ctx):
    return _RECORD.size(ctx, None)


class SharedMessageTable:
    """The master table and its indexes; ``get`` reads shared messages from their heaps."""

    def __init__(self, ctx, address, indexes):
        self.ctx = ctx
        self.address = address
        self.indexes = tuple(indexes)

    def __repr__(self):
        return f"SharedMessageTable(address={self.address}, indexes={len(self.indexes)})"

    @classmethod
    def decode(cls, ctx, addr, nindexes):
        """Decode the SMTB at ``addr`` holding ``nindexes`` index headers (checksummed)."""
        structure = "shared object header message table"
        ctx.defined(addr, structure)
        if not 0 < nindexes <= MAX_INDEXES:
            raise FormatError(f"{nindexes} indexes (1 to {MAX_INDEXES} allowed)", structure,
                              ctx.absolute(addr))
        entry = 1 + 1 + 2 + 4 + 2 + 2 + 2 + 2 * ctx.sizeof_offsets
        cur = ctx.cursor(addr, 4 + nindexes * entry + 4, structure)
        cur.signature(SIGNATURE_TABLE)
        checksum.verify(ctx, cur.buf, structure, cur.base)
        indexes = []
        for _ in range(nindexes):
            version = cur.version((0,))
            index_type = cur.u8()
            flags = cur.u16()
            min_size = cur.u32()
            list_cutoff, btree_cutoff, nmessages = cur.u16(), cur.u16(), cur.u16()
            index_addr, heap_addr = cur.address(), cur.address()
            if index_type not in (INDEX_LIST, INDEX_BTREE):
                raise cur.error(f"index type {index_type} is neither a list (0) nor a B-tree (1)")
            indexes.append(SharedIndex(version, index_type, flags, min_size, list_cutoff,
                                       btree_cutoff, nmessages, index_addr, heap_addr))
        seen = 0
        for index in indexes:
            if index.message_type_flags & seen:
                raise FormatError("a message type is tracked by two indexes", structure,
                                  ctx.absolute(addr))
            seen |= index.message_type_flags
        return cls(ctx, addr, indexes)

    def index_for(self, message_type):
        for index in self.indexes:
            if index.tracks(message_type):
                return index
        return None

    def heap(self, index):
        from .fractal_heap import FractalHeap
        if index.heap_address is None:
            raise FormatError("the shared message index has no fractal heap",
                              "shared object header message table",
                              self.ctx.absolute(self.address))
        return FractalHeap.decode(self.ctx, index.heap_address)

    def get(self, message_type, heap_id):
        """(message body, absolute offset) of the shared message with this 8-byte heap ID."""
        index = self.index_for(message_type)
        if index is None:
            raise FormatError(f"no shared message index tracks message type {message_type:#x}",
                              "shared object header message table",
                              self.ctx.absolute(self.address))
        return self.heap(index).get(heap_id)

    def records(self, index):
        """The index's records (SharedMessage tuples) from its list (SMLI) or type 7 B-tree."""
        ctx = self.ctx
        if index.index_address is None:
            return []
        if index.index_type == INDEX_BTREE:
            from .btree2 import BTree2
            tree = BTree2.decode(ctx, index.index_address)
            if tree.type != 7:
                raise FormatError(f"shared message index is a type {tree.type} v2 B-tree, "
                                  "expected type 7", "v2 B-tree header",
                                  ctx.absolute(index.index_address))
            return list(tree.records())
        structure = "shared message record list"
        rsize = record_size(ctx)
        cur = ctx.cursor(index.index_address, 4 + index.nmessages * rsize + 4, structure)
        cur.signature(SIGNATURE_LIST)
        checksum.verify(ctx, cur.buf, structure, cur.base)
        out = []
        for i in range(index.nmessages):
            cur.pos = 4 + i * rsize
            out.append(_RECORD.decode(cur, None))
        return out


def _find_table_message(ctx):
    sb = ctx.superblock
    if sb is None or sb.extension_address is None:
        return None
    from .object_header import ObjectHeader
    addr = sb.extension_address
    header = ctx.cached("ohdr", addr, lambda: ObjectHeader.decode(ctx, addr))
    raw = header.first(SHARED_MESSAGE_TABLE)
    if raw is None:
        return None
    return decode_table_message(Cursor(raw.data, raw.offset, "shared message table message", ctx))


def shared_message_table(ctx, at=None):
    """The file's SharedMessageTable (cached on ``ctx.sohm``), for the shared message at
    absolute offset ``at``.

    Raises FormatError when the file has none (no superblock extension or no 0x0F message):
    the shared message pointing into the SOHM heap is then itself malformed.
    """
    if ctx.sohm is not None:
        return ctx.sohm
    msg = _find_table_message(ctx)
    if msg is None:
        raise FormatError("a message is shared through the shared object header message table, "
                          "but the file has no shared message table message",
                          "shared message", at)
    ctx.sohm = SharedMessageTable.decode(ctx, msg.table_address, msg.nindexes)
    return ctx.sohm
