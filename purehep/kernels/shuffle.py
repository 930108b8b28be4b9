"""Shuffle filter kernels (filter 2): byte transpose of ``n`` elements of ``size`` bytes.

Element sizes 2, 4 and 8 assemble whole words (vectorizable); other sizes transpose in
cache-sized blocks. Trailing ``len % size`` bytes are copied unchanged.
"""
import numpy as np

from ._jit import njit

_BLOCK = 512


@njit
def _unshuffle_generic(src, out, size, n):
    for b0 in range(0, n, _BLOCK):
        b1 = min(b0 + _BLOCK, n)
        for j in range(size):
            base = j * n
            for i in range(b0, b1):
                out[i * size + j] = src[base + i]


@njit
def _unshuffle_words(src, out, size, n):
    if size == 2:
        o2 = out[:n * 2].view(np.uint16)
        for i in range(n):
            o2[i] = np.uint16(src[i]) | (np.uint16(src[n + i]) << np.uint16(8))
    elif size == 4:
        o4 = out[:n * 4].view(np.uint32)
        for i in range(n):
            o4[i] = (np.uint32(src[i]) | (np.uint32(src[n + i]) << np.uint32(8))
                     | (np.uint32(src[2 * n + i]) << np.uint32(16))
                     | (np.uint32(src[3 * n + i]) << np.uint32(24)))
    else:
        o8 = out[:n * 8].view(np.uint64)
        for i in range(n):
            v = np.uint64(0)
            for j in range(8):
                v |= np.uint64(src[j * n + i]) << np.uint64(8 * j)
            o8[i] = v


@njit
def unshuffle(src, out, size):
    """out[i*size + j] = src[j*n + i] for n = len // size elements; the rest copied as is."""
    total = src.shape[0]
    n = total // size
    if (size == 2 or size == 4 or size == 8) and out.ctypes.data % size == 0:
        _unshuffle_words(src, out, size, n)
    else:
        _unshuffle_generic(src, out, size, n)
    for k in range(n * size, total):
        out[k] = src[k]


@njit
def _shuffle_words(src, out, size, n):
    if size == 2:
        s2 = src[:n * 2].view(np.uint16)
        for i in range(n):
            v = s2[i]
            out[i] = np.uint8(v & np.uint16(0xFF))
            out[n + i] = np.uint8(v >> np.uint16(8))
    elif size == 4:
        s4 = src[:n * 4].view(np.uint32)
        for i in range(n):
            v = s4[i]
            out[i] = np.uint8(v & np.uint32(0xFF))
            out[n + i] = np.uint8((v >> np.uint32(8)) & np.uint32(0xFF))
            out[2 * n + i] = np.uint8((v >> np.uint32(16)) & np.uint32(0xFF))
            out[3 * n + i] = np.uint8(v >> np.uint32(24))
    else:
        s8 = src[:n * 8].view(np.uint64)
        for i in range(n):
            v = s8[i]
            for j in range(8):
                out[j * n + i] = np.uint8((v >> np.uint64(8 * j)) & np.uint64(0xFF))


@njit
def shuffle(src, out, size):
    """out[j*n + i] = src[i*size + j] for n = len // size elements; the rest copied as is."""
    total = src.shape[0]
    n = total // size
    if (size == 2 or size == 4 or size == 8) and src.ctypes.data % size == 0:
        _shuffle_words(src, out, size, n)
        for k in range(n * size, total):
            out[k] = src[k]
        return
    for b0 in range(0, n, _BLOCK):
        b1 = min(b0 + _BLOCK, n)
        for j in range(size):
            base = j * n
            for i in range(b0, b1):
                out[base + i] = src[i * size + j]
    for k in range(n * size, total):
        out[k] = src[k]
