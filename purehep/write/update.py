"""Rewriting one object already in the file at a commit (purehep.write.writer.Writer.stage):
its links (symbol-table groups edited in place or rebuilt; link messages, compact or dense),
its attributes, its dataset storage (dataspace, layout, chunk index edited in place where
purehep.write.incremental can, else rebuilt), then its header around the new messages
(chunk 0 in place, the rest in a new continuation block). ``w`` is the Writer: its context,
allocator, the blocks each object owns, and the in-place patches of the stage.
"""
import struct
from dataclasses import replace

import numpy as np

from ..format import checksum, local_heap, symbol_table, superblock as SB
from ..format import btree1 as B1
from ..format import messages as M
from ..format.messages import (attribute_info as m_ainfo, dataspace as m_space,
                               group_info as m_ginfo, layout as L, link_info as m_linfo,
                               simple as m_simple)
from . import model
from . import policy as P
from .header import (DATASPACE, LINK_INFO, LINK, LAYOUT, GROUP_INFO, ATTRIBUTE, STAB,
                     ATTR_INFO, REFCOUNT, DONT_SHARE, GROUP_LEAF_K, GROUP_INTERNAL_K)
from .existing import (Existing, ExistingAttr, ExistingDataset, ExistingGroup, ExistingLink,
                       _target)
from .header import HeaderLayout, rebuild_messages


def update_existing(w, em, node, R, refdelta=0, force=False):
    """Emit what changed in ``node`` (an object already in the file) since the last stage."""
    if not isinstance(node, Existing):
        return
    replace_types, extra = set(), {}
    if isinstance(node, ExistingGroup) and node.links_changed():
        _update_links(w, em, node, R, replace_types, extra)
    if node.attrs_changed():
        _update_attrs(w, em, node, R, replace_types, extra)
    if isinstance(node, ExistingDataset) and node.data_changed():
        _update_dataset(w, em, node, R, replace_types, extra)
    if not replace_types and not refdelta:
        return
    _rewrite_header(w, em, node, replace_types, extra, refdelta)


def _rewrite_header(w, em, node, replace_types, extra, refdelta):
    ctx = w.ctx
    header = node.header
    refcount = header.refcount
    if header.version == 2:
        rc = header.first(REFCOUNT)
        refcount = M.decode(ctx, rc) if rc is not None else 1
        if not isinstance(refcount, int):
            refcount = getattr(refcount, "count", 1)
    refcount = max(refcount + refdelta, 1)
    if header.version == 2 and refdelta:
        replace_types.add(REFCOUNT)
        extra[REFCOUNT] = [(REFCOUNT, DONT_SHARE, m_simple.encode_refcount(refcount), 0)] \
            if refcount > 1 else []
    msgs = rebuild_messages(header, replace_types, extra)
    lay = HeaderLayout(ctx, header)
    meta = em.meta
    meta.owner = (id(node), "header")
    chunk0, blocks = lay.encode(msgs, meta.alloc, refcount)
    meta.owner = None
    for a, data in blocks:
        meta.put(a, data)
    key = (id(node), "header")
    if key not in w.owned:         # continuation blocks of the file as it was
        w.owned[key] = list(lay.old_blocks)
    w.patches.append((2, node.address, chunk0))


def _update_links(w, em, node, R, replace_types, extra):
    links = node._links
    if node.old_style and _fits(links):
        added = _added_links(node)
        if added:
            _insert_symbol_table(w, em, node, added)
        else:
            _rebuild_symbol_table(w, em, node)
        return
    if node.old_style:           # a link a symbol table cannot hold: become new-style
        replace_types.update((STAB, LINK_INFO, GROUP_INFO, LINK))
        extra[GROUP_INFO] = [(GROUP_INFO, 0x01, m_ginfo.encode(m_ginfo.GroupInfo()), 0)]
        ginfo = m_ginfo.GroupInfo()
        node.old_style = False
        for e in links.values():
            e.raw = None
    else:
        graw = node.header.first(GROUP_INFO)
        ginfo = M.decode(w.ctx, graw) if graw is not None else m_ginfo.GroupInfo()
        replace_types.update((LINK_INFO, LINK))
    track = node.link_order
    info = node.link_info
    was_dense = bool(info and info.dense)
    dense = len(links) > ginfo.max_compact or (was_dense and len(links) >= ginfo.min_dense)
    from .emit import Plan
    p = Plan(node)
    if dense:
        em.meta.owner = (id(node), "links")
        em._dense_links(p, R)
        em.meta.owner = None
        w.owned.setdefault((id(node), "links"), [])
    else:
        if (id(node), "links") in w.owned:
            w.owned[(id(node), "links")] = w.owned[(id(node), "links")]
        extra[LINK] = [(LINK, 0, em._link_body(n, e, track, R), None)
                       for n, e in links.items()]
    linfo = m_linfo.LinkInfo(track, bool(info and info.index_order) if info else track,
                             node.link_counter if track else None,
                             p.side.get("link_heap"), p.side.get("link_name"),
                             p.side.get("link_order"))
    if track and not dense:
        linfo = replace(linfo, creation_order_index_address=None)
    node.link_info = linfo
    extra[LINK_INFO] = [(LINK_INFO, 0, m_linfo.encode(linfo, w.ctx), None)]


def _added_links(node):
    """Names of the links added since the last commit when that is the only change (every
    committed link still there, the same entry), else None."""
    links = node._links
    if links.gone or not links.put:
        return None
    return [name for name, _ in links.put.values()]


def _fits(links):
    """Whether every link of the LinkTable ``links`` fits a symbol table entry; only those
    put since the last stage are looked at when none went (the others were before)."""
    if links.gone or links.fit is None:
        links.fit = all(model.fits_symbol_table(n, e) for n, e in links.items())
    else:
        links.fit = links.fit and all(model.fits_symbol_table(n, e)
                                      for n, e in links.put.values())
    return links.fit


def _insert_symbol_table(w, em, node, added):
    """Links added to a symbol-table group, inserted into its heap, symbol table nodes and
    B-tree in place (purehep.write.incremental.SymbolTableEditor: O(log n) nodes written,
    crash-safe order there). Changed or removed links rebuild the group instead
    (``_rebuild_symbol_table``)."""
    from .incremental import SymbolTableEditor
    ctx = w.ctx
    stab = M.decode(ctx, node.header.first(STAB))
    ed = SymbolTableEditor(w, em.meta, stab.btree_address, stab.heap_address)
    for name in sorted(added, key=lambda n: n.encode("utf-8", "surrogateescape")):
        e = node._links[name]

        def make_entry(off, heap, e=e):
            if e.kind == model.SOFT:
                t = heap.insert(e.path.encode("utf-8", "surrogateescape"))
                return SB.encode_symbol_table_entry(ctx, off, None, soft_link_offset=t)
            child = None if isinstance(e, ExistingLink) else em.plans.get(id(e.node))
            addr = _target(e, em)
            if child is not None and child.old_style and "btree" in child.side:
                return SB.encode_symbol_table_entry(ctx, off, addr, child.side["btree"],
                                                    child.side["heap"])
            return SB.encode_symbol_table_entry(ctx, off, addr)

        ed.insert(name.encode("utf-8", "surrogateescape"), make_entry)
    ed.finish(w.patches)
    # the blocks of a rebuilt table, or of the table this session built with the group,
    # are no longer the table's (the editor moved the heap's data and released the old
    # segment): forget them, so that a later rebuild or deletion walks the table in the
    # file instead of releasing blocks that may have been given to another structure
    w.owned.pop((id(node), "links"), None)
    w.owned.pop((id(node), "side"), None)


def _rebuild_symbol_table(w, em, node):
    """New symbol table nodes and B-tree under the same root address; the local heap's
    data segment grows by the new names (old names keep their offsets)."""
    ctx = w.ctx
    stab = M.decode(ctx, node.header.first(STAB))
    heap = local_heap.LocalHeap.decode(ctx, stab.heap_address)
    data = bytearray(heap.data)
    offsets = {}

    def put_name(raw):
        off = len(data)
        data.extend(raw + b"\0" + bytes((-(len(raw) + 1)) % 8))
        return off

    current = dict(symbol_table.group_entries(ctx, stab.btree_address, heap))
    entries = []
    for name in sorted(node._links, key=lambda n: n.encode("utf-8", "surrogateescape")):
        e = node._links[name]
        key = name.encode("utf-8", "surrogateescape")
        ent = current.get(key)
        if ent is not None:
            offsets[key] = ent.name_offset
            same = (e.kind == model.HARD and ent.cache_type != 2 and
                    ent.header_address == _target(e, em)) or \
                (e.kind == model.SOFT and ent.cache_type == 2 and
                 heap.string(ent.soft_link_offset, ctx) ==
                 e.path.encode("utf-8", "surrogateescape"))
            if not same:
                ent = None
        if ent is not None:
            raw = SB.encode_symbol_table_entry(
                ctx, ent.name_offset, ent.header_address,
                ent.btree_address if ent.cache_type == 1 else None,
                ent.heap_address if ent.cache_type == 1 else None,
                ent.soft_link_offset if ent.cache_type == 2 else None)
            if ent.cache_type not in (0, 1, 2):
                raw = SB.encode_symbol_table_entry(ctx, ent.name_offset, ent.header_address)
            entries.append((ent.name_offset, raw))
            continue
        off = offsets.get(key)
        if off is None:
            off = offsets[key] = put_name(key)
        if e.kind == model.SOFT:
            t = put_name(e.path.encode("utf-8", "surrogateescape"))
            raw = SB.encode_symbol_table_entry(ctx, off, None, soft_link_offset=t)
        else:
            child = None if isinstance(e, ExistingLink) else em.plans.get(id(e.node))
            addr = _target(e, em)
            if child is not None and child.old_style and "btree" in child.side:
                raw = SB.encode_symbol_table_entry(ctx, off, addr, child.side["btree"],
                                                   child.side["heap"])
            else:
                raw = SB.encode_symbol_table_entry(ctx, off, addr)
        entries.append((off, raw))
    meta = em.meta
    meta.owner = (id(node), "links")
    key = (id(node), "links")
    if key not in w.owned:       # structures of the file as it was
        old = [(a, B1.node_size(ctx, ctx.sizeof_lengths, GROUP_INTERNAL_K))
               for a in B1.node_addresses(ctx, stab.btree_address, B1.GROUP)
               if a != stab.btree_address]
        old += [(a, symbol_table.node_size(ctx, GROUP_LEAF_K))
                for a in B1.group_symbol_table_nodes(ctx, stab.btree_address)]
        old.append((heap.data_address, heap.data_size))
        w.owned[key] = old
        _disown_side(w, node, old)
    if len(data) != heap.data_size:
        daddr = meta.alloc(len(data))
        meta.put(daddr, bytes(data))
        hdr = local_heap.encode(ctx, len(data), daddr, heap.free_list_offset)
        w.patches.append((0, stab.heap_address, hdr))
    else:                             # same names: keep the data segment
        w.owned[key] = [b for b in w.owned[key] if b[0] != heap.data_address]
    k = GROUP_LEAF_K
    per = 2 * k
    snods = []
    for i in range(0, len(entries), per):
        part = entries[i:i + per]
        a = meta.alloc(symbol_table.node_size(ctx, k))
        meta.put(a, symbol_table.encode_node(ctx, [r for _, r in part], k))
        snods.append((a, part[-1][0]))
    from . import chunk_index
    keys = [ctx.pack_length(0)] + [ctx.pack_length(o) for _, o in snods]
    chunk_index.btree1(em, 0, [a for a, _ in snods], keys, ctx.sizeof_lengths,
                       GROUP_INTERNAL_K,
                       root=(stab.btree_address,
                             lambda a, d: w.patches.append((1, a, d))))
    meta.owner = None


def _disown_side(w, node, blocks):
    """Blocks of a group's symbol table now recorded as its links (released when the table
    is rebuilt again, or with the group) leave the record of the side structures this
    session built with the group: a deletion released them a second time, after they had
    been given to another structure (which the free space recorded at close then
    overwrote)."""
    side = w.owned.get((id(node), "side"))
    if side:
        gone = set(blocks)
        w.owned[(id(node), "side")] = [b for b in side if b not in gone]


def _update_attrs(w, em, node, R, replace_types, extra):
    ctx = w.ctx
    attrs = sorted(node._attrs.values(), key=lambda a: a.order)
    # every attribute message is written again: the heap objects of the old ones die, but
    # those of messages kept as they are (purehep.write.gheap_release)
    from .gheap_release import attribute_ids
    w.gheap_dead.release(attribute_ids(w, node, [
        (a.raw, a.flags) for a in attrs if isinstance(a, ExistingAttr) and a.value is None]))
    bodies = []
    for a in attrs:
        if isinstance(a, ExistingAttr) and a.value is None:
            bodies.append((a, a.raw, a.flags))
        else:
            bodies.append((a, em._attr_body(node, a, R), 0))
    header = node.header
    replace_types.update((ATTRIBUTE, ATTR_INFO))
    info = getattr(node, "attr_info", None)
    if header.version == 1:
        extra[ATTRIBUTE] = [(ATTRIBUTE, f, b, None) for a, b, f in bodies]
        return
    phase = header.attr_phase_change or (P.ATTR_MAX_COMPACT, P.ATTR_MIN_DENSE)
    was_dense = bool(info and info.dense)
    big = any(len(b) >= P.MAX_COMPACT_ATTRIBUTE for _, b, _ in bodies)
    dense = big or len(bodies) > phase[0] or (was_dense and len(bodies) >= phase[1])
    track = node.track_order
    heap = name = order = None
    if dense:
        from ..format import btree2, fractal_heap
        meta = em.meta
        meta.owner = (id(node), "attrs")
        hid_heap, blocks, ids = fractal_heap.encode_heap(ctx, [b for _, b, _ in bodies],
                                                         meta.alloc, **P.ATTR_HEAP)
        for a_, d in blocks:
            meta.put(a_, d)
        recs = sorted((checksum.lookup3(a.name.encode("utf-8", "surrogateescape")),
                       a.name.encode("utf-8", "surrogateescape"), a.order, f, hid)
                      for (a, _, f), hid in zip(bodies, ids))
        name_recs = [btree2.encode_record(8, btree2.AttributeName(hid, f, o, h), ctx)
                     for h, _, o, f, hid in recs]
        name = em._tree(8, name_recs, 17)
        if info is not None and info.index_order or (info is None and track):
            order_recs = [btree2.encode_record(9, btree2.AttributeCreationOrder(
                hid, f, a.order), ctx) for (a, _, f), hid in zip(bodies, ids)]
            order = em._tree(9, order_recs, 13)
        heap = hid_heap
        meta.owner = None
        w.owned.setdefault((id(node), "attrs"), [])
    else:
        extra[ATTRIBUTE] = [(ATTRIBUTE, f, b, a.order) for a, b, f in bodies]
    if info is not None or dense or track:
        index_order = bool(info.index_order) if info is not None else track
        new_info = m_ainfo.AttributeInfo(
            bool(info.track_order) if info is not None else track, index_order,
            node.attr_counter if (info is not None and info.track_order) or
            (info is None and track) else None, heap, name, order)
        node.attr_info = new_info
        extra[ATTR_INFO] = [(ATTR_INFO, 0x04, m_ainfo.encode(new_info, ctx), None)]


def _update_dataset(w, em, node, R, replace_types, extra):
    from .emit import Plan
    from .storage import ChunkStore, ContiguousStore, MemoryStore
    from .gheap_release import dataset_ids
    ctx = w.ctx
    # values kept in memory are all written again, as new heap objects: those of the values
    # as staged die (read now, before the dataspace and layout change)
    old_ids = dataset_ids(w, node) if isinstance(node._store, MemoryStore) else None
    space = node.space_msg
    version = space.version if space is not None else w.policy.dataspace_version
    kind = m_space.SCALAR if node.shape == () else m_space.SIMPLE
    if node.shape != node._snap_shape or space is None:
        body = m_space.encode(m_space.Dataspace(kind, tuple(node.shape),
                                                tuple(node.maxshape), version), ctx)
        replace_types.add(DATASPACE)
        extra[DATASPACE] = [(DATASPACE, 0, body, None)]
        node.space_msg = m_space.Dataspace(kind, tuple(node.shape), tuple(node.maxshape),
                                           version)
    st = node._store
    if st is None:
        st = node.store if node.layout == "chunked" else None
    p = Plan(node)
    old = node.layout_msg
    if node.layout == "sparse":
        from . import structured
        structured.side_structures(em, p)        # the index, rebuilt in unused space
        _replace_layout(w, node, structured.layout_of(
            node, old.element_size, p.side["index_address"], p.side["index_info"]),
            replace_types, extra)
        return
    if isinstance(st, ChunkStore) and _update_chunk_index(w, em, node, st):
        return                       # the index edited in place: the layout is unchanged
    if isinstance(st, ChunkStore):
        em.meta.owner = (id(node), "index")
        if (id(node), "index") not in w.owned and old is not None:
            w.owned[(id(node), "index")] = _disowned(w, node, index_blocks(w, node, old))
        _release_replaced_chunks(w, node, st)
        em._chunk_index(p)
        em.meta.owner = None
        w.owned.setdefault((id(node), "index"), [])
    elif isinstance(st, ContiguousStore):
        p.side["data_address"] = st.address
    elif st is not None:
        if isinstance(st, MemoryStore):
            w.gheap_dead.release(old_ids)
        em.meta.owner = (id(node), "data")
        if old is not None and (id(node), "data") not in w.owned:
            w.owned[(id(node), "data")] = _disowned(w, node, _data_blocks(w, node, old))
        em._dataset_side(p, R)
        if node.layout == "chunked":
            em._chunk_index(p)
        em.meta.owner = None
        w.owned.setdefault((id(node), "data"), [])
    else:
        return
    lay = em._layout(p, R)
    if old is not None and lay.layout_class == L.CHUNKED and old.version != lay.version:
        lay = replace(lay, version=old.version)
    _replace_layout(w, node, lay, replace_types, extra)


def _replace_layout(w, node, lay, replace_types, extra):
    """The dataset's layout message becomes ``lay`` at this commit."""
    node.layout_msg = lay
    replace_types.add(LAYOUT)
    if lay.version == 5 and lay.layout_class == L.CHUNKED:     # = version 4 but for
        body = b"\x05" + L.encode(replace(lay, version=4), w.ctx)[1:]  # 8-byte sizes
    else:
        body = L.encode(lay, w.ctx)
    extra[LAYOUT] = [(LAYOUT, 0, body, None)]


def _update_chunk_index(w, em, node, st):
    """Chunks added or moved since the last commit, written into the dataset's index in
    place (purehep.write.incremental): extensible arrays (``EAEditor``), v2 B-trees
    of types 10/11 (``V2TreeEditor``) and v1 B-trees (``ChunkBTreeEditor``). True when
    done; False (the index is rebuilt) for
    other indexes, a first commit, chunks removed, or a case an editor declines (paged
    data blocks). Fixed arrays need nothing of this: they cover the maximum shape."""
    from . import incremental as I
    from .chunk_index import _element, chunk_size_len
    from . import values as V
    lay = node.layout_msg
    snap = node._snap_records
    if lay is None or snap is None or lay.address is None or lay.version < 3:
        return False
    kind = L.BTREE1 if lay.version == 3 else lay.index_type
    if kind not in (L.EXTENSIBLE_ARRAY, L.BTREE2, L.BTREE1) or node.index[0] != kind:
        return False
    recs = st.records
    if any(k not in recs for k in snap):
        return False
    changed = sorted((k, r) for k, r in recs.items()
                     if snap.get(k) != tuple(r))
    if not changed:
        return False
    ctx = w.ctx
    esize = V.stored_dtype(node.dtype, ctx.sizeof_offsets).itemsize
    chunk_nbytes = int(np.prod(node.chunks)) * esize
    width = chunk_size_len(chunk_nbytes, getattr(node, "wide_chunk_sizes", False))
    filtered = bool(node.filters)
    try:
        if kind == L.BTREE1:
            ed = I.ChunkBTreeEditor(w, em.meta, lay.address, len(node.chunks),
                                    node.chunks)
            for k, r in changed:
                ed.put(k, r[0], r[1], r[2])
        elif kind == L.EXTENSIBLE_ARRAY:
            udim = [d for d, m in enumerate(node.maxshape) if m is None]
            if len(udim) != 1:
                return False
            udim = udim[0]
            others = [d for d in range(len(node.chunks)) if d != udim]
            ogrid = [-(-node.maxshape[d] // node.chunks[d]) for d in others]
            per = int(np.prod(ogrid)) if others else 1
            ed = I.EAEditor(w, em.meta, lay.address, _element(ctx, None, filtered,
                                                                 width))
            for k, r in changed:
                rest = int(np.ravel_multi_index([k[d] for d in others], ogrid)) \
                    if others else 0
                ed.set(k[udim] * per + rest, _element(ctx, r, filtered, width))
        else:
            from ..format import btree2
            rank = len(node.chunks)
            btype = 11 if filtered else 10
            rctx = btree2.ChunkRecordContext(rank, width)
            tail = 8 * rank

            def key(rec):
                return struct.unpack_from(f"<{rank}Q", rec, len(rec) - tail)

            ed = I.V2TreeEditor(w, em.meta, lay.address, key)
            if ed.btype != btype or ed.rs != len(btree2.encode_record(
                    btype, btree2.Chunk(0, (0,) * rank, 0, 0), ctx, rctx)):
                return False
            for k, r in changed:
                rec = btree2.encode_record(btype, btree2.Chunk(r[0], tuple(k), r[1], r[2]),
                                           ctx, rctx)
                if k not in snap or not ed.replace(rec):
                    ed.insert(rec)
    except I.Unsupported:
        return False
    _release_replaced_chunks(w, node, st)
    ed.finish(w.patches)
    # blocks a rebuild of this session, or the dataset's creation, recorded are no longer
    # the index's (the editor moved nodes and released them): forget them
    w.owned.pop((id(node), "index"), None)
    w.owned.pop((id(node), "side"), None)
    return True


def _release_replaced_chunks(w, node, st):
    """Free the slots of the chunks the last stage had that moved or were dropped since."""
    snap = node._snap_records or {}
    live = {r[0] for r in st.records.values()}
    for a, _, _, slot in snap.values():
        if a not in live:
            w.alloc.release(a, slot)


def _disowned(w, node, blocks):
    """``blocks`` (a dataset's data or chunk index, released when this stage replaces
    them) are no longer among the side structures the dataset was emitted with this
    session: deleting the dataset later would release them a second time, when they may
    have been given to another object (fuzz seed 2057)."""
    side = w.owned.get((id(node), "side"))
    if side:
        gone = {a for a, n in blocks}
        w.owned[(id(node), "side")] = [b for b in side if b[0] not in gone]
    return blocks


def _data_blocks(w, node, lay):
    if lay.layout_class == L.CONTIGUOUS and lay.address is not None:
        return [(lay.address, lay.size)]
    return []


def index_blocks(w, node, lay):
    """Blocks of a chunk index as the file had it (freed once a new one is committed)."""
    ctx = w.ctx
    try:
        if lay.index_type == L.BTREE1 and lay.address is not None:
            ks = B1.key_size(ctx, B1.CHUNK, len(node.chunks) + 1)
            size = B1.node_size(ctx, ks, w.superblock.indexed_storage_k or 32)
            return [(a, size) for a in B1.node_addresses(ctx, lay.address, B1.CHUNK,
                                                         len(node.chunks) + 1)]
    except Exception:
        return []
    return []

