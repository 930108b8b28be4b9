"""The decoded chunk index: one row per allocated chunk, numpy columns; and the lookups'
readers of index elements and B-tree node records, one chunk at a time."""
import bisect
import struct
import sys
from dataclasses import dataclass

import numpy as np


@dataclass
class ChunkTable:
    scaled: np.ndarray      # (n, rank) int64 chunk grid coordinates (offset // chunk dims)
    addresses: np.ndarray   # (n,) uint64 relative file addresses
    sizes: np.ndarray       # (n,) int64 stored bytes
    masks: np.ndarray       # (n,) uint32 filter masks

    @classmethod
    def empty(cls, rank):
        return cls(np.zeros((0, rank), np.int64), np.zeros(0, np.uint64), np.zeros(0, np.int64),
                   np.zeros(0, np.uint32))

    def __len__(self):
        return self.addresses.shape[0]

    def select(self, keep):
        return ChunkTable(self.scaled[keep], self.addresses[keep], self.sizes[keep],
                          self.masks[keep])


def from_linear(ctx, raw, filtered, max_chunks, chunk_nbytes, where, unlimited_dim=None,
                index=None, count=None):
    """Rows of array-index elements (fixed/extensible array; spec VII.C/VII.D element layouts)
    to a ChunkTable: element i is the chunk with linear index i over ``max_chunks`` (with the
    unlimited dimension, if any, moved first, as the library "swizzles" it). Row k is element
    ``index[k]`` (default: k) of an array of ``count`` elements (default: the rows). ``where``
    = (structure, offset) of the array's header, for errors."""
    rank = len(max_chunks)
    addr, size, mask = element_columns(ctx, raw, filtered, chunk_nbytes, where)
    keep = np.flatnonzero(addr != np.uint64(ctx.undefined))
    linear = keep if index is None else index[keep]
    order = list(range(rank))
    dims = list(max_chunks)
    if unlimited_dim is not None and unlimited_dim != 0:
        order = [unlimited_dim] + [d for d in range(rank) if d != unlimited_dim]
        dims = [max_chunks[d] for d in order]
    if unlimited_dim is not None:
        n = len(raw) if count is None else count
        dims[0] = max(1, -(-n // max(1, _prod(dims[1:]))))
    return ChunkTable(scaled_from_linear(linear, dims, order, where), addr[keep], size[keep],
                      mask[keep])


def scaled_from_linear(linear, dims, order, where):
    """Grid positions (n, rank) of the row-major indexes ``linear`` over the grid ``dims``,
    whose dimension i is the dataset's dimension ``order[i]``; an index outside the grid is a
    FormatError at ``where`` (structure, offset). Any grid size (up to 2**64 per dimension)."""
    if len(linear) and int(linear.max()) >= _prod(dims):
        from ..errors import FormatError
        raise FormatError(f"chunk index element {int(linear.max())} lies outside the chunk grid "
                          f"{tuple(dims)}", *where)
    rest = np.array(linear, np.int64)
    scaled = np.zeros((len(rest), len(order)), np.int64)
    if not len(rest):
        return scaled
    for i in range(len(order) - 1, -1, -1):
        d = int(dims[i])
        if d > np.iinfo(np.int64).max:        # wider than any index: it holds the rest
            scaled[:, order[i]] = rest
            rest[:] = 0
        else:
            scaled[:, order[i]] = rest % d
            rest //= d
    return scaled


def _element_layout(ctx, es, filtered, where=(None, None)):
    """(address bytes, stored-size bytes) of an array-index element of ``es`` bytes: an
    address, then for filtered chunks the stored size and a 4-byte filter mask. ``where`` =
    (structure, offset) of the array, for errors."""
    so = ctx.sizeof_offsets
    width = es - so - 4
    if filtered and not 1 <= width <= 8:
        from ..errors import FormatError
        raise FormatError(f"filtered chunk element of {es} bytes", *where)
    return so, width


def element_columns(ctx, raw, filtered, chunk_nbytes, where=(None, None)):
    """(addresses uint64, sizes int64, filter masks uint32) of array-index elements ``raw``
    (n, element size)."""
    from ..kernels.chunkindex import decode_records
    so, width = _element_layout(ctx, raw.shape[1], filtered, where)
    if filtered:
        addr, size, mask, _ = decode_records(raw, 0, so, so, width, so + width, -1, 0, 8)
    else:
        addr, size, mask, _ = decode_records(raw, 0, so, -1, 0, -1, -1, 0, 8)
        size[:] = chunk_nbytes
    return addr, size, mask


class ArrayLookup:
    """Chunk records of a fixed or extensible array index found one at a time: element
    ``linear(scaled)`` is unpacked from the bytes of the page or data block holding it
    (``elements.block``, which keeps what it read: a hit costs a dict lookup or two)."""

    def __init__(self, ctx, elements, filtered, chunk_nbytes, linear):
        self.ctx, self.elements, self.linear = ctx, elements, linear
        self.filtered, self.chunk_nbytes = filtered, chunk_nbytes
        self.undefined = ctx.undefined
        self.es = None            # the element layout, checked at the first lookup

    def _layout(self):
        es = self.elements.entry_size
        so, width = _element_layout(self.ctx, es, self.filtered)
        filtered = self.filtered
        codes = [_CODES.get(so), _CODES.get(width) if filtered else None]
        # whole fields as one struct where they have codes, else int.from_bytes on slices
        if codes[0] and (codes[1] or not filtered):
            self.unpack = struct.Struct("<" + codes[0] + (codes[1] + "I" if filtered else "")
                                        ).unpack_from
        else:
            self.unpack = None
            self.fields = ((0, so), (so, so + width), (so + width, so + width + 4))
        self.es = es

    def __call__(self, scaled):
        """(address, stored size, filter mask) of the chunk at grid position ``scaled``, or
        None when it is not allocated."""
        i = self.linear(scaled)
        blk = self.elements.block(i)
        if blk is None:
            return None
        if self.es is None:
            self._layout()
        first, buf = blk
        off = (i - first) * self.es
        if self.unpack is not None:
            rec = self.unpack(buf, off)
        else:
            rec = [int.from_bytes(buf[off + a:off + b], "little")
                   for a, b in self.fields[:3 if self.filtered else 1]]
        if rec[0] == self.undefined:
            return None
        if not self.filtered:
            return rec[0], self.chunk_nbytes, 0
        return tuple(rec)


class Records:
    """The records of a chunk B-tree node read in place from its bytes, as the lookups
    need them: records of little-endian unsigned fields of ``widths`` bytes, whose key is
    the ``rank`` fields from field ``key`` on, ordered as tuples (spec III.A.1 type-1 keys,
    III.A.2 record types 10/11). ``firsts`` gives the keys' first fields of a node (a view
    of its bytes, or unpacked in one call); ``record`` unpacks one record (a field of a
    width struct has no code for comes out as bytes: ``as_int``)."""

    def __init__(self, widths, key, rank):
        codes = [_CODES.get(w, f"{w}s") for w in widths]
        self.entry = struct.Struct("<" + "".join(codes))
        self.size = self.entry.size
        pre = sum(widths[:key])
        post = self.size - pre - widths[key]
        self._first = (f"{pre}x" if pre else "") + codes[key] + (f"{post}x" if post else "")
        self._firsts = {}
        self.key, self.rank = key, rank
        # 8-byte keys at multiples of 8 bytes: a strided view of the bytes serves as firsts
        self._view = (pre // 8, self.size // 8) if sys.byteorder == "little" and \
            widths[key] == 8 and not pre % 8 and not self.size % 8 else None

    def firsts(self, buf, n):
        """The first key field of each of the ``n`` records at the start of ``buf``: a
        sequence of ints (a view of ``buf`` where the layout allows: nothing allocated per
        key, which the nodes a lookup keeps would otherwise cost)."""
        if self._view is not None:
            first, step = self._view
            return memoryview(buf)[:n * self.size].cast("Q")[first::step]
        s = self._firsts.get(n)
        if s is None:
            s = self._firsts[n] = struct.Struct("<" + self._first * n)
        return s.unpack_from(buf)

    def record(self, buf, i):
        return self.entry.unpack_from(buf, i * self.size)

    def search(self, buf, firsts, target, side):
        """Where the tuple ``target`` goes among the keys of the records in ``buf`` (whose
        first fields are ``firsts``): a bisection on the first field, then, among the keys
        sharing it, one that unpacks only the records it compares."""
        if self.rank == 1:
            return (bisect.bisect_left if side == "left" else bisect.bisect_right)(
                firsts, target[0])
        a = bisect.bisect_left(firsts, target[0])
        if a == len(firsts) or firsts[a] != target[0]:
            return a                      # no key shares the first field
        b = bisect.bisect_right(firsts, target[0], a)
        k, size, unpack = self.key, self.size, self.entry.unpack_from
        if b - a == 1:                    # one key shares it: compare with that one
            other = unpack(buf, a * size)[k:k + self.rank]
            return a if target < other or (side == "left" and target == other) else b
        find = bisect.bisect_left if side == "left" else bisect.bisect_right
        return find(range(len(firsts)), target, a, b,
                    key=lambda i: unpack(buf, i * size)[k:k + self.rank])


_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


def as_int(v):
    """A field from ``Records.record`` as an int."""
    return v if type(v) is int else int.from_bytes(v, "little")


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p
