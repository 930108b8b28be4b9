"""h5py's ``h5a`` as far as purehep has it: attribute identifiers (``AttrID``: the stored
datatype, dataspace and value of an Attribute message, spec IV.A.2.m, read and written), and
H5Acreate, H5Aopen, H5Aexists, H5Aget_info, H5Aiterate, H5Arename, H5Adelete and
H5Aget_num_attrs on a file, group, dataset or committed datatype (its id) mapped onto the
object's ``attrs``; attributes by position in name or creation order (purehep.h5 INDEX_*,
ITER_*), creation orders as stored (hl.attrs.attribute_table)."""
import numpy as np

from .h5 import INDEX_NAME, ITER_INC, in_index_order
from .h5d import location, value_args


class AttrID:
    """An attribute of an object: its name, stored datatype and dataspace (``obj``: the
    File, Group, Dataset or Datatype it belongs to)."""

    def __init__(self, message, obj=None):
        self._attr = message
        self._obj = obj

    @property
    def name(self):
        return self._attr.name.encode()

    @property
    def shape(self):
        return self._attr.dataspace.shape

    @property
    def dtype(self):
        return self._attr.datatype.dtype

    def get_type(self):
        """H5Aget_type: committed when the attribute shares a committed datatype."""
        from .h5t import type_id
        return type_id(self._attr.datatype, committed=self._attr.type_address is not None)

    def get_space(self):
        from .h5s import of_shape
        return of_shape(self._attr.dataspace.shape)

    def get_name(self):
        return self.name

    def get_storage_size(self):
        """Bytes the value occupies in the file (variable-length elements: their heap ids)."""
        return len(self._attr.data)

    def read(self, arr, mtype=None):
        """H5Aread: the value into the array ``arr`` (C-contiguous, writable, of the
        attribute's size), converted to its dtype (or ``mtype``'s)."""
        from .hl.attrs import attribute_value
        _array(arr, writable=True)
        value = np.asarray(attribute_value(self._obj._ctx, self._attr))
        _same_size(arr, value.size)
        arr[...] = (value.astype(mtype.dtype) if mtype is not None else value).reshape(arr.shape)

    def write(self, arr):
        """H5Awrite: the array ``arr`` (C-contiguous, of the attribute's size) as the value."""
        _array(arr, writable=False)
        _same_size(arr, int(np.prod(self.shape or (), dtype=np.int64)))
        self._obj.attrs.modify(self.name.decode("utf-8", "surrogateescape"), arr)
        self._attr = self._obj.attrs.get_id(self.name)._attr


class AttrInfo:
    """H5A_info_t: creation order (always valid, as libhdf5 reports it), name character
    set, size of the stored value."""

    def __init__(self, attr, order):
        self.corder_valid = True
        self.corder = order or 0
        self.cset = 0
        self.data_size = len(attr.data)


def _array(arr, writable):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"Argument 'arr' has incorrect type (expected numpy.ndarray, got "
                        f"{type(arr).__name__})")
    if not arr.flags.c_contiguous or (writable and not arr.flags.writeable):
        raise TypeError("Array must be C-contiguous" + " and writable" * writable)


def _same_size(arr, size):
    """(libhdf5 would read or write past an array of another size: refused here)"""
    if arr.size != size:
        raise ValueError(f"an array of {arr.size} elements for an attribute of {size}")


def _object(loc, obj_name):
    from .h5t import TypeID
    obj = loc._named if isinstance(loc, TypeID) and loc._named is not None else location(loc)
    name = obj_name.decode("utf-8", "surrogateescape") if isinstance(obj_name, bytes) \
        else obj_name
    return obj if name in (".", "") else obj[name]


def _table(obj):
    from .hl.attrs import attribute_table
    obj._live(KeyError)
    return attribute_table(obj._ctx, obj._oh)


def _ordered(obj, index_type, order):
    """The attribute names of ``obj`` in name or creation order, increasing or decreasing."""
    attrs, orders = _table(obj)
    return in_index_order(list(attrs), index_type, order, orders.get, lambda n: n,
                          "Attribute")


def _pick(obj, name, index, index_type, order, error):
    """The attribute name given, or the one at ``index`` in the order asked for (``error``:
    libhdf5's exception for an index past the end)."""
    if name is not None:
        return name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
    names = _ordered(obj, index_type, order)
    if not 0 <= index < len(names):
        raise error
    return names[index]


def create(loc, name, tid, space, acpl=None, aapl=None):
    """H5Acreate: attribute ``name`` of type ``tid`` over ``space`` on the object ``loc``."""
    obj = location(loc)
    name = name.decode() if isinstance(name, bytes) else name
    kw = value_args(tid, space)
    if kw.get("dtype") is tid and tid._named is not None:
        kw["dtype"] = tid._named    # a committed type is shared (attrs.create copies TypeIDs)
    obj.attrs.create(name, **kw)
    return open(loc, name)


def open(loc, name=None, index=-1, *, obj_name=b".", index_type=INDEX_NAME,     # noqa: A001
         order=ITER_INC, lapl=None):
    """H5Aopen: the attribute ``name`` (or at position ``index``) of the object ``loc``
    (its member ``obj_name``)."""
    obj = _object(loc, obj_name)
    return obj.attrs.get_id(_pick(obj, name, index, index_type, order, OSError(
        "Unable to synchronously open attribute (invalid index specified)")))


def exists(loc, name, *, obj_name=b".", lapl=None):
    """H5Aexists: whether the object ``loc`` (its member ``obj_name``) has attribute
    ``name``."""
    return _pick(None, name, -1, None, None, None) in _object(loc, obj_name).attrs


def get_num_attrs(loc):
    return len(_object(loc, b".").attrs)


def get_info(loc, name=None, index=-1, *, obj_name=b".", index_type=INDEX_NAME,
             order=ITER_INC, lapl=None):
    """AttrInfo of the attribute ``loc`` (an AttrID), or of attribute ``name`` (or at
    position ``index``) of the object ``loc``."""
    if isinstance(loc, AttrID):
        obj, name = loc._obj, loc.name.decode("utf-8", "surrogateescape")
    else:
        obj = _object(loc, obj_name)
        name = _pick(obj, name, index, index_type, order, RuntimeError(
            "Unable to get attribute info (invalid index specified)"))
    attrs, orders = _table(obj)
    if name not in attrs:
        raise KeyError(f"Unable to get attribute info (can't locate attribute: '{name}')")
    return AttrInfo(attrs[name], orders[name])


def iterate(loc, func, index=0, *, info=False, index_type=INDEX_NAME, order=ITER_INC):
    """Call ``func(name)`` (``func(name, info)`` with ``info``) for the attributes of
    ``loc`` from position ``index``; the first result that is not None, else None."""
    obj = _object(loc, b".")
    attrs, orders = _table(obj)
    for name in _ordered(obj, index_type, order)[index:]:
        raw = name.encode("utf-8", "surrogateescape")
        result = func(raw, AttrInfo(attrs[name], orders[name])) if info else func(raw)
        if result is not None:
            return result
    return None


def rename(loc, name, new_name, *, obj_name=b".", lapl=None):
    obj = _object(loc, obj_name)
    obj.attrs._rename(*(n.decode("utf-8", "surrogateescape") if isinstance(n, bytes) else n
                        for n in (name, new_name)))


def delete(loc, name=None, index=-1, *, obj_name=b".", index_type=INDEX_NAME, order=ITER_INC,
           lapl=None):
    """H5Adelete: the attribute ``name`` (or at position ``index``) of the object ``loc``."""
    obj = _object(loc, obj_name)
    name = _pick(obj, name, index, index_type, order, KeyError(
        "Unable to delete attribute (invalid index specified)"))
    if name not in obj.attrs:
        raise KeyError("Unable to delete attribute (can't locate attribute)")
    del obj.attrs[name]
