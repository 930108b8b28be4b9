"""What every object in a file shares: its header, name, file, attributes and references."""
import os
import posixpath
from collections.abc import ItemsView, KeysView, ValuesView

from ..errors import FormatError
from ..format import messages
from ..format.object_header import (DATASPACE, DATATYPE, GROUP_INFO, LAYOUT, LINK, LINK_INFO,
                                     SYMBOL_TABLE, header_of, object_kind)
from ..format.superblock import locate_signature
from ..io.source import open_source


class Empty:
    """An empty (null dataspace) dataset or attribute value, as h5py.Empty."""

    shape = None
    size = None

    def __init__(self, dtype):
        import numpy as np
        self.dtype = np.dtype(dtype)

    def __eq__(self, other):
        return isinstance(other, Empty) and self.dtype == other.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"Empty(dtype={self.dtype!r})"


def is_hdf5(fname):
    """h5py's ``is_hdf5``: whether the file ``fname`` holds the HDF5 format signature where the
    spec allows it (II.A), as H5Fis_accessible decides; False when there is no such file."""
    fname = os.path.abspath(os.fspath(fname))
    if not os.path.isfile(fname):
        return False
    source = open_source(fname)
    try:
        return locate_signature(source) is not None
    finally:
        source.close()


class _KeysView(KeysView):
    def __reversed__(self):
        return reversed(self._mapping)


class _ValuesView(ValuesView):
    """The values, by ``get`` (None for a dangling link), as h5py's ValuesViewHDF5."""

    def __iter__(self):
        return (self._mapping.get(name) for name in self._mapping)

    def __contains__(self, value):
        return any(v is value or v == value for v in self)

    def __reversed__(self):
        return (self._mapping.get(name) for name in reversed(self._mapping))


class _ItemsView(ItemsView):
    """The (name, value) pairs, by ``get``, as h5py's ItemsViewHDF5."""

    def __iter__(self):
        return ((name, self._mapping.get(name)) for name in self._mapping)

    def __contains__(self, item):
        name, value = item
        if name not in self._mapping:
            return False
        v = self._mapping.get(name)
        return v is value or v == value

    def __reversed__(self):
        return ((name, self._mapping.get(name)) for name in reversed(self._mapping))


class MappingExtras:
    """What h5py's groups and attribute managers add to a mapping: views that iterate in
    reverse when the mapping does (groups) and IPython's completion of ``obj["…`` (the names,
    sorted)."""

    def keys(self):
        return _KeysView(self)

    def values(self):
        return _ValuesView(self)

    def items(self):
        return _ItemsView(self)

    def _ipython_key_completions_(self):
        return sorted(self.keys())


class HardLink:
    """A hard link, as returned by ``Group.get(name, getlink=True)``."""

    def __repr__(self):
        return "<HardLink>"


class SoftLink:
    """A soft link's value (read-only, as h5py's: ``_path`` behind ``path``)."""

    def __init__(self, path):
        self._path = str(path)

    @property
    def path(self):
        return self._path

    def __repr__(self):
        return f'<SoftLink to "{self.path}">'


class ExternalLink:
    """An external link's file name and path (read-only, as h5py's)."""

    def __init__(self, filename, path):
        self._filename = str(filename)
        self._path = str(path)

    @property
    def path(self):
        return self._path

    @property
    def filename(self):
        return self._filename

    def __repr__(self):
        return f'<ExternalLink to "{self.path}" in file "{self.filename}">'


def message(ctx, header, mtype, required=True):
    """The decoded first message of ``mtype`` in ``header`` (None if absent and not required)."""
    raw = header.first(mtype)
    if raw is None:
        if required:
            raise FormatError(f"object header lacks a {messages.name(mtype)} message",
                              "object header", ctx.absolute(header.address))
        return None
    return messages.decode(ctx, raw)


def open_object(file, address, name):
    """The Group, Dataset or Datatype whose object header is at ``address``."""
    writer = getattr(file, "_writer", None)
    if writer is not None:
        node = writer.node_at(address)
        if node is not None:
            from .writing import bind
            return bind(file, node, name)
    from .group import Group
    from .dataset import Dataset
    from .datatype import Datatype
    header = header_of(file._ctx, address)
    cls = {"dataset": Dataset, "group": Group, "datatype": Datatype}[object_kind(header)]
    return cls(file, address, name, header)


def _identified(cls, oid):
    """The object of class ``cls`` that the identifier ``oid`` (a DatasetID, GroupID)
    stands for; h5py's ValueError for an identifier of another kind of object."""
    obj = getattr(oid, "_ds", None)
    if obj is None:
        obj = getattr(oid, "_group", None)
    if not isinstance(obj, cls):
        raise ValueError(f"{type(oid).__name__} is not an identifier of a {cls.__name__}")
    return obj


from .writing import WritableObject  # noqa: E402


class HLObject(WritableObject):
    """Base of Group, Dataset and Datatype."""

    _file = None                  # (h5py's transient named types belong to no file)

    def __init__(self, file, address=None, name=None, header=None):
        if address is None and name is None and not hasattr(file, "_ctx"):
            self.__dict__.update(_identified(type(self), file).__dict__)   # h5py's Cls(id)
            return
        self._file = file
        self._ctx = file._ctx
        self._address = address
        self._name = name
        self._header = header

    def _live(self, exc=ValueError):
        """Raise ``exc`` as h5py does for an object of a closed file, or closed itself."""
        if not self:
            raise exc("Not a location (invalid object ID)")

    @property
    def _oh(self):
        self._live()
        if self._node is not None:
            self._sync()
        if self._header is None:
            self._header = header_of(self._ctx, self._address)
        return self._header

    @property
    def file(self):
        return self._file

    @property
    def _id(self):
        """h5py's ``_id``: the object's low-level identifier (``id``), which h5py code
        passes to the low-level calls."""
        return self.id

    @property
    def name(self):
        """The path this object was opened by (found by search for dereferenced objects);
        None once the file is closed, as h5py's. In a file being written, a path no longer
        leading to the object (its link deleted or moved) is searched for again, as libhdf5
        does; None: anonymous (no path from the root)."""
        if not self:
            return None
        if self._node is not None:
            if self._name is None or not self._still_at(self._name):
                self._name = self._file._writer.path_of(self._node)
            return self._name
        if self._name is None:
            self._name = self._file._path_of(self._address)
        return self._name

    def _still_at(self, path):
        try:
            return self._file._wlookup(path)[2] is self._node
        except (KeyError, ValueError):
            return False

    @property
    def parent(self):
        if self.name is None:
            raise ValueError("Parent of an anonymous object is undefined")
        return self._file[posixpath.dirname(self.name) or "/"]

    def _repr_name(self, anonymous="(anonymous)"):
        """The name in h5py's repr of datasets and named types: the quoted base name."""
        if self.name is None:
            return anonymous
        return f'"{posixpath.basename(posixpath.normpath(self.name)) or "/"}"'

    @property
    def attrs(self):
        """The attributes (h5py's AttributeManager, made for a closed object too: its
        uses then raise)."""
        from .attrs import AttributeManager
        return AttributeManager(self)

    @property
    def ref(self):
        if self._node is not None:
            from .node_refs import NodeReference
            ref = NodeReference(None)
            ref._node, ref._file = self._node, self._file
            return ref
        from ..reference import Reference
        return Reference(self._address)

    @property
    def addr(self):
        """The object header address (what h5py calls ``id.addr``'s offset)."""
        if self._node is not None:
            self._sync()
        return self._address

    def __eq__(self, other):
        if not isinstance(other, HLObject):
            return NotImplemented    # as h5py: numpy compares its values with ours elementwise
        if self._node is not None:
            return other._node is self._node
        return other._address == self._address and other._file is self._file

    def __hash__(self):
        if self._node is not None:
            return hash(id(self._node))
        return hash((id(self._file), self._address))

    def __bool__(self):
        """Open: its file is, and its id was not closed (``obj.id.close()``)."""
        return bool(self._file.id) and not self.__dict__.get("_closed")

    def __reduce__(self):
        """Objects of a read-only file opened by path pickle as what opens them again;
        others are live handles on a file: not picklable, as in h5py (see hl.reopen)."""
        from .reopen import reduce
        return reduce(self)
