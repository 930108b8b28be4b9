"""The space of an object deleted by a commit (its last hard link gone, libhdf5's refcount
reaching 0): its header, the side structures this session wrote for it, its data and chunk
index, a group's symbol table, B-tree nodes and local heap, and the global heap objects of its
values and attributes (purehep.write.gheap_release), all released to the allocator (free once
the commit no longer refers to them)."""
from ..format import local_heap, symbol_table
from ..format import btree1 as B1
from ..format import messages as M
from . import update
from .existing import ExistingDataset, ExistingGroup
from .gheap_release import attribute_ids, dataset_ids
from .header import HeaderLayout
from .header import STAB, GROUP_LEAF_K, GROUP_INTERNAL_K


def free_object(w, node):
    """Release the space of a deleted object (at commit)."""
    ctx, rel = w.ctx, w.alloc.release
    h = node.header
    # the heap objects of its values and attributes die with it (gheap_release)
    if isinstance(node, ExistingDataset):
        w.gheap_dead.release(dataset_ids(w, node))
    w.gheap_dead.release(attribute_ids(w, node))
    lay = HeaderLayout(ctx, h)
    rel(node.address, lay.prefix + lay.chunk0 + (4 if h.version == 2 else 0))
    for what in ("header", "links", "attrs", "index", "data", "side"):
        blocks = w.owned.pop((id(node), what), None)
        if blocks is None and what == "header":
            blocks = lay.old_blocks
        for a, n in blocks or ():
            rel(a, n)
    if isinstance(node, ExistingDataset):
        st = node._store
        from .storage import ChunkStore, ContiguousStore
        lay_msg = node.layout_msg
        if isinstance(st, ChunkStore):
            seen = set()
            for r in list(st.records.values()) + list((node._snap_records or {}).values()):
                if r[0] not in seen:
                    seen.add(r[0])
                    rel(r[0], r[3])
        elif isinstance(st, ContiguousStore):
            if st.address is not None:
                rel(st.address, st.nbytes)
        elif lay_msg is not None and node.layout == "contiguous" and \
                lay_msg.address is not None:
            rel(lay_msg.address, lay_msg.size)
        elif lay_msg is not None and node.layout == "chunked" and lay_msg.version >= 3:
            try:
                t = node.stored().chunked.table
                for a, n in zip(t.addresses.tolist(), t.sizes.tolist()):
                    rel(a, n)
            except Exception:
                pass
        if lay_msg is not None and node.layout == "chunked" and \
                (id(node), "index") not in w.owned:
            for a, n in update.index_blocks(w, node, lay_msg):
                rel(a, n)
    elif isinstance(node, ExistingGroup) and h.first(STAB) is not None:
        stab = M.decode(ctx, h.first(STAB))
        heap = local_heap.LocalHeap.decode(ctx, stab.heap_address)
        for a in B1.node_addresses(ctx, stab.btree_address, B1.GROUP):
            rel(a, B1.node_size(ctx, ctx.sizeof_lengths, GROUP_INTERNAL_K))
        for a in B1.group_symbol_table_nodes(ctx, stab.btree_address):
            rel(a, symbol_table.node_size(ctx, GROUP_LEAF_K))
        rel(heap.data_address, heap.data_size)
        rel(stab.heap_address, local_heap.header_size(ctx))
