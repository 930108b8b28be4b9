"""numpy-style keys of a staged dataset as orthogonal per-axis selections, split by chunk:
what a read or a write of ``array[key]`` touches, without an array of the dataset's shape."""
import itertools
import operator

import numpy as np


class Selection:
    """``array[key]`` for an array of ``shape``: each axis a ``range`` (step > 0) or an int
    array, h5py's keys (integers, slices, Ellipsis, one 1-D integer or boolean array)."""

    def __init__(self, key, shape):
        self.axes, self.shape = [], []
        self.everything = True      # every axis a slice over all of it (as ndindex's
        for k, n in zip(_expand(key, len(shape)), shape):    # expand() of ``()``)
            axis, kept = _axis(k, n)
            self.axes.append(axis)
            if kept:
                self.shape.append(len(axis))
            self.everything &= isinstance(axis, range) and kept and axis == range(n)
        self.shape = tuple(self.shape)
        if sum(isinstance(a, np.ndarray) for a in self.axes) > 1:
            raise TypeError("only one index array (or negative step) per selection")

    @property
    def lengths(self):
        """The result's shape with the axes of integer keys kept (as length 1)."""
        return tuple(len(axis) for axis in self.axes)

    def pieces(self, chunks):
        """(chunk index, key into the result of shape :attr:`lengths`, key into the chunk)
        for each chunk the selection touches."""
        per_axis = [list(_axis_pieces(a, c)) for a, c in zip(self.axes, chunks)]
        for combo in itertools.product(*per_axis):
            yield (tuple(p[0] for p in combo), tuple(p[1] for p in combo),
                   tuple(p[2] for p in combo))


def _expand(key, ndim):
    """``key`` as a tuple of one entry per axis."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is None for k in key):
        raise TypeError("np.newaxis is not supported in staged datasets")
    ellipses = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if ellipses:
        i = ellipses[0]
        key = key[:i] + (slice(None),) * (ndim - len(key) + 1) + key[i + 1:]
    if len(key) > ndim:
        raise IndexError(f"too many indices: {len(key)} for {ndim} dimensions")
    return key + (slice(None),) * (ndim - len(key))


def _axis(k, n):
    """The positions ``k`` selects on an axis of length ``n``, and whether the axis stays."""
    if isinstance(k, slice):
        r = range(*k.indices(n))
        if r.step < 0 and len(r) <= 1:   # as the package's ndindex reduces it: one position
            r = range(r.start, r.start + 1) if len(r) else range(0)     # or none, forwards
        return (r if r.step > 0 else np.array(r, np.int64)), True
    if np.ndim(k) == 0 and not isinstance(k, (bool, np.bool_)):
        i = operator.index(k)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis with size {n}")
        i %= n
        return range(i, i + 1), False
    a = np.asarray(k)
    if a.ndim != 1:
        raise TypeError("index arrays must be one-dimensional")
    if a.dtype == bool:
        if len(a) != n:
            raise IndexError(f"boolean index of length {len(a)} for axis of size {n}")
        return np.flatnonzero(a), True
    if a.size and a.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    a = a.astype(np.int64)
    if a.size and (a.min() < -n or a.max() >= n):
        raise IndexError(f"index out of bounds for axis with size {n}")
    return np.where(a < 0, a + n, a), True


def _axis_pieces(axis, c):
    """(chunk number, positions in the selection, offsets in the chunk) of each chunk of
    size ``c`` that the axis selection touches: slices for a range, arrays otherwise."""
    if isinstance(axis, range):
        yield from _range_pieces(axis, c)
        return
    if not len(axis):
        return
    number = axis // c
    order = np.argsort(number, kind="stable")
    for positions in np.split(order, np.flatnonzero(np.diff(number[order])) + 1):
        u = int(number[positions[0]])
        yield u, positions, axis[positions] - u * c


def _range_pieces(r, c):
    if not len(r):
        return
    for u in range(r.start // c, r[-1] // c + 1):
        first = -(-(max(r.start, u * c) - r.start) // r.step)
        stop = -(-(min(r.stop, (u + 1) * c) - r.start) // r.step)
        if stop > first:
            offset = r.start + first * r.step - u * c
            yield u, slice(first, stop), slice(offset, offset + (stop - first - 1) * r.step + 1,
                                               r.step)
