"""Turn h5py-style indexing arguments into per-dimension selections and a result shape.

Each dimension's selection is a ``slice`` with normalised non-negative start/stop and a step
>= 1, or a sorted, unique int64 array; ``Selection.finish`` then applies what reading in that
canonical form left out: duplicated or unordered fancy indices, dropped integer dimensions and
full-shape boolean masks.
"""
import numpy as np

from .errors import UnsupportedFeatureError


class Selection:
    def __init__(self, shape, dims, finish_steps, mshape):
        self.shape = shape            # the dataset's shape
        self.dims = dims              # per dimension: slice or sorted unique int64 array
        self._finish = finish_steps   # callables applied to the canonical read
        self.mshape = mshape          # shape of the result

    @property
    def read_shape(self):
        return tuple(_length(d) for d in self.dims)

    @property
    def is_full(self):
        return all(isinstance(d, slice) and d.start == 0 and d.stop == n and d.step == 1
                   for d, n in zip(self.dims, self.shape))

    @property
    def nselected(self):
        n = 1
        for d in self.dims:
            n *= _length(d)
        return n

    def box(self):
        """(starts, stops) when every dimension is a non-empty step-1 slice, else None."""
        starts, stops = [], []
        for d in self.dims:
            if not isinstance(d, slice) or d.step != 1 or d.stop <= d.start:
                return None
            starts.append(d.start)
            stops.append(d.stop)
        return starts, stops

    def coords(self):
        """One sorted unique int64 array per dimension (slices expanded)."""
        return [np.arange(d.start, d.stop, d.step, dtype=np.int64) if isinstance(d, slice) else d
                for d in self.dims]

    def finish(self, arr):
        for step in self._finish:
            arr = step(arr)
        return arr


class MultiBlockSlice:
    """h5py's MultiBlockSlice: ``count`` blocks of ``block`` elements, ``stride`` apart from
    ``start`` — one dimension of a regular hyperslab (spec IV.A.2.b, hyperslab selections:
    start, stride, count, block). ``count=None`` selects as many whole blocks as fit."""

    def __init__(self, start=0, count=None, stride=1, block=1):
        if start < 0:
            raise ValueError("Start can't be negative")
        if stride <= 0 or block <= 0 or (count is not None and count <= 0):
            raise ValueError("Stride, count and block can't be 0 or negative")
        if block > stride:
            raise ValueError("Blocks will overlap if block > stride")
        self.start, self.count, self.stride, self.block = start, count, stride, block

    def indices(self, length):
        """(start, stride, count, block) on a dimension of ``length``; ValueError when the
        blocks do not fit in it."""
        start, stride, block = self.start, self.stride, self.block
        count = self.count
        if count is None:
            count = (length - start - block) // stride + 1
            if count <= 0:
                raise ValueError(f"No full blocks can be selected using {self!r} on "
                                 f"dimension of length {length}")
        end = start + stride * (count - 1) + block - 1
        if end >= length:
            raise ValueError(f"{self!r} range ({start} - {end}) extends beyond maximum index "
                             f"({length - 1})")
        return start, stride, count, block

    def as_index(self, length):
        """The selected positions: a slice when blocks are single elements, else a sorted
        int64 array."""
        start, stride, count, block = self.indices(length)
        if block == 1:
            return slice(start, start + stride * (count - 1) + 1, stride)
        return (start + stride * np.arange(count, dtype=np.int64)[:, None] +
                np.arange(block, dtype=np.int64)).ravel()

    def __repr__(self):
        return (f"MultiBlockSlice(start={self.start}, stride={self.stride}, "
                f"count={self.count}, block={self.block})")


def _length(d):
    if isinstance(d, slice):
        return max(0, (d.stop - d.start + d.step - 1) // d.step)
    return len(d)


def _expand_ellipsis(args, rank):
    n_ell = sum(1 for a in args if a is Ellipsis)
    if n_ell > 1:
        raise ValueError("Only one ellipsis may be used.")
    if n_ell == 0:
        if len(args) >= rank:
            return args
        args = args + (Ellipsis,)
    i = next(k for k, a in enumerate(args) if a is Ellipsis)   # identity: arrays compare
    fill = rank - (len(args) - 1)
    if fill < 0:
        raise ValueError(f"{len(args) - 1} indices for a dataset of rank {rank}")
    return args[:i] + (slice(None),) * fill + args[i + 1:]


def select(shape, args, strict=False):
    """A Selection for ``dataset[args]`` on a dataset of ``shape``: h5py's rules if
    ``strict`` (its TypeError for more than one index list, or for a list whose positions do
    not increase), else relaxed ones (index lists unsorted, repeated, on several axes)."""
    if not isinstance(args, tuple):
        args = (args,)
    rank = len(shape)
    if len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].dtype == bool \
            and args[0].ndim == rank and rank > 0:
        return _mask_selection(shape, args[0])
    if any(a is None for a in args):
        raise TypeError("h5py does not support newaxis (None) in dataset selections")
    args = _expand_ellipsis(args, rank)
    args = tuple(slice(None) if a is Ellipsis else a for a in args)
    if len(args) != rank:
        raise ValueError(f"{len(args)} indices for a dataset of rank {rank}")
    if strict and sum(1 for a in args if isinstance(a, (list, np.ndarray, range))) > 1:
        raise TypeError("Only one indexing vector or array is currently allowed for fancy "
                        "indexing")
    dims, mshape, finish, take_axes, drop = [], [], [], [], []
    for axis, (a, n) in enumerate(zip(args, shape)):
        if isinstance(a, slice):
            start, stop, step = a.indices(n)
            if step < 1:
                raise ValueError(f"Step must be >= 1 (got {step})")
            stop = max(start, stop)
            d = slice(start, stop, step)
            dims.append(d)
            mshape.append(_length(d))
        elif isinstance(a, (int, np.integer)):
            i = int(a)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"Index ({int(a)}) out of range for (0-{n - 1})")
            dims.append(slice(i, i + 1, 1))
            drop.append(axis)
        elif isinstance(a, MultiBlockSlice):
            d = a.as_index(n)
            dims.append(d)
            mshape.append(_length(d))
        else:
            idx = np.asarray(a)
            if idx.dtype == bool:
                if idx.shape != (n,):
                    raise TypeError(f"boolean index of shape {idx.shape} for an axis of length {n}")
                idx = np.flatnonzero(idx)
            elif idx.dtype.kind not in "iu" or idx.ndim != 1:
                if idx.size == 0 and idx.ndim == 1:
                    idx = idx.astype(np.int64)
                else:
                    raise TypeError(f"Illegal index type {a!r}")
            idx = idx.astype(np.int64)
            idx = np.where(idx < 0, idx + n, idx)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise IndexError(f"Index out of range for an axis of length {n}")
            if strict and np.any(idx[1:] <= idx[:-1]):
                raise TypeError("Indexing elements must be in increasing order")
            uniq, inverse = np.unique(idx, return_inverse=True)
            dims.append(uniq)
            mshape.append(len(idx))
            if len(uniq) != len(idx) or np.any(uniq != idx):
                take_axes.append((axis, inverse))
    for axis, inverse in take_axes:
        finish.append(lambda arr, axis=axis, inv=inverse: np.take(arr, inv, axis=axis))
    if drop:
        final = tuple(mshape)
        finish.append(lambda arr, final=final: arr.reshape(final))
    return Selection(tuple(shape), dims, finish, tuple(mshape))


def h5py_broadcast(shape, args, value_shape, array_type=False):
    """The shape values of ``value_shape`` (as h5py makes them: an array type's dimensions
    left out) take for numpy's assignment to ``dataset[args]`` of a dataset of ``shape``,
    so that it writes what h5py's Dataset.__setitem__ writes; its TypeError for values h5py
    refuses. h5py tells three kinds of selection apart (h5py._hl.selections): a boolean mask
    of the dataset's shape selects points, which take values of as many elements in any
    shape; an index list makes a fancy selection, which takes values of exactly its shape;
    integers, slices and MultiBlockSlices a simple one, whose expand_shape matches the
    values' dimensions from the last, each 1 or the selection's (integer dimensions
    skipped), extra leading ones of length 1. A scalar fills any selection (but for array
    types), returned as (): h5py makes it an array of the selection's shape where the
    dataset's chunks hold as many elements, else of its last dimension, which a fancy
    selection of several dimensions then refuses ("Broadcasting is not supported for
    complex selections"), an artefact of that buffer's size purehep does not copy."""
    counts, scalar, kind = _h5py_selection(shape, args)
    array_shape = tuple(c for c, s in zip(counts, scalar) if not s)
    source = tuple(value_shape)
    if source == ():
        if array_type and array_shape != ():
            raise TypeError("Scalar broadcasting is not supported for array dtypes")
        return ()
    if kind == "points":
        if np.prod(source) != counts[0]:
            raise TypeError("Broadcasting is not supported for point-wise selections")
    elif kind == "fancy":
        if source != array_shape:
            raise TypeError("Broadcasting is not supported for complex selections")
    else:
        expanded = _expand_shape(source, counts, scalar, array_shape)
        if shape == () and np.prod(source) != 1:
            raise TypeError("Can't broadcast %s to scalar" % source)    # (h5py's formatting)
        if np.prod(source) == 0 and np.prod(array_shape) != 0:   # h5py reads past the values
            raise TypeError(f"Can't broadcast {source} -> {array_shape}")
        array_shape = tuple(e for e, s in zip(expanded, scalar) if not s)
    return () if tuple(value_shape) == () else array_shape


def _h5py_selection(shape, args):
    """(count of each dimension, whether it is an integer index, kind) of the selection h5py
    makes of ``args`` (one count, for the points of a boolean mask of the dataset's shape)."""
    if len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].dtype == bool and \
            args[0].shape == tuple(shape) and shape:
        return (int(np.count_nonzero(args[0])),), (False,), "points"
    lengths = iter(select(shape, args).mshape)
    full = [slice(None) if a is Ellipsis else a
            for a in _expand_ellipsis(tuple(args), len(shape))]
    scalar = tuple(isinstance(a, (int, np.integer)) for a in full)
    counts = tuple(1 if s else next(lengths) for s in scalar)
    fancy = any(isinstance(a, (list, np.ndarray)) for a in full)
    return counts, scalar, "fancy" if fancy else "simple"


def _expand_shape(source, counts, scalar, array_shape):
    """h5py's SimpleSelection.expand_shape: ``source`` matched to the selection's dimensions
    from the last (integer dimensions take 1), each of length 1 or the selection's; the
    source's dimensions left over must be of length 1."""
    remaining = list(source)
    expanded = []
    for count, is_scalar in zip(counts[::-1], scalar[::-1]):
        if not remaining or is_scalar:
            expanded.append(1)
            continue
        t = remaining.pop()
        if t != 1 and t != count:
            raise TypeError(f"Can't broadcast {source} -> {array_shape}")
        expanded.append(t)
    if any(n > 1 for n in remaining):
        raise TypeError(f"Can't broadcast {source} -> {array_shape}")
    return tuple(expanded[::-1])


def numpy_index(args, shape):
    """``args`` (a tuple) with each MultiBlockSlice made a numpy index, for the writers that
    index numpy arrays; at most one of them may select blocks of several elements (numpy
    would pair two index arrays point by point)."""
    if not any(isinstance(a, MultiBlockSlice) for a in args):
        return args
    args = tuple(slice(None) if a is Ellipsis else a
                 for a in _expand_ellipsis(args, len(shape)))
    out = tuple(a.as_index(n) if isinstance(a, MultiBlockSlice) else a
                for a, n in zip(args, shape))
    if sum(isinstance(a, np.ndarray) for a in out) > 1:
        raise UnsupportedFeatureError("writing through two MultiBlockSlices of blocks longer "
                                      "than one element")
    return out


def _mask_selection(shape, mask):
    if mask.shape != tuple(shape):
        raise TypeError(f"boolean mask of shape {mask.shape} for a dataset of shape {shape}")
    nz = np.nonzero(mask)
    if not nz[0].size:
        dims = [np.zeros(0, np.int64) for _ in shape]
        return Selection(tuple(shape), dims, [lambda arr: arr.reshape(0)], (0,))
    dims = [slice(int(ix.min()), int(ix.max()) + 1, 1) for ix in nz]
    local = tuple(ix - d.start for ix, d in zip(nz, dims))
    return Selection(tuple(shape), dims, [lambda arr: arr[local]], (len(nz[0]),))
