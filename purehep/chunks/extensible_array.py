"""Extensible Array index (spec VII.D): one unlimited dimension; element i describes the chunk
with row-major index i over the chunk grid with the unlimited dimension moved first."""
from ..errors import FormatError
from ..format import extensible_array
from .table import ArrayLookup, ChunkTable, from_linear


def _check(ctx, layout, hdr):
    if hdr.client_id not in (0, 1):
        raise FormatError(f"extensible array client id {hdr.client_id} is not a chunk index",
                          "extensible array header", ctx.absolute(layout.address))


def _geometry(layout, maxshape):
    """(unlimited dimension, chunk grid of the maximum dimensions with 1 for it)."""
    unlim = [d for d, m in enumerate(maxshape) if m is None]
    grid = [1 if m is None else -(-int(m) // c) for m, c in zip(maxshape, layout.chunk_shape)]
    return (unlim[0] if unlim else 0), grid


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    hdr, index, raw = extensible_array.read_elements(ctx, layout.address)
    _check(ctx, layout, hdr)
    udim, grid = _geometry(layout, maxshape)
    return from_linear(ctx, raw, hdr.client_id == 1, grid, chunk_nbytes,
                       ("extensible array header", ctx.absolute(layout.address)),
                       unlimited_dim=udim, index=index, count=hdr.max_index_set)


def lookup(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    """An ArrayLookup reading only the blocks and pages that hold the chunks asked for
    (None: no chunk is allocated)."""
    if layout.address is None:
        return None
    arr = extensible_array.Elements(ctx, layout.address)
    _check(ctx, layout, arr.header)
    udim, grid = _geometry(layout, maxshape)
    rest = [d for d in range(len(grid)) if d != udim]

    def linear(scaled):
        i = scaled[udim]
        for d in rest:
            i = i * grid[d] + scaled[d]
        return i

    return ArrayLookup(ctx, arr, arr.header.client_id == 1, chunk_nbytes, linear)
