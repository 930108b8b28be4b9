"""h5py's ``h5a`` as far as purehep has it: attribute identifiers (``AttrID``: the stored
datatype and dataspace of an Attribute message, spec IV.A.2.m) and H5Acreate / H5Aopen on a
file, group or dataset (its id) mapped onto the object's ``attrs``."""
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


def create(loc, name, tid, space, acpl=None, aapl=None):
    """H5Acreate: attribute ``name`` of type ``tid`` over ``space`` on the object ``loc``."""
    obj = location(loc)
    name = name.decode() if isinstance(name, bytes) else name
    kw = value_args(tid, space)
    if kw.get("dtype") is tid and tid._named is not None:
        kw["dtype"] = tid._named    # a committed type is shared (attrs.create copies TypeIDs)
    obj.attrs.create(name, **kw)
    return open(loc, name)


def open(loc, name):     # noqa: A001 - h5py's name
    """H5Aopen: the attribute ``name`` of the object ``loc``."""
    return location(loc).attrs.get_id(name)
