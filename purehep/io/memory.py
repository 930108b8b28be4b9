"""Memory for what a read returns: output arrays sized by the extents a file declares.

A dataspace may declare up to 2**64 - 1 elements per dimension and a datatype up to 2**32 - 1
bytes, and a chunked dataset with nothing written is still valid; reading it whole then asks
for an array no memory holds. Every output array of a read is made here, so such a read fails
with an ``AllocationError`` (a purehep error and a ``MemoryError``) naming the size, not with
numpy's "array is too big" or an unexplained ``MemoryError``.
"""
import os

import numpy as np

from ..errors import AllocationError

_MAX_BYTES = np.iinfo(np.intp).max


def physical_memory():
    """Bytes of physical memory (None where the platform does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def nbytes_of(shape, itemsize):
    """Elements and bytes of an array of ``shape`` (exact Python integers)."""
    n = 1
    for s in shape:
        n *= int(s)
    return n, n * int(itemsize)


def check_size(shape, itemsize, what):
    """Raise unless numpy can make an array of ``shape`` with ``itemsize``-byte elements."""
    n, nbytes = nbytes_of(shape, itemsize)
    # numpy bounds the product of the non-zero dimensions too (an empty (0, 2**62) fails)
    _, spread = nbytes_of([s for s in shape if s], max(int(itemsize), 1))
    if n > _MAX_BYTES or spread > _MAX_BYTES:
        raise AllocationError(f"{what}: an array of shape {tuple(shape)} with {itemsize}-byte "
                              f"elements ({nbytes} bytes) is larger than numpy can index")
    if nbytes > (physical_memory() or _MAX_BYTES):
        raise AllocationError(f"{what}: an array of shape {tuple(shape)} with {itemsize}-byte "
                              f"elements needs {nbytes} bytes, more than this machine has")
    return nbytes


def _make(make, shape, dtype, what):
    dtype = np.dtype(dtype)
    nbytes = check_size(shape, dtype.itemsize, what)
    try:
        return make(shape, dtype)
    except MemoryError:
        raise AllocationError(f"{what}: cannot allocate {nbytes} bytes for an array of shape "
                              f"{tuple(shape)}") from None


def empty(shape, dtype, what):
    """``np.empty(shape, dtype)``, or an AllocationError naming what could not be made."""
    return _make(np.empty, shape, dtype, what)


def zeros(shape, dtype, what):
    """``np.zeros(shape, dtype)`` (all bytes zero), or an AllocationError."""
    return _make(np.zeros, shape, dtype, what)


def full(shape, value, dtype, what):
    """An array of ``shape`` holding ``value`` (an element of ``dtype``) everywhere; zeros
    when its bytes are all zero, which the system gives without touching the pages."""
    dtype = np.dtype(dtype)
    value = np.asarray(value, dtype)
    if not dtype.hasobject and not value.tobytes().strip(b"\0"):
        return zeros(shape, dtype, what)
    out = empty(shape, dtype, what)
    out[...] = value
    return out
