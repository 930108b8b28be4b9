"""Named (committed) datatypes: an object header that holds only a datatype message; datasets
and attributes created with one share it (their Datatype message is a shared message pointing
to its object header, spec IV.A.2.d and IV.A.2 "Shared Message"), as h5py links them."""
from .base import HLObject, DATATYPE, message
from .serialize import serialized


@serialized()
class Datatype(HLObject):
    """A committed datatype of a file; ``Datatype(type_id)`` of a TypeID not committed
    (purehep.h5t: a predefined type, one py_create made) is h5py's transient named type,
    which stands for that type where a dtype is taken (create_dataset, attrs.create)."""
    _tid = None

    def __init__(self, bind, *args, **kwargs):
        from ..h5t import TypeID
        if isinstance(bind, TypeID) and not args and not kwargs:
            if bind._named is not None:
                self.__dict__.update(bind._named.__dict__)
            else:
                self._tid = bind
            return
        super().__init__(bind, *args, **kwargs)

    @property
    def datatype(self):
        return message(self._ctx, self._oh, DATATYPE)

    @property
    def id(self):
        """h5py's TypeID: the stored type's class (``get_class()``), see purehep.h5t."""
        if self._tid is not None:
            return self._tid
        from ..h5t import type_id
        return type_id(self.datatype, committed=True, named=self)

    @property
    def dtype(self):
        return self.id.dtype if self._tid is not None else self.datatype.dtype

    @property
    def name(self):
        return None if self._tid is not None else super().name

    @property
    def file(self):
        if self._tid is not None:
            raise TypeError("Invalid location identifier (not a named datatype)")
        return self._file

    def __bool__(self):
        return self._tid is not None or super().__bool__()

    def __repr__(self):
        """h5py's repr (the base name, or "anonymous")."""
        if not self:
            return "<Closed HDF5 named type>"
        name = self._repr_name('("anonymous")')
        return f'<HDF5 named type {name} (dtype {self.dtype.str})>'


def committed_type(dtype, writer):
    """(numpy dtype, writer node or None) of the ``dtype`` given to create a dataset or an
    attribute: a committed datatype of the file being written (a Datatype or its TypeID) is
    shared, so its node comes back with its dtype; one of another file is copied, as h5py
    copies it (None); a TypeID (or the transient Datatype of one) gives its dtype
    (purehep.h5t.as_dtype), anything else comes back as it is."""
    from ..h5t import TypeID, as_dtype
    if isinstance(dtype, Datatype) and dtype._tid is not None:
        dtype = dtype._tid
    named = dtype._named if isinstance(dtype, TypeID) else dtype
    if isinstance(dtype, TypeID):
        dtype = as_dtype(dtype)
    elif isinstance(dtype, Datatype):
        dtype = dtype.dtype
    if not isinstance(named, Datatype) or named._node is None or \
            getattr(named._file, "_writer", None) is not writer:
        return dtype, None
    from ..h5t import _decoded
    if _decoded(dtype).file_dtype != named.datatype.file_dtype:
        from ..errors import UnsupportedFeatureError
        raise UnsupportedFeatureError(f"the committed datatype {named.name!r} is stored in a "
                                      f"form purehep does not write for {dtype}")
    return dtype, named._node
