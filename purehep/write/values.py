"""numpy values to the bytes a file stores (the inverse of ``purehep.format.convert``).

``stored_dtype(dt)`` is the numpy form of the stored element: variable-length elements become
(length u32, collection address, object index u32), object references 8-byte addresses, region
references (collection address, index) of a global heap object holding the target address and
the selection; bools their int8 enum value. A compound whose members change size in storage
(vlen, region references) is laid out as h5py and libhdf5 lay it out
(format.messages.compound_layout).

``to_file(values, dt, resolver)`` converts; ``resolver`` places variable-length data
(``resolver.heap(bytes) -> (collection address, index)``) and resolves references
(``resolver.address(ref) -> int``, ``resolver.region(ref) -> bytes`` of the heap object, or None
for a reference to an object deleted since: a null reference).
"""
import functools

import numpy as np

SIZEOF_OFFSETS = 8


def _meta(dt):
    return dt.metadata or {}


def vlen_stored(so=SIZEOF_OFFSETS):
    return np.dtype({"names": ["length", "collection", "index"],
                     "formats": ["<u4", f"<u{so}", "<u4"], "offsets": [0, 4, 4 + so],
                     "itemsize": 8 + so})


def region_stored(so=SIZEOF_OFFSETS):
    return np.dtype({"names": ["collection", "index"], "formats": [f"<u{so}", "<u4"],
                     "offsets": [0, so], "itemsize": so + 4})


@functools.lru_cache(maxsize=64)
def _float_message(body):
    from ..format.context import Cursor
    from ..format.messages.datatype import decode
    return decode(Cursor(body, 0, "datatype"))


def softfloat(dt):
    """The floating-point Datatype ``dt`` stands for when it carries the message of a layout
    numpy has no dtype of (dtype metadata ``h5t``: a purehep.h5t.TypeFloatID's), else None;
    values of it are stored as purehep.write.softfloat converts them."""
    body = _meta(dt).get("h5t")
    if body is None or body[0] & 0x0F != 1:        # (the message's class: floating point)
        return None
    datatype = _float_message(bytes(body))
    return datatype if datatype.kind == "softfloat" else None


def stored_dtype(dt, so=SIZEOF_OFFSETS):
    """The numpy dtype of stored elements of ``dt``."""
    dt = np.dtype(dt)
    meta = _meta(dt)
    if softfloat(dt) is not None:
        return np.dtype(f"V{softfloat(dt).size}")
    if "vlen" in meta:
        return vlen_stored(so)
    if "ref" in meta:
        from ..reference import RegionReference
        if isinstance(meta["ref"], type) and issubclass(meta["ref"], RegionReference):
            return region_stored(so)
        return np.dtype("<u8")
    if "enum" in meta:
        return np.dtype(dt.str)
    if dt.kind == "b":
        return np.dtype("i1")
    if dt.names is not None:
        fields = [(n, dt.fields[n][0], dt.fields[n][1]) for n in dt.names]
        stored = [(n, stored_dtype(f, so)) for n, f, _ in fields]
        if all(s.itemsize == f.itemsize for (_, s), (_, f, _) in zip(stored, fields)):
            return np.dtype({"names": [n for n, _ in stored], "formats": [s for _, s in stored],
                             "offsets": [o for _, _, o in fields], "itemsize": dt.itemsize})
        from ..format.messages.compound_layout import member_layout
        offsets, size = member_layout(dt, [s.itemsize for _, s in stored])
        return np.dtype({"names": [n for n, _ in stored], "formats": [s for _, s in stored],
                         "offsets": offsets, "itemsize": size})
    if dt.subdtype is not None:
        base, dims = dt.subdtype
        return np.dtype((stored_dtype(base, so), dims))
    return np.dtype(dt.str) if dt.kind != "V" else dt


def needs_conversion(dt):
    """True when values of ``dt`` are not stored as their own bytes."""
    dt = np.dtype(dt)
    meta = _meta(dt)
    if "vlen" in meta or "ref" in meta or softfloat(dt) is not None:
        return True
    if dt.names is not None:
        return any(needs_conversion(dt.fields[n][0]) for n in dt.names) or \
            stored_dtype(dt) != dt
    if dt.subdtype is not None:
        return needs_conversion(dt.subdtype[0])
    return dt.kind == "b"


def needs_heap(dt):
    """True when storing ``dt`` needs the global heap or object addresses."""
    return _contains(dt, ("vlen", "ref"))


def held_in_memory(dt):
    """True when a dataset of ``dt`` keeps its values in memory until they are written
    (purehep.write.storage.MemoryStore), converted then: types that need the global heap or
    object addresses, and float layouts numpy has no dtype of (stored narrower or otherwise
    than numpy holds them)."""
    return bool(needs_heap(dt)) or softfloat(dt) is not None


def has_vlen(dt):
    """True when ``dt`` is or holds a variable-length type (libhdf5's H5T_detect_class for
    H5T_VLEN, which counts variable-length strings and looks into compound and array
    members)."""
    return _contains(dt, ("vlen",))


def _contains(dt, keys):
    dt = np.dtype(dt)
    meta = _meta(dt)
    if any(k in meta for k in keys):
        return True
    if dt.names is not None:
        return any(_contains(dt.fields[n][0], keys) for n in dt.names)
    if dt.subdtype is not None:
        return _contains(dt.subdtype[0], keys)
    return False


def _as_bytes(item, what):
    if isinstance(item, (bytes, np.bytes_)):
        return bytes(item)
    if isinstance(item, (str, np.str_)):
        return str(item).encode("utf-8", "surrogateescape")
    raise TypeError(f"Can't convert element of type {type(item).__name__} to {what}")


def to_file(values, dt, resolver, so=SIZEOF_OFFSETS):
    """``values`` (array-like of ``dt``) as an array of ``stored_dtype(dt)``."""
    dt = np.dtype(dt)
    arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=dt)
    if not needs_conversion(dt):    # an array dtype's values arrive expanded: its base
        return np.ascontiguousarray(arr, dtype=dt.base)
    return _convert(arr, dt, resolver, so)


def _kind(dt):
    """libhdf5's class of a numpy dtype, as far as conversions tell them apart."""
    meta = _meta(dt)
    if "enum" in meta:
        return "enum"
    if "vlen" in meta or "ref" in meta or dt.kind == "O":
        return "object"
    return {"i": "int", "u": "int", "f": "float", "c": "complex", "b": "bool", "S": "string",
            "V": "compound" if dt.names is not None else "opaque"}.get(dt.kind, "other")


# (source class, destination class) pairs libhdf5 has no conversion path for (H5T_path_find
# fails: H5Dwrite / H5Awrite raise "no appropriate function for conversion path"); an object
# array is variable-length data to h5py, which converts to variable-length types only
_NO_PATH = {(s, d) for d in ("int", "float", "bool", "enum")
            for s in ("complex", "string", "compound")} | \
    {("float", "bool"), ("float", "enum")} | \
    {(s, "complex") for s in ("int", "float", "bool", "enum", "string")} | \
    {(s, "string") for s in ("int", "float", "bool", "enum", "complex", "compound")} | \
    {(s, "compound") for s in ("int", "float", "bool", "enum", "string")} | \
    {("object", d) for d in ("int", "float", "complex", "bool", "enum", "string", "compound")}


def cast(arr, dt):
    """An array given for a dataset or attribute of ``dt`` (and not of it) converted as
    libhdf5 converts it when h5py passes an array on as it is (H5Tconvert): integers out of
    the destination's range saturate (numpy would wrap them), but not between integers of
    one size and opposite byte orders (libhdf5 swaps their bytes and stops), to bool they
    are stored as int8 (h5py's bool is an enum of int8), floats to integers truncate and
    saturate (NaN to 0 where a type is not native), NaN between floats of two sizes where
    a type is not native has every bit set but maybe the sign; classes without a
    conversion path raise OSError. Other
    pairs (compounds, variable-length and reference types) are numpy's cast. Into a float
    layout numpy has no dtype of, numbers are rounded as libhdf5 converts them
    (write.softfloat), held in the dtype h5py names for the layout."""
    dt = np.dtype(dt)
    if softfloat(dt) is not None and arr.dtype.kind in "iuf":
        from .softfloat import rounded
        return np.asarray(rounded(arr, softfloat(dt))).astype(dt)
    src, dst = _kind(arr.dtype), _kind(dt)
    if (src, dst) in _NO_PATH:
        raise OSError("Can't synchronously write data (no appropriate function for "
                      "conversion path)")
    swapped = arr.dtype.itemsize == dt.itemsize > 1 and arr.dtype.isnative != dt.isnative
    if dst == "bool" and src == "int":      # to h5py's bool, an enum of int8: the integer
        return cast(arr, np.dtype(np.int8)).view(dt)    # as int8, saturated, as it is
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf, NaN: C's cast
        out = arr.astype(dt)
    if src == dst == "float" and arr.dtype.itemsize != dt.itemsize and \
            not (arr.dtype.isnative and dt.isnative):
        _soft_nans(arr, out)
    if dst in ("int", "enum") and src in ("int", "float") and not (src == "int" and swapped):
        info = np.iinfo(dt)
        top, bottom = (info.max, info.min) if src == "int" else \
            (float(info.max), float(info.min))
        with np.errstate(over="ignore"):    # (the bounds in a float16: inf)
            out[arr >= top] = info.max
            out[arr <= bottom] = info.min
        if src == "float" and (dt.kind == "u" and dt.itemsize == 4 or
                               not (arr.dtype.isnative and dt.isnative)):
            out[np.isnan(arr)] = 0   # C's cast through a 64-bit integer (numpy's: 2**31),
                                     # libhdf5's soft conversion (a type not native)
        if arr.dtype.itemsize == 2 and src == "float" and dt.kind == "u" and \
                dt.itemsize > 1 and arr.dtype.isnative and dt.isnative:
            # libhdf5 2.0's hard conversion of native _Float16 to a wider unsigned type is
            # C's cast (through a 64-bit integer): negative values wrap, not saturate
            neg = arr < 0
            out[neg] = np.trunc(arr[neg]).astype(np.int64).astype(dt)
    return out


def _soft_nans(arr, out):
    """NaN as libhdf5's software conversion between floats of two sizes writes it (a type
    not native; H5T__conv_f_f): the source's sign, then every exponent and mantissa bit
    set (numpy keeps the quiet bit and the payload's leading bits)."""
    nan = np.isnan(arr)
    if not nan.any():
        return
    unsigned = np.dtype(f"u{out.dtype.itemsize}")
    ones = np.iinfo(unsigned).max
    pattern = np.where(np.signbit(arr[nan]), unsigned.type(ones), unsigned.type(ones >> 1))
    out[nan] = pattern.astype(unsigned).view(out.dtype.newbyteorder("="))


class _Placeholders:
    """A resolver that places nothing: heap IDs and addresses come out 0."""

    @staticmethod
    def heap(data):
        return 0, 0

    @staticmethod
    def address(ref):
        if not hasattr(type(ref), "address"):     # (the class's: a reference made in write
            raise TypeError(f"Can't convert element {ref!r} to hobj_ref_t")   # mode would
        return 0                                   # stage the session to give its address)

    @staticmethod
    def region(ref):
        return b""


def check(values, dt):
    """Raise now what ``to_file`` would raise at the commit for values of ``dt`` that cannot
    be stored (a number as a variable-length string, as a compound's string member; a str
    that is not ASCII as an ASCII one): libhdf5 converts values when they are given."""
    if needs_conversion(dt):
        if _meta(np.dtype(dt)).get("vlen") is bytes:
            for v in np.ravel(np.asarray(values, dtype=object)):
                if isinstance(v, str):
                    v.encode("ascii")
        to_file(values, dt, _Placeholders)


def _convert(arr, dt, resolver, so):
    meta = _meta(dt)
    sdt = stored_dtype(dt, so)
    if softfloat(dt) is not None:
        from .softfloat import encode
        return encode(arr, softfloat(dt))
    if "vlen" in meta:
        out = np.zeros(arr.shape, sdt)
        base = meta["vlen"]
        flat, oflat = arr.reshape(-1), out.reshape(-1)
        for i in range(flat.size):
            item = flat[i]
            if item is None or (base not in (str, bytes) and np.size(item) == 0):
                continue            # NULL and empty sequences: a null heap ID, as libhdf5 writes
            if base in (str, bytes):
                data = _as_bytes(item, "a variable-length string")
                n = len(data)
            else:
                elem, dims = _element_of(np.dtype(base))
                seq = np.asarray(item, dtype=elem).reshape((-1,) + dims)
                data = to_file(seq, elem, resolver, so).tobytes()
                n = seq.shape[0]
            coll, index = resolver.heap(data)
            oflat[i] = (n, coll, index)
        return out
    if "ref" in meta:
        out = np.zeros(arr.shape, sdt)
        flat, oflat = arr.reshape(-1), out.reshape(-1)
        region = sdt.names is not None
        for i in range(flat.size):
            ref = flat[i]
            if region:            # (None: to an object deleted since, a null reference)
                data = resolver.region(ref) if ref else None
                oflat[i] = resolver.heap(data) if data is not None else (0, 0)
            else:
                oflat[i] = resolver.address(ref) if ref else 0
        return out
    if dt.kind == "b" and "enum" not in meta:
        return np.ascontiguousarray(arr, dtype=np.bool_).view(np.int8)   # (bytes as they are)
    if dt.names is not None:
        out = np.zeros(arr.shape, sdt)
        src = arr if arr.dtype.names is not None else np.asarray(arr, dtype=dt)
        for name in dt.names:
            fdt = dt.fields[name][0]
            out[name] = _convert_member(src[name], fdt, resolver, so)
        return out
    if dt.subdtype is not None:
        base, dims = dt.subdtype
        return _convert(np.asarray(arr, base), base, resolver, so)
    return np.ascontiguousarray(arr, dtype=sdt)


def _element_of(dt):
    """(scalar dtype, shape) of one element of ``dt`` (an array type's base and dimensions;
    numpy would broadcast each scalar of a sequence over the dimensions instead)."""
    return (dt.subdtype[0], tuple(dt.subdtype[1])) if dt.subdtype is not None else (dt, ())


def _convert_member(arr, dt, resolver, so):
    if dt.subdtype is not None:
        base, dims = dt.subdtype
        return _convert(np.asarray(arr, base), base, resolver, so) if needs_conversion(base) \
            else np.asarray(arr, base)
    return _convert(arr, dt, resolver, so) if needs_conversion(dt) else np.asarray(arr, dt)
