"""File bytes to numpy values as h5py returns them.

``from_file(ctx, datatype, array)`` takes an array of ``datatype.file_dtype`` (any shape; array
datatypes arrive expanded, as numpy expands sub-array dtypes) and returns values of
``datatype.dtype``: vlen strings as ``bytes`` in object arrays (h5py 3), vlen sequences as object
arrays of 1-D arrays, references as ``purehep.reference`` objects, compounds and arrays
converted member-wise. Identity when ``needs_conversion`` is False.

Vlen elements are resolved per global heap collection with array look-ups (each collection is
decoded once per context), not per element.
"""
from contextlib import contextmanager

import numpy as np

from ..errors import FormatError
from ..reference import (H5R_ATTR, H5R_DATASET_REGION2, H5R_OBJECT2, AttributeReference,
                         Reference, RegionReference)
from .context import Cursor
from .global_heap import collection, get_object
from . import selection

MAX_DEPTH = 32


def from_file(ctx, datatype, array, where=(None, None)):
    """The values of ``array`` (of ``datatype.file_dtype``) as h5py presents them.

    ``where`` = (structure, offset) names the values in errors: a value found bad only when
    converted (a reference of an unknown type, say) no longer knows its own file offset.
    """
    if not datatype.needs_conversion:
        return array
    with _located(where):
        return _convert(ctx, datatype, np.asarray(array), 0)


def fields_from_file(ctx, datatype, array, names, structured=False, where=(None, None)):
    """The named members of compound values (``array`` of ``datatype.file_dtype``) as h5py
    presents them, the other members left unconverted: one name gives its array (unless
    ``structured``), several a structured array of just those fields."""
    user = datatype.dtype
    for name in names:
        if user.names is None or name not in user.names:
            raise ValueError(f"Field {name} does not appear in this type.")
    members = {m.name: m for m in datatype.members}
    array = np.asarray(array)
    with _located(where):
        if len(names) == 1 and not structured:
            return np.asarray(_convert(ctx, members[names[0]].type, array[names[0]], 1),
                              order="C")
        out = np.empty(array.shape, [(n, user.fields[n][0]) for n in names])
        for n in names:
            out[n] = _convert(ctx, members[n].type, array[n], 1)
        return out


@contextmanager
def _located(where):
    """Give a FormatError raised without a location the location of the values converted."""
    try:
        yield
    except FormatError as exc:
        if exc.offset is None and where[1] is not None:
            raise type(exc)(exc.reason, where[0], where[1]) from None
        raise


def _convert(ctx, dt, arr, depth):
    if depth > MAX_DEPTH:
        raise FormatError("datatype nesting too deep to convert", "datatype conversion")
    if not dt.needs_conversion:
        return arr
    out = _CONVERTERS[dt.kind](ctx, dt, arr, depth)
    if out.dtype.kind == "O" and out.dtype.metadata is None and dt.dtype.metadata:
        out = out.view(dt.dtype)   # h5py's object arrays carry the type: vlen or ref metadata
    return out


def _bytes(arr, size):
    """The stored bytes of ``arr`` as a uint8 array of shape arr.shape + (size,)."""
    a = arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)
    if a.dtype.itemsize != size:
        raise FormatError(f"array items of {a.dtype.itemsize} bytes for a {size}-byte type",
                          "datatype conversion")
    return a.reshape(-1).view(np.uint8).reshape(arr.shape + (size,))


def _assemble(b, order):
    """Unsigned integer values (uint64) of up to 8 stored bytes per element."""
    if order == ">":
        b = b[..., ::-1]
    v = np.zeros(b.shape[:-1], np.uint64)
    for i in range(b.shape[-1]):
        v |= b[..., i].astype(np.uint64) << np.uint64(8 * i)
    return v


def _bits(v, offset, precision, signed):
    """Shift, mask and sign-extend like libhdf5's integer conversion."""
    if offset:
        v = v >> np.uint64(offset)
    if precision < 64:
        v = v & np.uint64((1 << precision) - 1)
    if not signed:
        return v
    if precision < 64:
        neg = (v >> np.uint64(precision - 1)) & np.uint64(1)
        v = v.astype(np.int64) - (neg.astype(np.int64) << np.int64(precision))
        return v
    return v.view(np.int64)


def _int(ctx, dt, arr, depth):
    v = _bits(_assemble(_bytes(arr, dt.size), dt.order), dt.bit_offset, dt.precision,
              dt.signed)
    return v.astype(dt.dtype)


def _bigint(ctx, dt, arr, depth):
    b = _bytes(arr, dt.size).reshape(-1, dt.size)
    order = "big" if dt.order == ">" else "little"
    mask = (1 << dt.precision) - 1
    out = np.empty(len(b), object)
    for i, row in enumerate(b):
        v = (int.from_bytes(row.tobytes(), order) >> dt.bit_offset) & mask
        if dt.signed and v >> (dt.precision - 1):
            v -= 1 << dt.precision
        out[i] = v
    return out.reshape(arr.shape)


def _words(b, order):
    """The low and high 64-bit words (uint64) of up to 16 stored bytes per element."""
    if order == ">":
        b = b[..., ::-1]
    return _assemble(b[..., :8], "<"), _assemble(b[..., 8:16], "<")


def _field(lo, hi, pos, n):
    """Bits pos..pos+n-1 (n <= 64) of the 128-bit values (lo, hi), as uint64."""
    if n == 0:
        return np.zeros(lo.shape, np.uint64)
    mask = np.uint64((1 << n) - 1)
    if pos >= 64:
        return (hi >> np.uint64(pos - 64)) & mask
    if pos + n <= 64:
        return (lo >> np.uint64(pos)) & mask
    return ((lo >> np.uint64(pos)) | (hi << np.uint64(64 - pos))) & mask


def _softfloat(ctx, dt, arr, depth):
    """Any floating-point layout of up to 16 bytes, converted into the float ``dt.dtype`` as
    libhdf5 converts it: exactly when the target's mantissa and exponent hold the layout (the
    float h5py names, float32 for bfloat16); into a narrower long double (IEEE binary128 on
    x86) the mantissa keeps its top bits, rounded up when the first dropped bit is set (not
    at the largest finite value, which libhdf5 keeps finite). NaNs get every mantissa bit set
    and keep their sign, as libhdf5's H5T__conv_f_f writes them. An exponent of all ones is
    infinity (a mantissa of zeros, or of its stored leading bit alone where the layout stores
    it) or NaN, as libhdf5 reads it for every normalization. (A layout without an implied bit
    whose mantissa is zero under another exponent reads as zero: libhdf5 reads what its
    conversion of the element before left.)"""
    sign_loc, exp_loc, exp_size, mant_loc, mant_size, bias, norm = dt.float_layout
    target = dt.dtype.newbyteorder("=")
    wide = target == np.longdouble
    work = np.longdouble if wide else np.float64
    lo, hi = _words(_bytes(arr, dt.size).reshape(-1, dt.size), dt.order)    # one axis
    sign = _field(lo, hi, sign_loc, 1).astype(bool)
    e = _field(lo, hi, exp_loc, exp_size).astype(np.int64)
    room = min(np.finfo(work).nmant + (norm != 2) if wide else 52, 64)
    k = min(mant_size, room)                          # mantissa bits kept
    top = _field(lo, hi, mant_loc + mant_size - k, k)
    dropped = _field(lo, hi, mant_loc, mant_size - k)
    t = top.astype(work)
    if k < mant_size:       # round up on the first dropped bit, except where that would turn
        up = dropped >> np.uint64(mant_size - k - 1)        # the largest finite into infinity
        up[(e - bias == np.finfo(work).maxexp - 1) & (top == np.uint64((1 << k) - 1))] = 0
        t += up.astype(work)
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.clip(e - bias - k, -(1 << 30), 1 << 30).astype(np.int32)   # ldexp's int
        if norm == 2:       # implied leading bit, except for denormals (exponent 0)
            val = np.where(e == 0, np.ldexp(t, np.int32(max(1 - bias - k, -(1 << 30)))),
                           np.ldexp(t + work(2) ** k, scale))
        else:               # leading bit stored
            val = np.ldexp(t, scale + 1)
        special = e == (1 << exp_size) - 1       # infinity or NaN, whatever the norm
        lead = np.uint64(0 if norm == 2 else 1 << (k - 1))     # (a stored leading bit)
        nan = special & ((dropped != 0) | ((top != 0) & (top != lead)))
        val = np.where(special & ~nan, np.inf, val)
        out = np.where(sign, -val, val).astype(target)
    if nan.any():
        _libhdf5_nan(out, nan, sign)
    if wide and _is_x87(target) and target.itemsize > 10:
        out.view(np.uint8).reshape(out.shape + (target.itemsize,))[..., 10:] = 0  # padding
    return out.astype(dt.dtype).reshape(arr.shape)


def _libhdf5_nan(out, nan, sign):
    """Set ``out[nan]`` to the NaN libhdf5's float conversion writes: sign kept, exponent and
    mantissa all ones."""
    if out.dtype.itemsize in (2, 4, 8) and out.dtype.kind == "f":
        bits = 8 * out.dtype.itemsize
        u = out.view(f"u{out.dtype.itemsize}")
        # unsigned scalars: numpy 2.5 converts a Python int past int64 to none
        ones = u.dtype.type((1 << (bits - 1)) - 1)
        u[nan] = np.where(sign[nan], ones | u.dtype.type(1 << (bits - 1)), ones)
    elif _is_x87(out.dtype):
        b = out.view(np.uint8).reshape(out.shape + (out.dtype.itemsize,))
        b[nan, :8] = 0xFF
        b[nan, 8] = 0xFF
        b[nan, 9] = np.where(sign[nan], 0xFF, 0x7F)
    else:
        out[nan] = np.where(sign[nan], -np.nan, np.nan)


def _is_x87(dtype):
    fi = np.finfo(dtype)
    return fi.nmant == 63 and fi.nexp == 15 and np.little_endian


def _x87(ctx, dt, arr, depth):
    """80-bit x87 extended values stored in ``dt.size`` bytes, widened to the native long
    double (the 10 significant bytes are copied; the rest is padding)."""
    raw = _bytes(arr, dt.size)
    if dt.order == ">":
        raw = raw[:, ::-1]
    out = np.zeros(raw.shape[:-1] + (np.dtype(np.longdouble).itemsize,), np.uint8)
    out[..., :10] = raw[..., :10]
    return out.view(np.longdouble).reshape(arr.shape)


def _string(ctx, dt, arr, depth):
    b = _bytes(arr, dt.size).copy()
    # boolean running or/and (a byte a value), not cumsum/cumprod's int64 (eight): a string
    # type of a damaged size may make one value of hundreds of MB
    if dt.padding == 0:         # null-terminated: nothing after the first NUL
        b[np.logical_or.accumulate(b == 0, axis=-1)] = 0
    elif dt.padding == 2:       # space-padded: trailing spaces removed
        b[np.flip(np.logical_and.accumulate(np.flip(b == 32, -1), axis=-1), -1)] = 0
    return b.reshape(-1).view(dt.dtype).reshape(arr.shape)


def _enum(ctx, dt, arr, depth):
    return _convert(ctx, dt.base, arr, depth + 1).astype(dt.dtype)


def _bool(ctx, dt, arr, depth):
    return _convert(ctx, dt.base, arr, depth + 1) != 0


def _compound(ctx, dt, arr, depth):
    out = np.empty(arr.shape, dt.dtype)
    for m in dt.members:
        out[m.name] = _convert(ctx, m.type, arr[m.name], depth + 1)
    return out


def _complex_compat(ctx, dt, arr, depth):
    out = np.empty(arr.shape, dt.dtype)
    r, i = dt.members
    out.real = _convert(ctx, r.type, arr[r.name], depth + 1)
    out.imag = _convert(ctx, i.type, arr[i.name], depth + 1)
    return out


def _complex(ctx, dt, arr, depth):
    out = np.empty(arr.shape, dt.dtype)
    out.real = _convert(ctx, dt.base, arr["r"], depth + 1)
    out.imag = _convert(ctx, dt.base, arr["i"], depth + 1)
    return out


def _array(ctx, dt, arr, depth):
    return _convert(ctx, dt.base, arr, depth + 1)


def _heap_slices(ctx, arr, item_size):
    """For vlen elements: (flat output index, heap data, start, nbytes) grouped by collection.

    Yields (positions, data, starts, nbytes) per collection; null elements (collection 0 or
    length 0) are not yielded.
    """
    flat = arr.reshape(-1)
    lengths = flat["length"].astype(np.int64)
    colls = flat["collection"].astype(np.uint64)
    index = flat["index"].astype(np.int64)
    live = (colls != 0) & (lengths != 0)
    if ctx is not None:
        live &= colls != np.uint64(ctx.undefined)
    live_pos = np.nonzero(live)[0]
    if not len(live_pos):
        return
    live_colls = colls[live_pos]
    for c in np.unique(live_colls):
        pos = live_pos[live_colls == c]
        heap = collection(ctx, int(c))
        starts, sizes = heap.locate(index[pos])
        nbytes = lengths[pos] * item_size
        if np.any(nbytes > sizes):
            k = int(np.argmax(nbytes > sizes))
            raise FormatError(f"variable-length element of {int(nbytes[k])} bytes exceeds its "
                              f"heap object of {int(sizes[k])} bytes", "global heap collection",
                              heap.base)
        yield pos, heap.data, starts, nbytes


def _vlen_str_few(ctx, arr):
    """Per-element path for a handful of strings (attributes): no vectorised set-up cost."""
    out = np.empty(arr.size, object)
    for i, (length, coll, index) in enumerate(arr.reshape(-1).tolist()):
        if coll == 0 or length == 0 or coll == ctx.undefined:
            out[i] = b""
            continue
        v = bytes(collection(ctx, coll).get(index))
        if length > len(v):
            raise FormatError(f"variable-length string of {length} bytes exceeds its heap object "
                              f"of {len(v)} bytes", "global heap collection", ctx.absolute(coll))
        v = v[:length]
        z = v.find(b"\0")
        out[i] = v[:z] if z >= 0 else v
    return out.reshape(arr.shape)


def _vlen_str(ctx, dt, arr, depth):
    n = arr.size
    if n <= 4 and ctx is not None:
        return _vlen_str_few(ctx, arr[["length", "collection", "index"]])
    out = np.empty(n, object)
    out[:] = [b""] * n if n else []
    for pos, data, starts, nbytes in _heap_slices(ctx, arr, 1):
        for p, s, k in zip(pos.tolist(), starts.tolist(), nbytes.tolist()):
            v = data[s:s + k]
            z = v.find(b"\0")
            out[p] = v[:z] if z >= 0 else v
    return out.reshape(arr.shape)


def _vlen_seq(ctx, dt, arr, depth):
    base = dt.base
    n = arr.size
    out = np.empty(n, object)
    empty_file = np.zeros(0, base.file_dtype)
    empty = _convert(ctx, base, empty_file, depth + 1) if base.needs_conversion else \
        np.zeros(0, base.dtype)
    for p in range(n):
        out[p] = empty.copy()
    for pos, data, starts, nbytes in _heap_slices(ctx, arr, base.size):
        counts = nbytes // base.size if base.size else nbytes
        for p, s, k in zip(pos.tolist(), starts.tolist(), counts.tolist()):
            a = np.frombuffer(data, base.file_dtype, count=k, offset=s)
            if base.needs_conversion:
                a = _convert(ctx, base, a, depth + 1)
            else:
                a = a.copy()
            if a.dtype != base.dtype or a.dtype.metadata != base.dtype.metadata:
                try:
                    a = a.view(base.dtype) if a.dtype.itemsize == base.dtype.itemsize else a
                except (TypeError, ValueError):
                    pass
            out[p] = a
    return out.reshape(arr.shape)


def _ref_obj(ctx, dt, arr, depth):
    flat = arr.reshape(-1).astype(np.uint64)
    undefined = ctx.undefined if ctx is not None else None
    out = np.empty(len(flat), object)
    cache = {}
    for i, a in enumerate(flat.tolist()):
        r = cache.get(a)
        if r is None:
            r = cache[a] = Reference(None if a == undefined else a)
        out[i] = r
    return out.reshape(arr.shape)


def _ref_region(ctx, dt, arr, depth):
    flat = arr.reshape(-1)
    colls = flat["collection"].astype(np.uint64).tolist()
    idx = flat["index"].astype(np.int64).tolist()
    out = np.empty(len(colls), object)
    for i, (c, k) in enumerate(zip(colls, idx)):
        if c == 0 or (ctx is not None and c == ctx.undefined):
            out[i] = RegionReference(0)
            continue
        heap = collection(ctx, c)
        out[i] = decode_region_blob(ctx, heap.get(k), heap.base)
    return out.reshape(arr.shape)


def _ref_revised(ctx, dt, arr, depth):
    flat = _bytes(arr, dt.size).reshape(-1, dt.size)
    out = np.empty(len(flat), object)
    for i, row in enumerate(flat):
        out[i] = decode_revised(ctx, row.tobytes())
    return out.reshape(arr.shape)


_CONVERTERS = {
    "int": _int, "bigint": _bigint, "softfloat": _softfloat, "x87": _x87, "string": _string,
    "enum": _enum, "bool": _bool, "compound": _compound, "complex_compat": _complex_compat,
    "complex": _complex, "array": _array, "vlen_str": _vlen_str, "vlen_seq": _vlen_seq,
    "ref_obj": _ref_obj, "ref_region": _ref_region, "ref_revised": _ref_revised,
}


# -- references (spec VIII.B, VIII.C) ---------------------------------------------------------

def decode_region_blob(ctx, blob, offset=None):
    """An old-style (H5R_DATASET_REGION1) global heap object: address ‖ selection (VIII.C)."""
    cur = Cursor(memoryview(blob), offset or 0, "region reference", ctx)
    addr = cur.address()
    sel = selection.decode(cur)
    return RegionReference(addr, sel)


def decode_encoded(ctx, ref_type, flags, block, offset=None):
    """Decode a revised reference block (VIII.B "Reference Block") that follows the 2-byte
    header; ``block`` holds the token size, token, optional file name, selection, attr name."""
    cur = Cursor(memoryview(block), offset or 0, "revised reference", ctx)
    token_size = cur.u8()
    if token_size > 16:
        raise cur.error(f"invalid object token size {token_size}")
    token = bytes(cur.bytes(token_size))
    address = int.from_bytes(token[:ctx.sizeof_offsets if ctx else 8], "little")
    file_name = None
    if flags & 1:
        n = cur.u16()
        file_name = bytes(cur.bytes(n)).decode("utf-8", "surrogateescape")
    if ref_type == H5R_OBJECT2:
        return Reference(address, file_name, None, H5R_OBJECT2)
    if ref_type == H5R_DATASET_REGION2:
        size = cur.u32()
        rank = cur.u32()
        if size > cur.remaining:
            raise cur.error(f"selection of {size} bytes overruns the reference")
        sub = Cursor(cur.buf[cur.pos:cur.pos + size], cur.offset, "revised reference", ctx)
        sel = selection.decode(sub, rank)
        cur.skip(size)
        return RegionReference(address, sel, file_name, H5R_DATASET_REGION2)
    if ref_type == H5R_ATTR:
        n = cur.u16()
        name = bytes(cur.bytes(n)).decode("utf-8", "surrogateescape")
        return AttributeReference(address, file_name, name, H5R_ATTR)
    raise cur.error(f"unknown revised reference type {ref_type}")


def decode_revised(ctx, raw, offset=None):
    """One element of the revised reference datatype (H5R_REF) as stored in the file.

    Layout (libhdf5, checked against HDF5 2.0 files): type u8, flags u8, then for an internal
    object reference the reference block itself (token size, token); for every other kind
    (region, attribute, external object) u32 blob size + global heap ID of the reference block
    (without its 2-byte header). A null reference has type 0.
    """
    raw = bytes(raw)
    if len(raw) < 2:
        raise FormatError("revised reference shorter than its header", "revised reference",
                          offset)
    ref_type, flags = raw[0], raw[1]
    so = ctx.sizeof_offsets
    if ref_type == 0:
        return Reference(0, ref_type=H5R_OBJECT2)
    if ref_type not in (H5R_OBJECT2, H5R_DATASET_REGION2, H5R_ATTR):
        raise FormatError(f"invalid revised reference type {ref_type}", "revised reference",
                          offset)
    if ref_type == H5R_OBJECT2 and not flags & 1:
        # an internal object reference is stored directly: header ‖ token size ‖ token
        return decode_encoded(ctx, ref_type, flags, raw[2:], offset)
    if len(raw) < 2 + 4 + so + 4:
        raise FormatError("revised reference too short for a global heap ID",
                          "revised reference", offset)
    size = int.from_bytes(raw[2:6], "little")
    coll = int.from_bytes(raw[6:6 + so], "little")
    index = int.from_bytes(raw[6 + so:10 + so], "little")
    if coll in (0, ctx.undefined):
        return Reference(0, ref_type=ref_type)
    blob = get_object(ctx, coll, index)
    if size > len(blob):
        raise FormatError(f"reference blob of {size} bytes exceeds heap object of "
                          f"{len(blob)}", "revised reference", offset)
    return decode_encoded(ctx, ref_type, flags, blob[:size], offset)
