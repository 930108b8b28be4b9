"""Chunk index of layout versions 1-4 with index type 0: a version 1 B-tree of type-1 nodes
(spec III.A.1); keys give each chunk's stored size, filter mask and element offsets."""
import bisect

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
    element offsets, as the library's do). Only the nodes on the way are read, each kept in
    a NodeCache as its entries' bytes and their keys' first offsets (a leaf also with its
    first and last keys); a key in the range of the leaf found last is looked for there
    first. Keys are bisected on their first offsets (all of a 1-D dataset's key)."""
    if layout.address is None:
        return None
    rank = len(layout.chunk_shape)
    ndims = rank + 1
    ks = btree1.key_size(ctx, btree1.CHUNK, ndims)
    # an entry: chunk size, filter mask, ndims element offsets, child address
    recs = Records([4, 4] + [8] * ndims + [ctx.sizeof_offsets], 2, rank)
    unpack, size, search = recs.entry.unpack_from, recs.size, recs.search
    int_child = ctx.sizeof_offsets in (2, 4, 8)   # unpacked as an int, not bytes
    nodes = NodeCache()
    cached = nodes.get
    room = [64]                   # entries read with a node's header: the most seen
    cshape = tuple(layout.chunk_shape)
    one = rank == 1
    root, undefined = layout.address, ctx.undefined

    def node(addr, level):
        level, n, body = btree1.read_node(ctx, addr, btree1.CHUNK, ks, level, room[0])
        room[0] = max(room[0], n)
        firsts = recs.firsts(body, n)
        ends = (unpack(body, 0)[2:2 + rank], unpack(body, (n - 1) * size)[2:2 + rank]) \
            if n and not level else None
        return nodes.put(addr, level, (level, body, firsts, ends))

    last = [(0, b"", (), None)]   # the leaf found last

    def find(scaled):
        target = (int(scaled[0]) * cshape[0],) if one else \
            tuple([int(s) * c for s, c in zip(scaled, cshape)])
        t0 = target[0]
        got = last[0]
        ends = got[3]
        if ends is None or not ends[0] <= target <= ends[1]:
            addr, level = root, None
            while True:
                got = cached(addr)
                if got is None or (level is not None and got[0] != level):
                    got = node(addr, level)     # checks the level: a loop in the tree fails
                level = got[0]
                if not level:
                    break
                i = (bisect.bisect_right(got[2], t0) if one else
                     search(got[1], got[2], target, "right")) - 1
                if i < 0:
                    return None
                addr = unpack(got[1], i * size)[-1]
                if not int_child:
                    addr = as_int(addr)
                level -= 1
            if got[3] is not None:
                last[0] = got
        body, firsts = got[1], got[2]
        i = bisect.bisect_left(firsts, t0) if one else search(body, firsts, target, "left")
        if i == len(firsts):
            return None
        r = unpack(body, i * size)
        if (r[2] != t0 if one else r[2:2 + rank] != target):
            return None
        child = r[-1] if int_child else as_int(r[-1])
        return None if child == undefined else (child, r[0], r[1])

    return find
