"""Chunk index emission: the index libhdf5 would build for the chunks a dataset has.

v1 B-trees (layout v3; also the group B-trees of symbol-table groups), single chunk, implicit,
fixed array (paged past 2**page_bits entries), extensible array (one unlimited dimension;
paged data blocks past 2**page_bits elements) and v2 B-trees (types 10/11). The array and
tree structures are encoded by their format/ modules; this module supplies the elements.
"""
import struct

import numpy as np

from ..errors import UnsupportedFeatureError
from ..format import btree2, extensible_array, fixed_array
from ..format.messages import layout as L
from . import values as V


def chunk_size_len(chunk_nbytes, wide=False):
    """Bytes of a filtered chunk's size in array/B-tree elements (the library's rule; always
    8 under a version 5 layout message, ``wide``)."""
    if wide:
        return 8
    return min(8, 1 + ((max(chunk_nbytes, 1).bit_length() - 1) + 8) // 8)


# --- v1 B-tree (spec III.A.1) -------------------------------------------------------------------

from ..format.btree1 import node_size as btree1_node_size, encode_node as encode_btree1_node  # noqa: E402,F401


def btree1(em, node_type, children, keys, key_size, k, root=None):
    """Write a v1 B-tree over ``children`` (leaf-level child addresses, in key order) with
    ``keys`` (len(children) + 1 encoded keys); returns the root address. ``root`` = (address,
    put): the root node goes to that fixed address through ``put`` (modify mode keeps a
    group's B-tree address, which symbol table entries cache)."""
    ctx = em.ctx
    per = 2 * k
    level = 0
    size = btree1_node_size(ctx, key_size, k)

    def place(n_nodes):
        if n_nodes == 1 and root is not None:
            return [root[0]]
        return [em.meta.alloc(size) for _ in range(n_nodes)]

    def put(addr, data):
        if root is not None and addr == root[0]:
            root[1](addr, data)
        else:
            em.meta.put(addr, data)

    if not children:
        addr = place(1)[0]
        put(addr, encode_btree1_node(ctx, node_type, 0, keys[:1], [], None, None, key_size, k))
        return addr
    while True:
        groups = [(i, min(i + per, len(children))) for i in range(0, len(children), per)]
        addrs = place(len(groups))
        for j, (a, b) in enumerate(groups):
            left = addrs[j - 1] if j > 0 else None
            right = addrs[j + 1] if j + 1 < len(addrs) else None
            put(addrs[j], encode_btree1_node(ctx, node_type, level, keys[a:b + 1],
                                             children[a:b], left, right, key_size, k))
        if len(addrs) == 1:
            return addrs[0]
        keys = [keys[a] for a, _ in groups] + [keys[groups[-1][1]]]
        children = addrs
        level += 1


# --- per dataset --------------------------------------------------------------------------------

def emit(em, p, records):
    node = p.node
    ctx = em.ctx
    index, info = node.index
    p.side["index"] = (index, info)
    esize = V.stored_dtype(node.dtype, ctx.sizeof_offsets).itemsize
    chunk_nbytes = int(np.prod(node.chunks)) * esize
    rank = len(node.chunks)
    filtered = bool(node.filters)
    items = sorted(records.items())
    if index == L.IMPLICIT:
        base = getattr(node.store, "implicit_base", None)
        if base is None and items:
            base = min(rec[0] for _, rec in items)
        p.side["index_address"] = base if items else None
        return
    if index == L.SINGLE:
        if items:
            scaled, rec = items[0]
            p.side["index_address"] = rec[0]
            p.side["single_size"], p.side["single_mask"] = rec[1], rec[2]
        return
    if not items:
        p.side["index_address"] = None
        return
    if index == L.BTREE1:
        p.side["index_address"] = _btree1_chunks(em, node, items, esize, rank)
    elif index == L.BTREE2:
        p.side["index_address"] = _btree2_chunks(em, node, items, chunk_nbytes, filtered, info)
    elif index == L.FIXED_ARRAY:
        grid = [-(-m // c) for m, c in zip(node.maxshape, node.chunks)]
        p.side["index_address"] = _fixed_array(em, items, grid, chunk_nbytes, filtered,
                                                info["page_bits"],
                                                getattr(node, "wide_chunk_sizes", False))
    elif index == L.EXTENSIBLE_ARRAY:
        p.side["index_address"] = _extensible_array(em, node, items, chunk_nbytes, filtered,
                                                    info)
    else:
        raise UnsupportedFeatureError(f"chunk index type {index}")


def _btree1_chunks(em, node, items, esize, rank):
    key_size = 8 + 8 * (rank + 1)

    def key(nbytes, mask, offsets):
        return struct.pack(f"<II{rank + 1}Q", nbytes, mask, *offsets, 0)

    keys, children = [], []
    for scaled, rec in items:
        offsets = [s * c for s, c in zip(scaled, node.chunks)]
        keys.append(key(rec[1], rec[2], offsets))
        children.append(rec[0])
    last = [s * c + c for s, c in zip(items[-1][0], node.chunks)]
    keys.append(key(0, 0, last))
    return btree1(em, 1, children, keys, key_size, 32)


def _element(ctx, rec, filtered, width):
    if rec is None:
        addr = ctx.pack_address(None)
        return addr + (bytes(width + 4) if filtered else b"")
    out = ctx.pack_address(rec[0])
    if filtered:
        out += int(rec[1]).to_bytes(width, "little") + struct.pack("<I", rec[2])
    return out


def _fixed_array(em, items, grid, chunk_nbytes, filtered, page_bits, wide=False):
    ctx = em.ctx
    width = chunk_size_len(chunk_nbytes, wide)
    n = int(np.prod(grid))
    by_linear = {int(np.ravel_multi_index(s, grid)): rec for s, rec in items}
    elements = [_element(ctx, by_linear.get(i), filtered, width) for i in range(n)]
    es = ctx.sizeof_offsets + (width + 4 if filtered else 0)
    haddr, blocks = fixed_array.encode(ctx, elements, es, 1 if filtered else 0, page_bits,
                                       em.meta.alloc)
    put_blocks(em, blocks)
    return haddr


def put_blocks(em, blocks):
    for addr, data in blocks:
        em.meta.put(addr, data)


def _btree2_chunks(em, node, items, chunk_nbytes, filtered, info):
    ctx = em.ctx
    rank = len(node.chunks)
    width = chunk_size_len(chunk_nbytes, getattr(node, "wide_chunk_sizes", False))
    btype = 11 if filtered else 10
    rctx = btree2.ChunkRecordContext(rank, width)
    recs = []
    for scaled, rec in items:
        c = btree2.Chunk(rec[0], tuple(scaled), rec[1], rec[2])
        recs.append(btree2.encode_record(btype, c, ctx, rctx))
    size = len(recs[0])
    return em._tree(btype, recs, size, node_size=info["node_size"],
                    split_percent=info["split_percent"], merge_percent=info["merge_percent"])


def _extensible_array(em, node, items, chunk_nbytes, filtered, info):
    ctx = em.ctx
    width = chunk_size_len(chunk_nbytes, getattr(node, "wide_chunk_sizes", False))
    es = ctx.sizeof_offsets + (width + 4 if filtered else 0)
    udim = [d for d, m in enumerate(node.maxshape) if m is None][0]
    others = [d for d in range(len(node.chunks)) if d != udim]
    ogrid = [-(-node.maxshape[d] // node.chunks[d]) for d in others]
    per = int(np.prod(ogrid)) if others else 1

    def linear(scaled):
        rest = int(np.ravel_multi_index([scaled[d] for d in others], ogrid)) if others else 0
        return scaled[udim] * per + rest

    by_linear = {linear(s): rec for s, rec in items}
    haddr, blocks = extensible_array.encode(
        ctx, by_linear, lambda rec: _element(ctx, rec, filtered, width), es,
        1 if filtered else 0, em.meta.alloc, **{k: info[k] for k in extensible_array.PARAMETERS})
    put_blocks(em, blocks)
    return haddr
