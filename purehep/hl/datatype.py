"""Named (committed) datatypes: an object header that holds only a datatype message."""
from .base import HLObject, DATATYPE, message


class Datatype(HLObject):
    @property
    def datatype(self):
        return message(self._ctx, self._oh, DATATYPE)

    @property
    def id(self):
        """h5py's TypeID: the stored type's class (``get_class()``), see purehep.h5t."""
        from ..h5t import TypeID
        return TypeID(self.datatype)

    @property
    def dtype(self):
        return self.datatype.dtype

    def __repr__(self):
        if self._file.id is None:
            return "<Closed purehep named type>"
        return f'<purehep Datatype "{self._name}" {self.dtype}>'
