"""Level 1A2: version 2 B-trees — header BTHD, internal nodes BTIN, leaf nodes BTLF.

Spec: "III.A.2. Disk Format: Level 1A2 - Version 2 B-trees". Records are decoded through a
table keyed by the B-tree type (``RECORD_TYPES``), so new record types (12/13, structured
chunks) are one entry each. Node field widths follow the library's arithmetic:

- a leaf holds at most ``(node_size - 10) // record_size`` records (10 = signature, version,
  type and checksum);
- "Number of Records in Child Node" is stored in ``limit_enc_size(max leaf records)`` bytes at
  every level; "Total Number of Records" in ``limit_enc_size(cumulative max)`` bytes of the
  child's level (absent under twig nodes, depth 1);
- ``limit_enc_size(n) = floor(log2(n)) // 8 + 1``.

Every node is bounds-checked and checksummed; traversal is depth-bounded (depth strictly
decreases on descent) and never visits a node twice.
"""
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import FormatError
from . import checksum
from .context import Cursor

SIGNATURE_HEADER = b"BTHD"
SIGNATURE_INTERNAL = b"BTIN"
SIGNATURE_LEAF = b"BTLF"
NODE_PREFIX = 10          # signature (4) + version (1) + type (1) + checksum (4)
MAX_DEPTH = 32            # far beyond any real tree: 2^16-record nodes give 2^512 records
MAX_NODE_SIZE = 1 << 24


def limit_enc_size(n):
    """Bytes the library uses to encode values up to ``n`` (H5VM_limit_enc_size)."""
    return (max(n, 1).bit_length() - 1) // 8 + 1


# --- records (spec III.A.2, "Version 2 B-tree, Type N Record Layout") -------------------------

class HugeObject(NamedTuple):
    """Types 1-4: huge fractal heap objects (indirect/direct, unfiltered/filtered)."""
    address: int
    length: int
    id: int | None = None             # types 1, 2
    filter_mask: int | None = None    # types 2, 4
    memory_size: int | None = None    # types 2, 4


class LinkName(NamedTuple):
    """Type 5: link name hash and 7-byte heap ID."""
    hash: int
    heap_id: bytes


class LinkCreationOrder(NamedTuple):
    """Type 6: link creation order and 7-byte heap ID."""
    creation_order: int
    heap_id: bytes


class SharedMessage(NamedTuple):
    """Type 7: a shared object header message, in the SOHM heap (location 0) or in an object
    header (location 1)."""
    location: int
    hash: int
    reference_count: int | None = None   # location 0
    heap_id: bytes | None = None         # location 0
    message_type: int | None = None      # location 1
    index: int | None = None             # location 1
    header_address: int | None = None    # location 1


class AttributeName(NamedTuple):
    """Type 8: attribute heap ID, message flags, creation order and name hash."""
    heap_id: bytes
    flags: int
    creation_order: int
    hash: int


class AttributeCreationOrder(NamedTuple):
    """Type 9: attribute heap ID, message flags and creation order."""
    heap_id: bytes
    flags: int
    creation_order: int


class Chunk(NamedTuple):
    """Types 10 (unfiltered: size/filter_mask None) and 11 (filtered) dataset chunks."""
    address: int
    scaled_offsets: tuple
    size: int | None = None
    filter_mask: int | None = None


class ChunkRecordContext(NamedTuple):
    """What types 10-13 records need: the dataset rank, (types 11-13) the chunk-size width and
    (types 12/13) the number of structured-chunk sections.

    ``chunk_size_len`` may be None: it is then derived from the header's record size.
    """
    ndims: int
    chunk_size_len: int | None = None
    nsections: int | None = None


class StructuredChunk(NamedTuple):
    """Types 12 (unfiltered) and 13 (filtered) structured dataset chunks (sparse RFC Tables
    26/27): address, chunk size, scaled offsets, then the structured chunk metadata (offsets of
    sections 1..N-1; type 13 adds unfiltered sizes and filter masks of sections 0..N-1)."""
    address: int
    size: int
    scaled_offsets: tuple
    section_offsets: tuple
    unfiltered_sizes: tuple | None = None
    filter_masks: tuple | None = None


def _rec_huge_indirect(cur, rctx):
    return HugeObject(cur.uint(cur.ctx.sizeof_offsets), cur.length(), id=cur.length())


def _rec_huge_indirect_filtered(cur, rctx):
    addr, length, mask, mem = cur.uint(cur.ctx.sizeof_offsets), cur.length(), cur.u32(), cur.length()
    return HugeObject(addr, length, cur.length(), mask, mem)


def _rec_huge_direct(cur, rctx):
    return HugeObject(cur.uint(cur.ctx.sizeof_offsets), cur.length())


def _rec_huge_direct_filtered(cur, rctx):
    addr, length, mask, mem = cur.uint(cur.ctx.sizeof_offsets), cur.length(), cur.u32(), cur.length()
    return HugeObject(addr, length, None, mask, mem)


def _rec_link_name(cur, rctx):
    return LinkName(cur.u32(), bytes(cur.bytes(7)))


def _rec_link_order(cur, rctx):
    return LinkCreationOrder(cur.u64(), bytes(cur.bytes(7)))


def _rec_shared_message(cur, rctx):
    location, hash_ = cur.u8(), cur.u32()
    if location == 0:
        return SharedMessage(0, hash_, cur.u32(), bytes(cur.bytes(8)))
    if location == 1:
        cur.skip(1)
        mtype, index = cur.u8(), cur.u16()
        return SharedMessage(1, hash_, message_type=mtype, index=index,
                             header_address=cur.uint(cur.ctx.sizeof_offsets))
    raise cur.error(f"shared message location {location} is neither 0 (heap) nor 1 (header)")


def _rec_attr_name(cur, rctx):
    return AttributeName(bytes(cur.bytes(8)), cur.u8(), cur.u32(), cur.u32())


def _rec_attr_order(cur, rctx):
    return AttributeCreationOrder(bytes(cur.bytes(8)), cur.u8(), cur.u32())


def _chunk_context(cur, rctx, btype):
    if rctx is None:
        raise cur.error(f"type {btype} chunk records need the dataset rank (record_context)")
    return rctx


def _rec_chunk(cur, rctx):
    rctx = _chunk_context(cur, rctx, 10)
    addr = cur.uint(cur.ctx.sizeof_offsets)
    return Chunk(addr, tuple(cur.u64() for _ in range(rctx.ndims)))


def _rec_chunk_filtered(cur, rctx):
    rctx = _chunk_context(cur, rctx, 11)
    addr = cur.uint(cur.ctx.sizeof_offsets)
    size = cur.uint(rctx.chunk_size_len)
    mask = cur.u32()
    return Chunk(addr, tuple(cur.u64() for _ in range(rctx.ndims)), size, mask)


def _rec_struct_chunk(cur, rctx, filtered):
    btype = 13 if filtered else 12
    rctx = _chunk_context(cur, rctx, btype)
    if rctx.chunk_size_len is None or rctx.nsections is None:
        raise cur.error(f"type {btype} records need the chunk-size width and section count")
    n = rctx.nsections
    addr = cur.uint(cur.ctx.sizeof_offsets)
    size = cur.uint(rctx.chunk_size_len)
    scaled = tuple(cur.u64() for _ in range(rctx.ndims))
    offsets = tuple(cur.u64() for _ in range(n - 1))
    if not filtered:
        return StructuredChunk(addr, size, scaled, offsets)
    unfiltered = tuple(cur.u64() for _ in range(n))
    masks = tuple(cur.u32() for _ in range(n))
    return StructuredChunk(addr, size, scaled, offsets, unfiltered, masks)


def _size_struct_chunk(ctx, rctx, filtered):
    if rctx is None or rctx.chunk_size_len is None or rctx.nsections is None:
        return None
    n = rctx.nsections
    return (ctx.sizeof_offsets + rctx.chunk_size_len + 8 * rctx.ndims + 8 * (n - 1)
            + (12 * n if filtered else 0))


def _size_huge(ctx, rctx, filtered, indirect):
    return ctx.sizeof_offsets + ctx.sizeof_lengths + (4 + ctx.sizeof_lengths if filtered else 0) + \
        (ctx.sizeof_lengths if indirect else 0)


def _size_chunk(ctx, rctx, filtered):
    if rctx is None:
        return None
    return ctx.sizeof_offsets + 8 * rctx.ndims + ((rctx.chunk_size_len or 0) + 4 if filtered else 0)


@dataclass(frozen=True)
class RecordType:
    name: str
    decode: object          # (cursor, record_context) -> record
    key: object             # record -> comparable key (the B-tree's order)
    size: object            # (ctx, record_context) -> expected record size or None (unknown)


RECORD_TYPES = {
    1: RecordType("indirectly accessed, non-filtered huge objects", _rec_huge_indirect,
                  lambda r: r.id, lambda c, r: _size_huge(c, r, False, True)),
    2: RecordType("indirectly accessed, filtered huge objects", _rec_huge_indirect_filtered,
                  lambda r: r.id, lambda c, r: _size_huge(c, r, True, True)),
    3: RecordType("directly accessed, non-filtered huge objects", _rec_huge_direct,
                  lambda r: r.address, lambda c, r: _size_huge(c, r, False, False)),
    4: RecordType("directly accessed, filtered huge objects", _rec_huge_direct_filtered,
                  lambda r: r.address, lambda c, r: _size_huge(c, r, True, False)),
    5: RecordType("link names", _rec_link_name, lambda r: r.hash, lambda c, r: 11),
    6: RecordType("link creation order", _rec_link_order, lambda r: r.creation_order,
                  lambda c, r: 15),
    7: RecordType("shared object header messages", _rec_shared_message, lambda r: r.hash,
                  lambda c, r: 1 + 4 + max(12, 4 + c.sizeof_offsets)),
    8: RecordType("attribute names", _rec_attr_name, lambda r: r.hash, lambda c, r: 17),
    9: RecordType("attribute creation order", _rec_attr_order, lambda r: r.creation_order,
                  lambda c, r: 13),
    10: RecordType("non-filtered dataset chunks", _rec_chunk, lambda r: r.scaled_offsets,
                   lambda c, r: _size_chunk(c, r, False)),
    11: RecordType("filtered dataset chunks", _rec_chunk_filtered, lambda r: r.scaled_offsets,
                   lambda c, r: _size_chunk(c, r, True)),
    12: RecordType("structured dataset chunks", lambda c, r: _rec_struct_chunk(c, r, False),
                   lambda r: r.scaled_offsets, lambda c, r: _size_struct_chunk(c, r, False)),
    13: RecordType("filtered structured dataset chunks",
                   lambda c, r: _rec_struct_chunk(c, r, True), lambda r: r.scaled_offsets,
                   lambda c, r: _size_struct_chunk(c, r, True)),
}
CHUNK_TYPES = (10, 11, 12, 13)
# the sparse prototype creates the B-trees of structured chunks with header version 1 (same
# layout as version 0); both are accepted for every type
VERSIONS = (0, 1)

HASHED_NAME_TYPES = (5, 8)      # ordered by lookup3(name)


def _normalize_record_context(btype, record_context, record_size, ctx, structure, offset):
    """Fill in the chunk-size width of type 11 records; check rank against the record size."""
    if btype not in CHUNK_TYPES:
        return record_context
    if record_context is None:
        if btype == 10 and (record_size - ctx.sizeof_offsets) % 8 == 0:
            return ChunkRecordContext((record_size - ctx.sizeof_offsets) // 8)
        return None
    if isinstance(record_context, int):
        record_context = ChunkRecordContext(record_context)
    elif isinstance(record_context, dict):
        record_context = ChunkRecordContext(record_context["ndims"],
                                            record_context.get("chunk_size_len"),
                                            record_context.get("nsections"))
    elif not isinstance(record_context, ChunkRecordContext):
        record_context = ChunkRecordContext(*record_context)
    if btype == 11 and record_context.chunk_size_len is None:
        width = record_size - ctx.sizeof_offsets - 4 - 8 * record_context.ndims
        if not 1 <= width <= 8:
            raise FormatError(f"record size {record_size} does not fit filtered chunk records of "
                              f"rank {record_context.ndims}", structure, offset)
        record_context = record_context._replace(chunk_size_len=width)
    return record_context


@dataclass(frozen=True)
class NodeInfo:
    """Per-level limits (level 0 = leaves): max records, cumulative max, width of totals."""
    max_nrec: int
    cum_max_nrec: int
    cum_max_nrec_size: int


class BTree2:
    """A version 2 B-tree: its header fields and key-ordered access to its records."""

    def __init__(self, ctx, address, type, node_size, record_size, depth, split_percent,
                 merge_percent, root_address, root_nrecords, total_records, record_context=None):
        self.ctx = ctx
        self.address = address
        self.type = type
        self.node_size = node_size
        self.record_size = record_size
        self.depth = depth
        self.split_percent = split_percent
        self.merge_percent = merge_percent
        self.root_address = root_address
        self.root_nrecords = root_nrecords
        self.total_records = total_records
        self.record_context = record_context
        self.record_type = RECORD_TYPES.get(type)
        self.node_info = []
        self.max_nrec_size = 0

    def __repr__(self):
        return (f"BTree2(type={self.type}, address={self.address}, depth={self.depth}, "
                f"records={self.total_records})")

    # --- header -------------------------------------------------------------------------------

    @classmethod
    def decode(cls, ctx, addr, record_context=None):
        """Decode the header at ``addr`` (cached per address and record context)."""
        try:
            hash(record_context)
            kind = ("bthd", record_context)
        except TypeError:
            kind = ("bthd", repr(record_context))
        return ctx.cached(kind, addr, lambda: cls._decode(ctx, addr, record_context))

    @classmethod
    def _decode(cls, ctx, addr, record_context):
        structure = "v2 B-tree header"
        ctx.defined(addr, structure)
        size = 4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + ctx.sizeof_offsets + 2 + ctx.sizeof_lengths + 4
        cur = ctx.cursor(addr, size, structure)
        cur.signature(SIGNATURE_HEADER)
        version = cur.version(VERSIONS)
        btype = cur.u8()
        node_size, record_size, depth = cur.u32(), cur.u16(), cur.u16()
        split, merge = cur.u8(), cur.u8()
        root = cur.address()
        root_nrec = cur.u16()
        total = cur.length()
        checksum.verify(ctx, cur.buf, structure, cur.base)
        where = ctx.absolute(addr)
        if btype not in RECORD_TYPES:
            raise FormatError(f"unsupported v2 B-tree type {btype}", structure, where)
        if not NODE_PREFIX < node_size <= MAX_NODE_SIZE:
            raise FormatError(f"node size {node_size} out of range", structure, where)
        if record_size == 0 or record_size > node_size - NODE_PREFIX:
            raise FormatError(f"record size {record_size} does not fit nodes of {node_size} bytes",
                              structure, where)
        if depth > MAX_DEPTH:
            raise FormatError(f"depth {depth} exceeds {MAX_DEPTH}", structure, where)
        record_context = _normalize_record_context(btype, record_context, record_size, ctx,
                                                   structure, where)
        tree = cls(ctx, addr, btype, node_size, record_size, depth, split, merge, root, root_nrec,
                   total, record_context)
        tree.version = version
        expected = tree.record_type.size(ctx, record_context)
        if expected is not None and expected != record_size:
            raise FormatError(f"record size {record_size} but type {btype} records are "
                              f"{expected} bytes", structure, where)
        tree._init_node_info(where)
        if root is None:
            if total or root_nrec:
                raise FormatError(f"{total} records but no root node", structure, where)
        else:
            if root_nrec > tree.node_info[depth].max_nrec:
                raise FormatError(f"root node claims {root_nrec} records, more than fit",
                                  structure, where)
            if depth == 0 and total != root_nrec:
                raise FormatError(f"total of {total} records but the root leaf holds {root_nrec}",
                                  structure, where)
            ctx.check_range(root, node_size, "v2 B-tree root node")
        return tree

    def _init_node_info(self, where):
        leaf_max = (self.node_size - NODE_PREFIX) // self.record_size
        self.node_info = [NodeInfo(leaf_max, leaf_max, 0)]
        self.max_nrec_size = limit_enc_size(leaf_max)
        for level in range(1, self.depth + 1):
            ptr = self.pointer_size(level)
            max_nrec = (self.node_size - (NODE_PREFIX + ptr)) // (self.record_size + ptr)
            if max_nrec <= 0:
                raise FormatError(f"nodes of {self.node_size} bytes cannot hold internal records "
                                  f"at depth {level}", "v2 B-tree header", where)
            below = self.node_info[level - 1].cum_max_nrec
            cum = (max_nrec + 1) * below + max_nrec
            self.node_info.append(NodeInfo(max_nrec, cum, limit_enc_size(cum)))
        # per level, what reading a node needs: its first 6 bytes (signature, version, type)
        # as they may be, its most records and the bytes of a child pointer (0 in leaves)
        self._levels = [(frozenset((SIGNATURE_INTERNAL if level else SIGNATURE_LEAF)
                                   + bytes((v, self.type)) for v in VERSIONS),
                         self.node_info[level].max_nrec,
                         self.pointer_size(level) if level else 0)
                        for level in range(self.depth + 1)]
        # per internal level, how its child pointers decode: (unpack or None, field widths,
        # most records of a child, most records of a child's subtree)
        self._pointers = [None]
        for level in range(1, self.depth + 1):
            below = self.node_info[level - 1]
            widths = (self.ctx.sizeof_offsets, self.max_nrec_size,
                      below.cum_max_nrec_size if level > 1 else 0)
            self._pointers.append((_pointer_struct(widths), widths, below.max_nrec,
                                   below.cum_max_nrec))

    def pointer_size(self, level):
        """Bytes of one child pointer triplet in an internal node at ``level`` (>= 1)."""
        return (self.ctx.sizeof_offsets + self.max_nrec_size
                + self.node_info[level - 1].cum_max_nrec_size)

    # --- nodes --------------------------------------------------------------------------------

    def node_bytes(self, nrec, level):
        """Bytes of a node at ``level`` holding ``nrec`` records, its checksum included (the
        part a node's checksum covers; the rest of its allocation is unused)."""
        return 10 + nrec * self.record_size + (nrec + 1) * self._levels[level][2]

    def check_prefix(self, buf, addr, level):
        """Raise unless the node bytes ``buf`` (at relative address ``addr``) begin with the
        signature of a node at ``level``, a known version and the tree's type."""
        if bytes(buf[:6]) not in self._levels[level][0]:
            structure = "v2 B-tree internal node" if level else "v2 B-tree leaf node"
            _bad_prefix(Cursor(buf, self.ctx.absolute(addr), structure, self.ctx),
                        level > 0, self.type)

    def _read_node(self, addr, nrec, level):
        """(record bytes (a view), child pointers (a sequence of (child addr, nrec, total),
        each decoded and checked when first used), absolute offset) of a node."""
        ctx = self.ctx
        structure = "v2 B-tree internal node" if level else "v2 B-tree leaf node"
        prefixes, max_nrec, ptr = self._levels[level]
        if nrec > max_nrec:
            raise FormatError(f"{nrec} records exceed the {max_nrec} that fit a node",
                              structure, ctx.absolute(addr))
        base = ctx.base_address + addr    # (defined: callers read no root of an empty tree,
        # and a child pointer to the undefined address fails as it decodes)
        buf = ctx.source.read_small(base, 10 + nrec * self.record_size + (nrec + 1) * ptr,
                                    structure)
        if bytes(buf[:6]) not in prefixes:
            self.check_prefix(buf, addr, level)
        if ctx.verify_checksums and not checksum.intact(buf):
            checksum.verify(ctx, buf, structure, base)
        return self.node_parts(buf, addr, nrec, level)

    def node_parts(self, buf, addr, nrec, level):
        """``_read_node``'s result for the checked bytes ``buf`` of the node at ``addr``."""
        end = 6 + nrec * self.record_size
        base = self.ctx.base_address + addr
        children = _Children(self, buf, end, base, level, nrec + 1) if level else ()
        return memoryview(buf)[6:end], children, base

    def _decode_records(self, buf, base, structure):
        rs = self.record_size
        decode = self.record_type.decode
        rctx = self.record_context
        out = []
        cur = Cursor(buf, base + 6, structure, self.ctx)
        for i in range(len(buf) // rs):
            cur.pos = i * rs
            out.append(decode(cur, rctx))
        return out

    def _nodes_in_order(self):
        """Yield (record bytes, absolute offset of the node, level) in key order.

        Internal-node records come out as single-record slices between the subtrees they
        separate, so concatenating all yielded slices gives every record in key order.
        """
        if self.root_address is None:
            return
        seen = set()
        count = [0]

        def visit(addr, nrec, level, expected_total):
            if addr in seen:
                raise FormatError("node visited twice (cycle or shared subtree)",
                                  "v2 B-tree node", self.ctx.absolute(addr))
            seen.add(addr)
            records, children, base = self._read_node(addr, nrec, level)
            if not children:
                count[0] += nrec
                if count[0] > self.total_records:
                    raise FormatError(f"more records than the header's total of "
                                      f"{self.total_records}", "v2 B-tree leaf node", base)
                yield records, base, level
                return
            subtotal = nrec + sum(c[2] for c in children)
            if expected_total is not None and subtotal != expected_total:
                raise FormatError(f"node holds {subtotal} records but its parent says "
                                  f"{expected_total}", "v2 B-tree internal node", base)
            rs = self.record_size
            for i, (caddr, cn, ctotal) in enumerate(children):
                yield from visit(caddr, cn, level - 1, ctotal)
                if i < nrec:
                    count[0] += 1
                    yield records[i * rs:(i + 1) * rs], base + 6 + i * rs, level

        yield from visit(self.root_address, self.root_nrecords, self.depth, self.total_records)
        if count[0] != self.total_records:
            raise FormatError(f"found {count[0]} records but the header says {self.total_records}",
                              "v2 B-tree header", self.ctx.absolute(self.address))

    # --- public access ------------------------------------------------------------------------

    def records(self):
        """Yield every record, decoded, in key order."""
        for buf, base, level in self._nodes_in_order():
            structure = "v2 B-tree leaf node" if level == 0 else "v2 B-tree internal node"
            node_base = base if level == 0 else base - 6
            yield from self._decode_records(buf, node_base, structure)

    def __iter__(self):
        return self.records()

    def __len__(self):
        return self.total_records

    def leaf_record_bytes(self):
        """Yield, in key order, numpy uint8 arrays of shape (nrecords, record_size).

        One array per leaf; an internal node's records come out as 1-row arrays between the
        leaves they separate, so the concatenation is every record in key order (for bulk
        decoding of chunk records by a kernel).
        """
        import numpy as np
        rs = self.record_size
        for buf, _base, _level in self._nodes_in_order():
            yield np.frombuffer(buf, np.uint8).reshape(len(buf) // rs, rs)

    def record_bytes(self):
        """All records in key order as one uint8 array of shape (total_records, record_size)."""
        import numpy as np
        parts = list(self.leaf_record_bytes())
        if not parts:
            return np.empty((0, self.record_size), np.uint8)
        return np.concatenate(parts)

    def search(self, compare):
        """Yield, in key order, the records r with compare(r) == 0.

        ``compare(record)`` returns <0 if the sought key sorts before the record, 0 if it
        matches, >0 if after. Only subtrees that can hold matches are read.
        """
        if self.root_address is None:
            return
        seen = set()

        def visit(addr, nrec, level):
            if addr in seen:
                raise FormatError("node visited twice (cycle or shared subtree)",
                                  "v2 B-tree node", self.ctx.absolute(addr))
            seen.add(addr)
            raw, children, base = self._read_node(addr, nrec, level)
            structure = "v2 B-tree internal node" if level else "v2 B-tree leaf node"
            recs = self._decode_records(raw, base, structure)
            signs = [compare(r) for r in recs]
            if not children:
                for r, s in zip(recs, signs):
                    if s == 0:
                        yield r
                return
            for i, child in enumerate(children):
                # child i holds keys strictly between recs[i-1] and recs[i]
                if (i == 0 or signs[i - 1] >= 0) and (i == nrec or signs[i] <= 0):
                    yield from visit(child[0], child[1], level - 1)
                if i < nrec and signs[i] == 0:
                    yield recs[i]

        yield from visit(self.root_address, self.root_nrecords, self.depth)

    def find(self, key):
        """All records whose key equals ``key``, in key order (a list; empty if none).

        For name-indexed types (5 links, 8 attributes) ``key`` may be the name as bytes or str:
        it is hashed with lookup3, since those trees are ordered by the name's hash; the caller
        compares names to tell apart hash collisions. Type 7 keys are message hashes; types
        1/2 heap IDs, 3/4 addresses, 6/9 creation orders, 10/11 tuples of scaled offsets.
        """
        if isinstance(key, str):
            key = key.encode("utf-8")
        if isinstance(key, (bytes, bytearray, memoryview)):
            if self.type not in HASHED_NAME_TYPES:
                raise TypeError(f"type {self.type} v2 B-trees are not keyed by name")
            key = checksum.lookup3(bytes(key))
        keyf = self.record_type.key
        if self.type in CHUNK_TYPES:
            key = tuple(key)

        def compare(rec):
            k = keyf(rec)
            return (key > k) - (key < k)

        return list(self.search(compare))


# --- encoding ----------------------------------------------------------------------------------
# ``encode_tree`` writes a whole tree from records already in key order: the shallowest depth
# that holds them, records spread evenly over the nodes of each level, every node allocated at
# the full node size (as the library allocates them).

def _bad_prefix(cur, internal, btype):
    """Raise the error of a node prefix (signature, version, type) that is not right."""
    cur.signature(SIGNATURE_INTERNAL if internal else SIGNATURE_LEAF)
    cur.version(VERSIONS)
    got = cur.u8()
    raise cur.error(f"node type {got} differs from the header's type {btype}")


class _Children:
    """The child pointers of an internal node (spec VII.E, "Version 2 B-tree Internal
    Node": child address, its number of records, and below level 1 the total records of its
    subtree), a sequence of (address, records, total) decoded one at a time: a lookup that
    descends the tree decodes and checks only the child it takes. ``done`` maps an index to
    its pointer once decoded and checked."""

    __slots__ = ("tree", "buf", "pos", "base", "level", "n", "done")

    def __init__(self, tree, buf, pos, base, level, n):
        self.tree, self.buf, self.pos, self.base, self.level, self.n = \
            tree, buf, pos, base, level, n
        self.done = {}

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        got = self.done.get(i)
        if got is not None:
            return got
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        tree = self.tree
        unpack, widths, max_nrec, cum_max = tree._pointers[self.level]
        so, ms, cs = widths
        p = self.pos + i * (so + ms + cs)
        if unpack is not None:
            caddr, cn, *total = unpack(self.buf, p)
        else:
            buf = self.buf
            caddr = int.from_bytes(buf[p:p + so], "little")
            cn = int.from_bytes(buf[p + so:p + so + ms], "little")
            total = [int.from_bytes(buf[p + so + ms:p + so + ms + cs], "little")] if cs else ()
        ctotal = total[0] if total else cn
        if caddr == tree.ctx.undefined:
            raise FormatError("undefined child node address", "v2 B-tree internal node",
                              self.base + p)
        if cn > max_nrec or ctotal > cum_max or ctotal < cn:
            raise FormatError(f"child node record counts ({cn}, total {ctotal}) out of range",
                              "v2 B-tree internal node", self.base + p + so)
        got = self.done[i] = (caddr, cn, ctotal)
        return got


def _pointer_struct(widths):
    """A struct for a child pointer of fields ``widths`` (a 0 width: no field), or None when
    a width has no struct code (3, 5, 6, 7 bytes)."""
    import struct
    codes = {1: "B", 2: "H", 4: "I", 8: "Q"}
    if any(w and w not in codes for w in widths):
        return None
    return struct.Struct("<" + "".join(codes[w] for w in widths if w)).unpack_from


def _node_limits(ctx, node_size, record_size, depth):
    """NodeInfo per level (0 = leaves) and the width of child record counts."""
    leaf_max = (node_size - NODE_PREFIX) // record_size
    info = [NodeInfo(leaf_max, leaf_max, 0)]
    nrec_size = limit_enc_size(leaf_max)
    for level in range(1, depth + 1):
        ptr = ctx.sizeof_offsets + nrec_size + info[level - 1].cum_max_nrec_size
        max_nrec = (node_size - (NODE_PREFIX + ptr)) // (record_size + ptr)
        if max_nrec <= 0:
            raise ValueError(f"v2 B-tree nodes of {node_size} bytes cannot hold internal records")
        below = info[level - 1].cum_max_nrec
        cum = (max_nrec + 1) * below + max_nrec
        info.append(NodeInfo(max_nrec, cum, limit_enc_size(cum)))
    return info, nrec_size


def encode_header(ctx, btype, node_size, record_size, depth, split_percent, merge_percent,
                  root_address, root_nrecords, total_records, version=0):
    """The v2 B-tree header ("BTHD", spec III.A.2)."""
    import struct
    out = (SIGNATURE_HEADER + struct.pack("<BBIHHBB", version, btype, node_size, record_size, depth,
                                          split_percent, merge_percent)
           + ctx.pack_address(root_address) + struct.pack("<H", root_nrecords)
           + ctx.pack_length(total_records))
    return out + struct.pack("<I", checksum.lookup3(out))


def header_size(ctx):
    return 4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + ctx.sizeof_offsets + 2 + ctx.sizeof_lengths + 4


def encode_tree(ctx, btype, records, record_size, alloc, node_size=512, split_percent=100,
                merge_percent=40, version=0):
    """Encode a v2 B-tree holding ``records`` (encoded records, in key order).

    ``alloc(nbytes) -> address`` places each block; ``version`` is the header's (nodes are
    always version 0, the only node version libhdf5 defines). Returns (header address, [(address,
    bytes)]) with the header last in the list."""
    import struct
    n = len(records)
    depth = 0
    info, nrec_size = _node_limits(ctx, node_size, record_size, 0)
    while n > info[depth].cum_max_nrec:
        depth += 1
        info, nrec_size = _node_limits(ctx, node_size, record_size, depth)
    blocks = []

    def node(recs, level):
        """Write the subtree of ``recs`` rooted at ``level``; (address, nrec, total)."""
        if level == 0:
            body = SIGNATURE_LEAF + bytes((0, btype)) + b"".join(recs)
            body += struct.pack("<I", checksum.lookup3(body))
            addr = alloc(node_size)
            blocks.append((addr, body + bytes(node_size - len(body))))
            return addr, len(recs), len(recs)
        below = info[level - 1].cum_max_nrec
        k = -(-(len(recs) + 1) // (below + 1))
        k = max(k, 1)
        room = len(recs) - (k - 1)
        base, extra = divmod(room, k)
        children, seps, pos = [], [], 0
        for i in range(k):
            size = base + (1 if i < extra else 0)
            children.append(node(recs[pos:pos + size], level - 1))
            pos += size
            if i < k - 1:
                seps.append(recs[pos])
                pos += 1
        body = bytearray(SIGNATURE_INTERNAL + bytes((0, btype)) + b"".join(seps))
        for caddr, cn, ctotal in children:
            body += ctx.pack_address(caddr) + cn.to_bytes(nrec_size, "little")
            if level > 1:
                body += ctotal.to_bytes(info[level - 1].cum_max_nrec_size, "little")
        body += struct.pack("<I", checksum.lookup3(bytes(body)))
        if len(body) > node_size:
            raise ValueError("v2 B-tree internal node overflow")
        addr = alloc(node_size)
        blocks.append((addr, bytes(body) + bytes(node_size - len(body))))
        return addr, len(seps), len(recs)

    if n:
        root, root_nrec, _ = node(list(records), depth)
    else:
        root, root_nrec = None, 0
    hdr = encode_header(ctx, btype, node_size, record_size, depth, split_percent, merge_percent,
                        root, root_nrec, n, version)
    haddr = alloc(len(hdr))
    blocks.append((haddr, hdr))
    return haddr, blocks


def encode_record(btype, record, ctx, record_context=None):
    """Encode one record of the types the writer emits (1, 5, 6, 8, 9, 10, 11)."""
    import struct
    if btype == 1:
        return (ctx.pack_address(record.address) + ctx.pack_length(record.length)
                + ctx.pack_length(record.id))
    if btype == 5:
        return struct.pack("<I", record.hash) + bytes(record.heap_id)
    if btype == 6:
        return struct.pack("<Q", record.creation_order) + bytes(record.heap_id)
    if btype == 8:
        return bytes(record.heap_id) + struct.pack("<BII", record.flags, record.creation_order,
                                                   record.hash)
    if btype == 9:
        return bytes(record.heap_id) + struct.pack("<BI", record.flags, record.creation_order)
    if btype == 10:
        return ctx.pack_address(record.address) + struct.pack(
            f"<{len(record.scaled_offsets)}Q", *record.scaled_offsets)
    if btype == 11:
        return (ctx.pack_address(record.address)
                + int(record.size).to_bytes(record_context.chunk_size_len, "little")
                + struct.pack(f"<I{len(record.scaled_offsets)}Q", record.filter_mask,
                              *record.scaled_offsets))
    if btype in (12, 13):
        out = (ctx.pack_address(record.address)
               + int(record.size).to_bytes(record_context.chunk_size_len, "little")
               + struct.pack(f"<{len(record.scaled_offsets)}Q", *record.scaled_offsets)
               + struct.pack(f"<{len(record.section_offsets)}Q", *record.section_offsets))
        if btype == 13:
            n = len(record.unfiltered_sizes)
            out += struct.pack(f"<{n}Q{n}I", *record.unfiltered_sizes, *record.filter_masks)
        return out
    raise ValueError(f"purehep does not write v2 B-tree records of type {btype}")
