"""Scale-offset filter kernel (filter 6): unpack ``minbits``-bit values, most significant bit
first, packed with no padding, into unsigned 64-bit integers (numpy bit planes, a slice of
values at a time)."""
import numpy as np

_SLICE = 1 << 16      # values unpacked per pass: 64 bytes of bit planes each


def unpack_bits(src, n, minbits):
    out = np.zeros(n, np.uint64)
    need = (n * minbits + 7) // 8
    src = np.asarray(src[:need], np.uint8)
    if src.shape[0] < need:
        src = np.concatenate((src, np.zeros(need - src.shape[0], np.uint8)))
    for a in range(0, n, _SLICE):
        b = min(a + _SLICE, n)
        first, last = a * minbits, b * minbits
        byte0 = first // 8
        bits = np.unpackbits(src[byte0:(last + 7) // 8])
        bits = bits[first - 8 * byte0:first - 8 * byte0 + (b - a) * minbits]
        wide = np.zeros((b - a, 64), np.uint8)
        wide[:, 64 - minbits:] = bits.reshape(b - a, minbits)
        out[a:b] = np.packbits(wide, axis=1).view(">u8").reshape(-1)
    return out
