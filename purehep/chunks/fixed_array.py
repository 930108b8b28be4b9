"""Fixed Array index (spec VII.C): element i describes the chunk with row-major index i over
the chunk grid of the maximum dimensions."""
from ..errors import FormatError
from ..format import fixed_array
from .table import ArrayLookup, ChunkTable, from_linear, _prod


def _elements(ctx, layout, maxshape):
    """(fixed_array.Elements, chunk grid of the maximum dimensions), checked against each
    other."""
    arr = fixed_array.Elements(ctx, layout.address)
    hdr = arr.header
    grid = [-(-int(m) // c) for m, c in zip(maxshape, layout.chunk_shape)]
    if _prod(grid) != hdr.max_entries:
        raise FormatError(f"fixed array holds {hdr.max_entries} entries but the chunk grid of "
                          f"the maximum dimensions {tuple(maxshape)} has {_prod(grid)}",
                          "fixed array header", ctx.absolute(layout.address))
    if hdr.client_id not in (0, 1):
        raise FormatError(f"fixed array client id {hdr.client_id} is not a chunk index",
                          "fixed array header", ctx.absolute(layout.address))
    return arr, grid


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    arr, grid = _elements(ctx, layout, maxshape)
    return from_linear(ctx, arr.all(), arr.header.client_id == 1, grid, chunk_nbytes,
                       ("fixed array header", ctx.absolute(layout.address)))


def lookup(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    """An ArrayLookup reading only the pages that hold the chunks asked for (None: no
    chunk is allocated)."""
    if layout.address is None:
        return None
    arr, grid = _elements(ctx, layout, maxshape)

    def linear(scaled):
        i = 0
        for p, g in zip(scaled, grid):
            i = i * g + p
        return i

    return ArrayLookup(ctx, arr, arr.header.client_id == 1, chunk_nbytes, linear)
