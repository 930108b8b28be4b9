"""The write side of the hl classes: mixins that File, Group, Dataset and AttributeManager
inherit, so that ``purehep.File(path, "w")`` returns the same classes as reading does.

In write mode an object is bound to a node of the writer's object graph (``_node``). Changes
go to the graph (and raw data straight to the file); anything that reads — data, attribute
values, header-derived properties — first stages the changes (``Writer.stage``: emitted, but
not committed, so that only flush() and close() commit) and then reads them through the
ordinary read path (``_sync`` binds the object to its header's address). Navigation
(``group[name]``, iteration, ``in``) works on the graph directly.
"""
import contextlib
import operator
import os
import posixpath

import numpy as np

from ..errors import UnsupportedFeatureError
from .create_checks import check_create_args, h5py_dtype, link_name, no_embedded_nul
from .selections import check_broadcast, numpy_index


def _no_write(obj, exc=ValueError):
    """h5py's error for a change to a file opened read-only: ValueError for creating objects,
    OSError for writing data and attributes."""
    return exc("Unable to create (no write intent on file)") if obj._node is None else None


def _wmodel():
    from ..write import model
    return model


# --- binding objects to nodes -----------------------------------------------------------------

def bind(file, node, name):
    """The hl object (Group, Dataset, Datatype) for ``node`` of the file being written."""
    from .group import Group
    from .dataset import Dataset
    from .datatype import Datatype
    model = _wmodel()
    cls = Group if isinstance(node, model.GroupNode) else \
        Dataset if isinstance(node, model.DatasetNode) else Datatype
    obj = cls.__new__(cls)
    obj._file = file
    obj._ctx = file._ctx
    obj._address = None
    obj._name = name
    obj._header = None
    obj._node = node
    obj._gen = -1
    return obj


class WritableObject:
    """Shared by Group, Dataset and Datatype: syncing with the flushed file."""

    _node = None
    _gen = -1

    def _sync(self):
        """Stage the file's changes and bind to this object's header."""
        self._live()
        writer = self._file._writer
        if writer.dirty:
            writer.stage()
        if self._gen != writer.generation:
            addr = writer.addresses.get(id(self._node))
            if addr is None:
                raise KeyError("the object is no longer linked in the file")
            self._address = addr
            self._header = None
            for key in ("_msgs", "_store", "_fill"):
                self.__dict__.pop(key, None)
            self._gen = writer.generation

    @property
    def _writer(self):
        return self._file._writer


# --- groups -------------------------------------------------------------------------------------

class GroupWriter(WritableObject):

    def _wlookup(self, path, create=False, track_order=None):
        """(parent GroupNode, leaf name, node or None) for ``path`` (relative or absolute);
        intermediate groups are created when ``create``."""
        self._live()
        path = link_name(path)
        model = _wmodel()
        if path.startswith("/"):
            node, parts = self._file._node, [p for p in path.split("/") if p and p != "."]
        else:
            node, parts = self._node, [p for p in path.split("/") if p and p != "."]
        if not parts:
            return None, "", node
        for part in parts[:-1]:
            entry = node.links.get(part)
            if entry is None:
                if not create:
                    raise KeyError(f"Unable to open object (component '{part}' not found)")
                child = model.GroupNode(track_order=self._default_order(track_order))
                node.add_link(part, model.LinkEntry(model.HARD, node=child))
                self._writer.touch()
                node = child
                continue
            target = self._wfollow(entry)
            if not isinstance(target, model.GroupNode):
                raise (ValueError if create else KeyError)(
                    f"Unable to open object: '{part}' is not a group")
            node = target
        return node, parts[-1], self._wfollow(node.links[parts[-1]]) if parts[-1] in node.links \
            else None

    def _wfollow(self, entry, hops=0):
        model = _wmodel()
        if entry.kind == model.HARD:
            return entry.node
        if entry.kind == model.SOFT:
            if hops > 16:
                raise KeyError("too many soft links")
            try:
                parent, leaf, node = self._wlookup(entry.path)
            except KeyError:
                return None
            return node
        return entry     # external: resolved by __getitem__

    def _default_order(self, track_order):
        return bool(track_order) if track_order is not None else False

    def _wpath(self, name):
        base = self.name if self.name else "/"
        return posixpath.normpath(posixpath.join(base, link_name(name))).replace("//", "/")

    def _wget(self, name, access=None):
        model = _wmodel()
        parent, leaf, node = self._wlookup(name)
        if parent is None and leaf == "":
            return bind(self._file, node, self._wpath(name))
        if node is None:
            raise KeyError(f"Unable to open object (object '{leaf}' doesn't exist)")
        if isinstance(node, model.LinkEntry):       # external link
            other = self._file._external_file(node.filename, access=access)
            return other._root()._resolve(node.path, 1)
        return bind(self._file, node, self._wpath(name))

    def _wnames(self):
        links = self._node.links
        if self._node.track_order:
            return list(links)
        return sorted(links, key=lambda n: n.encode("utf-8", "surrogateescape"))

    def _wgetlink(self, name, default, getclass):
        from .base import HardLink, SoftLink, ExternalLink
        model = _wmodel()
        parent, _, leaf = name.rstrip("/").rpartition("/")
        group = self._wget(parent) if parent else self
        entry = group._node.links.get(leaf) if getattr(group, "_node", None) is not None else None
        if entry is None:
            return default
        if entry.kind == model.HARD:
            return HardLink if getclass else HardLink()
        if entry.kind == model.SOFT:
            return SoftLink if getclass else SoftLink(entry.path)
        return ExternalLink if getclass else ExternalLink(entry.filename, entry.path)

    # -- creation ----------------------------------------------------------------------------
    def _link_new(self, name, node):
        model = _wmodel()
        parent, leaf, existing = self._wlookup(name, create=True)
        if not leaf:
            raise ValueError("Unable to create object (empty name)")
        if leaf in parent.links:
            raise ValueError(f"Unable to synchronously create object (name already exists): "
                             f"{name!r}")
        parent.add_link(leaf, model.LinkEntry(model.HARD, node=node))
        self._writer.touch()
        return bind(self._file, node, self._wpath(name))

    def create_group(self, name, track_order=None):
        """Create a group (and any missing intermediate groups)."""
        if self._node is None:
            raise _no_write(self)
        model = _wmodel()
        node = model.GroupNode(track_order=self._default_order(track_order))
        return self._link_new(name, node)

    def _existing(self, name, kind):
        """The node at ``name``, None if there is none, TypeError if it is not a ``kind``."""
        if self._node is None:
            raise _no_write(self)
        try:
            node = self._wlookup(name)[2]
        except KeyError:
            return None
        if node is not None and not isinstance(node, getattr(_wmodel(), kind)):
            raise TypeError(f"Incompatible object ({type(node).__name__}) already exists")
        return node

    def require_group(self, name):
        node = self._existing(name, "GroupNode")
        if node is None:
            return self.create_group(name)
        return bind(self._file, node, self._wpath(name))

    def create_dataset(self, name, shape=None, dtype=None, data=None, **kwds):
        """h5py's create_dataset (see purehep.hl.writing.make_dataset for the options)."""
        if self._node is None:
            raise _no_write(self)
        node = make_dataset(self._writer, shape, dtype, data, **kwds)
        return self._link_new(name, node)

    def create_virtual_dataset(self, name, layout, fillvalue=None):
        """h5py's create_virtual_dataset: a dataset of ``layout``'s mappings (VirtualLayout)."""
        if self._node is None:
            raise _no_write(self)
        model = _wmodel()
        node = model.DatasetNode(layout.shape, layout.maxshape, layout.dtype, "virtual",
                                 fill=fill_bytes(layout.dtype, fillvalue))
        node.index = node.store = None
        node.virtual = [(layout.source_file(path, self._file.filename), name, sdims, vdims)
                        for path, name, sdims, vdims in layout.mappings]
        return self._link_new(name, node)

    @contextlib.contextmanager
    def build_virtual_dataset(self, name, shape, dtype, maxshape=None, fillvalue=None):
        """h5py's build_virtual_dataset: ``with g.build_virtual_dataset(...) as layout:``
        map sources into ``layout``; the dataset is created when the block ends."""
        from .vds import VirtualLayout
        layout = VirtualLayout(shape, dtype, maxshape, self._file.filename)
        yield layout
        self.create_virtual_dataset(name, layout, fillvalue)

    def create_dataset_like(self, name, other, **kwupdate):
        """h5py's create_dataset_like: a dataset with ``other``'s shape, dtype, chunking,
        filters, fill value and maximum shape (each overridable by keyword)."""
        if "compression" in kwupdate:     # another filter: not the other's options (h5py
            kwupdate.setdefault("compression_opts", None)   # would pass them on and fail)
        for key in ("shape", "dtype", "chunks", "compression", "compression_opts",
                    "scaleoffset", "shuffle", "fletcher32", "fillvalue"):
            kwupdate.setdefault(key, getattr(other, key))
        kwupdate.setdefault("maxshape", other.maxshape if other.chunks is not None else None)
        return self.create_dataset(name, **kwupdate)

    def copy(self, source, dest, name=None, shallow=False, expand_soft=False,
             expand_external=False, expand_refs=False, without_attrs=False):
        """h5py's Group.copy: copy ``source`` (a path relative to this group, or an object of
        any open file) to ``dest`` (a path relative to this group, or a group, where the copy
        is named ``name`` or after the source); see purehep.hl.copy."""
        from .copy import Options, copy_object
        from .group import Group
        from .base import HLObject
        options = Options(shallow, expand_soft, expand_external, expand_refs, without_attrs)
        if isinstance(source, str):
            source = self[source]
        if isinstance(dest, Group):
            name = name if name is not None else posixpath.basename(source.name.rstrip("/"))
        elif isinstance(dest, HLObject):
            raise TypeError("Destination must be path or Group object")
        else:
            dest, name = self, dest
        if dest._node is None:
            raise _no_write(dest)
        if name in dest:
            raise ValueError(f"Unable to copy object (destination object already exists): "
                             f"{name!r}")
        copy_object(source, dest, name, options)

    def move(self, source, dest):
        """h5py's Group.move: the link ``source`` moved to ``dest`` (paths relative to this
        group; missing intermediate groups are created). The link itself moves: soft and
        external links stay links."""
        if self._node is None:
            raise _no_write(self)
        if source == dest:
            return
        parent, leaf, _ = self._wlookup(source)
        if parent is None or leaf not in parent.links:
            raise KeyError(f"Unable to move link (source object {source!r} doesn't exist)")
        entry = parent.links[leaf]
        if (self._wpath(dest) + "/").startswith(self._wpath(source) + "/"):
            raise ValueError("Unable to move link (a group cannot be moved into itself)")
        dparent, dleaf, _ = self._wlookup(dest, create=True)
        if not dleaf or dleaf in dparent.links:
            raise ValueError(f"Unable to move link (destination {dest!r} already exists)")
        del parent.links[leaf]
        dparent.add_link(dleaf, entry)
        self._writer.touch()

    def require_dataset(self, name, shape, dtype, exact=False, **kwds):
        node = self._existing(name, "DatasetNode")
        if node is None:
            return self.create_dataset(name, shape, dtype, **kwds)
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        if tuple(node.shape) != shape:
            if "maxshape" not in kwds:
                raise TypeError(f"Shapes do not match (existing {node.shape} vs new {shape})")
            maxshape = kwds["maxshape"]
            maxshape = (maxshape,) if isinstance(maxshape, int) or maxshape is None else \
                tuple(maxshape)
            if maxshape != tuple(node.maxshape):
                raise TypeError(f"Max shapes do not match (existing {node.maxshape} vs new "
                                f"{maxshape})")
        dt = np.dtype(dtype)
        if exact and dt != node.dtype:
            raise TypeError(f"Datatypes do not exactly match (existing {node.dtype} vs new {dt})")
        if not np.can_cast(dt, node.dtype):
            raise TypeError(f"Datatypes cannot be safely cast (existing {node.dtype} vs new {dt})")
        return bind(self._file, node, self._wpath(name))

    def _wsetitem(self, name, obj):
        from .base import SoftLink, ExternalLink, HLObject
        model = _wmodel()
        if isinstance(obj, SoftLink):
            entry = model.LinkEntry(model.SOFT, path=obj.path)
        elif isinstance(obj, ExternalLink):
            entry = model.LinkEntry(model.EXTERNAL, path=obj.path, filename=obj.filename)
        elif isinstance(obj, HLObject):
            if obj._node is None or obj._file is not self._file:
                raise ValueError("Can only link objects of the same file being written")
            entry = model.LinkEntry(model.HARD, node=obj._node)
        elif isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic)):
            entry = model.LinkEntry(model.HARD, node=model.DatatypeNode(np.dtype(obj)))
        else:
            node = make_dataset(self._writer, None, None, obj)
            entry = model.LinkEntry(model.HARD, node=node)
        parent, leaf, existing = self._wlookup(name, create=True)
        if leaf in parent.links:
            if isinstance(getattr(entry, "node", None), model.DatatypeNode) and \
                    not isinstance(obj, HLObject):      # h5py's error for committing a type
                raise KeyError("Unable to commit datatype synchronously (name already exists)")
            raise OSError(f"Unable to create link (name already exists): {name!r}")
        parent.add_link(leaf, entry)
        self._writer.touch()

    def _wdelitem(self, name):
        parent, leaf, node = self._wlookup(name)
        if parent is None or leaf not in parent.links:
            raise KeyError(f"Couldn't delete link (object '{name}' doesn't exist)")
        del parent.links[leaf]
        self._writer.touch()


# --- datasets -----------------------------------------------------------------------------------

def _filters(writer, dtype, chunks, compression, compression_opts, shuffle, fletcher32,
             scaleoffset, fill, allow_unknown_filter=False):
    from ..format.messages.filter_pipeline import FilterInfo
    out = []
    itemsize = dtype.itemsize
    nelmts = int(np.prod(chunks))
    if scaleoffset is not None:
        if dtype.kind in "iu":
            cls, stype, factor = 0, 2, 0 if scaleoffset is True else int(scaleoffset)
        elif dtype.kind == "f":
            if scaleoffset is True:
                raise ValueError("integer scaleoffset must be provided for floating point types")
            cls, stype, factor = 1, 0, int(scaleoffset)
        else:
            raise TypeError("scale/offset filter only supported for integer and floating-point "
                            "types")
        sign = 1 if dtype.kind == "i" else 0
        order = 1 if dtype.byteorder == ">" else 0
        fill_words = [0] * 12
        raw = fill if fill is not None else bytes(itemsize)
        if order:                   # libhdf5 passes the fill value in native (LE) order
            raw = raw[:itemsize][::-1]
        raw = raw + bytes(-len(raw) % 4)
        for i in range(0, min(len(raw), 48), 4):
            fill_words[i // 4] = int.from_bytes(raw[i:i + 4], "little")
        cd = (stype, factor & 0xFFFFFFFF, nelmts, cls, itemsize, sign, order, 1, *fill_words)
        out.append(FilterInfo(6, 1, "scaleoffset", cd))
    if shuffle:
        out.append(FilterInfo(2, 1, "shuffle", (itemsize,)))
    if compression is not None:
        from ..filters.options import compression_filter
        out.append(compression_filter(compression, compression_opts, dtype, chunks,
                                      allow_unknown_filter))
    if fletcher32:
        out.append(FilterInfo(3, 0, "fletcher32", ()))
    return out


def _prepare(data, dtype):
    """(array, dtype) of the values given to create_dataset / attrs, by h5py's rules: without
    a dtype, Python ``str`` and ``bytes`` (alone or all the items of lists, tuples and object
    arrays) become variable-length UTF-8 and ASCII strings, references reference types, and
    anything else what numpy makes of it (so ``np.bytes_`` is a fixed-length string)."""
    from .base import Empty
    if isinstance(data, Empty):
        return data, np.dtype(data.dtype)
    dtype = h5py_dtype(dtype) if dtype is not None else _guess_dtype(data)
    if dtype is None:
        arr = np.asarray(data)
        return arr, arr.dtype
    meta = dtype.metadata or {}
    if "vlen" in meta or "ref" in meta:
        arr = np.empty(np.shape(data) if not isinstance(data, (str, bytes)) else (), object)
        if arr.shape == ():
            arr[()] = data
        else:
            arr[...] = data if isinstance(data, np.ndarray) else _object_array(data, arr.shape)
        if meta.get("vlen") in (str, bytes):
            no_embedded_nul(arr)
        return arr, dtype
    return np.asarray(data, dtype=dtype), dtype



def _guess_dtype(data):
    from ..dtypes import ref_dtype, regionref_dtype, string_dtype
    from ..reference import Reference, RegionReference
    if isinstance(data, np.ndarray) and data.dtype.kind == "T":
        return string_dtype()
    kind = _item_type(data)
    if kind is bytes:
        return string_dtype("ascii")
    if kind is str:
        return string_dtype()
    if isinstance(kind, type) and issubclass(kind, RegionReference):
        return regionref_dtype
    if isinstance(kind, type) and issubclass(kind, Reference):
        return ref_dtype
    return None


def _item_type(data):
    """The one type of a value, or of all the items of (nested) lists, tuples and object
    arrays; None when they differ or the data is a typed array (h5py's find_item_type)."""
    if isinstance(data, np.ndarray):
        if data.dtype.kind != "O" or not data.size or (data.dtype.metadata or {}):
            return None
        types = {type(e) for e in data.flat}
    elif isinstance(data, (list, tuple)):
        types = {_item_type(e) for e in data}
    else:
        return type(data)
    return types.pop() if len(types) == 1 else None


def _object_array(data, shape):
    out = np.empty(shape, object)
    flat = out.reshape(-1)
    for i, item in enumerate(np.asarray(data, dtype=object).reshape(-1)):
        flat[i] = item
    return out


def make_dataset(writer, shape=None, dtype=None, data=None, chunks=None, maxshape=None,
                 compression=None, compression_opts=None, shuffle=None, fletcher32=None,
                 scaleoffset=None, fillvalue=None, track_times=None, track_order=None,
                 compact=False, layout=None, alloc_time=None, allow_unknown_filter=False,
                 external=None, sparse=False, section_filters=None, chunk_index=None,
                 filter_pipeline=None, fill_time=None, **unused):
    """A DatasetNode for h5py's create_dataset arguments (plus ``compact=True`` or
    ``layout='compact'|'contiguous'|'chunked'``, ``alloc_time='early'`` and
    ``filter_pipeline``, FilterInfo entries used as they are, as when copying a dataset)."""
    from ..write import model, values as V
    from ..write.policy import guess_chunk, COMPACT_DATA_LIMIT
    from ..write.storage import MemoryStore, ContiguousStore, ChunkStore
    from .base import Empty
    if unused:
        raise TypeError(f"unexpected arguments {sorted(unused)}")
    if sparse:
        from ..sparse.create import make_sparse_node
        return make_sparse_node(writer, shape, dtype, data, chunks, maxshape, compression,
                                compression_opts, shuffle, fletcher32, fillvalue,
                                section_filters, chunk_index, track_times, track_order)
    if section_filters is not None or chunk_index is not None:
        raise TypeError("section_filters and chunk_index are options of sparse datasets")
    check_create_args(shape, dtype, data, chunks, maxshape, compression, compression_opts,
                      scaleoffset, fillvalue, track_times, fill_time)
    if dtype is not None:
        dtype = h5py_dtype(dtype)
    external = _external_slots(external)
    if isinstance(compression, int) and 0 <= compression <= 9 and compression_opts is None \
            and compression not in (1, 2, 3, 4, 5, 6):
        compression, compression_opts = "gzip", compression
    arr = None
    if data is not None and dtype is not None and np.dtype(dtype).subdtype is not None \
            and not isinstance(data, Empty):
        _refuse_array_dtype_data(data)
    if fillvalue is not None and dtype is not None and np.dtype(dtype).subdtype is not None:
        raise ValueError("Unable to synchronously create dataset (no appropriate function for "
                         "conversion path)")
    if data is not None:
        arr, dt = _prepare(data, dtype)
        if isinstance(arr, Empty):
            shape = None
        else:
            if dt.kind == "U":
                raise TypeError(f"No conversion path for dtype: {dt!r}")
            if shape is not None:
                shape = (shape,) if isinstance(shape, int) else tuple(shape)
                if int(np.prod(shape)) != arr.size:
                    raise ValueError("Shape tuple is incompatible with data")
                arr = arr.reshape(shape)
            shape = arr.shape
        dtype = dt
    else:
        if shape is None and dtype is None:
            raise TypeError("One of data, shape or dtype must be specified")
        dtype = np.dtype("f4") if dtype is None else np.dtype(dtype)
        if dtype.kind == "U":
            raise TypeError(f"No conversion path for dtype: {dtype!r}")
        if shape is None or isinstance(shape, Empty):     # h5py: a dtype alone, no data
            shape = None
        else:
            shape = (int(shape),) if isinstance(shape, (int, np.integer)) else \
                tuple(int(s) for s in shape)
    from ..format.messages.datatype import encode_dtype
    encode_dtype(dtype)       # a dtype HDF5 cannot store (plain datetime64) fails here, as in h5py
    if shape is None:
        node = model.DatasetNode(None, None, dtype, "contiguous", track_times=bool(track_times))
        node.index = None
        node.store = None
        if track_times:
            node.times = writer.now()
        return node
    if maxshape is not None:
        maxshape = (maxshape,) if not isinstance(maxshape, tuple) else tuple(maxshape)
        if len(maxshape) != len(shape):
            raise ValueError("Dimensionality of shape and maxshape must match")
        for s, m in zip(shape, maxshape):
            if m is not None and m < s:
                raise ValueError("Maxshape must be larger than or equal to shape")
    filtered = bool(compression is not None or shuffle or fletcher32 or scaleoffset is not None
                    or filter_pipeline)
    layout = layout or ("compact" if compact else None)
    if external:
        if chunks or filtered or layout not in (None, "contiguous") or \
                (maxshape is not None and tuple(maxshape) != shape) or V.needs_heap(dtype):
            raise ValueError("Only contiguous datasets of fixed-size types can be stored "
                             "externally")
        return _external_node(writer, shape, dtype, fillvalue, external, arr, track_times,
                              fill_time)
    if layout == "compact":
        if chunks or filtered or (maxshape is not None and tuple(maxshape) != shape):
            raise ValueError("compact layout cannot be chunked, filtered or resizable")
    elif chunks is None and (filtered or (maxshape is not None and tuple(maxshape) != shape)):
        chunks = True
    if layout == "chunked" and chunks is None:
        chunks = True
    if chunks is False:
        if filtered or (maxshape is not None and tuple(maxshape) != shape):
            raise ValueError("Chunked format required for given storage options")
        chunks = None
    stored = V.stored_dtype(dtype)
    if chunks is True:
        chunks = guess_chunk(shape, maxshape, stored.itemsize)
    if chunks is not None:
        chunks = (chunks,) if isinstance(chunks, int) else tuple(int(c) for c in chunks)
        if len(chunks) != len(shape) or shape == ():
            raise ValueError("Chunk shape must not be greater than data shape in any dimension. "
                             f"{chunks} is not compatible with {shape}")
        for c, s, m in zip(chunks, shape, maxshape or shape):
            if c <= 0 or (m is not None and c > m):
                raise ValueError(f"Chunk shape must not be greater than data shape in any "
                                 f"dimension. {chunks} is not compatible with {shape}")
        layout = "chunked"
    layout = layout or "contiguous"
    if maxshape is None:
        maxshape = shape
    fill = fill_bytes(dtype, fillvalue)
    early = alloc_time == "early"
    node = model.DatasetNode(shape, maxshape, dtype, layout, chunks,
                             (tuple(filter_pipeline) if filter_pipeline else
                              _filters(writer, stored, chunks, compression, compression_opts,
                                       shuffle, fletcher32, scaleoffset, fill,
                                       allow_unknown_filter))
                             if layout == "chunked" else (),
                             fill, early, track_order=bool(track_order),
                             track_times=bool(track_times))
    node.fill_time = fill_time
    if track_times:
        node.times = writer.now()
    node.index = writer.policy.chunk_index(shape, maxshape, chunks, node.filtered, early) \
        if layout == "chunked" else None
    if layout == "compact" or V.needs_heap(dtype):
        node.store = MemoryStore(shape, dtype, fillvalue if fillvalue is not None else None)
        if layout == "compact":
            if int(np.prod(shape)) * stored.itemsize > COMPACT_DATA_LIMIT:
                raise ValueError("compact datasets are limited to 64 KiB of data")
    elif layout == "contiguous":
        node.store = ContiguousStore(writer, shape, dtype, fill)
        if early:
            node.store._allocate()
    else:
        node.store = ChunkStore(writer, node)
        if node.index[0] == 2:       # implicit: early allocation of every chunk
            node.store.allocate_all()
    if arr is not None:
        node.store.write((), arr)
    return node


def _array_dtype_attribute(data, shape, dtype):
    """(dtype, shape, values) of an attribute given an array (sub-array) dtype, by h5py's
    rules: the data's trailing dimensions are the array type's, the rest the attribute's
    shape; the values stay expanded (the type's base, its dimensions trailing)."""
    if not isinstance(data, np.ndarray):
        _refuse_array_dtype_data(data)
    base, dims = dtype.subdtype
    shape = data.shape if shape is None else \
        ((shape,) if isinstance(shape, int) else tuple(shape))
    if shape[len(shape) - len(dims):] != dims:
        raise ValueError(f"Array dtype shape {dims} is incompatible with data shape {shape}")
    arr = np.asarray(data, dtype=base) if (base.metadata or {}).get("vlen") is None else \
        _object_array(data, data.shape)
    return dtype, shape[:len(shape) - len(dims)], arr.reshape(shape)


def _refuse_array_dtype_data(data):
    """h5py cannot create a dataset from data with an array (sub-array) dtype: numpy has no
    arrays of that dtype, so the data never matches it (h5py raises ValueError converting a
    list, OSError writing an array). The dtype alone makes an empty array-typed dataset."""
    if not isinstance(data, np.ndarray):
        raise ValueError("Changing the dtype to a subarray type is only supported if the "
                         "total itemsize is unchanged")
    raise OSError("Can't synchronously write data (no appropriate function for conversion "
                  "path)")


def _external_slots(external):
    """h5py's ``external=``: one file name (the whole data from offset 0), or (name, offset,
    size) tuples; a size of 2**64 - 1 (h5py's ``h5f.UNLIMITED``) or None runs to the end of
    the file (None)."""
    if not external:
        return None
    if isinstance(external, (str, bytes, os.PathLike)):
        external = [(external, 0, None)]
    slots = []
    for entry in external:
        if not isinstance(entry, tuple):
            raise TypeError("Each external entry must be a tuple of (name, offset, size)")
        name, offset, size = entry
        offset = operator.index(offset)
        size = None if size is None or size == (1 << 64) - 1 else operator.index(size)
        if offset < 0 or (size is not None and size < 0):
            raise ValueError(f"negative offset or size in external entry {entry!r}")
        slots.append((os.fsdecode(name), offset, size))
    if any(size is None for _, _, size in slots[:-1]):
        raise ValueError("only the last external file may have an unlimited size")
    return slots


def _external_node(writer, shape, dtype, fillvalue, slots, arr, track_times, fill_time):
    """A contiguous dataset whose raw data lives in external files (names relative to the
    working directory, as libhdf5 opens them)."""
    from ..write import model
    from ..write.storage import ExternalStore
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if slots[-1][2] is not None and sum(size for _, _, size in slots) < nbytes:
        raise ValueError(f"external storage of {sum(s for _, _, s in slots)} bytes is smaller "
                         f"than the dataset's {nbytes} bytes")
    node = model.DatasetNode(shape, shape, dtype, "contiguous", fill=fill_bytes(dtype, fillvalue),
                             track_times=bool(track_times))
    node.index = None
    node.external = slots
    node.store = ExternalStore([(n, o, nbytes if s is None else s) for n, o, s in slots],
                               shape, dtype)
    node.fill_time = fill_time
    if track_times:
        node.times = writer.now()
    if arr is not None:
        node.store.write((), arr)
    return node


def fill_bytes(dtype, fillvalue):
    """The fill value message's bytes for ``fillvalue`` (None: none set; variable-length
    types keep no fill value)."""
    from ..write import values as V
    if fillvalue is None or V.needs_heap(dtype):
        return None
    if V.needs_conversion(dtype):
        return V.to_file(np.asarray(fillvalue, dtype=dtype), dtype, None).tobytes()
    return np.asarray(fillvalue, dtype=dtype).tobytes()


class DatasetWriter(WritableObject):

    def __setitem__(self, args, val):
        """Write ``val`` into the selection ``args`` (any selection the reader supports)."""
        if self._node is None:
            raise _no_write(self, OSError)
        node = self._node
        if node.shape is None:
            raise TypeError("Empty datasets can't be written")
        args = args if isinstance(args, tuple) else (args,)
        names = [a for a in args if isinstance(a, str)]
        args = numpy_index(tuple(a for a in args if not isinstance(a, str)), node.shape)
        if names:
            self._write_fields(args, names, val)
            return
        if isinstance(val, np.ndarray) and node.dtype.kind != "O" and val.dtype.kind != "T" \
                and (val.dtype != node.dtype or val.dtype.metadata != node.dtype.metadata):
            from ..format.messages.datatype import encode_dtype
            encode_dtype(val.dtype)   # h5py converts an array from its own dtype: a plain
            #                           datetime64 array has no conversion path (TypeError)
        if node.layout != "sparse" and node.dtype.kind != "O" and node.dtype.subdtype is None \
                and not (node.dtype.metadata or {}) and \
                (node.dtype.names is None or isinstance(val, np.ndarray)):   # (a tuple: a record)
            check_broadcast(np.shape(val), node.shape, args)
        from ..write.storage import MemoryStore
        if isinstance(val, np.ndarray) and val.dtype.kind == "T":
            val = val.astype(object)          # numpy 2 StringDType: str objects
        if isinstance(node.store, MemoryStore):
            meta = node.dtype.metadata or {}
            if ("vlen" in meta or "ref" in meta) and not isinstance(val, np.ndarray):
                if isinstance(val, (str, bytes)) or not hasattr(val, "__len__"):
                    tmp = np.empty((), object)
                    tmp[()] = val
                    val = tmp
                else:
                    val = _object_array(val, np.shape(np.asarray(val, dtype=object)))
            node.store.write(args if args else Ellipsis, val)
        else:   # an array dtype's values come expanded (its base, trailing dimensions)
            dtype = node.store.dtype.base
            val = np.asarray(val, dtype=dtype) if not isinstance(val, np.ndarray) else val
            if val.dtype != dtype:
                val = val.astype(dtype)
            node.store.write(args, val)
        self._writer.touch()

    def _write_fields(self, args, names, val):
        """``ds[sel, 'a', 'b'] = val``: the named fields of the selection change, the other
        fields keep their values (read, update, write back)."""
        dtype = self._node.dtype
        missing = [n for n in names if dtype.names is None or n not in dtype.names]
        if missing:
            raise ValueError(f"Field names {missing} not in the compound type {dtype}")
        current = np.array(self[args] if args else self[()], dtype=dtype)
        val = np.asarray(val)
        if len(names) == 1 and (val.dtype.names is None or names[0] not in val.dtype.names):
            current[names[0]] = val
        else:
            for name in names:
                current[name] = val[name]
        self[args if args else ()] = current

    def write_direct(self, source, source_sel=None, dest_sel=None):
        if not (isinstance(source, np.ndarray) and source.flags.c_contiguous):
            raise TypeError("Array must be C-contiguous")
        src = source
        self[dest_sel if dest_sel is not None else ()] = \
            src[source_sel] if source_sel is not None else src

    def resize(self, size, axis=None):
        """Change the shape of a chunked dataset within its maximum shape."""
        if self._node is None:
            raise _no_write(self)
        node = self._node
        if node.layout not in ("chunked", "sparse"):
            raise TypeError("Only chunked datasets can be resized")
        if axis is not None:
            if not 0 <= axis < len(node.shape):
                raise ValueError(f"Invalid axis ({axis} for rank {len(node.shape)})")
            new = list(node.shape)
            new[axis] = int(size)
            size = tuple(new)
        size = (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s)
                                                                              for s in size)
        if len(size) != len(node.shape):
            raise TypeError("New shape length must match dataset rank")
        for s, m in zip(size, node.maxshape):
            if m is not None and s > m:
                raise RuntimeError("Unable to change dataset's dimensions (dimension cannot "
                                   "exceed the existing maximal size)")
        from ..write.storage import MemoryStore
        store = node.store          # opened at the old extent (modify mode opens it lazily)
        old = node.shape
        node.shape = size
        if isinstance(store, MemoryStore):
            store.resize(size, None)
        else:
            store.resize(old, size)
        self._writer.touch()

    @property
    def regionref(self):
        return _RegionMaker(self)


class _RegionMaker:
    def __init__(self, ds):
        self._ds = ds

    def __getitem__(self, args):
        from ..format import selection as S
        from ..reference import RegionReference
        ds = self._ds
        shape = ds.shape
        sel = S.from_args(shape, args if isinstance(args, tuple) else (args,))
        ref = NodeRegionReference(None, sel)
        ref._node = ds._node
        ref._file = ds._file
        return ref


# --- references ---------------------------------------------------------------------------------

def _node_address(ref):
    return ref._file._writer.address_of(ref._node)


from ..reference import Reference as _Reference, RegionReference as _RegionReference  # noqa


class _NodeAddressed:
    """A reference made in write mode: its address is known once the file is flushed."""
    __slots__ = ()

    @property
    def address(self):
        return _node_address(self)

    @address.setter
    def address(self, value):
        pass

    def __bool__(self):
        return True


class NodeReference(_NodeAddressed, _Reference):
    """An object reference made in write mode."""
    __slots__ = ("_node", "_file")

    def _key(self):
        return ("Reference", id(self._node), None, None)


class NodeRegionReference(_NodeAddressed, _RegionReference):
    """A region reference made in write mode."""
    __slots__ = ("_node", "_file")

    def _key(self):
        return ("RegionReference", id(self._node), None, None, None)


# --- attributes ---------------------------------------------------------------------------------

class AttributesWriter:

    @property
    def _wnode(self):
        return getattr(self._parent, "_node", None)

    def __setitem__(self, name, value):
        self.create(name, value)

    def create(self, name, data=None, shape=None, dtype=None):
        """Create (or replace) attribute ``name`` (h5py's attrs.create)."""
        node = self._wnode
        if node is None:
            raise OSError("Unable to create attribute (no write intent on file)")
        from .base import Empty
        name = link_name(name)
        if isinstance(data, np.ndarray) and data.dtype.kind == "U":
            raise TypeError(f"No conversion path for dtype: {data.dtype!r}")
        if data is None:
            if shape is None and dtype is None:
                raise TypeError("data, shape or dtype is required")
            dt = np.dtype(dtype if dtype is not None else "f4")
            if shape is None:
                arr, shp = None, None
            else:
                shp = (shape,) if isinstance(shape, int) else tuple(shape)
                arr = np.zeros(shp, dt) if (dt.metadata or {}).get("vlen") is None else \
                    np.full(shp, b"" if dt.metadata["vlen"] in (str, bytes) else None, object)
            node.set_attr(name, dt, shp, arr)
            self._parent._writer.touch()
            return
        if dtype is not None and np.dtype(dtype).subdtype is not None \
                and not isinstance(data, Empty):
            dt, shp, arr = _array_dtype_attribute(data, shape, np.dtype(dtype))
            self._store_attr(name, dt, shp, arr)
            return
        arr, dt = _prepare(data, dtype)
        if isinstance(arr, Empty):
            node.set_attr(name, dt, None, None)
            self._parent._writer.touch()
            return
        if dt.kind == "U":
            from ..dtypes import string_dtype
            obj = np.empty(arr.shape, object)
            obj[...] = arr
            arr, dt = obj, string_dtype()
        if dt.subdtype is not None and dtype is not None:
            base, dims = dt.subdtype
            if tuple(np.shape(data))[-len(dims):] != tuple(dims):
                raise ValueError(f"Array dtype shape {dims} is incompatible with data shape "
                                 f"{np.shape(data)}")
            arr = np.asarray(arr, base)
            dt = base
        if shape is not None:
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            arr = arr.reshape(shape)
        self._store_attr(name, dt, tuple(arr.shape), arr)

    def _store_attr(self, name, dt, shape, arr):
        from ..write import values as V
        V.stored_dtype(dt)
        from ..format.messages.datatype import encode_dtype
        encode_dtype(dt)          # raises TypeError for dtypes HDF5 cannot store
        self._wnode.set_attr(name, dt, shape, arr)
        self._parent._writer.touch()

    def modify(self, name, value):
        if name in self and self._wnode is not None:
            old = self._wnode.attrs[name]
            if old.shape is not None:
                arr = np.asarray(value, dtype=old.dtype) if not (old.dtype.metadata or {}) else \
                    _prepare(value, old.dtype)[0]
                if arr.shape == old.shape or arr.size == int(np.prod(old.shape)):
                    old.value = arr.reshape(old.shape)
                    self._parent._writer.touch()
                    return
                raise TypeError("Shape of data is incompatible with existing attribute")
        self.create(name, value)

    def __delitem__(self, name):
        node = self._wnode
        if node is None:
            raise ValueError("Unable to delete attribute (no write intent on file)")
        if name not in node.attrs:
            raise KeyError(f"Can't delete attribute (can't locate attribute: '{name}')")
        del node.attrs[name]
        self._parent._writer.touch()

    def _wnames(self):
        node = self._wnode
        if node.track_order:
            return [a.name for a in sorted(node.attrs.values(), key=lambda a: a.order)]
        return sorted(node.attrs, key=lambda n: n.encode("utf-8", "surrogateescape"))
