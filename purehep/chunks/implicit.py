"""Implicit index (spec VII.B): chunks stored back to back from the layout's address, in
row-major order of the chunk grid of the *maximum* dimensions (as the library computes the
chunk index), each exactly one chunk of bytes; never filtered."""
import numpy as np

from .table import ChunkTable


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    chunk = layout.chunk_shape
    grid = [-(-int(m) // c) for m, c in zip(maxshape, chunk)]
    n = 1
    for g in grid:
        n *= g
    ctx.check_range(layout.address, n * chunk_nbytes, "implicit chunk index array")
    lin = np.arange(n, dtype=np.int64)
    scaled = np.stack(np.unravel_index(lin, grid), axis=1).astype(np.int64)
    addr = np.uint64(layout.address) + lin.astype(np.uint64) * np.uint64(chunk_nbytes)
    return ChunkTable(scaled, addr, np.full(n, chunk_nbytes, np.int64), np.zeros(n, np.uint32))


def lookup(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    """``find(scaled)`` -> (address, size, 0): the address is computed, nothing is read."""
    if layout.address is None:
        return None
    grid = [-(-int(m) // c) for m, c in zip(maxshape, layout.chunk_shape)]
    n = 1
    for g in grid:
        n *= g
    ctx.check_range(layout.address, n * chunk_nbytes, "implicit chunk index array")

    def find(scaled):
        i = 0
        for p, g in zip(scaled, grid):
            i = i * g + int(p)
        return layout.address + i * chunk_nbytes, chunk_nbytes, 0

    return find
