"""Scale-offset filter kernel (filter 6): unpack ``minbits``-bit values, most significant bit
first, packed with no padding, into unsigned 64-bit integers."""
import numpy as np

from ._jit import njit


@njit
def unpack_bits(src, n, minbits):
    out = np.zeros(n, np.uint64)
    bitpos = 0
    nbytes = src.shape[0]
    for i in range(n):
        v = np.uint64(0)
        need = minbits
        while need > 0:
            byte = bitpos >> 3
            avail = 8 - (bitpos & 7)
            take = need if need < avail else avail
            b = np.uint64(src[byte]) if byte < nbytes else np.uint64(0)
            bits = (b >> np.uint64(avail - take)) & np.uint64((1 << take) - 1)
            v = (v << np.uint64(take)) | bits
            need -= take
            bitpos += take
        out[i] = v
    return out
