"""Chunk index emission: the index libhdf5 would build for the chunks a dataset has.

v1 B-trees (layout v3; also the group B-trees of symbol-table groups), single chunk, implicit,
fixed array (paged past 2**page_bits entries), extensible array (one unlimited dimension;
data blocks up to 2**page_bits elements) and v2 B-trees (types 10/11).
"""
import struct

import numpy as np

from ..errors import UnsupportedFeatureError
from ..format import btree2, checksum
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
    ctx = em.ctx
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
    so = ctx.sizeof_offsets
    width = chunk_size_len(chunk_nbytes, wide)
    es = so + (width + 4 if filtered else 0)
    n = int(np.prod(grid))
    by_linear = {int(np.ravel_multi_index(s, grid)): rec for s, rec in items}
    elements = [_element(ctx, by_linear.get(i), filtered, width) for i in range(n)]
    client = 1 if filtered else 0
    hsize = 4 + 4 + ctx.sizeof_lengths + so + 4
    haddr = em.meta.alloc(hsize)
    page_n = 1 << page_bits
    prefix = b"FADB" + bytes((0, client)) + ctx.pack_address(haddr)
    if n <= page_n:
        body = prefix + b"".join(elements)
        body += struct.pack("<I", checksum.lookup3(body))
        daddr = em.meta.alloc(len(body))
        em.meta.put(daddr, body)
    else:
        npages = -(-n // page_n)
        bitmap = bytearray((npages + 7) // 8)
        for pg in range(npages):
            bitmap[pg >> 3] |= 0x80 >> (pg & 7)
        body = prefix + bytes(bitmap)
        body += struct.pack("<I", checksum.lookup3(body))
        pages = []
        for pg in range(npages):
            part = b"".join(elements[pg * page_n:(pg + 1) * page_n])
            part += bytes(page_n * es - len(part)) if False else b""
            pages.append(part + struct.pack("<I", checksum.lookup3(part)))
        page_bytes = page_n * es + 4
        daddr = em.meta.alloc(len(body) + npages * page_bytes)
        em.meta.put(daddr, body)
        for pg, data in enumerate(pages):
            em.meta.put(daddr + len(body) + pg * page_bytes, data)
    hdr = b"FAHD" + bytes((0, client, es, page_bits)) + ctx.pack_length(n) + \
        ctx.pack_address(daddr)
    hdr += struct.pack("<I", checksum.lookup3(hdr))
    em.meta.put(haddr, hdr)
    return haddr


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


def _log2(n):
    return n.bit_length() - 1


def _extensible_array(em, node, items, chunk_nbytes, filtered, info):
    ctx = em.ctx
    so = ctx.sizeof_offsets
    width = chunk_size_len(chunk_nbytes, getattr(node, "wide_chunk_sizes", False))
    es = so + (width + 4 if filtered else 0)
    udim = [d for d, m in enumerate(node.maxshape) if m is None][0]
    others = [d for d in range(len(node.chunks)) if d != udim]
    ogrid = [-(-node.maxshape[d] // node.chunks[d]) for d in others]
    per = int(np.prod(ogrid)) if others else 1

    def linear(scaled):
        rest = int(np.ravel_multi_index([scaled[d] for d in others], ogrid)) if others else 0
        return scaled[udim] * per + rest

    by_linear = {linear(s): rec for s, rec in items}
    total = max(by_linear) + 1
    max_bits, nidx = info["max_bits"], info["index_elements"]
    min_ptrs, min_el, page_bits = info["min_pointers"], info["min_elements"], info["page_bits"]
    client = 1 if filtered else 0
    off_size = (max_bits + 7) // 8
    nsuper_total = 1 + max_bits - _log2(min_el)
    n_iblk_super = 2 * _log2(min_ptrs)
    n_iblk_dblk = 2 * (min_ptrs - 1)
    n_iblk_sblk = max(nsuper_total - n_iblk_super, 0)

    def elements(first, count):
        return b"".join(_element(ctx, by_linear.get(i), filtered, width)
                        for i in range(first, first + count))

    hsize = 4 + 8 + 6 * ctx.sizeof_lengths + so + 4
    haddr = em.meta.alloc(hsize)
    isize = 6 + so + nidx * es + (n_iblk_dblk + n_iblk_sblk) * so + 4
    iaddr = em.meta.alloc(isize)
    dblk_addrs = [None] * n_iblk_dblk
    sblk_addrs = [None] * n_iblk_sblk
    ndata = data_size = nsuper = super_size = 0
    realized = min(total, nidx)
    start, d = 0, 0
    s = 0
    while nidx + start < total:
        nd = 1 << (s // 2)
        ne = (1 << ((s + 1) // 2)) * min_el
        if ne > (1 << page_bits):
            raise UnsupportedFeatureError("extensible array chunk indexes with paged data "
                                          "blocks (very many chunks) are not written yet")
        addrs = []
        for j in range(nd):
            first = nidx + start + j * ne
            if first >= total:
                addrs.append(None)
                continue
            body = (b"EADB" + bytes((0, client)) + ctx.pack_address(haddr)
                    + (start + j * ne).to_bytes(off_size, "little") + elements(first, ne))
            body += struct.pack("<I", checksum.lookup3(body))
            a = em.meta.alloc(len(body))
            em.meta.put(a, body)
            addrs.append(a)
            ndata += 1
            data_size += len(body)
            realized += ne
        if s < n_iblk_super:
            for a in addrs:
                dblk_addrs[d] = a
                d += 1
        else:
            body = (b"EASB" + bytes((0, client)) + ctx.pack_address(haddr)
                    + start.to_bytes(off_size, "little") + b"".join(ctx.pack_address(a)
                                                                     for a in addrs))
            body += struct.pack("<I", checksum.lookup3(body))
            a = em.meta.alloc(len(body))
            em.meta.put(a, body)
            sblk_addrs[s - n_iblk_super] = a
            nsuper += 1
            super_size += len(body)
        start += nd * ne
        s += 1
    body = (b"EAIB" + bytes((0, client)) + ctx.pack_address(haddr) + elements(0, nidx)
            + b"".join(ctx.pack_address(a) for a in dblk_addrs)
            + b"".join(ctx.pack_address(a) for a in sblk_addrs))
    body += struct.pack("<I", checksum.lookup3(body))
    em.meta.put(iaddr, body)
    L_ = ctx.pack_length
    hdr = (b"EAHD" + bytes((0, client, es, max_bits, nidx, min_el, min_ptrs, page_bits))
           + L_(nsuper) + L_(super_size) + L_(ndata) + L_(data_size) + L_(total)
           + L_(realized) + ctx.pack_address(iaddr))
    hdr += struct.pack("<I", checksum.lookup3(hdr))
    em.meta.put(haddr, hdr)
    return haddr
