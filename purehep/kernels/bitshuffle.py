"""Bitshuffle kernels (filter 32008): the bit transpose of blocks of elements.

For a block of ``n`` elements (``n`` a multiple of 8) of ``size`` bytes, output row
``8*j + k`` (``n/8`` bytes) holds bit ``k`` of byte ``j`` of every element, element ``i`` in
bit ``i % 8`` of byte ``i // 8`` of the row. Eight bytes at a time are gathered into a word
and their 8x8 bit matrix transposed with three masked swaps (bitshuffle's TRANS_BIT_8X8).
"""
import numpy as np

from ._jit import njit


@njit
def _t8x8(x):
    t = (x ^ (x >> np.uint64(7))) & np.uint64(0x00AA00AA00AA00AA)
    x = x ^ t ^ (t << np.uint64(7))
    t = (x ^ (x >> np.uint64(14))) & np.uint64(0x0000CCCC0000CCCC)
    x = x ^ t ^ (t << np.uint64(14))
    t = (x ^ (x >> np.uint64(28))) & np.uint64(0x00000000F0F0F0F0)
    return x ^ t ^ (t << np.uint64(28))


@njit
def bitshuffle_block(src, out, n, size):
    """Transpose the bits of ``n`` elements of ``size`` bytes (``src`` -> ``out``, uint8)."""
    rows = n // 8
    for g in range(rows):
        base = g * 8 * size
        for j in range(size):
            x = np.uint64(0)
            for m in range(8):
                x |= np.uint64(src[base + m * size + j]) << np.uint64(8 * m)
            x = _t8x8(x)
            for k in range(8):
                out[(j * 8 + k) * rows + g] = np.uint8((x >> np.uint64(8 * k)) & np.uint64(255))


@njit
def bitunshuffle_block(src, out, n, size):
    """The inverse of ``bitshuffle_block``."""
    rows = n // 8
    for g in range(rows):
        base = g * 8 * size
        for j in range(size):
            x = np.uint64(0)
            for k in range(8):
                x |= np.uint64(src[(j * 8 + k) * rows + g]) << np.uint64(8 * k)
            x = _t8x8(x)
            for m in range(8):
                out[base + m * size + j] = np.uint8((x >> np.uint64(8 * m)) & np.uint64(255))
