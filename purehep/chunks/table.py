"""The decoded chunk index: one row per allocated chunk, numpy columns."""
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
    from ..kernels.chunkindex import decode_records
    so = ctx.sizeof_offsets
    rank = len(max_chunks)
    es = raw.shape[1]
    if filtered:
        width = es - so - 4
        if not 1 <= width <= 8:
            from ..errors import FormatError
            raise FormatError(f"filtered chunk element of {es} bytes", *where)
        addr, size, mask, _ = decode_records(raw, 0, so, so, width, so + width, -1, 0, 8)
    else:
        addr, size, mask, _ = decode_records(raw, 0, so, -1, 0, -1, -1, 0, 8)
        size[:] = chunk_nbytes
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


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p
