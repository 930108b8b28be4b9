"""Checksum kernels: Jenkins lookup3 (hashlittle, spec Appendix C) and HDF5's Fletcher-32.

``lookup3`` of one buffer is sequential: plain Python over its 32-bit words (about 8 MB/s)
until a process has hashed enough to repay compiling it: to machine code by llvmlite
(kernels/native.py, ~50 ms, after ~0.4 MB) where it can, else by loading numba's loop (~4
MB). Many equal-length buffers hash together, one lane per buffer (``lookup3_batch``: array
pages, data blocks, B-tree nodes): lanes packed 64 bits apart in one Python int ("SIMD
within a register": its add, xor and shifts work on every lane at C speed per 30-bit digit)
for up to a few hundred buffers, numpy uint32 lanes beyond (``lookup3_rows``), the compiled
function once loaded; buffers of several lengths (``lookup3_spans``: a sparse dataset's
chunk sections) hash on numpy lanes too, the longest first, each lane leaving the mixing
when its buffer's blocks end. ``fletcher32`` is two modular sums, vectorised with numpy.
"""
import struct
import sys

import numpy as np

from . import native
from ._jit import entry_point, loading_cost, loop

_M = 0xFFFFFFFF
_PY_SECONDS_PER_BYTE = 0.12e-6     # plain-Python lookup3 against the compiled loop
_FLETCHER_SECONDS_PER_BYTE = 2e-9  # numpy Fletcher-32 against the compiled loop
_FLETCHER_SLICE = 1 << 20          # 16-bit words summed per numpy pass (bounds temporaries)
# plain-Python seconds per 12-byte block of a batch of L lanes (measured, 8 KB buffers):
# Python-int lanes a + b*L, numpy lanes c + d*L, compiled loop e*L
_INT_LANES = (2.0e-6, 0.087e-6)
_NUMPY_LANES = (24.5e-6, 0.0195e-6)
_COMPILED_BLOCK = 5e-9
_compiled = None                   # numba's lookup3 loop, once loaded
_native = None                     # the native lookup3 (kernels/native.py), once made
_compiled_bytes = None             # the compiled lookup3 of a bytes object below native.SHORT
                                   # bytes (numba's or native)
_LITTLE = sys.byteorder == "little"   # (numpy views of words are in the host's order)


def lookup3(data, initval=0):
    """Jenkins lookup3 ``hashlittle`` of ``data`` (any bytes-like object), as HDF5's
    H5_checksum_lookup3."""
    if _compiled_bytes is not None:
        if type(data) is bytes and len(data) < native.SHORT:
            return _compiled_bytes(data, len(data), initval)
        return _hash_buffer(data, initval)
    n = len(data)
    if _worth_compiling(n * _PY_SECONDS_PER_BYTE):
        return lookup3(data, initval)
    return _py_lookup3(data, n, initval)


def lookup3_body(buf):
    """``lookup3`` of all of ``buf`` but its last 4 bytes (where a metadata structure keeps
    its checksum), without a copy or a view of the part hashed for ``bytes``."""
    n = len(buf) - 4
    if _compiled_bytes is not None and type(buf) is bytes and n < native.SHORT:
        return _compiled_bytes(buf, n, 0)
    return lookup3(memoryview(buf)[:n])


def _hash_buffer(data, initval):
    """lookup3 of the contiguous buffer ``data`` by the compiled form loaded."""
    arr = np.frombuffer(data, np.uint8)
    if _compiled is not None:
        return int(_hash(_compiled, arr, initval))
    return _native(arr.__array_interface__["data"][0], arr.shape[0], initval)


def _worth_compiling(seconds):
    """Record that plain Python would spend ``seconds`` more than a compiled lookup3 on the
    work at hand; True once a compiled lookup3 is loaded for it: the native one
    (kernels/native.py) where it can be made and costs less to load than numba's loop
    (which it does until numba has loaded a kernel: then numba's, whose calls cost ~0.3 us
    less), else numba's."""
    global _native, _compiled_bytes
    if native.available() and native.loading_cost() < loading_cost():
        if not native.worth(seconds):
            return False
        _native = native.lookup3_function()
        if _native is not None:
            _compiled_bytes = native.bytes_function()
            return True
    if _lookup3_from.worth(seconds):
        _load()
        return True
    return False


def lookup3_array(data, initval=0):
    """``lookup3`` of the uint8 array ``data`` by the loop kernel (compiled when numba is
    there, whatever the size)."""
    return _hash(_lookup3_from, data, initval)


def _hash(kernel, data, initval):
    """lookup3 of the uint8 array ``data`` by ``kernel`` (``_lookup3_from`` in one form)."""
    n = data.shape[0]
    a = (0xDEADBEEF + n + initval) & _M
    return kernel(data, 0, n, a, a, a, 0)


def _load():
    global _compiled, _compiled_bytes
    _compiled_bytes = entry_point(_lookup3_bytes, bytes(16), 12, 0)   # (bytes, int, int) only
    _compiled = _lookup3_from.compiled()
    return _compiled


def lookup3_is_compiled():
    """True once ``lookup3`` runs compiled: one buffer then costs microseconds, and hashing
    many equal buffers together (``lookup3_batch``) no longer pays."""
    return _compiled_bytes is not None or _lookup3_from.ready


def batch_seconds(m, n):
    """Estimated plain-Python seconds of ``lookup3_batch`` over ``m`` buffers of ``n`` bytes
    (one buffer: the scalar loop's time)."""
    blocks = (n + 11) // 12
    if m == 1:
        return n * _PY_SECONDS_PER_BYTE
    return blocks * min(_INT_LANES[0] + _INT_LANES[1] * m, _NUMPY_LANES[0] + _NUMPY_LANES[1] * m)


def lookup3_batch(rows, initval=0):
    """lookup3 of every row of the uint8 matrix ``rows`` (m, n): a uint32 array (m,). Runs
    compiled once that is loaded or the batch's plain cost makes it worth loading; else on
    Python-int lanes or, for many rows, numpy lanes (whichever ``batch_seconds`` finds
    cheaper)."""
    m, n = rows.shape
    if _compiled_bytes is None:
        plain = batch_seconds(m, n)
        if not _worth_compiling(plain - m * ((n + 11) // 12) * _COMPILED_BLOCK):
            blocks = (n + 11) // 12
            if blocks * (_INT_LANES[0] + _INT_LANES[1] * m) <= plain:
                return lookup3_lanes(rows, initval)
            return lookup3_rows(rows, initval)
    out = np.empty(m, np.uint32)
    for k in range(m):
        out[k] = _hash_buffer(rows[k], initval)
    return out


def _py_lookup3(data, n, initval):
    """lookup3 in plain Python. Each value is masked to 32 bits only before it is rotated
    (a right shift needs the clean value; add, subtract, xor, or and a left shift keep the
    low 32 bits right whatever lies above), once per mix step: 45 operations a block."""
    M = _M
    a = b = c = (0xDEADBEEF + n + initval) & M
    if n == 0:
        return c
    nblocks = (n + 11) // 12
    padded = bytes(data) + b"\0" * (nblocks * 12 - n)
    words = struct.unpack(f"<{nblocks * 3}I", padded)
    it = iter(words[:-3])
    for x, y, z in zip(it, it, it):
        a += x; b += y; c = (c + z) & M
        a -= c; a ^= (c << 4) | (c >> 28); c += b; a &= M
        b -= a; b ^= (a << 6) | (a >> 26); a += c; b &= M
        c -= b; c ^= (b << 8) | (b >> 24); b += a; c &= M
        a -= c; a ^= (c << 16) | (c >> 16); c += b; a &= M
        b -= a; b ^= (a << 19) | (a >> 13); a += c; b &= M
        c -= b; c ^= (b << 4) | (b >> 28); b += a
    a = (a + words[-3]) & M
    b = (b + words[-2]) & M
    c = (c + words[-1]) & M
    return _final(a, b, c) & M


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


def lookup3_lanes(rows, initval=0):
    """lookup3 of every row of the uint8 matrix ``rows`` (m, n), as ``lookup3_rows``, on
    lanes of Python ints: word k of every row sits at bit 64*row of one int, so that each
    add, xor, shift and mask works on all rows at once. Lanes hold values below 2**32
    between steps and at most a few carries above (never reaching the next lane); a
    subtraction adds 2**32 per lane first (no borrow crosses a lane), a rotation xors both
    shifted halves in before the mask removes what the right shift brought in from the
    lane above."""
    m, n = rows.shape
    c0 = (0xDEADBEEF + n + initval) & _M
    if n == 0 or m == 0:
        return np.full(m, c0, np.uint32)
    nblocks = (n + 11) // 12
    raw = memoryview(_lane_words(rows, "<u8")).cast("B")
    step = 8 * m
    word = int.from_bytes
    ones = word(np.ones(m, "<u8").tobytes(), "little")
    M, B = ones * _M, ones << 32
    a = b = c = ones * c0
    pos = 0
    for _ in range(nblocks - 1):
        a += word(raw[pos:pos + step], "little")
        b += word(raw[pos + step:pos + 2 * step], "little")
        c = (c + word(raw[pos + 2 * step:pos + 3 * step], "little")) & M
        pos += 3 * step
        a = ((a + B - c) ^ (c << 4) ^ (c >> 28)) & M; c += b
        b = ((b + B - a) ^ (a << 6) ^ (a >> 26)) & M; a += c
        c = ((c + B - b) ^ (b << 8) ^ (b >> 24)) & M; b += a
        a = ((a + B - c) ^ (c << 16) ^ (c >> 16)) & M; c += b
        b = ((b + B - a) ^ (a << 19) ^ (a >> 13)) & M; a += c
        c = ((c + B - b) ^ (b << 4) ^ (b >> 28)) & M; b += a
    a = (a + word(raw[pos:pos + step], "little")) & M
    b = (b + word(raw[pos + step:pos + 2 * step], "little")) & M
    c = (c + word(raw[pos + 2 * step:pos + 3 * step], "little")) & M
    for x, y, k in ((2, 1, 14), (0, 2, 11), (1, 0, 25), (2, 1, 16), (0, 2, 4), (1, 0, 14),
                    (2, 1, 24)):       # the final mix: v[x] ^= v[y]; v[x] -= rot(v[y], k)
        v = [a, b, c]
        y = v[y]
        v[x] = ((v[x] ^ y) + B - (((y << k) | (y >> (32 - k))) & M)) & M
        a, b, c = v
    return np.frombuffer(c.to_bytes(step, "little"), "<u8").astype(np.uint32)


def lookup3_rows(rows, initval=0):
    """lookup3 of every row of the uint8 matrix ``rows`` (m, n): a uint32 array (m,).
    numpy uint32 lanes wrap as the C code's do; every step works in place on the lanes."""
    m, n = rows.shape
    if n == 0 or m == 0:
        return np.full(m, (0xDEADBEEF + n + initval) & _M, np.uint32)
    return _lane_hash(_lane_words(rows, np.uint32), np.full(m, n, np.int64), initval)


def lookup3_spans(buf, starts, lengths, initval=0):
    """lookup3 of the buffers ``buf[s:s + n]`` of the uint8 array ``buf`` for every start
    and length: a uint32 array. Each by the compiled function once loaded (or once their
    plain-Python cost repays loading it); else together on numpy lanes of their several
    lengths (``_ragged``) when that costs less than one at a time in plain Python and pads
    them to little more than their bytes."""
    starts, lengths = np.asarray(starts, np.int64), np.asarray(lengths, np.int64)
    m, total = len(lengths), int(lengths.sum())
    longest = (int(lengths.max(initial=0)) + 11) // 12
    if _compiled_bytes is None:
        lanes = longest * (_NUMPY_LANES[0] + _NUMPY_LANES[1] * m)
        plain = total * _PY_SECONDS_PER_BYTE
        compiled = (total // 12 + m) * _COMPILED_BLOCK
        if not _worth_compiling(min(lanes, plain) - compiled):
            if lanes < plain and m * longest * 12 <= 2 * total + (1 << 20):
                return _ragged(buf, starts, lengths, initval)
            return np.array([_py_lookup3(buf[s:s + n], n, initval) for s, n in
                             zip(starts.tolist(), lengths.tolist())], np.uint32)
    return np.array([_hash_buffer(buf[s:s + n], initval) for s, n in
                     zip(starts.tolist(), lengths.tolist())], np.uint32)


def _ragged(buf, starts, lengths, initval):
    """``lookup3_spans`` on numpy lanes: the buffers longest first, each zero-padded to the
    longest's whole blocks (one row of a matrix, transposed to lanes)."""
    order = np.argsort(-lengths, kind="stable")
    n = lengths[order]
    mat = np.zeros((len(n), (int(n[0]) + 11) // 12 * 12 if len(n) else 0), np.uint8)
    for j, (s, k) in enumerate(zip(starts[order].tolist(), n.tolist())):
        mat[j, :k] = buf[s:s + k]
    out = np.empty(len(n), np.uint32)
    out[order] = _lane_hash(mat.view("<u4").T.astype(np.uint32), n, initval)
    return out


def _lane_hash(words, lengths, initval):
    """lookup3 of the buffers whose little-endian words, zero-padded to whole 12-byte
    blocks, are the lanes (columns) of ``words`` (uint32, 3 x blocks of the longest, m);
    their byte lengths ``lengths`` do not increase along the lanes, so that the lanes
    still mixing blocks are always the first ones (an in-place view of each)."""
    m = len(lengths)
    a = ((0xDEADBEEF + initval + lengths) & _M).astype(np.uint32)
    b, c, t = a.copy(), a.copy(), np.empty(m, np.uint32)
    blocks = (lengths + 11) // 12
    if not blocks.any():
        return a
    sub, xor, add, shl, shr = np.subtract, np.bitwise_xor, np.add, np.left_shift, np.right_shift

    def mix(x, y, z, k, t):        # x -= y; x ^= rot(y, k); y += z
        sub(x, y, out=x)
        xor(x, shl(y, k, out=t), out=x)
        xor(x, shr(y, np.uint32(32) - k, out=t), out=x)
        add(y, z, out=y)

    k4, k6, k8, k16, k19 = (np.uint32(k) for k in (4, 6, 8, 16, 19))
    mixing = np.searchsorted(-blocks, -np.arange(1, int(blocks[0])), "left")   # (blocks > blk + 1)
    for blk, k in enumerate(mixing.tolist()):
        x, y, z, u = a[:k], b[:k], c[:k], t[:k]
        add(x, words[3 * blk, :k], out=x)
        add(y, words[3 * blk + 1, :k], out=y)
        add(z, words[3 * blk + 2, :k], out=z)
        mix(x, z, y, k4, u)
        mix(y, x, z, k6, u)
        mix(z, y, x, k8, u)
        mix(x, z, y, k16, u)
        mix(y, x, z, k19, u)
        mix(z, y, x, k4, u)
    empty = blocks == 0
    last, lane = 3 * np.maximum(blocks - 1, 0), np.arange(m)
    start = a.copy()
    a += words[last, lane]
    b += words[last + 1, lane]
    c += words[last + 2, lane]
    return np.where(empty, start, _final(a, b, c))


def _lane_words(rows, dtype):
    """The little-endian 32-bit words of the rows of ``rows`` (m, n) zero-padded to whole
    12-byte blocks, transposed: (words per row, m) of ``dtype``, word k of every row
    contiguous."""
    m, n = rows.shape
    nwords = (n + 11) // 12 * 3
    out = np.zeros((nwords, m), dtype)
    whole = n // 4
    if whole:
        out[:whole] = np.ascontiguousarray(rows[:, :whole * 4]).view("<u4").T
    if n % 4:
        tail = np.zeros((m, 4), np.uint8)
        tail[:, :n % 4] = rows[:, whole * 4:]
        out[whole] = tail.view("<u4")[:, 0]
    return out


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
    blocks = max(0, (n - i - 1) // 12)
    if _LITTLE:     # (whole words: 2x the speed of four byte loads; unaligned loads are fine)
        w = data[start + i:start + i + 12 * blocks].view(np.uint32)
        for j in range(0, 3 * blocks, 3):
            a, b, c = _mix((a + int(w[j])) & 0xFFFFFFFF, (b + int(w[j + 1])) & 0xFFFFFFFF,
                           (c + int(w[j + 2])) & 0xFFFFFFFF)
    else:
        for j in range(start + i, start + i + 12 * blocks, 12):
            a, b, c = _mix((a + _word(data, j)) & 0xFFFFFFFF, (b + _word(data, j + 4)) & 0xFFFFFFFF,
                           (c + _word(data, j + 8)) & 0xFFFFFFFF)
    i += 12 * blocks
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
def _lookup3_bytes(data, n, initval):
    """lookup3 of the first ``n`` bytes of the bytes object ``data``: one call with three
    arguments (a quarter of the dispatch cost of an array and seven numbers), for the
    many small metadata structures read by pread."""
    a = (0xDEADBEEF + n + initval) & 0xFFFFFFFF
    return _lookup3_from(np.frombuffer(data, np.uint8), 0, n, a, a, a, 0)


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
