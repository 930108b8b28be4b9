"""Bulk decoding of chunk index records (spec Appendix C; III.A.1 type-1 keys; III.A.2 types
10/11) from uint8 record matrices into numpy columns."""
import numpy as np

from ._jit import njit


@njit
def _le(raw, i, pos, width):
    v = np.uint64(0)
    for b in range(width):
        v |= np.uint64(raw[i, pos + b]) << np.uint64(8 * b)
    return v


@njit
def decode_records(raw, addr_pos, sizeof_addr, size_pos, size_width, mask_pos, scaled_pos,
                   ndims, scaled_width):
    """Columns of ``raw`` (n, record_size): address, size, filter mask, scaled/element offsets.

    A position of -1 means the field is absent (size then 0, mask 0, scaled 0).
    """
    n = raw.shape[0]
    addr = np.empty(n, np.uint64)
    size = np.zeros(n, np.int64)
    mask = np.zeros(n, np.uint32)
    scaled = np.zeros((n, ndims), np.int64)
    for i in range(n):
        addr[i] = _le(raw, i, addr_pos, sizeof_addr)
        if size_pos >= 0:
            size[i] = np.int64(_le(raw, i, size_pos, size_width))
        if mask_pos >= 0:
            mask[i] = np.uint32(_le(raw, i, mask_pos, 4))
        if scaled_pos >= 0:
            for d in range(ndims):
                scaled[i, d] = np.int64(_le(raw, i, scaled_pos + d * scaled_width, scaled_width))
    return addr, size, mask, scaled


@njit
def bitmap_expand(bitmap, nbits):
    """Bits of an HDF5 bitmap (most significant bit of each byte first) as booleans."""
    out = np.zeros(nbits, np.bool_)
    for i in range(nbits):
        out[i] = (bitmap[i >> 3] >> (7 - (i & 7))) & 1
    return out
