"""Metadata checksums (spec: "Appendix C: Jenkins' lookup3 Hash Function for Checksums").

Buffers are hashed in pure Python (about 6 MB/s) until that has cost about what loading numba
and the kernel costs (~0.5 s, ~3 MB hashed), or for one large buffer; then the numba kernel
takes over. Opening and walking small files never imports numba.
"""
import struct

from ..errors import ChecksumError

_M = 0xFFFFFFFF
_SWITCH_BYTES = 1 << 19    # one buffer: ~80 ms in Python
_SWITCH_TOTAL = 3 << 20    # all buffers so far: ~0.5 s in Python, what loading numba costs
_state = {"bytes": 0, "kernel": None}


def _py_lookup3(data, initval=0):
    n = len(data)
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
    c ^= b; c = (c - (((b << 14) | (b >> 18)) & _M)) & _M
    a ^= c; a = (a - (((c << 11) | (c >> 21)) & _M)) & _M
    b ^= a; b = (b - (((a << 25) | (a >> 7)) & _M)) & _M
    c ^= b; c = (c - (((b << 16) | (b >> 16)) & _M)) & _M
    a ^= c; a = (a - (((c << 4) | (c >> 28)) & _M)) & _M
    b ^= a; b = (b - (((a << 14) | (a >> 18)) & _M)) & _M
    c ^= b; c = (c - (((b << 24) | (b >> 8)) & _M)) & _M
    return c


def lookup3(data, initval=0):
    """Jenkins lookup3 ``hashlittle`` of ``data`` (any bytes-like object)."""
    _state["bytes"] += len(data)
    if len(data) > _SWITCH_BYTES or _state["bytes"] > _SWITCH_TOTAL:
        kernel = _state["kernel"]
        if kernel is None:
            from ..kernels import checksum
            kernel = _state["kernel"] = checksum.lookup3
        import numpy as np
        return int(kernel(np.frombuffer(data, np.uint8), initval))
    return _py_lookup3(data, initval)


def verify(ctx, buf, structure, offset):
    """Check the lookup3 checksum stored in the last 4 bytes of ``buf`` (a whole structure)."""
    if not ctx.verify_checksums:
        return
    stored = struct.unpack_from("<I", buf, len(buf) - 4)[0]
    computed = lookup3(memoryview(buf)[:len(buf) - 4])
    if stored != computed:
        raise ChecksumError(f"checksum mismatch (stored {stored:#010x}, computed {computed:#010x})",
                            structure, offset)
