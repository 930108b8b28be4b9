"""Emit the metadata of a file: allocate an address for every object header, then write each
structure once.

Phase A builds every object header with placeholder addresses to learn its size (addresses
have a fixed width, so sizes do not depend on them) and allocates it; phase B builds the side
structures (global heap collections, local heaps and symbol table nodes, fractal heaps and v2
B-trees of dense storage, chunk indexes, converted raw data) and the headers again with real
addresses, writing each into a metadata buffer that starts at the end of the raw data.
"""
import functools

import numpy as np

from ..format import checksum
from ..format import global_heap, local_heap, object_header, symbol_table, superblock
from ..format import btree2, fractal_heap
from ..format import messages as M
from ..format.messages import (attribute as m_attribute, attribute_info as m_ainfo,
                               dataspace as m_space, datatype as m_type,
                               fill_value as m_fill, filter_pipeline as m_filters,
                               group_info as m_ginfo, layout as L, link as m_link,
                               link_info as m_linfo, simple as m_simple)
from . import model, values as V
from . import policy as P
from .header import CONSTANT, SHARED, DONT_SHARE

DATASPACE, LINK_INFO, DATATYPE, FILL, LINK, LAYOUT, GROUP_INFO, FILTERS, ATTRIBUTE = \
    0x01, 0x02, 0x03, 0x05, 0x06, 0x08, 0x0A, 0x0B, 0x0C
MTIME, STAB, ATTR_INFO, EXTERNAL_FILES, REFCOUNT = 0x12, 0x11, 0x15, 0x07, 0x16
GROUP_LEAF_K, GROUP_INTERNAL_K, CHUNK_K = 4, 16, 32


def _name_key(name):
    return name.encode("utf-8", "surrogateescape")


class Metadata:
    """The metadata area: a growing buffer of bytes at relative address ``start``."""

    def __init__(self, start):
        self.start = start
        self.buf = bytearray()

    def alloc(self, n):
        addr = self.start + len(self.buf)
        self.buf += bytes(n)
        return addr

    def put(self, addr, data):
        pos = addr - self.start
        data = bytes(data)
        if pos < 0 or pos + len(data) > len(self.buf):
            raise AssertionError(f"write of {len(data)} bytes at {addr} outside its allocation")
        self.buf[pos:pos + len(data)] = data

    @property
    def end(self):
        return self.start + len(self.buf)


class GlobalHeaps:
    """Global heap collections (spec III.E) filled in order; a new one when no open one has
    room. ``tail`` is the collection with the most room a previous commit of the session
    wrote ([address, size, objects, used]): new objects go into the free space of it or of
    a collection of this stage, the first with room (a tail changed is then rewritten in
    place, ``patch(order, address, bytes)``; its objects keep their indexes), as libhdf5
    fills its collections with free space before it starts another: a collection made for
    one large object does not end the filling of the one before it. ``dead``
    (purehep.write.gheap_release.DeadObjects) holds the objects released in the session:
    the tail takes no object once all of its objects are dead (it is freed), but does while
    some live (it will not be): a value rewritten at every commit beside values that stay
    (versioned-hdf5's ``current_version`` beside each version's attributes) would otherwise
    start a collection at every commit, never freed."""

    def __init__(self, ctx, meta, tail=None, patch=None, dead=None):
        self.ctx, self.meta, self.patch = ctx, meta, patch
        self.collections = []        # [address, size, objects, used] of new collections
        self.tail, self.tail_changed = tail, False
        self.dead = dead

    def put(self, data):
        head = 8 + self.ctx.sizeof_lengths
        need = head + ((len(data) + 7) & ~7)
        cur = next((c for c in self._open() if c[1] - c[3] >= need), None)
        if cur is None:
            size = global_heap.collection_size(self.ctx, [len(data)])
            size = max(size, global_heap.MIN_COLLECTION)
            owner, self.meta.owner = self.meta.owner, None   # objects of any structure go
            cur = [self.meta.alloc(size, kind="raw"), size, [], head]   # in it: it is not
            self.meta.owner = owner                # freed with the one being emitted now
            self.collections.append(cur)
        elif cur is self.tail:
            self.tail_changed = True
        cur[2].append(bytes(data))
        cur[3] += need
        return cur[0], len(cur[2])

    def _open(self):
        """The collections new objects may go to, latest first."""
        tail = self.tail is not None and not (self.dead is not None and
                                              self.dead.all_dead(self.tail[0], len(self.tail[2])))
        return self.collections[::-1] + ([self.tail] if tail else [])

    def finish(self):
        for addr, size, objects, _ in self.collections:
            self.meta.put(addr, global_heap.encode(self.ctx, objects, size))
        if self.tail_changed:
            addr, size, objects, _ = self.tail
            self.patch(0, addr, global_heap.encode(self.ctx, objects, size))

    def last(self):
        """The collection with the most room (the next commit's ``tail``)."""
        return max(self._open(), key=lambda c: c[1] - c[3], default=None)


class Resolver:
    """Addresses of objects and places for variable-length data (placeholders in phase A)."""

    def __init__(self, emitter, real):
        self.em, self.real = emitter, real

    def address(self, ref):
        if not self.real:
            return 0
        return self.em.address_of_ref(ref)

    def heap(self, data):
        if not self.real:
            return 0, 0
        return self.em.gheaps.put(data)

    def named(self, node):
        """The object header address of a committed datatype (DatatypeNode) of the file."""
        if not self.real:
            return 0
        addr = self.em.addresses.get(id(node))
        if addr is None:
            raise ValueError("the committed datatype is no longer linked in the file")
        return addr

    def region(self, ref):
        if not self.real:
            return b""
        from ..format import selection
        addr = self.em.address_of_ref(ref)
        if not addr:
            return None
        return self.em.ctx.pack_address(addr) + selection.encode(ref.selection)


class Plan:
    """What one object header will hold."""

    def __init__(self, node):
        self.node = node
        self.address = None
        self.size = None
        self.version = 1
        self.old_style = False
        self.dense_links = False
        self.dense_attrs = False
        self.refcount = 1            # hard links and uses as a committed datatype
        self.side = {}


class Emitter:
    def __init__(self, writer, start):
        self.writer = writer
        self.ctx = writer.ctx
        self.policy = writer.policy
        self.meta = Metadata(start)
        self.gheaps = GlobalHeaps(self.ctx, self.meta)
        self.addresses = {}
        self._attr_bodies = {}       # id(AttrEntry) -> body, for attributes without heap data

    def address_of_ref(self, ref):
        node = getattr(ref, "_node", None)
        if node is None:
            return ref.address or 0
        addr = self.addresses.get(id(node))
        # an object deleted since: a null reference (libhdf5 writes the freed address, which
        # a later object may take; a reference read back then leads to it)
        return 0 if addr is None else addr

    # --- plan -------------------------------------------------------------------------------
    def plan(self, node):
        p = Plan(node)
        pol = self.policy
        p.version = pol.header_version
        if node.track_order:
            p.version = 2
        if isinstance(node, model.GroupNode):
            p.old_style = pol.symbol_table_group(node)
            if not p.old_style:
                p.dense_links = len(node.links) > P.GROUP_MAX_COMPACT
        if p.version == 2 and node.attrs:
            big = any(self._attr_body(node, a, Resolver(self, False)).__len__() >=
                      P.MAX_COMPACT_ATTRIBUTE for a in node.attrs.values())
            p.dense_attrs = len(node.attrs) > P.ATTR_MAX_COMPACT or big
        return p

    # --- messages ---------------------------------------------------------------------------
    def _dtype_body(self, dt):
        return m_type.encode_dtype(dt, self.ctx, self.policy.latest_datatypes)

    def type_message(self, node, R):
        """A dataset's Datatype message: its type, or a shared message pointing to the
        committed datatype it was created with (spec IV.A.2.d, flag "shared")."""
        if node.named is not None:
            return DATATYPE, CONSTANT | SHARED, M.encode_committed(self.ctx, R.named(node.named))
        return DATATYPE, CONSTANT, self._dtype_body(node.dtype)

    def _space_body(self, shape, maxshape=None):
        if shape is None:
            space = m_space.Dataspace(m_space.NULL, None, None, 2)
        elif shape == ():
            space = m_space.Dataspace(m_space.SCALAR, (), (), self.policy.dataspace_version)
        else:
            space = m_space.Dataspace(m_space.SIMPLE, tuple(shape),
                                      tuple(maxshape) if maxshape is not None else tuple(shape),
                                      self.policy.dataspace_version)
        return m_space.encode(space, self.ctx)

    def _attr_body(self, node, a, R):
        """An attribute message body; kept for the run unless it holds heap ids or addresses
        (it is asked for by the plan and by both passes over the headers). An attribute of a
        committed datatype shares it, in a version 2 message at least (version 1 has no flag
        for it), as libhdf5 writes it."""
        body = self._attr_bodies.get(id(a))
        if body is not None:
            return body
        if a.shape is None:
            data = b""
        else:
            data = V.to_file(a.value, a.dtype, R, self.ctx.sizeof_offsets).tobytes()
        version = self.policy.attribute_version
        if a.named is None:
            dtype, flags = self._dtype_body(a.dtype), 0
        else:
            dtype, flags = M.encode_committed(self.ctx, R.named(a.named)), m_attribute.TYPE_SHARED
            version = max(version, 2)
        body = m_attribute.encode(a.name, dtype, self._space_body(a.shape), data, version,
                                  flags=flags)
        if not V.needs_heap(a.dtype) and a.named is None:
            self._attr_bodies[id(a)] = body
        return body

    def _attrs_sorted(self, node):
        return sorted(node.attrs.values(), key=lambda a: a.order)

    def messages(self, p, R):
        node = p.node
        msgs = []
        if isinstance(node, model.GroupNode):
            msgs += self._group_messages(p, R)
        elif isinstance(node, model.DatasetNode):
            msgs += self._dataset_messages(p, R)
        else:       # a committed datatype: its message is not to be shared again (libhdf5)
            msgs.append((DATATYPE, CONSTANT | DONT_SHARE, self._dtype_body(node.dtype)))
        if node.track_times and p.version == 1 and node.kind != "datatype":   # libhdf5 keeps
            # a committed datatype's times in version 2 headers only
            msgs.append((MTIME, 0, m_simple.encode_mtime(node.times[1])))
        if p.version == 2 and (node.attrs or p.dense_attrs):
            info = m_ainfo.AttributeInfo(node.track_order, node.track_order,
                                         node.attr_counter if node.track_order else None,
                                         p.side.get("attr_heap"), p.side.get("attr_name"),
                                         p.side.get("attr_order"))
            msgs.append((ATTR_INFO, 0x04, m_ainfo.encode(info, self.ctx)))
        if not p.dense_attrs:
            for a in self._attrs_sorted(node):
                body = self._attr_body(node, a, R)
                if len(body) > 0xFFFF - 8:
                    raise ValueError(f"attribute {a.name!r} is {len(body)} bytes: too large for "
                                     "an object header message (use libver='latest' for dense "
                                     "attribute storage)")
                msgs.append((ATTRIBUTE, 0, body, a.order))
        if p.version == 2 and p.refcount > 1:
            msgs.append((REFCOUNT, DONT_SHARE, m_simple.encode_refcount(p.refcount)))
        return msgs

    def _group_messages(self, p, R):
        node = p.node
        if p.old_style:
            stab = m_simple.SymbolTable(p.side.get("btree", 0), p.side.get("heap", 0))
            return [(STAB, 0, m_simple.encode_symbol_table(stab, self.ctx))]
        track = node.link_order
        info = m_linfo.LinkInfo(track, track, node.link_counter if track else None,
                                p.side.get("link_heap"), p.side.get("link_name"),
                                p.side.get("link_order"))
        msgs = [(LINK_INFO, 0, m_linfo.encode(info, self.ctx)),
                (GROUP_INFO, 0x01, m_ginfo.encode(m_ginfo.GroupInfo()))]
        if not p.dense_links:
            for name, entry in node.links.items():
                msgs.append((LINK, 0, self._link_body(name, entry, track, R)))
        return msgs

    def _link_body(self, name, entry, track, R):
        raw = getattr(entry, "raw", None)      # an unchanged link of an existing file
        if raw is not None:
            return raw
        order = entry.order if track else None
        if entry.kind == model.HARD:
            addr = self.addresses.get(id(entry.node), 0) if R.real else 0
            link = m_link.Link(name, m_link.HARD, address=addr, creation_order=order)
        elif entry.kind == model.SOFT:
            link = m_link.Link(name, m_link.SOFT, target=entry.path, creation_order=order)
        else:
            link = m_link.Link(name, m_link.EXTERNAL, target=entry.path,
                               filename=entry.filename, creation_order=order)
        return m_link.encode(link, self.ctx)

    def _dataset_messages(self, p, R):
        node = p.node
        if node.layout == "sparse":
            from . import structured
            return structured.messages(self, p, R)
        pol = self.policy
        msgs = [(DATASPACE, 0, self._space_body(node.shape, node.maxshape)),
                self.type_message(node, R)]
        if node.layout == "virtual":
            return msgs + self._virtual_messages(node, R)
        if node.layout == "compact":
            alloc = m_fill.ALLOC_EARLY
        elif node.layout == "chunked":
            alloc = m_fill.ALLOC_EARLY if node.early else m_fill.ALLOC_INCREMENTAL
        else:
            alloc = m_fill.ALLOC_EARLY if node.early else m_fill.ALLOC_LATE
        fill_time = {"alloc": m_fill.FILL_ON_ALLOC, "never": m_fill.FILL_NEVER,
                     "ifset": m_fill.FILL_IF_SET}.get(node.fill_time) if node.fill_time else \
            m_fill.FILL_ON_ALLOC if V.has_vlen(node.dtype) else m_fill.FILL_IF_SET
        value = node.fill if node.heap_fill is None else \
            V.to_file(np.asarray(node.heap_fill, dtype=node.dtype), node.dtype, R).tobytes()
        fill = m_fill.FillValue(pol.fill_version, value, alloc, fill_time, True)
        msgs.append((FILL, 0x01, m_fill.encode(fill)))
        if node.filters:
            pipe = m_filters.FilterPipeline(pol.pipeline_version, node.filters)
            msgs.append((FILTERS, 0x01, m_filters.encode(pipe)))
        if node.external:
            msgs.append((EXTERNAL_FILES, 0x01, self._external_message(p)))
        msgs.append((LAYOUT, 0, L.encode(self._layout(p, R), self.ctx)))
        return msgs

    def _external_message(self, p):
        """The External Data Files message; the names live in a local heap (side structure)."""
        from ..format.messages import external_files as m_efl
        offsets = p.side.get("efl_names", {})
        unlimited = (1 << (8 * self.ctx.sizeof_lengths)) - 1
        slots = tuple(m_efl.ExternalFile(offsets.get(name, 0), offset,
                                         unlimited if size is None else size)
                      for name, offset, size in p.node.external)
        return m_efl.encode(m_efl.ExternalFiles(p.side.get("efl_heap", 0), slots), self.ctx)

    def _local_heap(self, names):
        """A local heap of ``names`` (bytes) in the metadata area: (address, name offsets)."""
        data, offsets = local_heap.heap_data(names)
        header = self.meta.alloc(local_heap.header_size(self.ctx))
        data_address = self.meta.alloc(len(data))
        self.meta.put(header, local_heap.encode(self.ctx, len(data), data_address))
        self.meta.put(data_address, data)
        return header, offsets

    def _virtual_messages(self, node, R):
        """Fill value and layout (class 3) of a virtual dataset; its mappings go to a global
        heap block (spec III.F) in the versions the policy picks, as libhdf5 writes them."""
        from ..format import vds_block
        pol = self.policy
        fill = m_fill.FillValue(pol.fill_version, node.fill, m_fill.ALLOC_INCREMENTAL,
                                m_fill.FILL_IF_SET, True)
        address, index = None, 0
        if node.virtual:
            data = b""
            if R.real:
                data = vds_block.encode_entries(self.ctx, [
                    _vds_entry(sfile, sname, _frozen(sdims), _frozen(vdims),
                               pol.selection_version, pol.vds_block_version)
                    for sfile, sname, sdims, vdims in node.virtual], pol.vds_block_version)
            address, index = R.heap(data)
        layout = L.Layout(4, L.VIRTUAL, address=address, virtual_index=index)
        return [(FILL, 0x01, m_fill.encode(fill)), (LAYOUT, 0, L.encode(layout, self.ctx))]

    def _layout(self, p, R):
        node = p.node
        side = p.side
        if node.layout == "compact":
            data = side.get("compact_data")
            if data is None:
                n = int(np.prod(node.shape)) if node.shape else 1
                data = bytes(n * V.stored_dtype(node.dtype, self.ctx.sizeof_offsets).itemsize)
            return L.Layout(3, L.COMPACT, compact_data=data)
        if node.layout == "contiguous":
            n = int(np.prod(node.shape)) if node.shape else (0 if node.shape is None else 1)
            size = n * V.stored_dtype(node.dtype, self.ctx.sizeof_offsets).itemsize
            return L.Layout(3, L.CONTIGUOUS, address=side.get("data_address"), size=size)
        esize = V.stored_dtype(node.dtype, self.ctx.sizeof_offsets).itemsize
        version = self.policy.chunk_layout_version
        index, info = node.index
        flags = 0
        if index == L.SINGLE and node.filters:
            flags = L.SINGLE_INDEX_WITH_FILTER
            info = {"filtered_size": side.get("single_size", 0),
                    "filter_mask": side.get("single_mask", 0)}
        return L.Layout(version, L.CHUNKED, address=side.get("index_address"),
                        chunk_shape=tuple(node.chunks), element_size=esize, flags=flags,
                        index_type=index, index_info=info)

    def encode_header(self, p, msgs):
        node = p.node
        if p.version == 1:
            return object_header.encode_v1(msgs, p.refcount)
        times = None
        if node.track_times:
            times = node.times
        short = P.MIN_HEADER_CHUNK - object_header.v2_chunk_size(msgs, node.track_order)
        room = max(short - (6 if node.track_order else 4), 0) if short > 0 else 0
        return object_header.encode_v2(msgs, track_order=node.track_order,
                                       index_order=node.track_order, times=times, room=room)

    # --- side structures (phase B) ----------------------------------------------------------
    def side_structures(self, p, R):
        node = p.node
        if isinstance(node, model.DatasetNode) and node.layout == "sparse":
            from . import structured
            structured.side_structures(self, p)
        elif isinstance(node, model.DatasetNode):
            self._dataset_side(p, R)
            if isinstance(node, model.DatasetNode) and node.layout == "chunked":
                self._chunk_index(p)
        if isinstance(node, model.GroupNode):
            if p.old_style:
                self._symbol_table(p)
            elif p.dense_links:
                self._dense_links(p, R)
        if p.dense_attrs:
            self._dense_attrs(p, R)

    def _dataset_side(self, p, R):
        node = p.node
        store = node.store
        from .storage import MemoryStore, ContiguousStore
        if node.external:
            names = [name.encode("utf-8", "surrogateescape") for name, _, _ in node.external]
            p.side["efl_heap"], offsets = self._local_heap(names)
            p.side["efl_names"] = {name: offsets[raw] for (name, _, _), raw in
                                   zip(node.external, names)}
            return
        if isinstance(store, ContiguousStore):
            p.side["data_address"] = store.address
            return
        if not isinstance(store, MemoryStore):
            return
        so = self.ctx.sizeof_offsets
        raw = V.to_file(store.array, node.dtype, R, so)
        if node.layout == "compact":
            p.side["compact_data"] = raw.tobytes()
        elif node.layout == "contiguous":
            if raw.size:
                data = raw.tobytes()
                addr = self.meta.alloc(len(data))
                self.meta.put(addr, data)
                p.side["data_address"] = addr
        else:
            p.side["chunks"] = self._chunk_memory(node, raw)

    def _chunk_memory(self, node, raw):
        """Split (and filter) an in-memory dataset into chunks in the metadata area
        (``raw``'s trailing dimensions past the dataset's are an array type's)."""
        from ..filters import encode_pipeline
        records = {}
        chunks = tuple(node.chunks)
        items = raw.shape[len(chunks):]
        grid = tuple(-(-s // c) for s, c in zip(node.shape, chunks))
        fill = np.zeros((), raw.dtype)
        for scaled in np.ndindex(*grid):
            sl = tuple(slice(s * c, min((s + 1) * c, n)) for s, c, n in zip(scaled, chunks,
                                                                            node.shape))
            block = np.empty(chunks + items, raw.dtype)
            block[...] = fill
            block[tuple(slice(0, x.stop - x.start) for x in sl)] = raw[sl]
            data = block.reshape(-1).view(np.uint8)
            mask = 0
            if node.filters:
                data, mask = encode_pipeline(data, node.filters, raw.dtype.itemsize, data.size)
            data = bytes(memoryview(data).cast("B")) if not isinstance(data, np.ndarray) \
                else data.tobytes()
            addr = self.meta.alloc(len(data))
            self.meta.put(addr, data)
            records[tuple(scaled)] = [addr, len(data), mask, len(data)]
        return records

    def _chunk_index(self, p):
        from . import chunk_index
        node = p.node
        records = p.side.get("chunks")
        if records is None:
            records = node.store.records
        chunk_index.emit(self, p, records)

    def _symbol_table(self, p):
        node, ctx = p.node, self.ctx
        names = sorted(node.links, key=_name_key)
        soft = [node.links[n].path.encode("utf-8", "surrogateescape") for n in names
                if node.links[n].kind == model.SOFT]
        heap_hdr, offsets = self._local_heap([_name_key(n) for n in names] + soft)
        entries = []
        for n in names:
            e = node.links[n]
            if e.kind == model.SOFT:
                raw = superblock.encode_symbol_table_entry(
                    ctx, offsets[_name_key(n)], None,
                    soft_link_offset=offsets[e.path.encode("utf-8", "surrogateescape")])
            else:
                child = self.plans.get(id(e.node))     # None: an object already in the file
                addr = self.addresses[id(e.node)]
                if child is not None and child.old_style and "btree" in child.side:
                    raw = superblock.encode_symbol_table_entry(
                        ctx, offsets[_name_key(n)], addr, child.side["btree"], child.side["heap"])
                else:
                    raw = superblock.encode_symbol_table_entry(ctx, offsets[_name_key(n)], addr)
            entries.append((offsets[_name_key(n)], raw))
        per = 2 * GROUP_LEAF_K
        nodes = []
        for i in range(0, max(len(entries), 1), per):
            part = entries[i:i + per]
            addr = self.meta.alloc(symbol_table.node_size(ctx, GROUP_LEAF_K))
            self.meta.put(addr, symbol_table.encode_node(ctx, [r for _, r in part],
                                                         GROUP_LEAF_K))
            nodes.append((addr, part[-1][0] if part else 0))
        if not entries:
            nodes = []
        from . import chunk_index
        keys = [ctx.pack_length(0)] + [ctx.pack_length(k) for _, k in nodes]
        btree = chunk_index.btree1(self, 0, [a for a, _ in nodes], keys, ctx.sizeof_lengths,
                                   GROUP_INTERNAL_K)
        p.side["btree"], p.side["heap"] = btree, heap_hdr

    def _dense_links(self, p, R):
        node = p.node
        track = node.link_order
        items = list(node.links.items())
        bodies = [self._link_body(n, e, track, R) for n, e in items]
        heap, blocks, ids = fractal_heap.encode_heap(self.ctx, bodies, self.meta.alloc,
                                                     **P.LINK_HEAP)
        for addr, data in blocks:
            self.meta.put(addr, data)
        recs = sorted(((checksum.lookup3(_name_key(n)), _name_key(n), hid)
                       for (n, _), hid in zip(items, ids)))
        name_recs = [btree2.encode_record(5, btree2.LinkName(h, hid), self.ctx)
                     for h, _, hid in recs]
        p.side["link_heap"] = heap
        p.side["link_name"] = self._tree(5, name_recs, 11)
        if track:
            order_recs = [btree2.encode_record(6, btree2.LinkCreationOrder(e.order, hid),
                                               self.ctx)
                          for (_, e), hid in sorted(zip(items, ids), key=lambda x: x[0][1].order)]
            p.side["link_order"] = self._tree(6, order_recs, 15)

    def _dense_attrs(self, p, R):
        node = p.node
        attrs = self._attrs_sorted(node)
        bodies = [self._attr_body(node, a, R) for a in attrs]
        heap, blocks, ids = fractal_heap.encode_heap(self.ctx, bodies, self.meta.alloc,
                                                     **P.ATTR_HEAP)
        for addr, data in blocks:
            self.meta.put(addr, data)
        recs = sorted((checksum.lookup3(_name_key(a.name)), _name_key(a.name), a.order, hid)
                      for a, hid in zip(attrs, ids))
        name_recs = [btree2.encode_record(8, btree2.AttributeName(hid, 0, order, h), self.ctx)
                     for h, _, order, hid in recs]
        p.side["attr_heap"] = heap
        p.side["attr_name"] = self._tree(8, name_recs, 17)
        if node.track_order:
            order_recs = [btree2.encode_record(9, btree2.AttributeCreationOrder(hid, 0, a.order),
                                               self.ctx) for a, hid in zip(attrs, ids)]
            p.side["attr_order"] = self._tree(9, order_recs, 13)

    def _tree(self, btype, records, record_size, **kw):
        addr, blocks = btree2.encode_tree(self.ctx, btype, records, record_size, self.meta.alloc,
                                          **kw)
        for a, data in blocks:
            self.meta.put(a, data)
        return addr

    # --- the whole file ---------------------------------------------------------------------
    def run(self, root):
        nodes = model.walk(root)
        plans = [self.plan(n) for n in nodes]
        self.plans = {id(p.node): p for p in plans}
        dummy = Resolver(self, False)
        for p in plans:
            msgs = self.messages(p, dummy)
            p.size = len(self.encode_header(p, msgs))
            p.address = self.meta.alloc(p.size)
            self.addresses[id(p.node)] = p.address
        real = Resolver(self, True)
        # children before parents, so that symbol table entries can cache a child group's
        # B-tree and heap addresses
        for p in reversed(plans):
            self.side_structures(p, real)
        for p in plans:
            header = self.encode_header(p, self.messages(p, real))
            if len(header) != p.size:
                raise AssertionError(f"object header of {len(header)} bytes, planned {p.size}")
            self.meta.put(p.address, header)
        self.gheaps.finish()
        return self.plans[id(root)]


def _frozen(dims):
    """Hyperslab dims (``VirtualLayout`` mappings: per axis a regular tuple or a list of
    runs; None for a whole source) as a hashable key."""
    return None if dims is None else tuple(d if isinstance(d, tuple) else tuple(d)
                                           for d in dims)


@functools.lru_cache(maxsize=1 << 14)
def _vds_entry(sfile, sname, sdims, vdims, selection_version, block_version):
    """One encoded mapping of a virtual dataset's heap block, kept: the versions of a
    versioned dataset map the same chunks over and over, each block encoded once."""
    from ..format import selection as S, vds_block

    def hyperslab(dims):
        return S.hyperslab([list(d) if d and isinstance(d[0], tuple) else d for d in dims],
                           selection_version)
    return vds_block.encode_entry(vds_block.VirtualMapping(
        sfile, sname, S.Selection(S.ALL, 1) if sdims is None else hyperslab(sdims),
        hyperslab(vdims)), block_version)
