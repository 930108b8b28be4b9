"""Chunk index of layout versions 1-4 with index type 0: a version 1 B-tree of type-1 nodes
(spec III.A.1); keys give each chunk's stored size, filter mask and element offsets."""
import numpy as np

from ..errors import FormatError
from ..format import btree1
from .table import ChunkTable, search


def _columns(ctx, raw, ndims):
    """(child addresses, sizes, masks, element offsets (n, ndims)) of node entries ``raw``."""
    from ..kernels.chunkindex import decode_records
    ks = btree1.key_size(ctx, btree1.CHUNK, ndims)
    return decode_records(raw, ks, ctx.sizeof_offsets, 0, 4, 4, 8, ndims, 8)


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    ndims = rank + 1
    raw = btree1.chunk_records(ctx, layout.address, ndims)
    if raw.shape[0] == 0:
        return ChunkTable.empty(rank)
    addr, size, mask, offs = _columns(ctx, raw, ndims)
    chunk = np.asarray(layout.chunk_shape, np.int64)
    offs = offs[:, :rank]
    if np.any(offs % chunk):
        bad = int(np.flatnonzero((offs % chunk).any(axis=1))[0])
        raise FormatError(f"chunk offset {offs[bad].tolist()} is not a multiple of the chunk "
                          f"dimensions {layout.chunk_shape}", "v1 B-tree node",
                          ctx.absolute(layout.address))
    keep = addr != np.uint64(ctx.undefined)
    return ChunkTable(offs // chunk, addr, size, mask).select(keep)


def lookup(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    """``find(scaled)`` -> (address, size, filter mask) or None, descending the tree from
    the root: child i of a node holds the chunks from key i on (keys compare as tuples of
    element offsets, as the library's do); only the nodes on the way are read (and kept)."""
    if layout.address is None:
        return None
    rank = len(layout.chunk_shape)
    ndims = rank + 1
    nodes = {}

    def node(addr, level):
        got = nodes.get(addr)
        if got is None:
            n = btree1.decode_node(ctx, addr, btree1.CHUNK, ndims, level)
            child, size, mask, offs = _columns(ctx, n.entries, ndims)
            got = nodes[addr] = (n.level, offs[:, :rank], child, size, mask)
        return got

    def find(scaled):
        target = [int(p) * c for p, c in zip(scaled, layout.chunk_shape)]
        addr, level = layout.address, None
        while True:
            level, keys, child, size, mask = node(addr, level)
            if level == 0:
                i = search(keys, target, "left")
                if i < len(keys) and keys[i].tolist() == target and \
                        int(child[i]) != ctx.undefined:
                    return int(child[i]), int(size[i]), int(mask[i])
                return None
            i = search(keys, target, "right") - 1
            if i < 0:
                return None
            addr, level = int(child[i]), level - 1

    return find
