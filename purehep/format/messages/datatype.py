"""IV.A.2.d The Datatype Message (type 0x0003): every class, versions 1-5.

``decode(cur) -> Datatype``. A Datatype records the class fields and two numpy dtypes:

* ``dtype``: what h5py 3 (HDF5 2.0) presents for the type, with h5py's metadata conventions
  (``{'vlen': str|bytes|dtype}``, ``{'h5py_encoding': ...}``, ``{'enum': {...}}``,
  ``{'ref': Reference|RegionReference}``, ``{'h5py_opaque': True}``; FALSE/TRUE enums as bool;
  compounds named ('r', 'i') of one float type as complex (the names h5py's
  ``get_config().complex_names`` sets: ``complex_names``); compound member offsets laid out as
  libhdf5 lays out the memory type, i.e. shifted where vlen/reference members change size).
* ``file_dtype``: a numpy dtype describing the stored bytes exactly (``size`` bytes). When the
  bytes can be used as they are, ``file_dtype is dtype`` and ``needs_conversion`` is False;
  otherwise ``purehep.format.convert.from_file`` turns ``file_dtype`` arrays into ``dtype`` values.

Natural mappings where h5py cannot read a type (documented choice):

* time class (2): a signed integer of the stored size and byte order (seconds, no epoch
  semantics attached);
* fixed-point of 3, 5, 6 or 7 bytes: the next larger native integer; more than 8 bytes: object
  array of Python ints; bit offset/precision are applied like libhdf5 does (shift, mask,
  sign-extend);
* other float layouts of up to 16 bytes: converted into the numpy float h5py names
  (``h5py_float_dtype``: float32 for bfloat16), or, where h5py names none (IEEE binary128 on
  x86), into the native long double as libhdf5 converts them; VAX-endian layouts raise
  UnsupportedFeatureError;
* complex (class 11) of half floats: complex64;
* revised references (H5R_REF, datatype version 4): object dtype with ``{'ref': Reference}``;
  elements decode to Reference, RegionReference or AttributeReference.
"""
from dataclasses import dataclass, field

import numpy as np

from ...errors import UnsupportedFeatureError
from ...reference import Reference, RegionReference
from ..convert import from_file
from .compound_layout import is_region, member_layout, needs_conversion_in_file

FIXED, FLOAT, TIME, STRING, BITFIELD, OPAQUE, COMPOUND, REFERENCE, ENUM, VLEN, ARRAY, \
    COMPLEX = range(12)
_complex_names = ["r", "i"]


def complex_names(names=None):
    """The member names of the compounds that stand for complex numbers (h5py's
    ``complex_names``: a compound of two members of one float type so named is read as
    complex, numpy complex values are written as such a compound); set to ``names`` (two
    str) when given. Types decoded before a change keep the names they were decoded with,
    as h5py's type objects do."""
    if names is not None:
        _complex_names[:] = names
    return tuple(_complex_names)
CLASS_NAMES = ("fixed-point", "floating-point", "time", "string", "bitfield", "opaque",
               "compound", "reference", "enumerated", "variable-length", "array", "complex")
MAX_DEPTH = 16          # nesting of compound/array/vlen/enum/complex parents
MAX_MEMBERS = 1 << 16
MAX_RANK = 32
STRUCTURE = "datatype message"

# layouts (size, sign location, exponent location, exponent size, mantissa location,
# mantissa size, bias) of IEEE 754 binary16/32/64
_IEEE = {2: (15, 10, 5, 0, 10, 15), 4: (31, 23, 8, 0, 23, 127), 8: (63, 52, 11, 0, 52, 1023)}
_X87 = (79, 64, 15, 0, 64, 16383)


@dataclass(frozen=True)
class Member:
    """A compound member: name, byte offset in the file element, datatype."""
    name: str
    offset: int
    type: "Datatype"


@dataclass(frozen=True)
class Datatype:
    cls: int
    version: int
    size: int
    dtype: np.dtype
    file_dtype: np.dtype
    needs_conversion: bool
    flags: int = 0
    order: str = "<"                # '<' little, '>' big (atomic classes)
    signed: bool = False
    bit_offset: int = 0
    precision: int = 0
    float_layout: tuple = ()        # (sign loc, exp loc, exp size, mant loc, mant size, bias, norm)
    padding: int = 0                # string / vlen string padding type
    charset: int = 0
    tag: bytes = b""                # opaque
    members: tuple = ()             # compound: Member...
    base: "Datatype | None" = None  # enum/vlen/array/complex parent
    dims: tuple = ()                # array
    enum_names: tuple = ()
    enum_values: tuple = ()
    ref_type: int = -1              # reference: 0 object, 1 region, 2/3/4 revised
    vlen_string: bool = False
    kind: str = ""                  # how convert treats it (see _CONVERTERS in convert.py)
    mem_size: int = 0               # libhdf5 memory-type size (compound member layout)
    offset: int | None = field(default=None, compare=False)

    @property
    def class_name(self):
        return CLASS_NAMES[self.cls]

    @property
    def has_references_or_vlen(self):
        return self.kind in ("vlen_str", "vlen_seq", "ref_obj", "ref_region", "ref_revised") or (
            self.base is not None and self.base.has_references_or_vlen) or any(
            m.type.has_references_or_vlen for m in self.members)


def _mk(cls, version, size, flags, dtype, file_dtype, needs, offset, **kw):
    if not needs:
        file_dtype = dtype
    kw.setdefault("mem_size", size)
    return Datatype(cls, version, size, dtype, file_dtype, bool(needs), flags, offset=offset,
                    **kw)


MAX_SIZE = 1 << 28  # bytes per element; numpy's item size limit is 2**31 - 1


def decode(cur, _depth=0):
    """Decode one datatype message at the cursor (spec IV.A.2.d)."""
    if _depth > MAX_DEPTH:
        raise cur.error(f"datatype nesting deeper than {MAX_DEPTH}")
    start = cur.offset
    b0 = cur.u8()
    version, cls = b0 >> 4, b0 & 0x0F
    if not 1 <= version <= 5:
        cur.pos -= 1
        raise cur.error(f"unsupported datatype version {version}")
    flags = cur.u8() | (cur.u8() << 8) | (cur.u8() << 16)
    size = cur.u32()
    if cls >= len(CLASS_NAMES):
        raise cur.error(f"unknown datatype class {cls}")
    if size == 0:
        raise cur.error(f"{CLASS_NAMES[cls]} datatype of size 0")
    if size > MAX_SIZE:
        raise cur.error(f"{CLASS_NAMES[cls]} datatype of {size} bytes (more than {MAX_SIZE})")
    return _DECODERS[cls](cur, version, cls, flags, size, _depth, start)


# -- integers ------------------------------------------------------------------------------

def _int_types(size, order, signed, bit_offset, precision):
    """(dtype, file_dtype, needs_conversion, kind) of an integer-like type."""
    letter = "i" if signed else "u"
    if size in (1, 2, 4, 8):
        dt = np.dtype(f"{order}{letter}{size}")
        if bit_offset == 0 and precision == 8 * size:
            return dt, dt, False, "int"
        return dt, np.dtype(f"{order}u{size}"), True, "int"
    if size < 8:
        return np.dtype(f"{letter}8" if size > 4 else f"{letter}4"), np.dtype(f"V{size}"), \
            True, "int"
    return np.dtype(object), np.dtype(f"V{size}"), True, "bigint"


def _check_unused_bits(cur, size, precision):
    """libhdf5 (1.14.4 and later) refuses a numeric type wider than any it converts with more
    unused bits than precision bits, as a sign of corruption (unless told to relax its file
    integrity checks): an 8 MB "integer" of 32 bits is a damaged size field. Types of up to
    16 bytes with few bits of precision are read (h5py reads a 4-byte integer of 1 bit)."""
    if size > 16 and 8 * size - precision > precision:
        raise cur.error(f"{size}-byte type with {precision} bits of precision: more unused "
                        "bits than used ones (libhdf5 refuses it as a corrupted datatype)")


def _fixed(cur, version, cls, flags, size, depth, start):
    order = ">" if flags & 1 else "<"
    signed = bool(flags & 0x08) if cls == FIXED else False
    bit_offset = cur.u16()
    precision = cur.u16()
    if precision == 0 or bit_offset + precision > 8 * size:
        raise cur.error(f"bit offset {bit_offset} + precision {precision} exceed {size} bytes")
    _check_unused_bits(cur, size, precision)
    dt, fdt, needs, kind = _int_types(size, order, signed, bit_offset, precision)
    return _mk(cls, version, size, flags, dt, fdt, needs, start, order=order, signed=signed,
               bit_offset=bit_offset, precision=precision, kind=kind)


def _time(cur, version, cls, flags, size, depth, start):
    order = ">" if flags & 1 else "<"
    precision = cur.u16()
    if precision == 0 or precision > 8 * size:
        precision = 8 * size
    dt, fdt, needs, kind = _int_types(size, order, True, 0, precision)
    return _mk(cls, version, size, flags, dt, fdt, needs, start, order=order, signed=True,
               precision=precision, kind=kind)


# -- floats ----------------------------------------------------------------------------------

def _float(cur, version, cls, flags, size, depth, start):
    lo, hi = flags & 1, (flags >> 6) & 1
    if hi and lo:
        raise UnsupportedFeatureError(
            f"VAX-endian floating point datatype at offset {start} is not supported")
    if hi:
        raise cur.error("reserved floating-point byte order")
    order = ">" if lo else "<"
    norm = (flags >> 4) & 3
    sign_loc = (flags >> 8) & 0xFF
    bit_offset = cur.u16()
    precision = cur.u16()
    exp_loc, exp_size, mant_loc, mant_size = cur.u8(), cur.u8(), cur.u8(), cur.u8()
    bias = cur.u32()
    layout = (sign_loc, exp_loc, exp_size, mant_loc, mant_size, bias, norm)
    if (precision == 0 or bit_offset + precision > 8 * size or exp_size == 0 or exp_size > 32
            or exp_loc + exp_size > 8 * size or mant_loc + mant_size > 8 * size
            or sign_loc >= 8 * size or 1 + exp_size + mant_size > 8 * size):
        raise cur.error(f"inconsistent floating-point layout {layout} for {size} bytes")
    _check_unused_bits(cur, size, precision)
    props = dict(order=order, bit_offset=bit_offset, precision=precision, float_layout=layout)
    if (size in _IEEE and layout[:6] == _IEEE[size] and norm == 2 and bit_offset == 0
            and precision == 8 * size):
        dt = np.dtype(f"{order}f{size}")
        return _mk(cls, version, size, flags, dt, dt, False, start, kind="float", **props)
    if layout[:6] == _X87 and bit_offset == 0 and precision == 80 and norm in (0, 1):
        ld = np.finfo(np.longdouble)
        if ld.nmant == 63 and np.dtype(np.longdouble).itemsize == size:
            dt = np.dtype(np.longdouble).newbyteorder(order)
            return _mk(cls, version, size, flags, dt, dt, False, start, kind="float", **props)
        if ld.nmant == 63 and 10 <= size < np.dtype(np.longdouble).itemsize:
            # an 80-bit x87 value in fewer bytes than this platform's long double (the 12 of
            # 32-bit x86): h5py presents it as the native long double
            dt = np.dtype(np.longdouble)
            return _mk(cls, version, size, flags, dt, np.dtype(f"V{size}"), True, start,
                       kind="x87", **props)
    if size > 16:
        raise UnsupportedFeatureError(
            f"floating-point layout {layout} of {size} bytes at offset {start} is wider than "
            "any float libhdf5 converts to")
    dt = h5py_float_dtype(size, order, exp_size, mant_size, bias)
    if dt is None:      # h5py refuses it (IEEE binary128 on x86): libhdf5 converts it into the
        dt = np.dtype(np.longdouble)    # native long double, rounding the mantissa
    return _mk(cls, version, size, flags, dt, np.dtype(f"V{size}"), True, start,
               kind="softfloat", **props)


def float_info(dtype):
    """(mantissa bits, maxexp, minexp) of a numpy float as h5py counts them: the x87 long
    double stores its leading mantissa bit, so it holds 64 bits where numpy says 63."""
    fi = np.finfo(dtype)
    nmant = fi.nmant + 1 if fi.nmant == 63 and fi.nexp == 15 else fi.nmant
    return nmant, fi.maxexp, fi.minexp


def h5py_float_dtype(size, order, exp_size, mant_size, bias):
    """The numpy float h5py presents a floating-point layout as: the first of float16, float32,
    float64 and long double at least ``size`` bytes wide whose mantissa holds ``mant_size``
    bits and whose exponent range holds the layout's (float32 for bfloat16), in the stored
    byte order; None when none does."""
    for dtype in (np.float16, np.float32, np.float64, np.longdouble):
        nmant, maxexp, minexp = float_info(dtype)
        if (np.dtype(dtype).itemsize >= size and mant_size <= nmant
                and (1 << exp_size) - bias - 1 <= maxexp and 1 - bias >= minexp):
            return np.dtype(dtype).newbyteorder(order)
    return None


# -- strings, opaque ---------------------------------------------------------------------------

def _charset_name(cset):
    return "utf-8" if cset == 1 else "ascii"


def _string(cur, version, cls, flags, size, depth, start):
    padding, cset = flags & 0x0F, (flags >> 4) & 0x0F
    if padding > 2:
        raise cur.error(f"reserved string padding type {padding}")
    dt = np.dtype(f"S{size}", metadata={"h5py_encoding": _charset_name(cset)})
    needs = padding != 1        # null-terminated and space-padded strings are trimmed
    return _mk(cls, version, size, flags, dt, np.dtype(f"S{size}"), needs, start,
               padding=padding, charset=cset, kind="string")


def _opaque(cur, version, cls, flags, size, depth, start):
    n = flags & 0xFF
    raw = bytes(cur.bytes(n))
    tag = raw.split(b"\0", 1)[0]
    dt = np.dtype(f"V{size}")
    if tag.startswith(b"NUMPY:"):
        try:
            tagged = np.dtype(tag[6:].decode("ascii"))
        except (TypeError, ValueError, UnicodeDecodeError):
            tagged = None
        if tagged is not None and tagged.itemsize == size and not tagged.hasobject:
            dt = np.dtype(tagged, metadata={"h5py_opaque": True})
    return _mk(cls, version, size, flags, dt, dt, False, start, tag=tag, kind="opaque")


# -- compound ---------------------------------------------------------------------------------

def _padded_name(cur, pad):
    begin = cur.pos
    raw = cur.cstring()
    if pad:
        used = cur.pos - begin
        cur.skip((-used) % 8)
    return raw.decode("utf-8", "surrogateescape")


def _offset_width(size):
    return max(1, (size.bit_length() - 1) // 8 + 1) if size > 0 else 1


def _compound(cur, version, cls, flags, size, depth, start):
    n = flags & 0xFFFF
    if n == 0:
        raise cur.error("compound datatype without members")
    members = []
    for _ in range(n):
        name = _padded_name(cur, version < 3)
        moff = cur.uint(_offset_width(size)) if version >= 3 else cur.u32()
        dims = ()
        if version == 1:
            ndims = cur.u8()
            cur.skip(3 + 4 + 4)
            d = [cur.u32() for _ in range(4)]
            if ndims > 4:
                raise cur.error(f"compound member {name!r} has {ndims} dimensions (at most 4)")
            dims = tuple(d[:ndims])
        mtype = decode(cur, depth + 1)
        if dims:
            mtype = _array_of(mtype, dims, cur, mtype.offset, version)
        if moff + mtype.size > size:
            raise cur.error(f"compound member {name!r} ({mtype.size} bytes at {moff}) exceeds "
                            f"the compound size {size}")
        members.append(Member(name, moff, mtype))
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise cur.error("duplicate compound member names")
    byoff = sorted(members, key=lambda m: m.offset)   # libhdf5 refuses overlapping members
    for a, b in zip(byoff, byoff[1:]):
        if a.offset + a.type.size > b.offset:
            raise cur.error(f"compound members {a.name!r} ({a.type.size} bytes at {a.offset}) "
                            f"and {b.name!r} (at {b.offset}) overlap")
    try:
        file_dtype = np.dtype({"names": names, "formats": [m.type.file_dtype for m in members],
                               "offsets": [m.offset for m in members], "itemsize": size})
    except (TypeError, ValueError) as exc:
        raise cur.error(f"compound members do not form a valid layout: {exc}")
    base_needs = any(m.type.needs_conversion for m in members)
    props = dict(members=tuple(members))

    # h5py presents ('r', 'i') compounds of one float type as complex numbers
    if (len(members) == 2 and names == _complex_names
            and members[0].type.dtype == members[1].type.dtype
            and members[0].type.dtype.kind == "f"
            and members[0].type.dtype.itemsize in (4, 8, 16)):
        f = members[0].type.dtype
        dt = np.dtype(f"{f.str[0]}c{2 * f.itemsize}")
        needs = (base_needs or members[0].offset != 0 or members[1].offset != f.itemsize
                 or size != 2 * f.itemsize)
        return _mk(cls, version, size, flags, dt, file_dtype, needs, start,
                   kind="complex_compat", **props)

    # libhdf5's memory layout: members sorted by offset, shifted by size changes of
    # vlen/reference-carrying members (H5T_set_loc)
    force = any(m.type.has_references_or_vlen for m in members)
    order = sorted(members, key=lambda m: m.offset) if force else members
    accum = 0
    offsets = {}
    for m in order:
        offsets[m.name] = m.offset + accum
        if m.type.mem_size != m.type.size:
            accum += m.type.mem_size - m.type.size
    mem_size = size + accum
    try:
        dt = np.dtype({"names": [m.name for m in order],
                       "formats": [m.type.dtype for m in order],
                       "offsets": [offsets[m.name] for m in order],
                       "itemsize": max(mem_size, 0)})
    except (TypeError, ValueError) as exc:
        raise UnsupportedFeatureError(
            f"compound datatype at offset {start} has no numpy layout: {exc}")
    needs = base_needs or accum != 0
    if not needs and dt != file_dtype:
        needs = True
    return _mk(cls, version, size, flags, dt, file_dtype, needs, start, kind="compound",
               mem_size=mem_size, **props)


# -- reference --------------------------------------------------------------------------------

def _reference(cur, version, cls, flags, size, depth, start):
    so = cur.ctx.sizeof_offsets if cur.ctx is not None else 8
    rtype = flags & 0x0F
    if version < 4 or rtype < 2:
        if rtype == 0:
            if size not in (2, 4, 8):
                raise cur.error(f"object reference of size {size}")
            dt = np.dtype(object, metadata={"ref": Reference})
            return _mk(cls, version, size, flags, dt, np.dtype(f"<u{size}"), True, start,
                       ref_type=0, kind="ref_obj", mem_size=8)
        if rtype == 1:
            if size < so + 4:
                raise cur.error(f"region reference of size {size}")
            fdt = np.dtype({"names": ["collection", "index"], "formats": [f"<u{so}", "<u4"],
                            "offsets": [0, so], "itemsize": size})
            dt = np.dtype(object, metadata={"ref": RegionReference})
            return _mk(cls, version, size, flags, dt, fdt, True, start, ref_type=1,
                       kind="ref_region", mem_size=12)
        raise cur.error(f"reserved reference type {rtype}")
    if rtype not in (2, 3, 4):
        raise cur.error(f"reserved revised reference type {rtype}")
    rversion = (flags >> 4) & 0x0F
    if rversion != 1:
        raise cur.error(f"unsupported revised reference encoding version {rversion}")
    dt = np.dtype(object, metadata={"ref": Reference})
    return _mk(cls, version, size, flags, dt, np.dtype(f"V{size}"), True, start,
               ref_type=rtype, kind="ref_revised", mem_size=64)


# -- enum ---------------------------------------------------------------------------------------

def _enum_name(raw):
    for enc in ("ascii", "utf-8"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            pass
    return raw


def _enum(cur, version, cls, flags, size, depth, start):
    n = flags & 0xFFFF
    base = decode(cur, depth + 1)
    if base.cls not in (FIXED,) or base.kind == "bigint":
        raise cur.error(f"enumeration over a {base.class_name} base type")
    if base.size != size:
        raise cur.error(f"enumeration size {size} differs from its base type size {base.size}")
    raw_names = [cur.cstring() if version >= 3 else _raw_padded(cur) for _ in range(n)]
    raw_values = bytes(cur.bytes(n * base.size))
    vals = np.frombuffer(raw_values, base.file_dtype, count=n) if n else np.zeros(0, base.dtype)
    if base.needs_conversion:
        vals = from_file(None, base, vals)
    values = tuple(int(v) for v in vals)
    names = tuple(_enum_name(r) for r in raw_names)
    props = dict(base=base, enum_names=names, enum_values=values)
    if len(raw_names) == 2 and dict(zip(raw_names, values)) == {b"FALSE": 0, b"TRUE": 1}:
        dt = np.dtype(bool)
        needs = base.size != 1 or base.needs_conversion
        return _mk(cls, version, size, flags, dt, base.file_dtype, needs, start, kind="bool",
                   **props)
    dt = np.dtype(base.dtype, metadata={"enum": dict(zip(names, values))})
    return _mk(cls, version, size, flags, dt, base.file_dtype, base.needs_conversion, start,
               kind="enum", **props)


def _raw_padded(cur):
    begin = cur.pos
    raw = cur.cstring()
    cur.skip((-(cur.pos - begin)) % 8)
    return raw


# -- variable length ----------------------------------------------------------------------------

def vlen_file_dtype(size, so):
    """The stored form of a vlen element: u32 length ‖ global heap ID (collection, index)."""
    return np.dtype({"names": ["length", "collection", "index"],
                     "formats": ["<u4", f"<u{so}", "<u4"], "offsets": [0, 4, 4 + so],
                     "itemsize": size})


def _vlen(cur, version, cls, flags, size, depth, start):
    so = cur.ctx.sizeof_offsets if cur.ctx is not None else 8
    vtype = flags & 0x0F
    padding, cset = (flags >> 4) & 0x0F, (flags >> 8) & 0x0F
    base = decode(cur, depth + 1)
    if size < 8 + so:
        raise cur.error(f"variable-length element of {size} bytes cannot hold a heap ID")
    fdt = vlen_file_dtype(size, so)
    if vtype == 1:
        dt = np.dtype(object, metadata={"vlen": str if cset == 1 else bytes})
        return _mk(cls, version, size, flags, dt, fdt, True, start, base=base, padding=padding,
                   charset=cset, vlen_string=True, kind="vlen_str", mem_size=8)
    if vtype != 0:
        raise cur.error(f"reserved variable-length type {vtype}")
    dt = np.dtype(object, metadata={"vlen": base.dtype})
    return _mk(cls, version, size, flags, dt, fdt, True, start, base=base, kind="vlen_seq",
               mem_size=16)


# -- array, complex -----------------------------------------------------------------------------

def _array_of(base, dims, cur, start, version):
    n = 1
    for d in dims:
        n *= d
    try:
        dt = np.dtype((base.dtype, dims))
        fdt = np.dtype((base.file_dtype, dims))
    except (TypeError, ValueError) as exc:
        raise cur.error(f"array datatype {dims} has no numpy form: {exc}")
    return _mk(ARRAY, version, n * base.size, 0, dt, fdt, base.needs_conversion, start,
               base=base, dims=dims, kind="array", mem_size=n * base.mem_size)


def _array(cur, version, cls, flags, size, depth, start):
    ndims = cur.u8()
    if ndims > MAX_RANK:
        raise cur.error(f"array datatype of rank {ndims}")
    if version < 3:
        cur.skip(3)
    dims = tuple(cur.u32() for _ in range(ndims))
    if version < 3:
        cur.skip(4 * ndims)
    base = decode(cur, depth + 1)
    arr = _array_of(base, dims, cur, start, version)
    if arr.size != size:
        raise cur.error(f"array datatype size {size} differs from {dims} x {base.size} bytes")
    return arr


def _complex(cur, version, cls, flags, size, depth, start):
    homogeneous, form = flags & 1, (flags >> 1) & 3
    if not homogeneous:
        raise UnsupportedFeatureError(f"heterogeneous complex datatype at offset {start}")
    if form != 0:
        raise UnsupportedFeatureError(
            f"{('polar', 'exponential', 'reserved')[form - 1]} complex datatype at offset "
            f"{start}")
    base = decode(cur, depth + 1)
    if base.cls != FLOAT:
        raise cur.error(f"complex datatype over a {base.class_name} base")
    if size != 2 * base.size:
        raise cur.error(f"complex datatype size {size} is not twice its base size {base.size}")
    f = base.dtype
    fdt = np.dtype({"names": ["r", "i"], "formats": [base.file_dtype] * 2,
                    "offsets": [0, base.size], "itemsize": size})
    if not base.needs_conversion and f.itemsize in (4, 8, 16):
        dt = np.dtype(f"{f.str[0]}c{2 * f.itemsize}")
        return _mk(cls, version, size, flags, dt, dt, False, start, base=base, kind="complex")
    dt = np.result_type(f.newbyteorder("="), np.complex64)    # long double: clongdouble
    return _mk(cls, version, size, flags, dt, fdt, True, start, base=base, kind="complex")


_DECODERS = {FIXED: _fixed, FLOAT: _float, TIME: _time, STRING: _string, BITFIELD: _fixed,
             OPAQUE: _opaque, COMPOUND: _compound, REFERENCE: _reference, ENUM: _enum,
             VLEN: _vlen, ARRAY: _array, COMPLEX: _complex}

DECODERS = {0x03: decode}


# --- encoding ----------------------------------------------------------------------------------
# ``encode_dtype`` writes the datatype message h5py (libhdf5) writes for a numpy dtype carrying
# h5py's metadata conventions. Versions: atomic classes are version 1; compound, enum and array
# types are version 3 when ``latest`` (names unpadded) and otherwise the lowest version that can
# express them (1, or 2 for arrays and types containing them); a parent is never older than the
# types it contains (the library upgrades parents the same way). An unsigned integer dtype
# with the metadata ``{"bitfield": True}`` is written as a bitfield of its size (PyTables stores
# numpy bools as 8-bit bitfields); reading gives the plain unsigned integer, as h5py.
# A dtype whose metadata holds ``h5t`` (bytes: a message body, from a purehep.h5t TypeID
# such as a bitfield or a native complex) is written as that message.

_FLOAT_LAYOUT = {2: (15, 10, 5, 0, 10, 15), 4: (31, 23, 8, 0, 23, 127),
                 8: (63, 52, 11, 0, 52, 1023)}


def _head(cls, version, flags, size):
    import struct
    return struct.pack("<BBBBI", (version << 4) | cls, flags & 0xFF, (flags >> 8) & 0xFF,
                       (flags >> 16) & 0xFF, size)


def _enc_int(dt, signed=None):
    import struct
    order = 1 if dt.byteorder == ">" else 0
    signed = dt.kind == "i" if signed is None else signed
    flags = order | (0x08 if signed else 0)
    return _head(FIXED, 1, flags, dt.itemsize) + struct.pack("<HH", 0, 8 * dt.itemsize), 1


def _enc_float(dt):
    size = dt.itemsize
    if size in _FLOAT_LAYOUT:
        layout, precision = _FLOAT_LAYOUT[size] + (2,), 8 * size
    else:
        finfo = np.finfo(dt)
        if finfo.nmant != 63:
            raise TypeError(f"floating-point type {dt} has no HDF5 encoding in purehep")
        layout, precision = _X87 + (0,), 80
    return encode_float(size, ">" if dt.byteorder == ">" else "<", 0, precision, layout), 1


def encode_float(size, order, offset, precision, layout, pads=(0, 0, 0)):
    """The message body of a floating-point type (class 1, version 1) of ``size`` bytes in
    byte order ``order`` ('<' or '>'), its ``precision`` bits from bit ``offset``, ``layout``
    (sign location, exponent location and size, mantissa location and size, exponent bias,
    normalization code: 0 none, 1 leading bit set, 2 implied) and the (low, high, internal)
    padding bits (0 zeros, 1 ones)."""
    import struct
    sign, eloc, esize, mloc, msize, bias, norm = layout
    flags = int(order == ">") | (pads[0] << 1) | (pads[1] << 2) | (pads[2] << 3) | \
        (norm << 4) | (sign << 8)
    body = struct.pack("<HHBBBBI", offset, precision, eloc, esize, mloc, msize, bias)
    return _head(FLOAT, 1, flags, size) + body


def float_body(datatype):
    """The message body (version 1) of the decoded floating-point ``datatype``."""
    f = datatype.flags
    return encode_float(datatype.size, datatype.order, datatype.bit_offset,
                        datatype.precision, datatype.float_layout,
                        ((f >> 1) & 1, (f >> 2) & 1, (f >> 3) & 1))


def encode_bitfield(size, order):
    """The message body of a bitfield (class 4) of ``size`` bytes in byte order ``order``
    ('<' or '>'), all bits significant, as libhdf5's predefined H5T_STD_B* types."""
    import struct
    return _head(BITFIELD, 1, int(order == ">"), size) + struct.pack("<HH", 0, 8 * size)


def encode_complex(dt):
    """The message body of a rectangular, homogeneous complex number (class 11, datatype
    version 5) of the float ``dt`` (half the size), as libhdf5 2.0 writes H5T_COMPLEX."""
    base, _ = _enc_float(dt)
    return _head(COMPLEX, 5, 1, 2 * dt.itemsize) + base


def encode_enum(base_dt, names, values):
    """The message body of an enumeration over the integer ``base_dt`` with members
    ``names`` (bytes) of ``values``, in the order given (libhdf5 keeps insertion order)."""
    return _enc_enum(np.dtype(base_dt), list(names), list(values), False, None)[0]


def encode_string(size, padding, cset):
    """The message body of a fixed-length string of ``size`` bytes, padding type
    ``padding`` (0 null-terminated, 1 null-padded, 2 space-padded) and character set
    ``cset`` (0 ASCII, 1 UTF-8)."""
    return _head(STRING, 1, padding | (cset << 4), size)


def _enc_string(dt):
    meta = dt.metadata or {}
    cset = 1 if meta.get("h5py_encoding", "ascii") == "utf-8" else 0
    pad = 0 if meta.get("strpad") == "nullterm" else 1    # null-padded, as h5py, unless asked
    return encode_string(dt.itemsize, pad, cset), 1


def _enc_enum(base_dt, names, values, latest, ctx):
    base, bver = _encode(np.dtype(base_dt), latest, ctx)
    version = max(3 if latest else 1, bver)
    out = bytearray()
    for name in names:
        raw = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else bytes(name)
        raw += b"\0"
        if version < 3:
            raw += bytes((-len(raw)) % 8)
        out += raw
    bdt = np.dtype(base_dt)
    out += np.asarray(values, dtype=bdt).tobytes()
    return _head(ENUM, version, len(names), bdt.itemsize) + base + bytes(out), version


def _enc_compound(dt, latest, ctx):
    import struct
    members = []
    version = 3 if latest else 1
    for name in dt.names:
        fdt, off = dt.fields[name][:2]
        mbytes, mver = _encode_member(fdt, latest, ctx)
        version = max(version, mver)
        members.append((name, off, mbytes))
    size = dt.itemsize
    sizes = [int.from_bytes(m[2][4:8], "little") for m in members]
    if any(sz != dt.fields[m[0]][0].itemsize for sz, m in zip(sizes, members)):
        offsets, size = member_layout(dt, sizes)
        members = [(n, o, b) for (n, _, b), o in zip(members, offsets)]
    if needs_conversion_in_file(dt):       # libhdf5 sorts these by offset (H5T__set_loc)
        members.sort(key=lambda m: m[1])
    out = bytearray()
    width = _offset_width(size)
    for name, off, mbytes in members:
        raw = name.encode("utf-8", "surrogateescape") + b"\0"
        if version < 3:
            raw += bytes((-len(raw)) % 8)
            out += raw + struct.pack("<I", off)
            if version == 1:
                out += bytes(4 + 4 + 4 + 16)
        else:
            out += raw + off.to_bytes(width, "little")
        out += mbytes
    return _head(COMPOUND, version, len(members), size) + bytes(out), version


def _encode_member(dt, latest, ctx):
    if dt.subdtype is not None:
        base, dims = dt.subdtype
        return _enc_array(base, dims, latest, ctx)
    return _encode(dt, latest, ctx)


def _enc_array(base_dt, dims, latest, ctx):
    import struct
    base, bver = _encode_member(np.dtype(base_dt), latest, ctx)
    version = max(3 if latest else 2, bver)
    n = 1
    for d in dims:
        n *= d
    out = bytearray((len(dims),))
    if version < 3:
        out += bytes(3)
    out += struct.pack(f"<{len(dims)}I", *dims)
    if version < 3:
        out += bytes(4 * len(dims))
    size = n * struct.unpack_from("<I", base, 4)[0]     # the stored size of the base type
    return _head(ARRAY, version, 0, size) + bytes(out) + base, version


def _enc_vlen(meta, latest, ctx):
    so = ctx.sizeof_offsets if ctx is not None else 8
    size = 4 + so + 4
    if meta in (str, bytes):
        cset = 1 if meta is str else 0
        base = _head(FIXED, 1, 0, 1) + bytes((0, 0, 8, 0))
        return _head(VLEN, 1, 1 | (cset << 8), size) + base, 1
    base, bver = _encode_member(np.dtype(meta), latest, ctx)
    return _head(VLEN, bver, 0, size) + base, bver


def opaque_body(size, tag):
    """The datatype message body of an opaque type of ``size`` bytes tagged ``tag``."""
    return _enc_opaque(np.dtype(f"V{int(size)}"), tag)[0]


def _enc_opaque(dt, tag):
    raw = tag.encode("ascii")
    aligned = (len(raw) + 7) & ~7
    raw += bytes(aligned - len(raw))
    return _head(OPAQUE, 1, aligned, dt.itemsize) + raw, 1


def _encode(dt, latest, ctx):
    meta = dt.metadata or {}
    if "h5t" in meta:           # a type given as a purehep.h5t.TypeID: its own message
        return meta["h5t"], meta["h5t"][0] >> 4
    if "vlen" in meta:
        return _enc_vlen(meta["vlen"], latest, ctx)
    if "ref" in meta:
        if is_region(meta["ref"]):
            so = ctx.sizeof_offsets if ctx is not None else 8
            return _head(REFERENCE, 1, 1, so + 4), 1
        return _head(REFERENCE, 1, 0, 8), 1
    if "enum" in meta:
        items = sorted(meta["enum"].items())     # (h5py inserts the members by name)
        return _enc_enum(np.dtype(dt.str), [k for k, _ in items], [v for _, v in items],
                         latest, ctx)
    if meta.get("h5py_opaque"):
        return _enc_opaque(dt, "NUMPY:" + np.dtype(dt.str).str)
    if meta.get("bitfield"):
        if dt.kind != "u":
            raise TypeError(f"a bitfield is stored from an unsigned integer dtype, not {dt}")
        return encode_bitfield(dt.itemsize, ">" if dt.byteorder == ">" else "<"), 1
    kind = dt.kind
    if kind == "b":
        return _enc_enum(np.dtype("i1"), ["FALSE", "TRUE"], [0, 1], latest, ctx)
    if kind in "iu":
        return _enc_int(dt)
    if kind == "f":
        return _enc_float(dt)
    if kind == "c":
        f = np.dtype(f"{dt.byteorder if dt.byteorder in '<>' else '='}f{dt.itemsize // 2}")
        return _enc_compound(np.dtype([(_complex_names[0], f), (_complex_names[1], f)]),
                             latest, ctx)
    if kind == "S":
        if dt.itemsize == 0:
            raise TypeError("zero-length strings cannot be stored")
        return _enc_string(dt)
    if kind == "V":
        if dt.names is not None:
            return _enc_compound(dt, latest, ctx)
        if dt.subdtype is not None:
            base, dims = dt.subdtype
            return _enc_array(base, dims, latest, ctx)
        return _enc_opaque(dt, "")
    raise TypeError(f"No conversion path for dtype: {dt!r}")


def encode_dtype(dt, ctx=None, latest=False):
    """The datatype message body for the numpy dtype ``dt`` (h5py's mapping, see above)."""
    return _encode(np.dtype(dt), latest, ctx)[0]
