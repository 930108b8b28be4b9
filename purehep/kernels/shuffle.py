"""Shuffle filter kernels (filter 2): byte transpose of ``n`` elements of ``size`` bytes."""
from ._jit import njit


@njit
def unshuffle(src, out, size):
    """out[i*size + j] = src[j*n + i]; the ``len % size`` trailing bytes are copied as is."""
    total = src.shape[0]
    n = total // size
    for j in range(size):
        base = j * n
        for i in range(n):
            out[i * size + j] = src[base + i]
    for k in range(n * size, total):
        out[k] = src[k]


@njit
def shuffle(src, out, size):
    total = src.shape[0]
    n = total // size
    for j in range(size):
        base = j * n
        for i in range(n):
            out[base + i] = src[i * size + j]
    for k in range(n * size, total):
        out[k] = src[k]
