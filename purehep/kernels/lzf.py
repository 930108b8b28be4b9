"""LZF (liblzf format) decompression and a simple greedy compressor, as numba kernels.

Control byte c < 32: c+1 literal bytes follow. Otherwise a back reference: length field
c >> 5 (7 means an extra length byte follows), offset ((c & 31) << 8) + next byte + 1,
copy length + 2 bytes from that far back.
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
