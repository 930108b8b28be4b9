"""Single Chunk index (spec VII.A): the layout message holds the address of the only chunk,
and, when filtered (flag bit 1, Appendix F note 2), its stored size and filter mask."""
import numpy as np

from .table import ChunkTable


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    info = layout.index_info
    size = info.get("filtered_size", chunk_nbytes)
    mask = info.get("filter_mask", 0)
    return ChunkTable(np.zeros((1, rank), np.int64), np.array([layout.address], np.uint64),
                      np.array([size], np.int64), np.array([mask], np.uint32))


def lookup(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    """``find(scaled)`` -> the only chunk's (address, size, filter mask) at grid position 0."""
    t = load(ctx, layout, shape, maxshape, chunk_nbytes, filtered)
    if not len(t):
        return None
    rec = int(t.addresses[0]), int(t.sizes[0]), int(t.masks[0])
    return lambda scaled: rec if not any(scaled) else None
