"""h5py's ``h5t`` as far as purehep has it: the datatype class codes (spec IV.A.2.d, the
"Class" bit field of the Datatype message) and type identifiers, what ``Dataset.id.get_type()``
and ``Datatype.id`` give and what ``py_create`` makes of a numpy dtype: a decoded Datatype
message (the one purehep writes for that dtype), with the getters h5py's TypeID classes have
(H5Tget_class, H5Tget_size, H5Tget_order, H5Tget_cset, compound members); libhdf5's predefined
integer, float, reference and C string types (those numpy dtypes purehep writes), and h5py's
dtype helpers, which h5py.h5t holds too.
"""
import numpy as np

from .dtypes import (check_dtype, check_enum_dtype, check_opaque_dtype, check_ref_dtype,  # noqa
                     check_string_dtype, check_vlen_dtype, enum_dtype, opaque_dtype,
                     special_dtype, string_dtype, vlen_dtype)

NO_CLASS, INTEGER, FLOAT, TIME, STRING, BITFIELD, OPAQUE, COMPOUND, REFERENCE, ENUM, VLEN, \
    ARRAY, COMPLEX = range(-1, 12)
ORDER_LE, ORDER_BE = 0, 1
VARIABLE = 2 ** 64 - 1              # H5T_VARIABLE: the size of a variable-length string
CSET_ASCII, CSET_UTF8 = 0, 1
STR_NULLTERM, STR_NULLPAD, STR_SPACEPAD = 0, 1, 2
SGN_NONE, SGN_2 = 0, 1
PAD_ZERO, PAD_ONE, PAD_BACKGROUND = 0, 1, 2
NORM_IMPLIED, NORM_MSBSET, NORM_NONE = 0, 1, 2
_NORMS = {0: NORM_NONE, 1: NORM_MSBSET, 2: NORM_IMPLIED}    # the message's codes -> H5T_norm_t


class TypeID:
    """A datatype (a decoded Datatype message); ``type_id`` gives the class-specific one."""

    def __init__(self, datatype, committed=False, named=None, body=None):
        self._type = datatype
        self._committed = committed
        self._named = named         # the Datatype object it is the id of, if any
        self._body = body           # its message, when not what purehep writes for its dtype

    def committed(self):
        """H5Tcommitted: whether this is a named (committed) datatype of a file, or the type
        of an object that shares one."""
        return self._committed

    def get_class(self):
        """H5Tget_class: the stored class, except that a variable-length string (stored as
        class 9, variable-length, of type string) is STRING, as libhdf5 reports it."""
        return STRING if self._type.kind == "vlen_str" else self._type.cls

    def get_size(self):
        """H5Tget_size of the type H5Dget_type gives: its size in memory (variable-length
        types and references hold pointers there), the stored size otherwise."""
        return self._type.mem_size or self._type.size

    def copy(self):
        return type_id(self._type, body=self._body)    # a copy is transient (H5Tcopy)

    def _mutable(self, error=TypeError):
        """Raise ``error`` for a locked type (h5py's TypeError for H5Tset_size and
        H5Tset_order, RuntimeError for the float fields' setters)."""
        if self.__dict__.get("_locked"):
            raise error("Datatype is read-only (datatype is read-only)")

    def lock(self):
        """H5Tlock: the type can no longer change (as libhdf5's predefined types)."""
        self._locked = True

    def _retype(self, body):
        """This id now of the type of message ``body``."""
        self._type, self._body = _of_body(body), bytes(body)

    def commit(self, group, name, lcpl=None):
        """H5Tcommit: this type as the committed datatype ``name`` of ``group`` (an id);
        libhdf5's predefined types are immutable (copy them first)."""
        from .h5d import location
        if self.__dict__.get("_locked"):
            raise KeyError("Unable to commit datatype synchronously (datatype is immutable)")
        where = location(group)
        name = name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
        where[name] = as_dtype(self)
        self._committed, self._named = True, where[name]

    def get_super(self):
        """H5Tget_super: the base type of an enum, variable-length or array type (a
        variable-length string's: its one-byte characters)."""
        if self._type.base is None:
            if self._type.kind == "vlen_str":
                return py_create("u1")
            raise TypeError("Not a datatype (not a derived data type)")
        return type_id(self._type.base)

    def detect_class(self, cls):
        """H5Tdetect_class: whether this type is of class ``cls`` or contains one."""
        def contains(t):
            own = STRING if t.kind == "vlen_str" else t.cls
            return own == cls or any(contains(m.type) for m in t.members) or \
                (t.base is not None and t.kind != "vlen_str" and contains(t.base))
        return contains(self._type)

    def equal(self, other):
        """H5Tequal: the same datatype."""
        return isinstance(other, TypeID) and other._type == self._type

    __eq__ = equal
    __hash__ = None

    @property
    def dtype(self):
        return self._type.dtype

    def __repr__(self):
        return f"<purehep.h5t.{type(self).__name__} class {self.get_class()} " \
               f"size {self.get_size()}>"


def _order(datatype):
    return ORDER_BE if datatype.order == ">" else ORDER_LE


class TypeAtomicID(TypeID):
    def get_order(self):
        return _order(self._type)

    def set_order(self, order):
        """H5Tset_order: ORDER_LE or ORDER_BE."""
        self._mutable()
        if order not in (ORDER_LE, ORDER_BE):
            raise ValueError("Illegal byte order (illegal byte order)")
        from .format.messages.datatype import encode_complex, encode_dtype
        base = self._type.base if self._type.cls == COMPLEX else self._type
        dt = base.dtype.newbyteorder(">" if order == ORDER_BE else "<")
        self._retype(encode_complex(dt) if self._type.cls == COMPLEX else encode_dtype(dt))

    def get_precision(self):
        """Significant bits."""
        return self._type.precision or 8 * self._type.size

    def get_offset(self):
        """The bit offset of the first significant bit."""
        return self._type.bit_offset

    def get_pad(self):
        """(low, high) padding of the unused bits: PAD_ZERO or PAD_ONE (flag bits 1, 2)."""
        return (self._type.flags >> 1) & 1, (self._type.flags >> 2) & 1


class TypeIntegerID(TypeAtomicID):
    def get_sign(self):
        return SGN_2 if self._type.signed else SGN_NONE


class TypeFloatID(TypeAtomicID):
    """A floating-point type; its setters are libhdf5's (H5Tset_fields, …), with their
    checks, and a dataset of a layout numpy has no dtype of is written as libhdf5 converts
    numbers into it (purehep.write.softfloat) and read as the float h5py names for it."""

    def get_fields(self):
        """(sign bit, exponent position, exponent size, mantissa position, size)."""
        return self._type.float_layout[:5]

    def get_ebias(self):
        return self._type.float_layout[5]

    def get_norm(self):
        return _NORMS[self._type.float_layout[6]]

    def get_inpad(self):
        """The padding of unused bits inside the number (flag bit 3)."""
        return (self._type.flags >> 3) & 1

    def set_fields(self, spos, epos, esize, mpos, msize):
        """H5Tset_fields: the sign bit, exponent and mantissa positions and sizes, each
        within the precision and none overlapping another (libhdf5's ValueErrors)."""
        self._mutable(RuntimeError)
        prec = self.get_precision()
        for bad, what in ((epos + esize > prec, "Exponent bit field size/location is invalid"),
                          (mpos + msize > prec, "Mantissa bit field size/location is invalid"),
                          (spos >= prec, "Sign location is not valid"),
                          (epos <= spos < epos + esize, "Sign bit appears within exponent field"),
                          (mpos <= spos < mpos + msize, "Sign bit appears within mantissa field"),
                          (mpos < epos < mpos + msize or epos < mpos < epos + esize,
                           "Exponent and mantissa fields overlap")):
            if bad:
                raise ValueError(f"{what} ({what[0].lower() + what[1:]})")
        self._refloat(layout=(spos, epos, esize, mpos, msize) + self._type.float_layout[5:])

    def set_ebias(self, ebias):
        """H5Tset_ebias: the exponent bias (a size_t; one the Datatype message's 32-bit
        field holds: libhdf5 would cut a larger one when it writes the type)."""
        self._mutable(RuntimeError)
        if ebias < 0:
            raise OverflowError("can't convert negative value to size_t")
        if ebias >= 1 << 32:
            raise ValueError(f"exponent bias {ebias} does not fit the datatype message's "
                             "32-bit field")
        self._refloat(layout=self._type.float_layout[:5] + (int(ebias),) +
                      self._type.float_layout[6:])

    def set_norm(self, norm):
        """H5Tset_norm: NORM_IMPLIED, NORM_MSBSET or NORM_NONE."""
        self._mutable(RuntimeError)
        if norm not in _NORMS.values():
            raise ValueError("Illegal normalization (illegal normalization)")
        code = {v: k for k, v in _NORMS.items()}[norm]
        self._refloat(layout=self._type.float_layout[:6] + (code,))

    def set_inpad(self, pad):
        """H5Tset_inpad: PAD_ZERO or PAD_ONE (PAD_BACKGROUND is stored as zeros, the
        message's one bit holds no more)."""
        self._mutable(RuntimeError)
        if pad not in (PAD_ZERO, PAD_ONE, PAD_BACKGROUND):
            raise ValueError("Illegal internal pad type (illegal internal pad type)")
        self._refloat(inpad=int(pad == PAD_ONE))

    def set_size(self, size):
        """H5Tset_size: the type's size in bytes; the precision is cut to it (the offset to
        0), which the fields must then fit in (TypeError otherwise, as libhdf5's)."""
        self._mutable()
        size = int(size)
        prec, offset = self.get_precision(), self.get_offset()
        if offset + prec > 8 * size:
            prec, offset = min(prec, 8 * size), 0 if prec >= 8 * size else 8 * size - prec
        spos, epos, esize, mpos, msize = self.get_fields()
        if spos >= prec + offset or epos + esize > prec + offset or mpos + msize > prec + offset:
            raise TypeError("Unable to set size for datatype (adjust sign, mantissa, and "
                            "exponent fields first)")
        self._refloat(size=size, precision=prec, offset=offset)

    def _refloat(self, size=None, precision=None, offset=None, layout=None, inpad=None):
        """This id now of the float type with the changes given."""
        from .format.messages.datatype import encode_float
        t = self._type
        pads = ((t.flags >> 1) & 1, (t.flags >> 2) & 1, (t.flags >> 3) & 1 if inpad is None
                else inpad)
        self._retype(encode_float(t.size if size is None else size, t.order,
                                  t.bit_offset if offset is None else offset,
                                  self.get_precision() if precision is None else precision,
                                  t.float_layout if layout is None else layout, pads))


class TypeTimeID(TypeID):
    pass


class TypeBitfieldID(TypeID):
    def get_order(self):
        return _order(self._type)


class TypeReferenceID(TypeID):
    pass


class TypeStringID(TypeID):
    def get_cset(self):
        """H5Tget_cset: CSET_ASCII or CSET_UTF8 (the stored character set)."""
        return self._type.charset

    def is_variable_str(self):
        return self._type.kind == "vlen_str"

    def get_strpad(self):
        """STR_NULLTERM, STR_NULLPAD or STR_SPACEPAD."""
        return self._type.padding

    def set_size(self, size):
        """H5Tset_size: strings of ``size`` bytes, or variable-length ones (VARIABLE); the
        padding and character set kept, as libhdf5 keeps them."""
        self._restring(size=int(size))

    def set_strpad(self, pad):
        """H5Tset_strpad: STR_NULLTERM, STR_NULLPAD or STR_SPACEPAD."""
        self._restring(padding=_choice(pad, (STR_NULLTERM, STR_NULLPAD, STR_SPACEPAD),
                                       "string padding"))

    def set_cset(self, cset):
        """H5Tset_cset: CSET_ASCII or CSET_UTF8."""
        self._restring(cset=_choice(cset, (CSET_ASCII, CSET_UTF8), "character set"))

    def _restring(self, size=None, padding=None, cset=None):
        self._mutable()
        t = self._type
        variable = self.is_variable_str() if size is None else size == VARIABLE
        cset = t.charset if cset is None else cset
        if variable:
            from .format.messages.datatype import encode_dtype
            self._retype(encode_dtype(string_dtype("utf-8" if cset else "ascii")))
            return
        from .format.messages.datatype import encode_string
        size = t.size if size is None else size
        self._retype(encode_string(size, t.padding if padding is None else padding, cset))


class TypeOpaqueID(TypeID):
    def get_tag(self):
        return self._type.tag


class TypeCompositeID(TypeID):
    """Compound and enumeration types: named members."""

    def get_nmembers(self):
        return len(self._names())

    def get_member_name(self, index):
        return self._names()[index]

    def get_member_index(self, name):
        if name not in self._names():
            raise RuntimeError("Unspecified error in H5Tget_member_index (return value <0)")
        return self._names().index(name)


class TypeCompoundID(TypeCompositeID):
    def _names(self):
        return [m.name.encode() for m in self._type.members]

    def get_member_type(self, index):
        return type_id(self._type.members[index].type)

    def get_member_offset(self, index):
        return self._type.members[index].offset

    def get_member_class(self, index):
        return type_id(self._type.members[index].type).get_class()

    def insert(self, name, offset, field):
        """H5Tinsert: member ``name`` (bytes) of type ``field`` (a TypeID) at byte
        ``offset``, checked as libhdf5 checks it."""
        if not isinstance(name, bytes):
            raise TypeError(f"expected bytes, {type(name).__name__} found")
        fields = self.__dict__.get("_inserted") or \
            [(m.name.encode(), m.offset, type_id(m.type)) for m in self._type.members]
        if any(n == name for n, _, _ in fields):
            raise ValueError("Unable to insert member (member name is not unique)")
        end = offset + field.get_size()
        if any(o < end and offset < o + t.get_size() for _, o, t in fields):
            raise ValueError("Unable to insert member (member overlaps with another member)")
        if end > self.get_size():
            raise ValueError("Unable to insert member (member extends past end of compound "
                             "type)")
        fields.append((name, int(offset), field))
        dt = np.dtype({"names": [n.decode() for n, _, _ in fields],
                       "formats": [as_dtype(t) for _, _, t in fields],
                       "offsets": [o for _, o, _ in fields], "itemsize": self.get_size()})
        from .format.messages.datatype import encode_dtype
        self._body = bytes(encode_dtype(dt))
        self._type = _of_body(self._body)
        self._inserted = fields      # the members' TypeIDs (their messages) for the next


class TypeEnumID(TypeCompositeID):
    """An enumeration: members (name, value) in stored order, over an integer base."""

    def _names(self):
        return [n.encode() if isinstance(n, str) else bytes(n) for n in self._type.enum_names]

    def get_member_value(self, index):
        return int(self._type.enum_values[index])

    def enum_insert(self, name, value):
        """H5Tenum_insert: a member ``name`` (bytes) of ``value``, after the others."""
        from .format.messages.datatype import encode_enum
        if not isinstance(name, bytes):
            raise TypeError(f"expected bytes, {type(name).__name__} found")
        values = [int(v) for v in self._type.enum_values] + [int(value)]
        self._body = bytes(encode_enum(self._type.base.dtype, self._names() + [name], values))
        self._type = _of_body(self._body)

    def enum_nameof(self, value):
        for name, v in zip(self._names(), self._type.enum_values):
            if int(v) == value:
                return name
        raise TypeError("Nameof query failed (value is currently not defined)")

    def enum_valueof(self, name):
        if name not in self._names():
            raise TypeError("Valueof query failed (string doesn't exist in the enumeration "
                            "type)")
        return int(self._type.enum_values[self._names().index(name)])


class TypeVlenID(TypeID):
    pass


class TypeArrayID(TypeID):
    def get_array_ndims(self):
        return len(self._type.dims)

    def get_array_dims(self):
        return tuple(self._type.dims)


class TypeComplexID(TypeAtomicID):
    @property
    def dtype(self):
        """numpy's complex of the type's parts; h5py's TypeError for half-float parts, which
        numpy has no complex of (purehep reads those as complex64: ``Dataset.dtype``)."""
        if self._type.base.size == 2:
            raise TypeError(f"No NumPy equivalent for TypeComplexID of size "
                            f"{8 * self._type.size} bytes found")
        return self._type.dtype

    def get_order(self):
        """The byte order of the parts."""
        return _order(self._type.base)


_CLASSES = {INTEGER: TypeIntegerID, FLOAT: TypeFloatID, TIME: TypeTimeID, STRING: TypeStringID,
            BITFIELD: TypeBitfieldID, OPAQUE: TypeOpaqueID, COMPOUND: TypeCompoundID,
            REFERENCE: TypeReferenceID, ENUM: TypeEnumID, VLEN: TypeVlenID,
            ARRAY: TypeArrayID, COMPLEX: TypeComplexID}


def type_id(datatype, committed=False, named=None, body=None):
    """The TypeID of a decoded datatype, of its class's kind (h5py's TypeStringID, …);
    ``named``: the Datatype object it is the id of (objects created with it share it);
    ``body``: its message, for a type that purehep writes otherwise for its dtype."""
    cls = STRING if datatype.kind == "vlen_str" else datatype.cls
    return _CLASSES.get(cls, TypeID)(datatype, committed, named, body)


def _of_body(body):
    from .format.context import Cursor
    from .format.messages.datatype import decode
    return decode(Cursor(bytes(body), 0, "datatype"))


def _decoded(dtype):
    """The Datatype message purehep writes for ``dtype``, decoded."""
    from .format.messages.datatype import encode_dtype
    return _of_body(encode_dtype(np.dtype(dtype)))


def as_dtype(tid):
    """The numpy dtype objects of type ``tid`` are created with (create_dataset's
    ``dtype``): its dtype, carrying its own message (dtype metadata ``h5t``, see
    purehep.format.messages.datatype) where purehep would store that dtype otherwise
    (a bitfield, a complex number of HDF5 2.0's complex class)."""
    if tid._body is None:
        return tid.dtype
    return np.dtype(tid.dtype, metadata={"h5t": bytes(tid._body)})


def py_create(dtype, logical=False, aligned=False):
    """h5py's py_create: the datatype a numpy dtype is stored as (``logical``), else the
    one h5py converts it through (:func:`_conversion`)."""
    dtype = np.dtype(dtype)
    return type_id(_decoded(dtype if logical else _conversion(dtype)))


def _conversion(dt):
    """h5py's conversion form of ``dt`` (``py_create(logical=False)``): Python objects
    (variable-length strings and sequences, references) as the 8-byte opaque pointer they
    are converted through (tag ``PYTHON:OBJECT``), enumerations over integers as their
    integer base (a bool stays an enumeration); compounds and arrays member by member."""
    if dt.names is not None:
        return np.dtype({"names": list(dt.names),
                         "formats": [_conversion(dt.fields[n][0]) for n in dt.names],
                         "offsets": [dt.fields[n][1] for n in dt.names],
                         "itemsize": dt.itemsize})
    if dt.subdtype is not None:
        return np.dtype((_conversion(dt.subdtype[0]), dt.subdtype[1]))
    if dt.kind == "O":
        from .format.messages.datatype import opaque_body
        return np.dtype("V8", metadata={"h5t": opaque_body(8, "PYTHON:OBJECT")})
    if dt.kind in "iu" and (dt.metadata or {}).get("enum") is not None:
        return np.dtype(dt.str)
    return dt


def create(cls, size):
    """H5Tcreate: an empty compound type of ``size`` bytes (members: ``insert``), or an
    opaque type of that size."""
    if cls == OPAQUE:
        return type_id(_decoded(np.dtype(f"V{int(size)}")))
    if cls != COMPOUND:
        raise ValueError("Class must be COMPOUND or OPAQUE.")
    from .format.messages.datatype import Datatype
    dt = np.dtype({"names": [], "formats": [], "itemsize": int(size)})
    return TypeCompoundID(Datatype(COMPOUND, 1, int(size), dt, dt, False))


def enum_create(base):
    """H5Tenum_create: an enumeration without members over the integer type ``base``."""
    from .format.messages.datatype import Datatype
    dt = np.dtype(base.dtype, metadata={"enum": {}})
    return TypeEnumID(Datatype(ENUM, 1, base.get_size(), dt, dt, False, base=base._type,
                               kind="enum"))


def vlen_create(base):
    """H5Tvlen_create: sequences of ``base``."""
    return py_create(vlen_dtype(base.dtype), logical=True)


def array_create(base, dims_tpl):
    """H5Tarray_create: arrays of ``dims_tpl`` elements of ``base``."""
    return py_create(np.dtype((base.dtype, tuple(int(d) for d in dims_tpl))), logical=True)


def _choice(value, allowed, what):
    if value not in allowed:
        raise ValueError(f"invalid {what} {value!r}")
    return int(value)


def _from_body(body):
    return type_id(_of_body(body), body=body)


def _predefined_bodies():
    """libhdf5's predefined types numpy has no dtype of that purehep writes as them, as
    Datatype message bodies: C_S1 (a null-terminated byte), bitfields (STD_B8LE … STD_B64BE,
    NATIVE_B*) and complex numbers (COMPLEX_IEEE_F16LE … F64BE, NATIVE_*_COMPLEX)."""
    from .format.messages.datatype import encode_bitfield, encode_complex, encode_string
    out = {"C_S1": encode_string(1, STR_NULLTERM, CSET_ASCII)}     # null-terminated
    for order, tag in (("<", "LE"), (">", "BE")):
        for bits in (8, 16, 32, 64):
            out[f"STD_B{bits}{tag}"] = encode_bitfield(bits // 8, order)
        for bits in (16, 32, 64):
            out[f"COMPLEX_IEEE_F{bits}{tag}"] = encode_complex(np.dtype(f"{order}f{bits // 8}"))
    for bits in (8, 16, 32, 64):
        out[f"NATIVE_B{bits}"] = encode_bitfield(bits // 8, np.dtype("=u2").str[0])
    for name, code in (("FLOAT", "f4"), ("DOUBLE", "f8"), ("LDOUBLE", "g")):
        out[f"NATIVE_{name}_COMPLEX"] = encode_complex(np.dtype(f"={code}"))
    return out


def _predefined():
    """libhdf5's predefined types purehep writes, by name: STD_I8LE … IEEE_F64BE, NATIVE_*,
    STD_REF_OBJ / STD_REF_DSETREG (not the big-endian bytes, STD_I8BE and STD_U8BE:
    numpy's one-byte dtypes have no byte order, and purehep writes them little-endian)."""
    from .dtypes import ref_dtype, regionref_dtype
    out = {"STD_REF_OBJ": ref_dtype, "STD_REF_DSETREG": regionref_dtype}
    for order, tag in (("<", "LE"), (">", "BE")):
        for bits in (8, 16, 32, 64) if tag == "LE" else (16, 32, 64):
            out[f"STD_I{bits}{tag}"] = f"{order}i{bits // 8}"
            out[f"STD_U{bits}{tag}"] = f"{order}u{bits // 8}"
        for bits in (16, 32, 64):
            out[f"IEEE_F{bits}{tag}"] = f"{order}f{bits // 8}"
    for name, code in (("INT8", "i1"), ("UINT8", "u1"), ("INT16", "i2"), ("UINT16", "u2"),
                       ("INT32", "i4"), ("UINT32", "u4"), ("INT64", "i8"), ("UINT64", "u8"),
                       ("FLOAT", "f4"), ("DOUBLE", "f8"), ("LDOUBLE", "g")):
        out[f"NATIVE_{name}"] = f"={code}"
    return out


globals().update({name: py_create(dt, logical=True) for name, dt in _predefined().items()})
globals().update({name: _from_body(body) for name, body in _predefined_bodies().items()})
for _name in list(_predefined()) + list(_predefined_bodies()):
    globals()[_name]._locked = True      # libhdf5's predefined types are immutable
