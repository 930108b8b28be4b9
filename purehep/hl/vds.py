"""Virtual dataset creation, h5py-style (``VirtualSource``, ``VirtualLayout``,
``Group.create_virtual_dataset``): each assignment ``layout[key] = source[key]`` becomes one
mapping of the virtual dataset's global heap block (spec III.F, layout class 3), its two
selections kept per dimension as regular hyperslabs or runs until the writer encodes them in
the form the file's format version asks for.
"""
import copy
import os

import numpy as np

from ..format import selection as S
from ..h5s import UNLIMITED
from ..selections import select


def hyperslab_dims(shape, key):
    """(dims, result shape, element count) of ``key`` on ``shape``: per dimension a regular
    (start, stride, count, block) or a list of runs (start, length) for index arrays. A
    slice up to h5py's ``UNLIMITED`` selects without end along its dimension (count
    UNLIMITED, as libhdf5 stores it; the element count is then None)."""
    if isinstance(key, np.ndarray) and key.dtype == bool and key.ndim == len(shape) > 1:
        raise TypeError("boolean masks cannot select virtual dataset mappings")
    for a in key if isinstance(key, tuple) else (key,):
        if not isinstance(a, (slice, int, np.integer, type(Ellipsis))):
            idx = np.asarray(a)
            if idx.dtype != bool and np.any(np.diff(idx) <= 0):
                raise TypeError("Indexing elements must be in increasing order")
    key, endless = _endless(shape, key)
    sel = select(tuple(shape), key)
    dims = []
    for i, d in enumerate(sel.dims):
        if i in endless:
            dims.append((d.start, endless[i], S.UNLIMITED, 1))
        elif isinstance(d, slice):
            count = len(range(d.start, d.stop, d.step))
            if count == 0:
                raise ValueError("an empty selection cannot map a virtual dataset")
            dims.append((d.start, 1, 1, count) if d.step == 1 else
                        (d.start, d.step if count > 1 else 1, count, 1))
        else:
            if not len(d):
                raise ValueError("an empty selection cannot map a virtual dataset")
            breaks = np.flatnonzero(np.diff(d) != 1) + 1
            starts = d[np.concatenate(([0], breaks))]
            ends = np.concatenate((breaks, [len(d)]))
            lengths = np.diff(np.concatenate(([0], ends)))
            dims.append([(int(s), int(n)) for s, n in zip(starts, lengths)])
    return dims, sel.mshape, None if endless else sel.nselected


def _endless(shape, key):
    """(``key`` with its slices up to UNLIMITED cut at ``shape``, {dimension: step} of those
    slices)."""
    if not isinstance(key, tuple):
        key = (key,)
    if not any(isinstance(a, slice) and a.stop == UNLIMITED for a in key):
        return key, {}
    if any(a is Ellipsis for a in key):
        raise TypeError("an unlimited virtual selection names every dimension")
    endless, cut = {}, []
    for d, a in enumerate(key):
        if isinstance(a, slice) and a.stop == UNLIMITED:
            step = 1 if a.step is None else int(a.step)
            if step < 1 or (a.start or 0) < 0:
                raise ValueError("an unlimited selection runs forward from a start >= 0")
            endless[d] = step
            a = slice(a.start or 0, max(shape[d], (a.start or 0) + 1), step)
        cut.append(a)
    return tuple(cut), endless


class VirtualSource:
    """A dataset the virtual dataset reads from, as h5py's: a Dataset, or a file path with the
    dataset's name, shape (and dtype, maxshape). Slice it once to map part of it."""

    def __init__(self, path_or_dataset, name=None, shape=None, dtype=None, maxshape=None):
        from .dataset import Dataset
        if isinstance(path_or_dataset, Dataset):
            given = [k for k, v in dict(name=name, shape=shape, dtype=dtype,
                                        maxshape=maxshape).items() if v is not None]
            if given:
                raise TypeError(f"{', '.join(given)} cannot be given with a dataset")
            ds = path_or_dataset
            path, name, shape = ds.file.filename, ds.name, ds.shape
            dtype, maxshape = ds.dtype, ds.maxshape
        else:
            if name is None:
                raise TypeError("The name parameter is required when specifying a source "
                                "file path.")
            if shape is None:
                raise TypeError("The shape parameter is required when specifying a source "
                                "file path.")
            path = os.fspath(path_or_dataset)
        self.path, self.name = path, name
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.source_shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self.maxshape = self.source_shape if maxshape is None else \
            (maxshape,) if isinstance(maxshape, (int, np.integer)) else tuple(maxshape)
        self.dims = None                  # None: the whole source ("all" selection)
        self.shape = self.source_shape    # the selection's shape, as h5py's ``shape``
        self.count = int(np.prod(self.source_shape, dtype=np.int64))

    def __getitem__(self, key):
        if self.dims is not None:
            raise RuntimeError("VirtualSource objects can only be sliced once.")
        out = copy.copy(self)
        out.dims, out.shape, out.count = hyperslab_dims(self.source_shape, key)
        return out


class VirtualLayout:
    """The shape, dtype (and maxshape) of a virtual dataset and its mappings, filled by
    ``layout[key] = source``; ``filename`` names the file it will be created in, when known,
    so that sources in that file are stored as "." (as h5py does)."""

    def __init__(self, shape, dtype, maxshape=None, filename=None):
        self.shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        self.dtype = np.dtype(dtype)
        self.maxshape = self.shape if maxshape is None else tuple(maxshape)
        self.filename = filename
        self.mappings = []                # (source file, source name, source dims, dims)

    def __setitem__(self, key, source):
        dims, _, count = hyperslab_dims(self.shape, key)
        if count != source.count and not (count is None and "%b" in source.path + source.name):
            raise ValueError(f"the virtual and source selections select a different number "
                             f"of elements ({count} and {source.count}; None: unlimited)")
        self.mappings.append((source.path, source.name, source.dims, dims))

    def map_block(self, start, count, source, source_start):
        """``layout[box] = source[box']`` for blocks given by corners: the block of ``count``
        elements per axis at ``start`` maps to the block of the same shape at
        ``source_start`` of ``source`` (not sliced), without building index selections
        (a caller mapping thousands of chunk-sized blocks at a time)."""
        if source.dims is not None:
            raise RuntimeError("VirtualSource objects can only be sliced once.")
        for at, n, extent in zip(start, count, self.shape):
            if n <= 0 or at < 0 or at + n > extent:
                raise ValueError(f"block of {tuple(count)} at {tuple(start)} is not inside "
                                 f"the layout's shape {self.shape}")
        for at, n, extent in zip(source_start, count, source.source_shape):
            if at < 0 or at + n > extent:
                raise ValueError(f"block of {tuple(count)} at {tuple(source_start)} is not "
                                 f"inside the source's shape {source.source_shape}")
        self.mappings.append((source.path, source.name,
                              [(int(a), 1, 1, int(n)) for a, n in zip(source_start, count)],
                              [(int(a), 1, 1, int(n)) for a, n in zip(start, count)]))

    def source_file(self, path, dest):
        """The name a mapping stores for the source file ``path`` ("." for the file itself)."""
        if self.filename is not None:
            return "." if os.fspath(path) == os.fspath(self.filename) else path
        same = dest is not None and os.path.abspath(path) == os.path.abspath(dest)
        return "." if same else path
