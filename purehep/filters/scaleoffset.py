"""Filter 6, scale-offset: per chunk, values minus the chunk minimum in ``minbits`` bits.

Client data: [0] scale type (0 float D-scale, 2 integer), [1] scale factor, [2] elements per
chunk, [3] class (0 integer, 1 float), [4] size, [5] sign (0 unsigned), [6] byte order (0 LE,
1 BE), [7] fill value defined, [8..] fill value bytes, 4 per value, little-endian.
A chunk starts with 21 bytes: minbits (4 bytes LE), the byte count of minval, minval (LE);
the packed values follow. Decoding (as the library): minbits == full width: values stored as
is; otherwise value = packed + minval for integers (the all-ones code = the fill value when
one is defined), and packed / 10**D + min for floats, in the type's own precision. Values are
produced in little-endian order and swapped when the dataset is big-endian.
"""
import numpy as np

from ..errors import FormatError, UnsupportedFeatureError

ID, NAME = 6, "scaleoffset"
HEADER = 21


def _fill_bytes(cd, size):
    words = cd[8:]
    raw = b"".join(int(w).to_bytes(4, "little") for w in words)
    if len(raw) < size:
        raise FormatError("scale-offset fill value is truncated")
    return raw[:size]


def decode(data, client_data, element_size, chunk_nbytes):
    cd = tuple(int(v) for v in client_data)
    if len(cd) < 8:
        raise FormatError(f"scale-offset filter needs 8+ client data values, has {len(cd)}")
    scale_type, factor, nelmts, cls, size, sign, order, fill_defined = cd[:8]
    factor = factor - (1 << 32) if factor >= 1 << 31 else factor
    if cls not in (0, 1) or size not in (1, 2, 4, 8) or (cls == 1 and size not in (4, 8)):
        raise UnsupportedFeatureError(f"scale-offset for class {cls} size {size}")
    if cls == 1 and scale_type != 0:
        raise UnsupportedFeatureError("scale-offset E-scale (scale type 1) is not defined")
    if cls == 0 and factor == size * 8:
        return data     # the library stores such chunks unprocessed
    buf = np.frombuffer(data, np.uint8)
    if buf.size < HEADER:
        raise FormatError(f"scale-offset chunk of {buf.size} bytes is shorter than its header")
    minbits = int(buf[0]) | (int(buf[1]) << 8) | (int(buf[2]) << 16) | (int(buf[3]) << 24)
    mvsize = min(int(buf[4]), 8)
    minval = 0
    for i in range(mvsize):
        minval |= int(buf[5 + i]) << (8 * i)
    if minbits > size * 8:
        raise FormatError(f"scale-offset minbits {minbits} exceeds {size * 8}")
    nbytes = nelmts * size
    utype = np.dtype(f"<u{size}")
    if minbits == size * 8:
        out = buf[HEADER:HEADER + nbytes]
        if out.size < nbytes:
            raise FormatError("scale-offset chunk is truncated")
        out = out.copy()
    else:
        if minbits:
            need = HEADER + (nelmts * minbits + 7) // 8
            if buf.size < need:
                raise FormatError("scale-offset chunk is truncated")
            from ..kernels.scaleoffset import unpack_bits
            packed = unpack_bits(buf[HEADER:], nelmts, minbits)
        else:
            packed = np.zeros(nelmts, np.uint64)
        code = np.uint64((1 << minbits) - 1)
        if cls == 0:
            vals = (packed + np.uint64(minval)).astype(utype)   # wraps like the C type
            if fill_defined:
                fill = np.frombuffer(_fill_bytes(cd, size), utype)[0]
                vals = np.where(packed == code, fill, vals).astype(utype)
        else:
            ftype = np.dtype(f"<f{size}")
            itype = np.dtype(f"<i{size}")
            mn = np.frombuffer(minval.to_bytes(8, "little")[:size], ftype)[0]
            # the packed value reinterpreted as the signed integer of the type's size
            ints = packed.astype(np.dtype(f"<u{size}")).view(itype)
            scale = ftype.type(10.0 ** factor)
            with np.errstate(all="ignore"):
                vals = ints.astype(ftype) / scale + mn
            if fill_defined:
                fill = np.frombuffer(_fill_bytes(cd, size), ftype)[0]
                vals = np.where(packed == code, fill, vals)
            vals = vals.astype(ftype).view(utype)
        out = np.ascontiguousarray(vals).view(np.uint8)
    if order == 1 and size > 1:
        out = out.view(utype).byteswap().view(np.uint8)
    return out


# --- encoding ------------------------------------------------------------------------------------

def _header(minbits, minval_bytes):
    out = bytearray(21)
    out[0:4] = int(minbits).to_bytes(4, "little")
    out[4] = len(minval_bytes)
    out[5:5 + len(minval_bytes)] = minval_bytes
    return out


def _pack(values, minbits):
    """Pack unsigned ``values`` into ``minbits`` bits each, most significant bit first, in
    n * minbits // 8 + 1 bytes (the size libhdf5 gives the packed part)."""
    n = values.size
    out = bytearray(n * minbits // 8 + 1)
    if minbits and n:
        v = values.astype(np.uint64)
        bits = ((v[:, None] >> np.arange(minbits - 1, -1, -1, dtype=np.uint64)) & np.uint64(1))
        packed = np.packbits(bits.astype(np.uint8).reshape(-1)).tobytes()
        out[:len(packed)] = packed
    return bytes(out)


def _fill_value(cd, dtype):
    """The dataset's fill value as the filter received it, None when not defined."""
    if len(cd) < 8 or not cd[7]:
        return None
    return np.frombuffer(_fill_bytes(cd, dtype.itemsize), dtype.newbyteorder("<"))[0]


def encode(data, client_data, element_size, chunk_nbytes):
    """Scale-offset encoding of one chunk (integers; floats by D-scale), the inverse of
    ``decode``: the 21-byte header, then the values minus the minimum in ``minbits`` bits.
    With a fill value defined, as the library: the minimum and maximum leave out elements
    equal to the fill value, which take the all-ones code, so minbits counts one more code."""
    cd = [int(v) for v in client_data]
    scale_type, factor, nelmts, cls, size, sign, order = cd[:7]
    factor = factor - (1 << 32) if factor >= 1 << 31 else factor
    if cls == 0 and factor == size * 8:
        return bytes(data)      # as the library: bits asked for = full width, unprocessed
    if cls == 0 and factor > size * 8:
        return None             # the library fails: the (optional) filter is skipped
    raw = np.frombuffer(bytes(data), np.uint8)
    order_c = ">" if order == 1 else "<"
    if cls == 0:
        dt = np.dtype(f"{order_c}{'i' if sign else 'u'}{size}")
        fill = _fill_value(cd, dt)
        vals = [int(x) for x in raw.view(dt)]
        is_fill = [fill is not None and x == int(fill) for x in vals]
        kept = [x for x, f in zip(vals, is_fill) if not f] or [0]
        lo, hi = min(kept), max(kept)
        span = hi - lo + (fill is not None)
        minbits = span.bit_length() if factor == 0 else factor
        if minbits >= 8 * size:
            return _header(8 * size, bytes(8)) + \
                raw.view(dt).astype(dt.newbyteorder("<")).tobytes()
        code = (1 << minbits) - 1
        packed = np.array([code if f else x - lo for x, f in zip(vals, is_fill)], np.uint64)
        minval = (lo & ((1 << 64) - 1)).to_bytes(8, "little")     # sign-extended, as libhdf5
        return bytes(_header(minbits, minval)) + _pack(packed, minbits)
    # floats, as libhdf5's precompress_fd: the fill value within 10**-D, arithmetic in the
    # element type, values rounded as C's lround (halves away from zero)
    ftype = np.dtype(f"<f{size}")
    vals = raw.view(np.dtype(f"{order_c}f{size}")).astype(ftype)
    fill = _fill_value(cd, ftype)
    width = 8 * size
    scale = ftype.type(10.0) ** ftype.type(factor)
    is_fill = np.zeros(vals.shape, bool)
    with np.errstate(all="ignore"):
        if fill is not None:
            is_fill = np.abs(vals - fill) < ftype.type(10.0) ** ftype.type(-factor)
        kept = vals[~is_fill]
        lo, hi = (kept.min(), kept.max()) if kept.size else (ftype.type(0), ftype.type(0))
        spread = float(hi * scale - lo * scale)
        raw_out = _header(width, bytes(8)) + vals.tobytes()
        if not np.isfinite(spread) or np.round(spread) > 2.0 ** (width - 1):
            return raw_out
        minbits = _lround(spread).bit_length() if fill is None else \
            (_lround(spread) + 1).bit_length()
        if minbits >= width:
            return raw_out
        d = (vals * scale - lo * scale).astype(np.float64)
        scaled = (np.floor(np.abs(d) + 0.5) * np.sign(d)).astype(np.int64)
    scaled = np.where(is_fill, (1 << minbits) - 1, scaled)
    minval = np.asarray(lo, ftype).tobytes()
    return bytes(_header(minbits, minval + bytes(8 - len(minval)))) + \
        _pack(scaled.astype(np.uint64), minbits)


def _lround(x):
    """C's lround: to the nearest integer, halves away from zero."""
    return int(np.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)
