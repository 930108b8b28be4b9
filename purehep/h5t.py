"""h5py's ``h5t`` as far as purehep has it: the datatype class codes (spec IV.A.2.d, the
"Class" bit field of the Datatype message) and ``TypeID``, what ``Dataset.id.get_type()`` and
``Datatype.id`` give: the class of a stored datatype as libhdf5's H5Tget_class reports it.
"""
NO_CLASS, INTEGER, FLOAT, TIME, STRING, BITFIELD, OPAQUE, COMPOUND, REFERENCE, ENUM, VLEN, \
    ARRAY, COMPLEX = range(-1, 12)


class TypeID:
    """A stored datatype (a decoded Datatype message), read-only."""

    def __init__(self, datatype):
        self._type = datatype

    def get_class(self):
        """H5Tget_class: the stored class, except that a variable-length string (stored as
        class 9, variable-length, of type string) is STRING, as libhdf5 reports it."""
        return STRING if self._type.kind == "vlen_str" else self._type.cls

    def get_size(self):
        """H5Tget_size of the type H5Dget_type gives: its size in memory (variable-length
        types and references hold pointers there), the stored size otherwise."""
        return self._type.mem_size or self._type.size

    @property
    def dtype(self):
        return self._type.dtype

    def __repr__(self):
        return f"<purehep.h5t.TypeID class {self.get_class()} size {self.get_size()}>"
