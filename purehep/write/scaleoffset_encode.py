"""Scale-offset encoding (filter 6) for integer datasets and float D-scale, registered with the
filter registry next to its decoder (``install``)."""
import numpy as np


def _header(minbits, minval_bytes):
    out = bytearray(21)
    out[0:4] = int(minbits).to_bytes(4, "little")
    out[4] = len(minval_bytes)
    out[5:5 + len(minval_bytes)] = minval_bytes
    return out


def _pack(values, minbits):
    """Pack unsigned ``values`` into ``minbits`` bits each, most significant bit first."""
    n = values.size
    if minbits == 0 or n == 0:
        return b""
    v = values.astype(np.uint64)
    bits = ((v[:, None] >> np.arange(minbits - 1, -1, -1, dtype=np.uint64)) & np.uint64(1))
    return np.packbits(bits.astype(np.uint8).reshape(-1)).tobytes()


def encode(data, client_data, element_size, chunk_nbytes):
    cd = [int(v) for v in client_data]
    scale_type, factor, nelmts, cls, size, sign, order = cd[:7]
    factor = factor - (1 << 32) if factor >= 1 << 31 else factor
    raw = np.frombuffer(bytes(data), np.uint8)
    order_c = ">" if order == 1 else "<"
    if cls == 0:
        dt = np.dtype(f"{order_c}{'i' if sign else 'u'}{size}")
        vals = raw.view(dt).astype(np.dtype(f"{'i' if sign else 'u'}{size}")).astype(object)
        vals = np.array([int(x) for x in vals], dtype=object)
        lo, hi = min(vals), max(vals)
        span = hi - lo
        minbits = span.bit_length() if factor == 0 else min(factor, 8 * size)
        if minbits >= 8 * size:
            return _header(8 * size, b"") + raw.view(dt).astype(dt.newbyteorder("<")).tobytes()
        packed = np.array([int(x - lo) for x in vals], dtype=np.uint64)
        minval = (lo & ((1 << (8 * size)) - 1)).to_bytes(8, "little")[:8]
        return bytes(_header(minbits, minval)) + _pack(packed, minbits)
    ftype = np.dtype(f"{order_c}f{size}")
    vals = raw.view(ftype).astype(f"<f{size}")
    lo = vals.min() if vals.size else 0
    scaled = np.rint((vals - lo) * (10.0 ** factor)).astype(np.int64)
    span = int(scaled.max()) if scaled.size else 0
    minbits = span.bit_length()
    if minbits >= 8 * size:
        return _header(8 * size, b"") + vals.tobytes()
    minval = np.asarray(lo, f"<f{size}").tobytes()
    return bytes(_header(minbits, minval + bytes(8 - len(minval)))) + \
        _pack(scaled.astype(np.uint64), minbits)


def install():
    from .. import filters
    from ..filters import scaleoffset
    f = filters.get_filter(6)
    if f.encode is None:
        filters.register_filter(6, scaleoffset.decode, encode, "scaleoffset")
