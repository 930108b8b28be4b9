"""Version 2 B-tree index (spec VII.E; III.A.2 record types 10 and 11): each record holds a
chunk's address, (type 11) stored size and filter mask, and its scaled offsets."""
import bisect

import numpy as np

from ..errors import FormatError
from ..format.btree2 import BTree2, ChunkRecordContext
from ..format.checksum import Batches
from ..kernels.checksum import lookup3_is_compiled
from .cache import NodeCache
from .table import ChunkTable, Records, as_int


VERIFIED_KEPT = 4096              # node bytes verified in batches, waiting to be asked for


def _tree(ctx, layout):
    rank = len(layout.chunk_shape)
    tree = BTree2.decode(ctx, layout.address, record_context=ChunkRecordContext(rank))
    if tree.type not in (10, 11):
        raise FormatError(f"v2 B-tree of type {tree.type} is not a chunk index",
                          "v2 B-tree header", ctx.absolute(layout.address))
    so = ctx.sizeof_offsets
    width = tree.record_size - so - 4 - 8 * rank
    if (tree.type == 11 and not 1 <= width <= 8) or \
            (tree.type == 10 and tree.record_size != so + 8 * rank):
        raise FormatError(f"record size {tree.record_size} does not fit rank {rank}",
                          "v2 B-tree header", ctx.absolute(layout.address))
    return tree


def _columns(ctx, tree, raw, rank, chunk_nbytes):
    """(addresses, sizes, masks, scaled offsets) of records ``raw`` (n, record size)."""
    from ..kernels.chunkindex import decode_records
    so = ctx.sizeof_offsets
    raw = np.ascontiguousarray(raw).reshape(-1, tree.record_size)
    if tree.type == 11:
        width = tree.record_size - so - 4 - 8 * rank
        return decode_records(raw, 0, so, so, width, so + width, so + width + 4, rank, 8)
    addr, size, mask, scaled = decode_records(raw, 0, so, -1, 0, -1, so, rank, 8)
    size[:] = chunk_nbytes
    return addr, size, mask, scaled


def load(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    rank = len(layout.chunk_shape)
    if layout.address is None:
        return ChunkTable.empty(rank)
    tree = _tree(ctx, layout)
    addr, size, mask, scaled = _columns(ctx, tree, tree.record_bytes(), rank, chunk_nbytes)
    keep = addr != np.uint64(ctx.undefined)
    return ChunkTable(scaled, addr, size, mask).select(keep)


def lookup(ctx, layout, shape, maxshape, chunk_nbytes, filtered):
    """``find(scaled)`` -> (address, size, filter mask) or None, descending the tree from
    the root (records ordered by their scaled offsets as tuples, as the library compares
    them); only the nodes on the way are read (their checksums verified), each kept in a
    NodeCache as (level, its records' bytes, their keys' first offsets, its children). A
    key in the range of the leaf searched last is looked for there first; else, below a
    root of depth 2 or more, from the level-1 node read before whose range holds it (the
    ``twigs``, by first offsets: random reads through a large tree meet the few level-1
    nodes again and again, and start there instead of at the root)."""
    if layout.address is None:
        return None
    rank = len(layout.chunk_shape)
    tree = _tree(ctx, layout)
    so = ctx.sizeof_offsets
    if tree.type == 11:           # address, stored size, filter mask, scaled offsets
        recs = Records([so, tree.record_size - so - 4 - 8 * rank, 4] + [8] * rank, 3, rank)
    else:                         # address, scaled offsets
        recs = Records([so] + [8] * rank, 1, rank)
    unpack, size, search, kk = recs.entry.unpack_from, recs.size, recs.search, recs.key
    nodes = NodeCache()
    cached = nodes.get
    one, filtered_records = rank == 1, tree.type == 11
    undefined = ctx.undefined

    def node(addr, nrec, level, parent):
        buf = verified.pop((addr, nrec, level), None) if verified else None
        if buf is None and parent is not None and not lookup3_is_compiled() and \
                ctx.verify_checksums and nrec <= tree.node_info[level].max_nrec:
            buf = batched(addr, nrec, level, parent)
        if buf is None:
            raw, children, _ = tree._read_node(addr, nrec, level)
        else:
            raw, children, _ = tree.node_parts(buf, addr, nrec, level)
        got = nodes.put(addr, level, (level, raw, recs.firsts(raw, nrec), children))
        if level == 1 and parent is not None and nrec > 1:
            twig(got)
        return got

    twig_lo, twig_hi, twig_nodes = [], [], []   # level-1 nodes: first offsets of their
    # first and last keys, sorted; ranges never overlap (the nodes are disjoint subtrees)

    def twig(got):
        firsts = got[2]
        j = bisect.bisect_left(twig_lo, firsts[0])
        if j < len(twig_lo) and twig_lo[j] == firsts[0] and twig_hi[j] == firsts[-1]:
            twig_nodes[j] = got       # read again (the node cache let it go): not twice
            return
        twig_lo.insert(j, firsts[0])
        twig_hi.insert(j, firsts[-1])
        twig_nodes.insert(j, got)

    batches = {}                  # (node bytes, level) -> checksum.Batches
    verified = {}                 # (address, nrec, level) -> node bytes verified with others

    def batched(addr, nrec, level, parent):
        """The bytes of the node at ``addr``, read as ``Batches`` decides while lookup3
        runs as plain Python: alone, or with its siblings of the same size (as many records)
        under ``parent`` once reading them one at a time has cost what hashing them all at
        once would (a tree built by appends has all but its last leaves full). The siblings'
        bytes wait in ``verified`` (VERIFIED_KEPT at most) until asked for."""
        nbytes = tree.node_bytes(nrec, level)
        b = batches.get((nbytes, level))
        if b is None:
            b = batches[nbytes, level] = Batches(
                ctx, nbytes, "v2 B-tree internal node" if level else "v2 B-tree leaf node",
                lambda buf, a: tree.check_prefix(buf, a, level))

        def others():
            return {a: a for a in _siblings(parent, nrec)
                    if cached(a) is None and (a, nrec, level) not in verified}

        got = b.load(parent, len(parent), addr, addr, others)
        for a, buf in got.items():
            if a != addr and len(verified) < VERIFIED_KEPT:
                verified[a, nrec, level] = buf
        return got[addr]

    def record(r):
        """(address, size, filter mask) of the unpacked record ``r`` (None: unallocated)."""
        a = r[0]
        if type(a) is not int:
            a = as_int(a)
        if a == undefined:
            return None
        return (a, as_int(r[1]), r[2]) if filtered_records else (a, chunk_nbytes, 0)

    last = [(0, b"", (0,), ())]    # the leaf searched last
    root = (tree.root_address, tree.root_nrecords, tree.depth)
    bisect_left, bisect_right = bisect.bisect_left, bisect.bisect_right

    def find(scaled):
        key = (int(scaled[0]),) if one else tuple(map(int, scaled))
        k0 = key[0]
        got = last[0]
        firsts = got[2]
        # a key whose first offset lies inside a leaf's is in that leaf if anywhere
        if firsts[0] < k0 < firsts[-1] or (one and firsts[0] <= k0 <= firsts[-1]):
            level = 0
        elif twig_lo and (j := bisect_right(twig_lo, k0) - 1) >= 0 and \
                (twig_lo[j] < k0 < twig_hi[j] or (one and k0 <= twig_hi[j])):
            got, level = twig_nodes[j], 1
            firsts = got[2]
        else:
            got, (addr, nrec, level), parent = None, root, None
            if addr is None:
                return None
        while True:
            if got is None:
                got = cached(addr)
                if got is None or got[0] != level:   # levels fall by one a step: loops end
                    got = node(addr, nrec, level, parent)
                firsts = got[2]
                if not level and len(firsts):
                    last[0] = got
            i = bisect_left(firsts, k0)
            if i < len(firsts) and firsts[i] == k0:    # keys sharing the first offset
                raw = got[1]
                if one or i + 1 == len(firsts) or firsts[i + 1] != k0:   # only one: compare it
                    r = unpack(raw, i * size)
                    if r[kk:] == key:
                        return record(r)
                    i += r[kk:] < key
                else:
                    i = search(raw, firsts, key, "left")
                    if i < len(firsts):
                        r = unpack(raw, i * size)
                        if r[kk:] == key:
                            return record(r)
            if not level:
                return None
            parent = got[3]
            addr, nrec, _ = parent.done.get(i) or parent[i]
            got, level = None, level - 1

    return find


def _siblings(children, nrec):
    """Addresses of the nodes among ``children`` (an internal node's child pointers) that
    hold ``nrec`` records; a pointer that does not decode is left out (it fails when its
    own node is asked for)."""
    out = []
    for j in range(len(children)):
        try:
            a, n, _ = children[j]
        except FormatError:
            continue
        if n == nrec:
            out.append(a)
    return out
