"""N-bit filter kernel (filter 5): unpack the significant bits of each atomic value.

The packed stream holds, for every element and every atomic member in order, the member's
``precision`` significant bits (those from bit ``offset`` up), most significant first, with no
padding between values; no-op members contribute all their bytes. ``ops`` is the flattened
member plan: rows of (kind 1 atomic / 4 no-op, byte offset, size, order 0 LE / 1 BE,
precision, bit offset).

Every element's bits sit at the same places of its stretch of the stream, so the numpy form
is one gather: the stream unpacked to bits, each output bit taken from its place (``bit_map``,
made once per plan), packed back to bytes. The loop takes over once a process has decoded
enough to repay loading it.
"""
import functools

import numpy as np

from ._jit import loop

_NUMPY_SECONDS_PER_BYTE = 70e-9     # what the numpy form loses against the loop, per byte
                                     # (1 MiB of 17-bit int32: numpy 87 ms, loop 16 ms)
_SLICE_BITS = 1 << 21                # output bits per numpy pass (8 bytes of index each)


def nbit_decompress(src, out, nelmts, elsize, ops):
    """Unpack ``nelmts`` elements of ``elsize`` bytes from ``src`` into ``out``."""
    if _nbit_loop.worth(out.shape[0] * _NUMPY_SECONDS_PER_BYTE):
        _nbit_loop(src, out, nelmts, elsize, ops)
    else:
        nbit_decompress_numpy(src, out, nelmts, elsize, bit_map(ops, elsize))


@functools.lru_cache(maxsize=64)
def _cached_map(key, elsize):
    return _bit_map(np.frombuffer(key, np.int64).reshape(-1, 6), elsize)


def bit_map(ops, elsize):
    """``_bit_map`` of ``ops``, made once per plan."""
    return _cached_map(np.ascontiguousarray(ops, np.int64).tobytes(), elsize)


def _bit_map(ops, elsize):
    """(for each bit of an element, most significant first within each byte: its place in
    the element's stretch of the stream, or the stretch's length for a zero bit; the
    stretch's length in bits) of the plan ``ops``. A member sets every bit of the bytes it
    writes (later members win a byte, as the loop's byte stores)."""
    stretch = int(sum(8 * size if kind == 4 else prec for kind, _, size, _, prec, _ in ops))
    where = np.full(elsize * 8, -1, np.int64)
    at = 0
    for kind, pos, size, order, prec, off in ops.tolist():
        if kind == 4:
            where[pos * 8:(pos + size) * 8] = np.arange(at, at + 8 * size)
            at += 8 * size
            continue
        q = np.arange(off, off + prec)                      # value bits, least significant 0
        byte = q // 8 if order == 0 else size - 1 - q // 8
        touched = np.unique(byte)
        where[((pos + touched) * 8)[:, None] + np.arange(8)] = -1
        where[(pos + byte) * 8 + 7 - q % 8] = at + (off + prec - 1 - q)
        at += prec
    where[where < 0] = stretch
    return where, stretch


def nbit_decompress_numpy(src, out, nelmts, elsize, mapped):
    """``nbit_decompress``'s numpy form, ``mapped`` being ``bit_map``'s answer; elements in
    slices of _SLICE_BITS output bits (its temporaries hold a byte per bit)."""
    step = max(1, _SLICE_BITS // max(1, 8 * elsize))
    for e0 in range(0, nelmts, step):
        _numpy_slice(src, out, e0, min(nelmts, e0 + step), elsize, mapped)


def _numpy_slice(src, out, e0, e1, elsize, mapped):
    """Elements ``e0`` to ``e1`` of ``nbit_decompress_numpy``."""
    where, stretch = mapped
    first, nbits = e0 * stretch, (e1 - e0) * stretch
    have = np.unpackbits(src[first // 8:(first + nbits + 7) // 8])[first % 8:first % 8 + nbits]
    bits = np.zeros(nbits + 1, np.uint8)                    # (past the stream: zeros)
    bits[:have.shape[0]] = have
    rows = np.arange(e1 - e0, dtype=np.int64)[:, None] * stretch
    picked = bits[np.where(where < stretch, rows + where, nbits)]
    out[e0 * elsize:e1 * elsize] = np.packbits(picked, axis=1).reshape(-1)


@loop
def _one_byte(out, pos, k, begin_i, end_i, src, state, size, prec, off):
    # state[0] = byte index j in src, state[1] = bits left in src[j]
    j = state[0]
    buf_len = state[1]
    val = np.int64(src[j]) if j < src.shape[0] else np.int64(0)
    dat_off = 0
    dtype_len = size * 8
    if begin_i != end_i:
        if k == begin_i:
            dat_len = 8 - (dtype_len - prec - off) % 8
        elif k == end_i:
            dat_len = 8 - off % 8
            dat_off = 8 - dat_len
        else:
            dat_len = 8
    else:
        dat_off = off % 8
        dat_len = prec
    if buf_len > dat_len:
        out[pos + k] = (((val >> (buf_len - dat_len)) & ((1 << dat_len) - 1)) << dat_off) & 0xFF
        buf_len -= dat_len
    else:
        v = ((val & ((1 << buf_len) - 1)) << (dat_len - buf_len)) << dat_off
        dat_len -= buf_len
        j += 1
        buf_len = 8
        if dat_len > 0:
            val = np.int64(src[j]) if j < src.shape[0] else np.int64(0)
            v |= ((val >> (buf_len - dat_len)) & ((1 << dat_len) - 1)) << dat_off
            buf_len -= dat_len
        out[pos + k] = v & 0xFF
    state[0] = j
    state[1] = buf_len


@loop
def _nbit_loop(src, out, nelmts, elsize, ops):
    """``nbit_decompress``'s loop form."""
    state = np.empty(2, np.int64)
    state[0] = 0
    state[1] = 8
    for i in range(out.shape[0]):
        out[i] = 0
    nops = ops.shape[0]
    for e in range(nelmts):
        base = e * elsize
        for q in range(nops):
            kind = ops[q, 0]
            pos = base + ops[q, 1]
            size = ops[q, 2]
            if kind == 4:
                for b in range(size):
                    j = state[0]
                    buf_len = state[1]
                    val = np.int64(src[j]) if j < src.shape[0] else np.int64(0)
                    v = (val & ((1 << buf_len) - 1)) << (8 - buf_len)
                    dat_len = 8 - buf_len
                    j += 1
                    buf_len = 8
                    if dat_len > 0:
                        val = np.int64(src[j]) if j < src.shape[0] else np.int64(0)
                        v |= (val >> (buf_len - dat_len)) & ((1 << dat_len) - 1)
                        buf_len -= dat_len
                    out[pos + b] = v & 0xFF
                    state[0] = j
                    state[1] = buf_len
                continue
            order = ops[q, 3]
            prec = ops[q, 4]
            off = ops[q, 5]
            dtype_len = size * 8
            if order == 0:
                if (prec + off) % 8 != 0:
                    begin_i = (prec + off) // 8
                else:
                    begin_i = (prec + off) // 8 - 1
                end_i = off // 8
                k = begin_i
                while k >= end_i:
                    _one_byte(out, pos, k, begin_i, end_i, src, state, size, prec, off)
                    k -= 1
            else:
                begin_i = (dtype_len - prec - off) // 8
                if off % 8 != 0:
                    end_i = (dtype_len - off) // 8
                else:
                    end_i = (dtype_len - off) // 8 - 1
                for k in range(begin_i, end_i + 1):
                    _one_byte(out, pos, k, begin_i, end_i, src, state, size, prec, off)
