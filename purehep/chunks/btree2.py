"""Version 2 B-tree index (spec VII.E; III.A.2 record types 10 and 11): each record holds a
chunk's address, (type 11) stored size and filter mask, and its scaled offsets."""
import numpy as np

from ..errors import FormatError
from ..format.btree2 import BTree2, ChunkRecordContext
from .table import ChunkTable


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    tree = BTree2.decode(ctx, layout.address, record_context=ChunkRecordContext(rank))
    if tree.type not in (10, 11):
        raise FormatError(f"v2 B-tree of type {tree.type} is not a chunk index",
                          "v2 B-tree header", ctx.absolute(layout.address))
    raw = tree.record_bytes()
    so = ctx.sizeof_offsets
    from ..kernels.chunkindex import decode_records
    raw = np.ascontiguousarray(raw).reshape(-1, tree.record_size)
    if tree.type == 11:
        width = tree.record_size - so - 4 - 8 * rank
        if not 1 <= width <= 8:
            raise FormatError(f"record size {tree.record_size} does not fit rank {rank}",
                              "v2 B-tree header", ctx.absolute(layout.address))
        addr, size, mask, scaled = decode_records(raw, 0, so, so, width, so + width,
                                                  so + width + 4, rank, 8)
    else:
        if tree.record_size != so + 8 * rank:
            raise FormatError(f"record size {tree.record_size} does not fit rank {rank}",
                              "v2 B-tree header", ctx.absolute(layout.address))
        addr, size, mask, scaled = decode_records(raw, 0, so, -1, 0, -1, so, rank, 8)
        size[:] = chunk_nbytes
    keep = addr != np.uint64(ctx.undefined)
    return ChunkTable(scaled, addr, size, mask).select(keep)
