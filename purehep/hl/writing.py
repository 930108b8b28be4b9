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
import posixpath

import numpy as np

from .create_checks import check_required, check_storable, link_name
from .creation import (_array_dtype_attribute, _object_array, _prepare, chunk_cache_options,
                       default_order, fill_bytes, hdf5_converted, make_dataset, access_prefixes)
from ..selections import numpy_index
from ..write import values as V
from .write_shapes import field_values_shape, fit_values


class _ThroughExternal(KeyError):
    """A write-mode lookup met an external link before the last component of its path
    (``link``, then ``rest`` to look up in the target); a KeyError to the lookups that do
    not follow it (h5py's "not found" for a path they cannot resolve here)."""

    def __init__(self, link, rest):
        super().__init__(f"Unable to open object (the path goes on through an external link "
                         f"to {link.filename!r})")
        self.link, self.rest = link, rest


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
    file._writer.handles[id(obj)] = obj
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

    def _wlookup(self, path, create=False, attr_order=False):
        """(parent GroupNode, leaf name, node or None) for ``path`` (relative or absolute);
        intermediate groups are created when ``create``, as libhdf5 creates them: tracking
        link creation order as their parent does, attribute creation order as ``attr_order``
        says (the new group's setting when create_group makes them, else not)."""
        self._live()
        path = link_name(path)
        model = _wmodel()
        if path.startswith("/"):
            node, parts = self._file._node, [p for p in path.split("/") if p and p != "."]
        else:
            node, parts = self._node, [p for p in path.split("/") if p and p != "."]
        if not parts:
            return None, "", node
        for i, part in enumerate(parts[:-1]):
            entry = node.links.get(part)
            if entry is None:
                if not create:
                    raise KeyError(f"Unable to open object (component '{part}' not found)")
                child = model.GroupNode(track_order=attr_order, link_order=node.link_order)
                node.add_link(part, model.LinkEntry(model.HARD, node=child))
                self._writer.touch()
                node = child
                continue
            target = self._wfollow(entry)
            if isinstance(target, model.LinkEntry) and not create:
                raise _ThroughExternal(target, "/".join(parts[i + 1:]))
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
        return default_order(track_order)

    def _wpath(self, name):
        """The path of ``name`` from this group: None below an anonymous group."""
        name, base = link_name(name), self.name
        if base is None and not name.startswith("/"):
            return None
        return posixpath.normpath(posixpath.join(base or "/", name)).replace("//", "/")

    def _wget(self, name, access=None):
        model = _wmodel()
        try:
            parent, leaf, node = self._wlookup(name)
        except _ThroughExternal as via:             # the rest of the path is in another file
            return self._wexternal(via.link, access)[via.rest]
        if parent is None and leaf == "":
            return bind(self._file, node, self._wpath(name))
        if node is None:
            raise KeyError(f"Unable to open object (object '{leaf}' doesn't exist)")
        if isinstance(node, model.LinkEntry):       # external link
            return self._wexternal(node, access)
        return bind(self._file, node, self._wpath(name))

    def _wexternal(self, link, access):
        """The object an external link (a LinkEntry) points to, its file opened for writing
        as this one is (File._external_file); KeyError when the file cannot be opened so, as
        h5py's (libhdf5 fails to open the object)."""
        try:
            other = self._file._external_file(link.filename, access=access, follow=True)
        except OSError as exc:
            raise KeyError(f"Unable to open object ({exc.strerror or exc})") from None
        if other._writer is not None:               # (opened for writing: its own lookup)
            return other[link.path]
        return other._root()._resolve(link.path, 1)

    def _wnames(self):
        links = self._node.links
        if self._node.link_order:
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
    def _link_new(self, name, node, require_parent=False, attr_order=False):
        """The hl object of the new ``node`` linked at ``name``; with ``name`` None, an
        anonymous object (h5py's), linked later if ever (``group[name] = obj``). With
        ``require_parent`` the group holding it is made by ``require_group``, as h5py's
        create_dataset makes it (a group of default properties, not an intermediate one);
        ``attr_order``: intermediate groups track attribute creation order."""
        model = _wmodel()
        if name is None:
            self._writer.add_anonymous(node)
            return bind(self._file, node, None)
        path = link_name(name)
        if require_parent and "/" in path.lstrip("/"):
            self.require_group(path.rsplit("/", 1)[0])
        parent, leaf, existing = self._wlookup(name, create=True, attr_order=attr_order)
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
        return self._link_new(name, node, attr_order=node.track_order)

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
        if self._node is None:        # read-only: an existing group, as h5py gives it
            from .group import Group
            return self._require_read(name, Group)
        node = self._existing(name, "GroupNode")
        if node is None:
            return self.create_group(name)
        return bind(self._file, node, self._wpath(name))

    def _require_read(self, name, kind):
        """The object at ``name`` of a read-only file, which must be a ``kind`` (TypeError
        otherwise, as h5py's isinstance check); creating a missing one fails as h5py's does
        (no write intent)."""
        if name not in self:
            raise _no_write(self)
        obj = self[name]
        if not isinstance(obj, kind):
            raise TypeError(f"Incompatible object ({type(obj).__name__}) already exists")
        return obj

    def create_dataset(self, name, shape=None, dtype=None, data=None, **kwds):
        """h5py's create_dataset (see purehep.hl.creation.make_dataset for the options;
        ``rdcc_nbytes`` / ``rdcc_w0`` / ``rdcc_nslots`` set the new dataset's chunk cache)."""
        if self._node is None:
            raise _no_write(self)
        cache = chunk_cache_options(self._file, kwds)
        prefixes = access_prefixes(kwds)
        from ..io.prefix import in_force
        from .datatype import committed_type
        dtype, named = committed_type(dtype, self._writer)
        node = make_dataset(self._writer, shape, dtype, data, external_prefix=in_force(
            "efile", prefixes.get("efile"), self._file.filename), **kwds)
        if named is not None and node.dtype == named.dtype:
            node.named = named        # shares the committed datatype (h5py links the two)
        return self._link_new(name, node, require_parent=True)._with_chunk_cache(cache) \
            ._with_prefixes(prefixes)

    def create_virtual_dataset(self, name, layout, fillvalue=None):
        """h5py's create_virtual_dataset: a dataset of ``layout``'s mappings (VirtualLayout)."""
        if self._node is None:
            raise _no_write(self)
        model = _wmodel()
        node = model.DatasetNode(layout.shape, layout.maxshape, layout.dtype, "virtual",
                                 fill=fill_bytes(layout.dtype, fillvalue))
        node.index = node.store = None
        files = {path: layout.source_file(path, self._file.filename)
                 for path in {m[0] for m in layout.mappings}}
        node.virtual = [(files[path], name, sdims, vdims)
                        for path, name, sdims, vdims in layout.mappings]
        return self._link_new(name, node, require_parent=True)

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
        filters, fill value, maximum shape, time tracking and attribute creation order (each
        overridable by keyword)."""
        if "compression" in kwupdate:     # another filter: not the other's options (h5py
            kwupdate.setdefault("compression_opts", None)   # would pass them on and fail)
        for key in ("shape", "dtype", "chunks", "compression", "compression_opts",
                    "scaleoffset", "shuffle", "fletcher32", "fillvalue"):
            kwupdate.setdefault(key, getattr(other, key))
        dcpl = other.id.get_create_plist()      # and its object settings, as h5py takes them
        kwupdate.setdefault("track_times", dcpl.get_obj_track_times())
        kwupdate.setdefault("track_order", dcpl.get_attr_creation_order() > 0)
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
        """h5py's require_dataset: the dataset at ``name`` if its shape (or, given
        ``maxshape``, its maximum shape) and dtype suit, else a new one (in write mode).
        ``rdcc_nbytes`` / ``rdcc_w0`` / ``rdcc_nslots`` set its chunk cache."""
        cache = chunk_cache_options(self._file, kwds)
        prefixes = access_prefixes(kwds)
        if self._node is None:
            from .dataset import Dataset
            ds = self._require_read(name, Dataset)
            check_required(ds.shape, ds.maxshape, ds.dtype, shape, dtype, exact, kwds)
        else:
            node = self._existing(name, "DatasetNode")
            if node is None:
                kwds.update({f"{k}_prefix": v for k, v in prefixes.items()})
                return self.create_dataset(name, shape, dtype, **kwds)._with_chunk_cache(cache)
            check_required(node.shape, node.maxshape, node.dtype, shape, dtype, exact, kwds)
            ds = bind(self._file, node, self._wpath(name))
        return ds._with_chunk_cache(cache)._with_prefixes(prefixes)

    def _wsetitem(self, name, obj):
        from .base import SoftLink, ExternalLink, HLObject
        model = _wmodel()
        if isinstance(obj, SoftLink):
            entry = model.LinkEntry(model.SOFT, path=obj.path)
        elif isinstance(obj, ExternalLink):
            entry = model.LinkEntry(model.EXTERNAL, path=obj.path, filename=obj.filename)
        elif isinstance(obj, HLObject):
            if obj._node is None or obj._file._writer is not self._writer:   # any handle
                raise OSError("Unable to create link (interfile hard links are not allowed)")
            entry = model.LinkEntry(model.HARD, node=obj._node)
        elif isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic)):
            node = model.DatatypeNode(np.dtype(obj), track_times=True)
            node.times = self._writer.now()   # kept by version 2 headers only (emit)
            entry = model.LinkEntry(model.HARD, node=node)
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
        if isinstance(obj, HLObject) and obj._name is None:    # opened with no path (as an
            obj._name = self._wpath(name)     # anonymous object): libhdf5 gives it the link's

    def _wdelitem(self, name):
        parent, leaf, node = self._wlookup(name)
        if parent is None or leaf not in parent.links:
            raise KeyError(f"Couldn't delete link (object '{name}' doesn't exist)")
        entry = parent.links.pop(leaf)
        self._writer.touch()
        if entry.kind == _wmodel().HARD:
            self._writer.unlinked_node(entry.node)


def _complex_as_compound(val, dtype):
    """Complex values for a dataset of ('r', 'i') compounds (h5py's complex_compat_dtype):
    their real and imaginary parts as the two members (numpy's cast would put the real part
    in both)."""
    if dtype.names is None:
        return val
    from ..dtypes import check_complex_dtype
    from ..format.messages.datatype import complex_names
    cdt = check_complex_dtype(dtype, complex_names())   # (before iscomplexobj: other
    if cdt is None or not np.iscomplexobj(val):      # compounds' values, tuples of ragged
        return val                                   # members, are no numpy arrays)
    return np.ascontiguousarray(val, cdt).view(dtype)


def _encoded_strings(val, dtype):
    """Values for fixed-length strings (h5py's ``string_dtype(encoding, length)``): str
    encoded with the type's encoding (UTF-8, else ASCII), as h5py writes them. Arrays of
    numpy unicode are left as they are (h5py has no conversion path for them)."""
    if dtype.kind != "S" or (isinstance(val, np.ndarray) and val.dtype.kind != "O"):
        return val
    encoding = (dtype.metadata or {}).get("h5py_encoding", "ascii")
    if isinstance(val, np.ndarray) and encoding != "utf-8":
        return val          # an object array: libhdf5's to convert (it has no path to ASCII)
    if isinstance(val, str):
        return np.array(val.encode(encoding), dtype=dtype)
    if isinstance(val, (list, tuple, np.ndarray)):
        items = np.asarray(val, dtype=object)
        if any(isinstance(v, str) for v in items.ravel()):
            flat = [v.encode(encoding) if isinstance(v, str) else v for v in items.ravel()]
            return np.array(flat, dtype=dtype).reshape(items.shape)
    return val


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
        given = tuple(a for a in args if not isinstance(a, str))
        args = numpy_index(given, node.shape)
        if names:
            self._write_fields(given, names, val)
            return
        val = _encoded_strings(val, node.dtype)
        if isinstance(val, np.ndarray) and node.dtype.kind != "O" and val.dtype.kind not in "OT" \
                and (val.dtype != node.dtype or val.dtype.metadata != node.dtype.metadata):
            from ..format.messages.datatype import encode_dtype
            encode_dtype(val.dtype)   # h5py converts an array from its own dtype: a plain
            #                           datetime64 array has no conversion path (TypeError)
        val = _complex_as_compound(val, node.dtype)
        if node.layout != "sparse":
            val = fit_values(node, given, val)
        from ..write.storage import MemoryStore
        libhdf5_converts = True               # (not h5py: it converts StringDType itself)
        if isinstance(val, np.ndarray) and val.dtype.kind == "T":
            val = val.astype(object)          # numpy 2 StringDType: str objects
            libhdf5_converts = False
        if isinstance(val, np.ndarray) and node.dtype.names is not None and \
                node.dtype.subdtype is None and val.dtype.kind != "V":
            val = np.asarray(val, dtype=node.dtype)   # h5py's numpy cast: into every member
        if isinstance(node.store, MemoryStore):
            meta = node.dtype.metadata or {}
            if ("vlen" in meta or "ref" in meta) and not isinstance(val, np.ndarray):
                if isinstance(val, (str, bytes)) or not hasattr(val, "__len__"):
                    tmp = np.empty((), object)
                    tmp[()] = val
                    val = tmp
                else:
                    val = _object_array(val, np.shape(np.asarray(val, dtype=object)))
            check_storable(val, node.dtype)
            if isinstance(val, np.ndarray) and node.dtype.kind != "O" and \
                    val.dtype != node.dtype.base and libhdf5_converts:   # (an array type's
                val = V.cast(val, node.dtype.base)            # values come with its dimensions)
            node.store.write(args if args else Ellipsis, val)
        else:   # an array dtype's values come expanded (its base, trailing dimensions)
            dtype = node.store.dtype.base
            val = np.asarray(val, dtype=dtype) if not isinstance(val, np.ndarray) else val
            if val.dtype != dtype:      # (the dataset's own type: an enum's is no integer)
                val = V.cast(val, node.dtype.base).astype(dtype, copy=False) \
                    if libhdf5_converts else val.astype(dtype)
            node.store.write(args, val)
        self._writer.touch()

    def _write_read_values(self, args, val):
        """Write values as a read gives them (Group.copy): one element per item, where
        __setitem__ would read a regular array as sequences of a variable-length type, as
        h5py does."""
        from ..write.storage import MemoryStore
        node = self._node
        if not isinstance(node.store, MemoryStore) or node.dtype.kind != "O":
            self[args] = val
            return
        if node.shape == ():
            item, val = val, np.empty((), object)
            val[()] = item
        node.store.write(args if args else Ellipsis, val)
        self._writer.touch()

    def _write_fields(self, args, names, val):
        """``ds[sel, 'a', 'b'] = val``: the named fields of the selection change, the other
        fields keep their values (read, update, write back)."""
        dtype = self._node.dtype
        missing = [n for n in names if dtype.names is None or n not in dtype.names]
        if missing:
            raise ValueError(f"Field names {missing} not in the compound type {dtype}")
        if self._node.layout != "sparse":
            val = field_values_shape(self._node, args, names, val)
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
            store.resize(size, node.memory_fill())
        else:
            store.resize(old, size)
        self._writer.touch()

    @property
    def regionref(self):
        from .node_refs import RegionMaker
        return RegionMaker(self)


# --- attributes ---------------------------------------------------------------------------------

class AttributesWriter:

    @property
    def _wnode(self):
        return getattr(self._parent, "_node", None)

    def __setitem__(self, name, value):
        self.create(name, value)

    def create(self, name, data=None, shape=None, dtype=None):
        """Create (or replace) attribute ``name`` (h5py's attrs.create); one created with a
        committed datatype of the file shares it."""
        node = self._wnode
        if node is None:
            raise OSError("Unable to create attribute (no write intent on file)")
        from .base import Empty
        from .datatype import committed_type
        from ..h5t import TypeID
        name = link_name(name)
        if isinstance(dtype, TypeID):       # h5py's attrs.create copies a TypeID's type:
            dtype = dtype.dtype             # only a Datatype is shared
        dtype, named = committed_type(dtype, self._parent._writer)
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
            self._set(name, dt, shp, arr, named)
            return
        if dtype is not None and np.dtype(dtype).subdtype is not None \
                and not isinstance(data, Empty):
            dt, shp, arr = _array_dtype_attribute(data, shape, np.dtype(dtype))
            self._store_attr(name, dt, shp, arr)
            return
        arr, dt = _prepare(data, dtype)
        if isinstance(arr, Empty):
            self._set(name, dt, None, None, named)
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
        self._store_attr(name, dt, tuple(arr.shape), arr, named)

    def _store_attr(self, name, dt, shape, arr, named=None):
        V.stored_dtype(dt)
        from ..format.messages.datatype import encode_dtype
        encode_dtype(dt)          # raises TypeError for dtypes HDF5 cannot store
        self._set(name, dt, shape, arr, named)

    def _set(self, name, dt, shape, arr, named=None):
        """Make the attribute; it shares ``named``, the committed type (writer node) it was
        created with, when that is its type."""
        named = named if named is not None and named.dtype == dt else None
        if arr is not None:
            check_storable(arr, dt)
        self._wnode.set_attr(name, dt, shape, arr, named)
        self._parent._writer.touch()

    def modify(self, name, value):
        if name in self and self._wnode is not None:
            old = self._wnode.attrs[name]
            if old.shape is None:
                raise OSError("Empty attributes can't be modified")
            arr = _prepare(hdf5_converted(value, old.dtype), old.dtype)[0]
            if arr.shape == old.shape or arr.size == int(np.prod(old.shape)) == 1:
                check_storable(arr, old.dtype)
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

    def _rename(self, name, new_name):
        """H5Arename: attribute ``name`` called ``new_name`` (its value, type and creation
        order kept)."""
        node = self._wnode
        if node is None:
            raise ValueError("Unable to rename attribute (no write intent on file)")
        if name not in node.attrs:
            raise KeyError("Unable to rename attribute (can't locate attribute)")
        if new_name in node.attrs:
            raise ValueError("Unable to rename attribute (attribute already exists)")
        entry = node.attrs.pop(name)
        entry.name = new_name
        node.attrs[new_name] = entry
        self._parent._writer.touch()

    def _wnames(self):
        node = self._wnode
        if node.track_order:
            return [a.name for a in sorted(node.attrs.values(), key=lambda a: a.order)]
        return sorted(node.attrs, key=lambda n: n.encode("utf-8", "surrogateescape"))
