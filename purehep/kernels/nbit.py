"""N-bit filter kernel (filter 5): unpack the significant bits of each atomic value.

The packed stream holds, for every element and every atomic member in order, the member's
``precision`` significant bits (those from bit ``offset`` up), most significant first, with no
padding between values; no-op members contribute all their bytes. ``ops`` is the flattened
member plan: rows of (kind 1 atomic / 4 no-op, byte offset, size, order 0 LE / 1 BE,
precision, bit offset).
"""
import numpy as np

from ._jit import loop


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
def nbit_decompress(src, out, nelmts, elsize, ops):
    """Unpack ``nelmts`` elements of ``elsize`` bytes from ``src`` into ``out`` (zeroed)."""
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
