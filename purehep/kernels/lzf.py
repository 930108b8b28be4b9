"""LZF (liblzf format) decompression and a simple greedy compressor, as loop kernels, and a
vectorised numpy form of decompression.

Control byte c < 32: c+1 literal bytes follow. Otherwise a back reference: length field
c >> 5 (7 means an extra length byte follows), offset ((c & 31) << 8) + next byte + 1,
copy length + 2 bytes from that far back.

``decompress`` and ``decoded_size`` run the compiled loop once a process has decoded enough to
repay loading numba, else the numpy form (about 50 ns per output byte, against about 0.8 us
for the loop run as plain Python): the token starts found by pointer doubling over every
offset's would-be successor, then each output byte's source (a literal byte or an earlier
output byte) resolved block by block.
"""
import numpy as np

from ._jit import loop


@loop
def lzf_decompress(src, out):
    """Decode ``src`` into ``out``; returns the number of bytes written, -1 if corrupt, or -2
    if ``out`` is too small (liblzf's E2BIG; ``lzf_decoded_size`` then gives the size)."""
    ip = 0
    op = 0
    n = src.shape[0]
    cap = out.shape[0]
    while ip < n:
        ctrl = np.int64(src[ip])
        ip += 1
        if ctrl < 32:
            length = ctrl + 1
            if ip + length > n:
                return -1
            if op + length > cap:
                return -2
            for k in range(length):
                out[op + k] = src[ip + k]
            op += length
            ip += length
        else:
            length = ctrl >> 5
            if length == 7:
                if ip >= n:
                    return -1
                length += np.int64(src[ip])
                ip += 1
            if ip >= n:
                return -1
            ref = op - ((ctrl & 0x1F) << 8) - 1 - np.int64(src[ip])
            ip += 1
            length += 2
            if ref < 0:
                return -1
            if op + length > cap:
                return -2
            for k in range(length):
                out[op + k] = out[ref + k]
            op += length
    return op


@loop
def lzf_decoded_size(src):
    """The number of bytes ``src`` decodes to (its control bytes walked, nothing copied), or
    -1 if it is corrupt."""
    ip = 0
    op = 0
    n = src.shape[0]
    while ip < n:
        ctrl = np.int64(src[ip])
        ip += 1
        if ctrl < 32:
            length = ctrl + 1
            if ip + length > n:
                return -1
            ip += length
        else:
            length = ctrl >> 5
            if length == 7:
                if ip >= n:
                    return -1
                length += np.int64(src[ip])
                ip += 1
            if ip >= n:
                return -1
            if op - ((ctrl & 0x1F) << 8) - 1 - np.int64(src[ip]) < 0:
                return -1
            ip += 1
            length += 2
        op += length
    return op


@loop
def lzf_compress(src, out):
    """Greedy LZF compression of ``src`` into ``out``; returns the size or 0 if it won't fit."""
    n = src.shape[0]
    cap = out.shape[0]
    table = np.full(1 << 14, -1, np.int64)
    ip = 0
    op = 1          # room for the first literal control byte
    lit = 0
    while ip < n:
        found = False
        if ip + 2 < n:
            h = ((np.int64(src[ip]) << 16) | (np.int64(src[ip + 1]) << 8) | np.int64(src[ip + 2]))
            h = ((h * 2654435761) >> 10) & ((1 << 14) - 1)
            ref = table[h]
            table[h] = ip
            if ref >= 0 and ip - ref - 1 < 8192 and src[ref] == src[ip] and \
                    src[ref + 1] == src[ip + 1] and src[ref + 2] == src[ip + 2]:
                maxlen = n - ip
                if maxlen > 264:
                    maxlen = 264
                length = 3
                while length < maxlen and src[ref + length] == src[ip + length]:
                    length += 1
                off = ip - ref - 1
                # close the pending literal run
                if lit > 0:
                    out[op - lit - 1] = lit - 1
                else:
                    op -= 1
                if op + 3 + 1 > cap:
                    return 0
                ln = length - 2
                if ln < 7:
                    out[op] = (ln << 5) | (off >> 8)
                    op += 1
                else:
                    out[op] = (7 << 5) | (off >> 8)
                    out[op + 1] = ln - 7
                    op += 2
                out[op] = off & 0xFF
                op += 1
                ip += length
                lit = 0
                op += 1     # next literal control byte
                found = True
        if not found:
            if op >= cap:
                return 0
            out[op] = src[ip]
            op += 1
            ip += 1
            lit += 1
            if lit == 32:
                out[op - lit - 1] = lit - 1
                lit = 0
                op += 1
    if lit > 0:
        out[op - lit - 1] = lit - 1
    else:
        op -= 1
    return op


# what the numpy form loses against the compiled loop, per byte decoded (decoded_size: per
# byte of the stream, where it loses about 30 ns): 1 MiB of float64 data (lzf to 0.36-0.40
# MiB) decodes in 46-48 ms by the numpy form and 1.4-1.6 ms by the compiled loop; 16 MiB in
# 0.8-1.0 s against 20-30 ms (the plain-Python loop: 0.7-0.8 us per byte)
_NUMPY_SECONDS_PER_BYTE = 50e-9
_BLOCK = 1 << 13                    # output bytes resolved at a time
_ROUNDS = 6                         # doubling rounds before the token starts are walked
# a token's size in the stream by its control byte (without an extra length byte's value)
_STEP = np.array([c + 2 if c < 32 else 3 if c >> 5 == 7 else 2 for c in range(256)], np.uint8)


def decompress(src, out):
    """``lzf_decompress``: the compiled loop when it repays loading numba, else the numpy
    form (never the plain-Python loop)."""
    if lzf_decompress.worth(out.shape[0] * _NUMPY_SECONDS_PER_BYTE):
        return int(lzf_decompress(src, out))
    return lzf_decompress_numpy(src, out)


def decoded_size(src):
    """``lzf_decoded_size``, dispatched as ``decompress``."""
    if lzf_decoded_size.worth(src.shape[0] * _NUMPY_SECONDS_PER_BYTE):
        return int(lzf_decoded_size(src))
    return lzf_decoded_size_numpy(src)


def _token_starts(src):
    """(the offsets in ``src`` where the stream's tokens start, whether the last token runs
    past the end). A token is a control byte c and what it owns: c < 32 a literal run of c+1
    bytes; c >> 5 == 7 a back reference with an extra length byte and an offset byte; else a
    back reference with an offset byte. Each offset's would-be successor is computed for all
    offsets at once; ``_ROUNDS`` rounds of pointer doubling make ``jump``, the offset 2**k
    tokens on; every 2**k-th token start is then walked to one at a time, and from them all at
    once, the starts between them."""
    n = src.shape[0]
    it = np.int32 if n < 2 ** 30 else np.int64
    jump = np.arange(n + 1, dtype=it)
    jump[:n] += _STEP[src]                           # the next token's offset, unclipped
    cut = jump[:n] > n                               # where a token would be cut short
    np.minimum(jump, n, out=jump)                    # the end n: a fixed point
    one, k = jump, 0
    while k < _ROUNDS and jump[0] != n:
        jump = jump[jump]                # (fancy indexing: faster than np.take here)
        k += 1
    far = memoryview(jump)
    x, every = 0, []
    while x != n:
        every.append(x)
        x = far[x]
    del far, jump
    reach = [np.array(every, it)]
    for _ in range((1 << k) - 1):
        reach.append(one[reach[-1]])
    reach = np.concatenate(reach)
    is_start = np.zeros(n + 1, bool)
    is_start[reach] = True
    starts = np.flatnonzero(is_start[:n]).astype(it)
    return starts, bool(cut[starts[-1]])


def _tokens(src):
    """The stream's tokens as arrays (start, is literal, length, distance back, output
    offset), their end offsets in the output, and whether the last one is truncated.
    Back-reference length: (c >> 5) + 2, or 7 + the extra byte + 2; distance:
    ((c & 31) << 8) + the offset byte + 1."""
    n = src.shape[0]
    starts, truncated = _token_starts(src)
    it = starts.dtype
    c = src[starts].astype(it)
    lit = c < 32
    ext = (c >> 5) == 7
    nb = src[np.minimum(starts + 1, n - 1)]                         # the byte after the control
    ob = src[np.minimum(starts + 1 + ext, n - 1)].astype(it)       # the offset byte
    length = np.where(lit, c + 1, (c >> 5) + np.where(ext, nb, 0) + 2).astype(it)
    dist = np.where(lit, 0, ((c & 31) << 8) + ob + 1).astype(it)
    del c, ext, nb, ob
    end = np.cumsum(length, dtype=np.int64)
    return starts, lit, length, dist, end - length, end, truncated


def _first_error(lit, dist, op, end, truncated, cap):
    """What the loop returns at the first bad token (-1 corrupt: cut short or referring
    before the output's start; -2 ``out`` too small, checked after those), or 0."""
    t = lit.shape[0]
    bad = np.flatnonzero(~lit & (op < dist))
    corrupt = min(int(bad[0]) if bad.size else t, t - 1 if truncated else t)
    full = int(np.searchsorted(end, cap, "right"))          # the first token ending past cap
    return -1 if corrupt < t and corrupt <= full else -2 if full < t else 0


def lzf_decoded_size_numpy(src):
    """``lzf_decoded_size``'s numpy form: the decoded size, or -1 if ``src`` is corrupt."""
    if src.shape[0] == 0:
        return 0
    _, lit, _, dist, op, end, truncated = _tokens(src)
    if _first_error(lit, dist, op, end, truncated, end[-1]):
        return -1
    return int(end[-1])


def lzf_decompress_numpy(src, out):
    """``lzf_decompress``'s numpy form, same results (``out`` past what a corrupt stream
    decodes to may differ). Every output byte gets a source: ``total + i`` for a literal byte
    src[i], or an earlier output offset for a back-reference byte (offset - distance, taken
    modulo the distance inside an overlapping copy so that it points before the token).
    The output is then made a block at a time, in order: a byte whose source lies in an
    earlier block copies it from ``out``; chains inside the block are followed first by
    pointer doubling, every round only over the bytes whose source is still inside it."""
    n = src.shape[0]
    if n == 0:
        return 0
    starts, lit, length, dist, op, end, truncated = _tokens(src)
    err = _first_error(lit, dist, op, end, truncated, out.shape[0])
    if err:
        return err
    total = int(end[-1])
    it = np.int32 if total + n < 2 ** 31 else np.int64
    del end
    op = op.astype(it)
    rel = np.where(lit, total + starts + 1 - op, -dist).astype(it)   # source - output offset
    over = np.flatnonzero(~lit & (dist < length))    # overlapping copies: source op - d + j % d
    del starts, lit
    ptr = np.repeat(rel, length)
    del rel
    for k in range(0, over.size, 4096):              # (at most 1 MiB of bytes at a time)
        some = over[k:k + 4096]
        ln = length[some]
        j = np.arange(int(ln.sum()), dtype=it)
        j -= np.repeat((np.cumsum(ln) - ln).astype(it), ln)     # the byte's place in its token
        d = np.repeat(dist[some], ln)
        ptr[np.repeat(op[some], ln) + j] = j % d - d - j
    del length, dist, op
    for a in range(0, total, _BLOCK):          # in output order: earlier blocks are final
        loc = ptr[a:a + _BLOCK]
        loc += np.arange(a, a + loc.shape[0], dtype=it)
        inner = np.flatnonzero((loc >= a) & (loc < total))
        while inner.size:                        # chains inside the block: pointer doubling
            q = loc[inner]
            q -= a
            q = loc[q]
            loc[inner] = q
            inner = inner[(q >= a) & (q < total)]
        is_lit = loc >= total
        got = out[a:a + loc.shape[0]]
        got[is_lit] = src[loc[is_lit] - total]
        np.logical_not(is_lit, out=is_lit)
        got[is_lit] = out[loc[is_lit]]
    return total
