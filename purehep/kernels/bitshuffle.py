"""Bitshuffle kernels (filter 32008): the bit transpose of blocks of elements.

For a block of ``n`` elements (``n`` a multiple of 8) of ``size`` bytes, output row
``8*j + k`` (``n/8`` bytes) holds bit ``k`` of byte ``j`` of every element, element ``i`` in
bit ``i % 8`` of byte ``i // 8`` of the row (bitshuffle's bit transpose). Done with numpy's
``unpackbits``/``packbits`` (little bit order) and one transpose: vectorised, no numba.
"""
import numpy as np


def bitshuffle_block(src, out, n, size):
    """Transpose the bits of ``n`` elements of ``size`` bytes (``src`` -> ``out``, uint8)."""
    elems = np.asarray(src[:n * size], np.uint8).reshape(n, size)
    bits = np.unpackbits(elems, axis=1, bitorder="little")          # (n, 8 * size)
    rows = np.packbits(bits.T, axis=1, bitorder="little")           # (8 * size, n / 8)
    out[:n * size] = rows.reshape(-1)


def bitunshuffle_block(src, out, n, size):
    """The inverse of ``bitshuffle_block``."""
    rows = np.asarray(src[:n * size], np.uint8).reshape(8 * size, n // 8)
    bits = np.unpackbits(rows, axis=1, bitorder="little")           # (8 * size, n)
    out[:n * size] = np.packbits(bits.T, axis=1, bitorder="little").reshape(-1)
