"""Checksum kernels: Jenkins lookup3 (hashlittle, spec Appendix C) and HDF5's Fletcher-32.

``lookup3`` of one buffer is sequential: plain Python over its 32-bit words (about 6 MB/s)
until a process has hashed enough to repay loading the compiled loop (~4 MB). ``lookup3_rows``
hashes many equal-length buffers at once with numpy, one lane per buffer (fixed array pages,
B-tree nodes). ``fletcher32`` is two modular sums, vectorised with numpy.
"""
import struct

import numpy as np

from ._jit import loop

_M = 0xFFFFFFFF
_PY_SECONDS_PER_BYTE = 0.16e-6     # plain-Python lookup3 against the compiled loop
_FLETCHER_SECONDS_PER_BYTE = 2e-9  # numpy Fletcher-32 against the compiled loop
_FLETCHER_SLICE = 1 << 20          # 16-bit words summed per numpy pass (bounds temporaries)


def lookup3(data, initval=0):
    """Jenkins lookup3 ``hashlittle`` of ``data`` (any bytes-like object), as HDF5's
    H5_checksum_lookup3."""
    n = len(data)
    if _lookup3_from.worth(n * _PY_SECONDS_PER_BYTE):
        return int(lookup3_array(np.frombuffer(data, np.uint8), initval))
    return _py_lookup3(data, n, initval)


def lookup3_array(data, initval=0):
    """``lookup3`` of the uint8 array ``data`` by the loop kernel (compiled when numba is
    there, whatever the size)."""
    n = data.shape[0]
    a = (0xDEADBEEF + n + initval) & _M
    return _lookup3_from(data, 0, n, a, a, a, 0)


def lookup3_is_compiled():
    """True once ``lookup3`` runs compiled: one buffer then costs microseconds, and hashing
    many equal buffers together (``lookup3_rows``) no longer pays."""
    return _lookup3_from.ready


def _py_lookup3(data, n, initval):
    a = b = c = (0xDEADBEEF + n + initval) & _M
    if n == 0:
        return c
    nblocks = (n + 11) // 12
    padded = bytes(data) + b"\0" * (nblocks * 12 - n)
    words = struct.unpack(f"<{nblocks * 3}I", padded)
    for blk in range(nblocks - 1):
        a = (a + words[3 * blk]) & _M
        b = (b + words[3 * blk + 1]) & _M
        c = (c + words[3 * blk + 2]) & _M
        a = (a - c) & _M; a ^= ((c << 4) | (c >> 28)) & _M; c = (c + b) & _M
        b = (b - a) & _M; b ^= ((a << 6) | (a >> 26)) & _M; a = (a + c) & _M
        c = (c - b) & _M; c ^= ((b << 8) | (b >> 24)) & _M; b = (b + a) & _M
        a = (a - c) & _M; a ^= ((c << 16) | (c >> 16)) & _M; c = (c + b) & _M
        b = (b - a) & _M; b ^= ((a << 19) | (a >> 13)) & _M; a = (a + c) & _M
        c = (c - b) & _M; c ^= ((b << 4) | (b >> 28)) & _M; b = (b + a) & _M
    a = (a + words[-3]) & _M
    b = (b + words[-2]) & _M
    c = (c + words[-1]) & _M
    return _final(a, b, c) & _M


def _final(a, b, c):
    """lookup3's final mix (``rot`` written out; numpy uint32 lanes or Python ints & _M)."""
    c ^= b; c -= _rotl(b, 14)
    a ^= c; a -= _rotl(c, 11)
    b ^= a; b -= _rotl(a, 25)
    c ^= b; c -= _rotl(b, 16)
    a ^= c; a -= _rotl(c, 4)
    b ^= a; b -= _rotl(a, 14)
    c ^= b; c -= _rotl(b, 24)
    return c


def _rotl(x, k):
    if isinstance(x, int):
        x &= _M
        return ((x << k) | (x >> (32 - k))) & _M
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def lookup3_rows(rows, initval=0):
    """lookup3 of every row of the uint8 matrix ``rows`` (m, n): a uint32 array (m,).
    numpy uint32 lanes wrap as the C code's do."""
    rows = np.ascontiguousarray(rows, np.uint8)
    m, n = rows.shape
    c0 = np.uint32((0xDEADBEEF + n + initval) & _M)
    a = np.full(m, c0, np.uint32)
    if n == 0 or m == 0:
        return a
    b, c = a.copy(), a.copy()
    nblocks = (n + 11) // 12
    if nblocks * 12 != n:
        padded = np.zeros((m, nblocks * 12), np.uint8)
        padded[:, :n] = rows
        rows = padded
    words = rows.view("<u4").reshape(m, nblocks, 3)
    r = [np.uint32(k) for k in (4, 6, 8, 16, 19, 4)]
    for blk in range(nblocks - 1):
        w = words[:, blk]
        a += w[:, 0]
        b += w[:, 1]
        c += w[:, 2]
        a -= c; a ^= (c << r[0]) | (c >> np.uint32(28)); c += b
        b -= a; b ^= (a << r[1]) | (a >> np.uint32(26)); a += c
        c -= b; c ^= (b << r[2]) | (b >> np.uint32(24)); b += a
        a -= c; a ^= (c << r[3]) | (c >> np.uint32(16)); c += b
        b -= a; b ^= (a << r[4]) | (a >> np.uint32(13)); a += c
        c -= b; c ^= (b << r[5]) | (b >> np.uint32(28)); b += a
    w = words[:, nblocks - 1]
    a += w[:, 0]
    b += w[:, 1]
    c += w[:, 2]
    return _final(a, b, c)


def fletcher32(data):
    """HDF5's Fletcher-32 (H5_checksum_fletcher32) of a uint8 array: big-endian 16-bit
    words, an odd last byte as the high byte of a last word. The library folds both sums
    modulo 65535 as it goes, so each ends as the sum modulo 65535 in 1..65535 (0 only when
    the sum is 0, i.e. for all-zero data)."""
    n = data.shape[0]
    if _fletcher32_loop.worth(n * _FLETCHER_SECONDS_PER_BYTE):
        return int(_fletcher32_loop(data))
    return fletcher32_numpy(data)


def fletcher32_numpy(data):
    """``fletcher32``'s numpy form."""
    n = data.shape[0]
    nw = (n + 1) // 2
    s1 = s2 = 0
    nonzero = False
    for w0 in range(0, nw, _FLETCHER_SLICE):
        w1 = min(w0 + _FLETCHER_SLICE, nw)
        part = data[2 * w0:2 * w1]
        if part.shape[0] % 2:
            part = np.concatenate((part, np.zeros(1, np.uint8)))
        words = part.view(">u2").astype(np.int64)
        # word i (0-based over the whole buffer) enters sum2 nw - i times
        weights = (nw - np.arange(w0, w1, dtype=np.int64)) % 65535
        s1 = (s1 + int(words.sum())) % 65535
        s2 = (s2 + int(np.dot(words, weights) % 65535)) % 65535
        nonzero = nonzero or bool(words.any())
    if not nonzero:
        return 0
    s1 = s1 or 65535
    s2 = s2 or 65535
    return (s2 << 16) | s1


@loop
def _rot(x, k):
    return ((x << k) | (x >> (32 - k))) & 0xFFFFFFFF


@loop
def _word(data, i):
    """Little-endian 32-bit word at ``i`` (int() keeps plain-Python runs from uint8 overflow)."""
    return (int(data[i]) | (int(data[i + 1]) << 8) | (int(data[i + 2]) << 16)
            | (int(data[i + 3]) << 24))


@loop(inline="always")      # (numba inlines it: a call per 12 bytes costs ~12 %)
def _mix(a, b, c):
    """lookup3's ``mix`` of three 32-bit values (kept below 2**32 by masks)."""
    a = (a - c) & 0xFFFFFFFF; a ^= _rot(c, 4); c = (c + b) & 0xFFFFFFFF
    b = (b - a) & 0xFFFFFFFF; b ^= _rot(a, 6); a = (a + c) & 0xFFFFFFFF
    c = (c - b) & 0xFFFFFFFF; c ^= _rot(b, 8); b = (b + a) & 0xFFFFFFFF
    a = (a - c) & 0xFFFFFFFF; a ^= _rot(c, 16); c = (c + b) & 0xFFFFFFFF
    b = (b - a) & 0xFFFFFFFF; b ^= _rot(a, 19); a = (a + c) & 0xFFFFFFFF
    c = (c - b) & 0xFFFFFFFF; c ^= _rot(b, 4); b = (b + a) & 0xFFFFFFFF
    return a, b, c


@loop
def _lookup3_from(data, start, end, a, b, c, i):
    """lookup3 of ``data[start:end]`` from the state (a, b, c) after its first ``i`` bytes
    (whole 12-byte blocks, not the last)."""
    n = end - start
    while n - i > 12:
        a, b, c = _mix((a + _word(data, start + i)) & 0xFFFFFFFF,
                       (b + _word(data, start + i + 4)) & 0xFFFFFFFF,
                       (c + _word(data, start + i + 8)) & 0xFFFFFFFF)
        i += 12
    rest = n - i
    if rest == 0:
        return c
    w = np.zeros(12, np.uint8)
    for j in range(rest):
        w[j] = data[start + i + j]
    a = (a + _word(w, 0)) & 0xFFFFFFFF
    b = (b + _word(w, 4)) & 0xFFFFFFFF
    c = (c + _word(w, 8)) & 0xFFFFFFFF
    c ^= b; c = (c - _rot(b, 14)) & 0xFFFFFFFF
    a ^= c; a = (a - _rot(c, 11)) & 0xFFFFFFFF
    b ^= a; b = (b - _rot(a, 25)) & 0xFFFFFFFF
    c ^= b; c = (c - _rot(b, 16)) & 0xFFFFFFFF
    a ^= c; a = (a - _rot(c, 4)) & 0xFFFFFFFF
    b ^= a; b = (b - _rot(a, 14)) & 0xFFFFFFFF
    c ^= b; c = (c - _rot(b, 24)) & 0xFFFFFFFF
    return c


@loop
def _fletcher32_loop(data):
    n = data.shape[0]
    sum1 = 0
    sum2 = 0
    i = 0
    half = n // 2
    while half > 0:
        tlen = 360 if half > 360 else half
        half -= tlen
        for _ in range(tlen):
            sum1 += (int(data[i]) << 8) | int(data[i + 1])
            sum2 += sum1
            i += 2
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    if n % 2:
        sum1 += int(data[i]) << 8
        sum2 += sum1
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
    sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    return (sum2 << 16) | sum1


@loop
def lookup3_first_mismatch(data, words, starts, ends):
    """Index of the first span ``data[starts[i]:ends[i]]`` whose lookup3 (initial value 0)
    differs from the little-endian 32-bit word stored after it (a metadata checksum: the
    section 0 of sparse chunks), or -1. ``words`` views ``data`` as little-endian uint32 at
    each byte shift (``words[s][j]`` at byte s + 4 * j). Spans go through the block loop two
    at a time: lookup3 is one chain of dependent operations, two chains keep the core busy
    (1.6x the speed)."""
    m = starts.shape[0]
    for g in range(0, m, 2):
        h = min(g + 1, m - 1)       # (an odd last span is hashed twice)
        s0, e0, s1, e1 = starts[g], ends[g], starts[h], ends[h]
        a0 = b0 = c0 = (0xDEADBEEF + e0 - s0) & 0xFFFFFFFF
        a1 = b1 = c1 = (0xDEADBEEF + e1 - s1) & 0xFFFFFFFF
        w0, w1 = words[s0 % 4], words[s1 % 4]
        j0, j1 = np.uint64(s0 // 4), np.uint64(s1 // 4)     # (unsigned: no negative-index
        both = max(0, (min(e0 - s0, e1 - s1) - 1) // 12)      # handling by numba)
        for _ in range(both):
            a0, b0, c0 = _mix((a0 + int(w0[j0])) & 0xFFFFFFFF,
                              (b0 + int(w0[j0 + np.uint64(1)])) & 0xFFFFFFFF,
                              (c0 + int(w0[j0 + np.uint64(2)])) & 0xFFFFFFFF)
            a1, b1, c1 = _mix((a1 + int(w1[j1])) & 0xFFFFFFFF,
                              (b1 + int(w1[j1 + np.uint64(1)])) & 0xFFFFFFFF,
                              (c1 + int(w1[j1 + np.uint64(2)])) & 0xFFFFFFFF)
            j0 += np.uint64(3)
            j1 += np.uint64(3)
        if _lookup3_from(data, s0, e0, a0, b0, c0, 12 * both) != _word(data, e0):
            return g
        if _lookup3_from(data, s1, e1, a1, b1, c1, 12 * both) != _word(data, e1):
            return h
    return -1
