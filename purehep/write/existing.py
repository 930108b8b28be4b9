"""Objects already in the file as nodes of the writer's object graph (purehep.write.model):
links, attributes and storage loaded from the file on first use, with snapshots of what the
last stage emitted, so that a commit rewrites only what changed."""
import os

import numpy as np

from ..chunks.storage import as_elements, element_dtype, open_storage
from ..chunks.structured import pipelines_of
from ..format import local_heap, symbol_table
from ..format import messages as M
from ..format.convert import from_file
from ..format.messages import layout as L, link as m_link
from ..format.object_header import RawMessage, header_of
from . import model
from .values import needs_heap
from .header import (DATASPACE, LINK_INFO, DATATYPE, FILL, LINK, LAYOUT, FILTERS, ATTRIBUTE,
                     STAB, ATTR_INFO, EXTERNAL_FILES)

CHECK_STAGE = bool(os.environ.get("PUREHEP_CHECK_STAGE"))   # (checks of Writer.stage)


class ExistingLink(model.LinkEntry):
    """A link read from the file: ``raw`` is its encoding (link message body, or the symbol
    table entry for symbol-table groups); the target node is loaded on first use."""

    def __init__(self, session, kind, address=None, path=None, filename=None, order=0,
                 raw=None, entry=None):
        self.kind, self.path, self.filename, self.order = kind, path, filename, order
        self._session, self.address, self._node = session, address, None
        self.raw, self.entry = raw, entry

    @property
    def node(self):
        if self._node is None and self.kind == model.HARD:
            self._node = self._session.node_at(self.address)
        return self._node

    @node.setter
    def node(self, value):
        self._node = value

    __eq__ = object.__eq__
    __hash__ = object.__hash__


class ExistingAttr(model.AttrEntry):
    """An attribute read from the file, kept as its message (``raw``, ``flags``)."""

    def __init__(self, name, dtype, shape, raw, flags, order):
        super().__init__(name, dtype, shape, None, order)
        self.raw, self.flags = raw, flags


class LinkTable(dict):
    """An existing group's links (name -> entry) that remembers the entries put in and
    taken out since ``mark()`` (a stage), so that a stage finds what changed in a group of
    many links without comparing them all: ``put`` {id: (name, entry)}, ``gone`` {id:
    entry} (an entry taken out and put back is in both). ``fit``: whether every link fits
    a symbol table entry, as last found (write/update.py), or None."""

    def __init__(self, items=()):
        super().__init__(items)
        self.fit = None
        self.mark()

    def mark(self):
        self.put, self.gone = {}, {}
        if CHECK_STAGE:
            self.snap = list(self.items())

    def changed(self):
        return bool(self.put or self.gone)

    def differs(self):
        """Whether the links differ from those at ``mark()`` (PUREHEP_CHECK_STAGE only)."""
        now = list(self.items())
        return len(now) != len(self.snap) or any(
            n != m or e is not f for (n, e), (m, f) in zip(self.snap, now))

    def _out(self, e):
        if self.put.pop(id(e), None) is None:
            self.gone[id(e)] = e

    def __setitem__(self, name, e):
        if name in self:
            self._out(dict.__getitem__(self, name))
        super().__setitem__(name, e)
        self.put[id(e)] = (name, e)

    def __delitem__(self, name):
        self._out(dict.__getitem__(self, name))
        super().__delitem__(name)

    def pop(self, name, *default):
        if name in self:
            self._out(dict.__getitem__(self, name))
        return super().pop(name, *default)

    def popitem(self):
        name = next(reversed(self))
        return name, self.pop(name)

    def setdefault(self, name, e=None):
        if name not in self:
            self[name] = e
        return dict.__getitem__(self, name)

    def update(self, *args, **kw):
        for name, e in dict(*args, **kw).items():
            self[name] = e

    def clear(self):
        for name in list(self):
            del self[name]

    def __ior__(self, other):
        self.update(other)
        return self


class Existing:
    """Shared by the nodes of objects already in the file."""

    def _init_existing(self, session, address):
        self.session = session
        self.address = address
        self._attrs = None
        self.track_times, self.times = False, None

    @property
    def header(self):
        return header_of(self.session.ctx, self.address)

    def _touch(self):
        """Note that this node may change before the next stage: whatever changes an
        object's links, attributes or data takes them through these properties, so the
        stage need look at these nodes only (``Writer.stage``)."""
        self.session.touched[id(self)] = self

    @property
    def attrs(self):
        self._touch()
        if self._attrs is None:
            self._load_attrs()
        return self._attrs

    @attrs.setter
    def attrs(self, value):
        self._touch()
        self._attrs = value

    def _load_attrs(self):
        ctx, h = self.session.ctx, self.header
        info_raw = h.first(ATTR_INFO)
        info = M.decode(ctx, info_raw) if info_raw is not None else None
        self.attr_info = info
        self.track_order = bool(info and info.track_order) or bool(h.flags & 0x04)
        found = []
        if info is not None and info.dense:
            from ..format.dense_storage import _index
            from ..format.fractal_heap import FractalHeap
            heap = FractalHeap.decode(ctx, info.fractal_heap_address)
            tree = _index(ctx, info.name_index_address, (8,), "name index")
            for rec in tree.records():
                body, offset = heap.get(rec.heap_id)
                found.append((bytes(body), rec.flags, rec.creation_order, offset))
        for raw in h.find(ATTRIBUTE):
            found.append((bytes(raw.data), raw.flags, raw.creation_order, raw.offset))
        attrs = []
        for i, (body, flags, order, offset) in enumerate(found):
            msg = M.decode(ctx, RawMessage(ATTRIBUTE, flags, memoryview(body), offset))
            try:
                dtype = msg.datatype.dtype
            except Exception:           # a type purehep reads but cannot express
                dtype = None
            attr = ExistingAttr(msg.name, dtype, msg.dataspace.shape, body, flags,
                                order if order is not None else i)
            if msg.type_address is not None:
                attr.named = self.session.node_at(msg.type_address)
            attrs.append(attr)
        if self.track_order:
            attrs.sort(key=lambda a: a.order)
        self._attrs = {a.name: a for a in attrs}
        self.attr_counter = max([a.order + 1 for a in attrs] +
                                [info.max_creation_index or 0 if info else 0])
        self._attr_snap = self._attr_state()

    def _attr_state(self):
        """What a commit changes attributes by; the committed type each shares last. The
        entries and their values themselves are kept (after their ids, which compare
        first): an id of an object since freed may be a new one's (a value modified twice
        between two stages took the id of the value the stage saw, and the change was
        lost: write fuzz seed 1014)."""
        return [(n, id(a), a, id(a.value), a.value, a.shape, a.named)
                for n, a in self._attrs.items()]

    def attrs_changed(self):
        return self._attrs is not None and self._attr_state() != self._attr_snap


class ExistingGroup(Existing, model.GroupNode):
    def __init__(self, session, address):
        self._init_existing(session, address)
        self._links = None
        h = self.header
        info_raw = h.first(LINK_INFO)
        self.link_info = M.decode(session.ctx, info_raw) if info_raw is not None else None
        self.old_style = h.first(STAB) is not None
        self.link_order = bool(self.link_info and self.link_info.track_order)
        self.track_order = bool(h.flags & 0x04)     # (attributes: _load_attrs knows more)
        self.link_counter = (self.link_info.max_creation_index or 0) if self.link_info else 0
        self.attr_counter = 0

    @property
    def links(self):
        self._touch()
        if self._links is None:
            self._load_links()
        return self._links

    @links.setter
    def links(self, value):
        self._touch()
        old, self._links = self._links, LinkTable(value)
        self._links.put = {id(e): (n, e) for n, e in value.items()}
        if old is not None:      # (what the last stage left: the links then)
            self._links.gone = {id(e): e for e in old.values() if id(e) not in old.put}
            self._links.gone.update(old.gone)

    def _load_links(self):
        s, ctx, h = self.session, self.session.ctx, self.header
        out = []
        if self.old_style:
            stab = M.decode(ctx, h.first(STAB))
            heap = local_heap.LocalHeap.decode(ctx, stab.heap_address)
            for name, e in symbol_table.group_entries(ctx, stab.btree_address, heap):
                name = name.decode("utf-8", "surrogateescape")
                if e.cache_type == 2:
                    target = heap.string(e.soft_link_offset, ctx).decode("utf-8",
                                                                         "surrogateescape")
                    out.append(ExistingLink(s, model.SOFT, path=target, entry=e, raw=name))
                else:
                    out.append(ExistingLink(s, model.HARD, address=e.header_address, entry=e,
                                            raw=name))
            for link in out:              # raw is only meaningful for link messages
                link.stab_name, link.raw = link.raw, None
            self._links = LinkTable((link.stab_name, link) for link in out)
        else:
            info = self.link_info
            bodies = []
            if info is not None and info.dense:
                from ..format.dense_storage import dense_messages
                bodies = dense_messages(ctx, info.fractal_heap_address, info.name_index_address)
            else:
                bodies = [(bytes(r.data), r.offset) for r in h.find(LINK)]
            links = []
            for body, offset in bodies:
                lk = M.decode_body(ctx, LINK, body, offset)
                kind = {m_link.HARD: model.HARD, m_link.SOFT: model.SOFT,
                        m_link.EXTERNAL: model.EXTERNAL}.get(lk.type, "user")
                e = ExistingLink(s, kind, address=lk.address, path=lk.target,
                                 filename=lk.filename, order=lk.creation_order or 0,
                                 raw=bytes(body))
                links.append((lk.name, e))
            if self.link_order:
                links.sort(key=lambda x: x[1].order)
            else:
                links.sort(key=lambda x: x[0].encode("utf-8", "surrogateescape"))
            self._links = LinkTable(links)

    def links_changed(self):
        return self._links is not None and self._links.changed()


class ExistingDatatype(Existing, model.DatatypeNode):
    def __init__(self, session, address):
        self._init_existing(session, address)
        self.track_order = bool(self.header.flags & 0x04)
        self.attr_counter = 0
        t = M.decode(session.ctx, self.header.first(DATATYPE))
        self.dtype = getattr(t, "dtype", None)


class ExistingDataset(Existing, model.DatasetNode):
    def __init__(self, session, address):
        self._init_existing(session, address)
        ctx, h = session.ctx, self.header
        self.track_order = bool(h.flags & 0x04)
        self.attr_counter = 0
        space = M.decode(ctx, h.first(DATASPACE))
        dtype_msg = M.decode(ctx, h.first(DATATYPE))
        self.space_msg = space
        self.type_msg = dtype_msg
        self.shape = space.shape
        self.maxshape = space.maxshape
        self.dtype = dtype_msg.dtype
        if dtype_msg.kind == "softfloat":
            # a float layout numpy has no dtype of: values are written into it as libhdf5
            # converts them (write.softfloat), the dtype carrying the layout's message
            from ..format.messages.datatype import float_body
            self.dtype = np.dtype(self.dtype, metadata={"h5t": float_body(dtype_msg)})
        named = M.committed_address(ctx, h.first(DATATYPE))
        self.named = session.node_at(named) if named is not None else None
        lay = M.decode(ctx, h.first(LAYOUT)) if h.first(LAYOUT) is not None else None
        self.layout_msg = lay
        self.layout = {L.COMPACT: "compact", L.CONTIGUOUS: "contiguous", L.CHUNKED: "chunked",
                       L.STRUCTURED: "sparse"}.get(getattr(lay, "layout_class", None), "other")
        if self.layout == "contiguous" and h.first(EXTERNAL_FILES) is not None:
            self.layout = "external"
        self.chunks = tuple(lay.chunk_shape) if self.layout in ("chunked", "sparse") else None
        pipe = M.decode(ctx, h.first(FILTERS)) if h.first(FILTERS) is not None else None
        if self.layout == "sparse":
            self.section_filters = pipelines_of(pipe, lay.nsections)
            self.filters = ()
        else:
            self.filters = tuple(pipe.filters) if pipe is not None else ()
        fill = h.first(FILL)
        fv = M.decode(ctx, fill) if fill is not None else None
        self.fill = fv.value if fv is not None and fv.value is not None and \
            len(fv.value) == dtype_msg.file_dtype.itemsize else None
        self.early = bool(fv is not None and fv.alloc_time == 1)
        if self.fill is not None and needs_heap(self.dtype):
            self.heap_fill = self._stored_fill()
        self.stored_dtype = None
        self.wide_chunk_sizes = bool(lay is not None and lay.version >= 5)
        if self.layout in ("chunked", "sparse"):
            if lay.version >= 4:
                self.index = (lay.index_type, dict(lay.index_info))
            else:
                self.index = (L.BTREE1, {})
        else:
            self.index = None
        self._store = None
        self._snap_shape = self.shape
        self._snap_records = None
        self._snap_address = None

    @property
    def store(self):
        self._touch()
        if self._store is None:
            self._store = self.session.open_store(self)
        return self._store

    @store.setter
    def store(self, value):
        self._touch()
        self._store = value

    def stored(self):
        """The dataset's storage as the file holds it (purehep.chunks.storage: its chunk
        table, its sparse chunks, its raw bytes)."""
        ctx, h = self.session.ctx, self.header
        pipe = M.decode(ctx, h.first(FILTERS)) if h.first(FILTERS) is not None else None
        external = M.decode(ctx, h.first(EXTERNAL_FILES)) if self.layout == "external" else None
        dtype = element_dtype(self.type_msg.file_dtype)
        fill = np.frombuffer(self.fill, dtype).reshape(()) if self.fill is not None else \
            np.zeros((), dtype)
        return open_storage(ctx, self.layout_msg, self.space_msg, self.type_msg, pipe,
                            lambda: fill, external)

    def _stored_fill(self):
        """The stored fill value, a variable-length one resolved from the global heap (what
        model.DatasetNode.heap_fill holds for a dataset created in this session)."""
        fill = np.frombuffer(self.fill, element_dtype(self.type_msg.file_dtype)).reshape(())
        return from_file(self.session.ctx, self.type_msg,
                         as_elements(fill, self.type_msg.file_dtype))[()]

    def stored_values(self):
        """Every value as h5py's ``ds[()]`` returns it, except a null variable-length string
        (a null heap ID: never written, libhdf5's zero fill; h5py reads it as b"") is None,
        as a MemoryStore keeps it, so that rewriting the dataset keeps it null (libnetcdf
        tells it from an empty string: ncdump prints NIL), also as a compound's member or an
        array type's item."""
        ctx = self.session.ctx
        elements = as_elements(self.stored().read(None), self.type_msg.file_dtype)
        values = from_file(ctx, self.type_msg, elements)
        _keep_null_strings(ctx, self.type_msg, elements, values)
        return values

    def committed(self):
        """Remember the stored state (a commit just wrote it)."""
        self._snap_shape = self.shape
        st = self._store
        from .storage import ChunkStore, ContiguousStore
        if isinstance(st, ChunkStore):
            self._snap_records = {k: tuple(r) for k, r in st.records.items()}
        elif isinstance(st, ContiguousStore):
            self._snap_address = st.address
        elif self.layout == "sparse" and st is not None:
            self._snap_records = dict(st.records)
        elif st is not None:
            st._touched = False

    def data_changed(self):
        if self.shape != self._snap_shape:
            return True
        st = self._store
        if st is None:
            return False
        from .storage import ChunkStore, ContiguousStore
        if isinstance(st, ChunkStore):
            return {k: tuple(r) for k, r in st.records.items()} != self._snap_records
        if isinstance(st, ContiguousStore):
            return st.address != self._snap_address
        if self.layout == "sparse":
            return bool(st.dirty) or st.records != self._snap_records
        return bool(getattr(st, "_touched", False))


def _keep_null_strings(ctx, datatype, elements, values):
    """Set ``values`` (converted from the stored ``elements`` of ``datatype``) to None where a
    variable-length string is a null heap ID (collection address 0, or undefined), looking
    into compound members and array types (libhdf5's H5T__vlen_disk_isnull; the strings in
    a variable-length sequence's heap objects are not looked into)."""
    if datatype.kind == "vlen_str":
        coll = elements["collection"]
        values[(coll == 0) | (coll == ctx.undefined)] = None
    elif datatype.kind == "compound":
        for m in datatype.members:
            _keep_null_strings(ctx, m.type, elements[m.name], values[m.name])
    elif datatype.kind == "array":
        _keep_null_strings(ctx, datatype.base, elements, values)


from .storage import MemoryStore as _MemoryStore  # noqa: E402


class TrackedMemoryStore(_MemoryStore):
    """A MemoryStore that notes being written (its dataset is then rewritten at commit)."""
    _touched = False

    def write(self, args, values):
        super().write(args, values)
        self._touched = True

    def resize(self, shape, fill):
        super().resize(shape, fill)
        self._touched = True


def _target(entry, em):
    """The object header address a hard link points to (without loading the object)."""
    if isinstance(entry, ExistingLink) and entry._node is None:
        return entry.address
    return em.addresses.get(id(entry.node))


class _Addresses(dict):
    """The emitter's object addresses: this commit's new objects over the session's."""

    def __init__(self, base):
        super().__init__()
        self.base = base

    def __missing__(self, key):
        return self.base[key]

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self.base.get(key, default)


