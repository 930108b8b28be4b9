"""Named (committed) datatypes: an object header that holds only a datatype message."""
from .base import HLObject, DATATYPE, message


class Datatype(HLObject):
    @property
    def datatype(self):
        return message(self._ctx, self._oh, DATATYPE)

    @property
    def id(self):
        """h5py's TypeID: the stored type's class (``get_class()``), see purehep.h5t."""
        from ..h5t import type_id
        return type_id(self.datatype, committed=True)

    @property
    def dtype(self):
        return self.datatype.dtype

    def __repr__(self):
        """h5py's repr (the base name, or "anonymous")."""
        if not self._file.id:
            return "<Closed HDF5 named type>"
        name = self._repr_name('("anonymous")')
        return f'<HDF5 named type {name} (dtype {self.dtype.str})>'
