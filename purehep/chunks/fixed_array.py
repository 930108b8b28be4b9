"""Fixed Array index (spec VII.C): element i describes the chunk with row-major index i over
the chunk grid of the maximum dimensions."""
from ..errors import FormatError
from ..format import fixed_array
from .table import ChunkTable, from_linear, _prod


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    hdr, raw = fixed_array.read_elements(ctx, layout.address)
    grid = [-(-int(m) // c) for m, c in zip(maxshape, layout.chunk_shape)]
    if _prod(grid) != hdr.max_entries:
        raise FormatError(f"fixed array holds {hdr.max_entries} entries but the chunk grid of "
                          f"the maximum dimensions {tuple(maxshape)} has {_prod(grid)}",
                          "fixed array header", ctx.absolute(layout.address))
    if hdr.client_id not in (0, 1):
        raise FormatError(f"fixed array client id {hdr.client_id} is not a chunk index",
                          "fixed array header", ctx.absolute(layout.address))
    return from_linear(ctx, raw, hdr.client_id == 1, grid, chunk_nbytes,
                       ("fixed array header", ctx.absolute(layout.address)))
