"""Shuffle filter kernels (filter 2): byte transpose of ``n`` elements of ``size`` bytes.

The numpy form assembles (or splits) whole 2-, 4- and 8-byte words with shifts, a pass per
byte plane (about 2 GB/s), and transposes other sizes with one strided copy; the compiled
loops (about 10 GB/s) take over once a process has shuffled enough to repay loading them.
Trailing ``len % size`` bytes are copied unchanged.
"""
import numpy as np

from ._jit import loop

_BLOCK = 512
_WORDS = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_NUMPY_SECONDS_PER_BYTE = 0.5e-9      # what the numpy form loses against the loop, per byte


def _run(loop_form, numpy_form, src, out, size):
    """The compiled loop when it repays loading numba, else the numpy form."""
    form = loop_form if loop_form.worth(src.shape[0] * _NUMPY_SECONDS_PER_BYTE) else numpy_form
    form(src, out, size)


def unshuffle(src, out, size):
    """out[i*size + j] = src[j*n + i] for n = len // size elements; the rest copied as is."""
    _run(_unshuffle_loop, unshuffle_numpy, src, out, size)


def unshuffle_numpy(src, out, size):
    """``unshuffle``'s numpy form."""
    n = src.shape[0] // size
    planes = src[:n * size].reshape(size, n)
    word = _WORDS.get(size)
    if word is not None and out.ctypes.data % size == 0:
        w = out[:n * size].view(word)
        w[...] = planes[size - 1]
        for j in range(size - 2, -1, -1):
            w <<= word(8)
            w |= planes[j]
    else:
        out[:n * size].reshape(n, size)[...] = planes.T
    out[n * size:] = src[n * size:]


def shuffle(src, out, size):
    """out[j*n + i] = src[i*size + j] for n = len // size elements; the rest copied as is."""
    _run(_shuffle_loop, shuffle_numpy, src, out, size)


def shuffle_numpy(src, out, size):
    """``shuffle``'s numpy form."""
    n = src.shape[0] // size
    planes = out[:n * size].reshape(size, n)
    word = _WORDS.get(size)
    if word is not None and src.ctypes.data % size == 0:
        w = src[:n * size].view(word)
        for j in range(size):
            np.right_shift(w, word(8 * j), out=planes[j], casting="unsafe")
    else:
        planes[...] = src[:n * size].reshape(n, size).T
    out[n * size:] = src[n * size:]


@loop
def _unshuffle_generic(src, out, size, n):
    for b0 in range(0, n, _BLOCK):
        b1 = min(b0 + _BLOCK, n)
        for j in range(size):
            base = j * n
            for i in range(b0, b1):
                out[i * size + j] = src[base + i]


@loop
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


@loop
def _unshuffle_loop(src, out, size):
    total = src.shape[0]
    n = total // size
    if (size == 2 or size == 4 or size == 8) and out.ctypes.data % size == 0:
        _unshuffle_words(src, out, size, n)
    else:
        _unshuffle_generic(src, out, size, n)
    for k in range(n * size, total):
        out[k] = src[k]


@loop
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


@loop
def _shuffle_loop(src, out, size):
    total = src.shape[0]
    n = total // size
    if (size == 2 or size == 4 or size == 8) and src.ctypes.data % size == 0:
        _shuffle_words(src, out, size, n)
    else:
        for b0 in range(0, n, _BLOCK):
            b1 = min(b0 + _BLOCK, n)
            for j in range(size):
                base = j * n
                for i in range(b0, b1):
                    out[base + i] = src[i * size + j]
    for k in range(n * size, total):
        out[k] = src[k]
