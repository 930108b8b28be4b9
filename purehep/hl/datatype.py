"""Named (committed) datatypes: an object header that holds only a datatype message; datasets
and attributes created with one share it (their Datatype message is a shared message pointing
to its object header, spec IV.A.2.d and IV.A.2 "Shared Message"), as h5py links them."""
from .base import HLObject, DATATYPE, message


class Datatype(HLObject):
    @property
    def datatype(self):
        return message(self._ctx, self._oh, DATATYPE)

    @property
    def id(self):
        """h5py's TypeID: the stored type's class (``get_class()``), see purehep.h5t."""
        from ..h5t import type_id
        return type_id(self.datatype, committed=True, named=self)

    @property
    def dtype(self):
        return self.datatype.dtype

    def __repr__(self):
        """h5py's repr (the base name, or "anonymous")."""
        if not self._file.id:
            return "<Closed HDF5 named type>"
        name = self._repr_name('("anonymous")')
        return f'<HDF5 named type {name} (dtype {self.dtype.str})>'


def committed_type(dtype, writer):
    """(numpy dtype, writer node or None) of the ``dtype`` given to create a dataset or an
    attribute: a committed datatype of the file being written (a Datatype or its TypeID) is
    shared, so its node comes back with its dtype; one of another file is copied, as h5py
    copies it (None); a TypeID gives its dtype, anything else comes back as it is."""
    from ..h5t import TypeID
    named = dtype._named if isinstance(dtype, TypeID) else dtype
    if isinstance(dtype, (TypeID, Datatype)):
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
