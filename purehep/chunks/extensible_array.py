"""Extensible Array index (spec VII.D): one unlimited dimension; element i describes the chunk
with row-major index i over the chunk grid with the unlimited dimension moved first."""
from ..errors import FormatError
from ..format import extensible_array
from .table import ChunkTable, from_linear


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    hdr, index, raw = extensible_array.read_elements(ctx, layout.address)
    if hdr.client_id not in (0, 1):
        raise FormatError(f"extensible array client id {hdr.client_id} is not a chunk index",
                          "extensible array header", ctx.absolute(layout.address))
    unlim = [d for d, m in enumerate(maxshape) if m is None]
    udim = unlim[0] if unlim else 0
    grid = [1 if m is None else -(-int(m) // c) for m, c in zip(maxshape, layout.chunk_shape)]
    return from_linear(ctx, raw, hdr.client_id == 1, grid, chunk_nbytes,
                       ("extensible array header", ctx.absolute(layout.address)),
                       unlimited_dim=udim, index=index, count=hdr.max_index_set)
