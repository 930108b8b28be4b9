"""CHUNK_BLOOM hashing (HEP001 §8.7).

Choices where the standard is silent (recorded in README.md):
* canonical bytes: numbers (and bool as uint8) are the value in the column's own element type,
  little-endian, with -0.0 written as +0.0; strings are their UTF-8 bytes without padding;
  NaN is never inserted (it equals nothing);
* ``h_a`` is the first (low) 64-bit half of MurmurHash3_x64_128(bytes, seed=0), ``h_b`` the
  second (high) half of MurmurHash3_x64_128(bytes, seed=0x9E3779B9);
* ``h_i = (h_a + i * h_b) mod 2**64 mod m_bits`` for ``i`` in ``0..k-1``;
* bit ``j`` of a filter row is bit ``j % 8`` (LSB first) of byte ``j // 8``, as for BITMAP.
"""
import math

import numpy as np

from ..kernels.murmur3 import hash128

HASH_FAMILY = "murmur3_128_double"
SEED_A, SEED_B = 0, 0x9E3779B9


def canonical_groups(values):
    """Canonical bytes of the non-NaN elements of a 1-D array, as uint8 arrays (n, length):
    one for a numeric column, one per key length for strings."""
    values = np.asarray(values)
    kind = values.dtype.kind
    if kind == "f":
        values = values[~np.isnan(values)]
        values = np.where(values == 0, 0, values).astype(values.dtype.newbyteorder("<"))
    elif kind in "iub":
        values = values.astype(values.dtype.newbyteorder("<") if kind != "b" else np.uint8)
    else:
        keys = [v if isinstance(v, bytes) else str(v).encode("utf-8") for v in values.tolist()]
        lengths = sorted({len(key) for key in keys})
        return [np.frombuffer(b"".join(key for key in keys if len(key) == n), np.uint8)
                .reshape(-1, n) if n else np.zeros((keys.count(b""), 0), np.uint8)
                for n in lengths]
    values = np.ascontiguousarray(values)
    return [values.view(np.uint8).reshape(len(values), values.dtype.itemsize)] if len(values) \
        else []


def canonical_bytes(values):
    """Canonical byte strings of the non-NaN elements of a 1-D array."""
    return [row.tobytes() for group in canonical_groups(values) for row in group]


def positions(keys, k, m_bits):
    """(n, k) uint64 bit positions of the double hashing scheme for the keys (n, length)."""
    ha, hb = hash128(keys, SEED_A)[0], hash128(keys, SEED_B)[1]
    out = np.multiply.outer(hb, np.arange(k, dtype=np.uint64))
    out += ha[:, None]
    if m_bits & (m_bits - 1):
        out %= np.uint64(m_bits)
    else:                           # (a power of two, as ``sizing`` makes it: a mask)
        out &= np.uint64(m_bits - 1)
    return out


def sizing(max_distinct, bits_per_value=10):
    """(m_bytes, k): a power-of-two filter with about ``bits_per_value`` bits per value."""
    m_bits = 1 << max(6, math.ceil(math.log2(max(max_distinct, 1) * bits_per_value)))
    k = min(16, max(1, round(m_bits / max(max_distinct, 1) * math.log(2))))
    return m_bits // 8, k


def build_filter(values, k, m_bytes):
    """One chunk's packed filter (uint8[m_bytes]) over the distinct values of ``values``
    (numbers hashed as they come: a value met again sets the same bits, and hashing is
    cheaper than finding the distinct ones; strings made distinct first, as their canonical
    bytes are made one by one)."""
    bits = np.zeros(m_bytes * 8, dtype=bool)
    values = np.asarray(values)
    if values.dtype.kind not in "fiub" and len(values):
        values = np.unique(values)
    for keys in canonical_groups(values):
        bits[positions(keys, k, m_bytes * 8).reshape(-1).view(np.int64)] = True
    return np.packbits(bits, bitorder="little")


def may_contain(read_byte_column, key, k, m_bits):
    """Bool per filter row: True unless the filters prove ``key`` (canonical bytes) absent.
    Only the k probed byte columns are read, through ``read_byte_column(j)``."""
    pos = positions(np.frombuffer(key, np.uint8).reshape(1, -1), k, m_bits)[0]
    bits = [read_byte_column(int(p >> 3)) & np.uint8(1 << int(p & 7)) for p in pos]
    return np.all(np.stack(bits) != 0, axis=0)
