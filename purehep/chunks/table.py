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


def from_linear(ctx, raw, filtered, max_chunks, chunk_nbytes, where, unlimited_dim=None):
    """Rows of array-index elements (fixed/extensible array; spec VII.C/VII.D element layouts)
    to a ChunkTable: element i is the chunk with linear index i over ``max_chunks`` (with the
    unlimited dimension, if any, moved first, as the library "swizzles" it). ``where`` =
    (structure, offset) of the array's header, for errors."""
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
    order = list(range(rank))
    dims = list(max_chunks)
    if unlimited_dim is not None and unlimited_dim != 0:
        order = [unlimited_dim] + [d for d in range(rank) if d != unlimited_dim]
        dims = [max_chunks[d] for d in order]
    if unlimited_dim is not None:
        dims[0] = max(1, -(-len(raw) // max(1, _prod(dims[1:]))))
    scaled_sw = np.stack(np.unravel_index(keep, dims), axis=1).astype(np.int64) if rank else \
        np.zeros((len(keep), 0), np.int64)
    scaled = np.empty_like(scaled_sw)
    for i, d in enumerate(order):
        scaled[:, d] = scaled_sw[:, i]
    return ChunkTable(scaled, addr[keep], size[keep], mask[keep])


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p
