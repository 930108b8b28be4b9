"""MurmurHash3_x64_128 (Austin Appleby's reference, as the ``mmh3`` package computes it),
vectorised over many keys of one length with numpy uint64 arithmetic (which wraps, as the
reference's does). Used by HEP001 Bloom filters, where per-key calls dominate building."""
import numpy as np

_C1, _C2 = np.uint64(0x87C37B91114253D5), np.uint64(0x4CF5AD432745937F)
_F1, _F2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
_FIVE = np.uint64(5)


def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(k):
    k = k ^ (k >> np.uint64(33))
    k = k * _F1
    k = k ^ (k >> np.uint64(33))
    k = k * _F2
    return k ^ (k >> np.uint64(33))


def _words(keys, start, stop):
    """Little-endian uint64 of bytes start..stop of each key (zero-extended)."""
    if stop - start == 8:           # a whole word: the bytes viewed as one (copied if apart)
        return np.ascontiguousarray(keys[:, start:stop]).view("<u8")[:, 0].astype(np.uint64)
    out = np.zeros(len(keys), np.uint64)
    for j in range(stop - 1, start - 1, -1):
        out = (out << np.uint64(8)) | keys[:, j].astype(np.uint64)
    return out


def hash128(keys, seed=0):
    """(h1, h2) uint64 arrays of MurmurHash3_x64_128 of each row of ``keys`` (n, length)
    uint8 — ``mmh3.hash64(row.tobytes(), seed, signed=False)`` for every row."""
    keys = np.ascontiguousarray(keys, np.uint8)
    n, length = keys.shape
    h1 = np.full(n, seed & 0xFFFFFFFF, np.uint64)
    h2 = h1.copy()
    with np.errstate(over="ignore"):
        for b in range(length // 16):
            k1 = _rotl(_words(keys, 16 * b, 16 * b + 8) * _C1, 31) * _C2
            h1 = (_rotl(h1 ^ k1, 27) + h2) * _FIVE + np.uint64(0x52DCE729)
            k2 = _rotl(_words(keys, 16 * b + 8, 16 * b + 16) * _C2, 33) * _C1
            h2 = (_rotl(h2 ^ k2, 31) + h1) * _FIVE + np.uint64(0x38495AB5)
        tail, rest = length - length % 16, length % 16
        if rest > 8:
            h2 = h2 ^ (_rotl(_words(keys, tail + 8, length) * _C2, 33) * _C1)
        if rest > 0:
            h1 = h1 ^ (_rotl(_words(keys, tail, tail + min(rest, 8)) * _C1, 31) * _C2)
        h1 = h1 ^ np.uint64(length)
        h2 = h2 ^ np.uint64(length)
        h1 = h1 + h2
        h2 = h2 + h1
        h1, h2 = _fmix(h1), _fmix(h2)
        h1 = h1 + h2
        h2 = h2 + h1
    return h1, h2
