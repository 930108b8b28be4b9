"""Checksum kernels: Jenkins lookup3 (hashlittle) and Fletcher-32 over byte arrays."""
import numpy as np

from ._jit import njit


@njit
def _rot(x, k):
    return ((x << k) | (x >> (32 - k))) & 0xFFFFFFFF


@njit
def _word(data, i):
    """Little-endian 32-bit word at ``i`` (int() keeps plain-Python runs from uint8 overflow)."""
    return (int(data[i]) | (int(data[i + 1]) << 8) | (int(data[i + 2]) << 16)
            | (int(data[i + 3]) << 24))


@njit
def lookup3(data, initval):
    """Jenkins lookup3 hashlittle of a uint8 array, as HDF5's H5_checksum_lookup3."""
    n = data.shape[0]
    a = b = c = (0xDEADBEEF + n + initval) & 0xFFFFFFFF
    i = 0
    while n - i > 12:
        a = (a + _word(data, i)) & 0xFFFFFFFF
        b = (b + _word(data, i + 4)) & 0xFFFFFFFF
        c = (c + _word(data, i + 8)) & 0xFFFFFFFF
        a = (a - c) & 0xFFFFFFFF; a ^= _rot(c, 4); c = (c + b) & 0xFFFFFFFF
        b = (b - a) & 0xFFFFFFFF; b ^= _rot(a, 6); a = (a + c) & 0xFFFFFFFF
        c = (c - b) & 0xFFFFFFFF; c ^= _rot(b, 8); b = (b + a) & 0xFFFFFFFF
        a = (a - c) & 0xFFFFFFFF; a ^= _rot(c, 16); c = (c + b) & 0xFFFFFFFF
        b = (b - a) & 0xFFFFFFFF; b ^= _rot(a, 19); a = (a + c) & 0xFFFFFFFF
        c = (c - b) & 0xFFFFFFFF; c ^= _rot(b, 4); b = (b + a) & 0xFFFFFFFF
        i += 12
    rest = n - i
    if rest == 0:
        return c
    w = np.zeros(12, np.uint8)
    for j in range(rest):
        w[j] = data[i + j]
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


@njit
def fletcher32(data):
    """HDF5's Fletcher-32 (H5_checksum_fletcher32): big-endian 16-bit words, odd byte last."""
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
