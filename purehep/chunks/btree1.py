"""Chunk index of layout versions 1-4 with index type 0: a version 1 B-tree of type-1 nodes
(spec III.A.1); keys give each chunk's stored size, filter mask and element offsets."""
import operator

import numpy as np

from ..errors import FormatError
from ..format import btree1
from .cache import NodeCache
from .table import ChunkTable, Records, as_int


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
    element offsets, as the library's do); only the nodes on the way are read, each kept in
    a NodeCache as (level, its entries' bytes, their keys' first offsets), and a key in
    the range of the leaf found last is looked for there first."""
    if layout.address is None:
        return None
    rank = len(layout.chunk_shape)
    ndims = rank + 1
    ks = btree1.key_size(ctx, btree1.CHUNK, ndims)
    # an entry: chunk size, filter mask, ndims element offsets, child address
    recs = Records([4, 4] + [8] * ndims + [ctx.sizeof_offsets], 2, rank)
    nodes = NodeCache()
    cached = nodes.get
    room = [64]                   # entries read with a node's header: the most seen

    def node(addr, level):
        level, n, body = btree1.read_node(ctx, addr, btree1.CHUNK, ks, level, room[0])
        room[0] = max(room[0], n)
        return nodes.put(addr, level, (level, body, recs.firsts(body, n)))

    last = [None]                 # (first key, last key, node) of the leaf found last

    def leaf(target):
        """The leaf whose keys' range holds ``target`` (None: left of every key)."""
        memo = last[0]
        if memo is not None and memo[0] <= target <= memo[1]:
            return memo[2]          # reads close together stay in one leaf
        addr, level = layout.address, None
        while True:
            got = cached(addr)
            if got is None or (level is not None and got[0] != level):
                got = node(addr, level)     # checks the level: a loop in the tree fails
            level, body, firsts = got
            if not level:
                if len(firsts):
                    last[0] = (recs.record(body, 0)[2:2 + rank],
                               recs.record(body, len(firsts) - 1)[2:2 + rank], got)
                return got
            i = recs.search(body, firsts, target, "right") - 1
            if i < 0:
                return None
            addr, level = as_int(recs.record(body, i)[-1]), level - 1

    def find(scaled):
        target = tuple(map(operator.mul, map(int, scaled), layout.chunk_shape))
        got = leaf(target)
        if got is None:
            return None
        _, body, firsts = got
        i = recs.search(body, firsts, target, "left")
        if i == len(firsts):
            return None
        r = recs.record(body, i)
        child = as_int(r[-1])
        if r[2:2 + rank] != target or child == ctx.undefined:
            return None
        return child, r[0], r[1]

    return find
