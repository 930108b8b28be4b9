"""Chunk index of layout versions 1-4 with index type 0: a version 1 B-tree of type-1 nodes
(spec III.A.1); keys give each chunk's stored size, filter mask and element offsets."""
import numpy as np

from ..errors import FormatError
from ..format import btree1
from .table import ChunkTable


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    ndims = rank + 1
    raw = btree1.chunk_records(ctx, layout.address, ndims)
    if raw.shape[0] == 0:
        return ChunkTable.empty(rank)
    from ..kernels.chunkindex import decode_records
    ks = btree1.key_size(ctx, btree1.CHUNK, ndims)
    addr, size, mask, offs = decode_records(raw, ks, ctx.sizeof_offsets, 0, 4, 4, 8, ndims, 8)
    chunk = np.asarray(layout.chunk_shape, np.int64)
    offs = offs[:, :rank]
    if np.any(offs % chunk):
        bad = int(np.flatnonzero((offs % chunk).any(axis=1))[0])
        raise FormatError(f"chunk offset {offs[bad].tolist()} is not a multiple of the chunk "
                          f"dimensions {layout.chunk_shape}", "v1 B-tree node",
                          ctx.absolute(layout.address))
    keep = addr != np.uint64(ctx.undefined)
    return ChunkTable(offs // chunk, addr, size, mask).select(keep)
