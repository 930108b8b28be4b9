"""The dataset-like objects a version is staged in: a dataset reads the chunks a read touches
from the previous version (or the array it was created from) and keeps the chunks written to
in memory, in the order the package's commit stores them, so that the commit hashes those only
and keeps the previous version's rows for the others."""
import copy
import posixpath

import numpy as np

from .backend import (FILTER_DEFAULTS, chunk_grid, chunk_slices, is_vlen_string,
                      normalize_chunks, raw_path, read_mapping)
from .hashing import chunk_hash, fill_hash
from .selection import Selection


class StagedDataset:
    """A dataset of a version being staged (the package's InMemoryDataset, InMemoryArrayDataset
    and InMemorySparseDataset), chunk by chunk: a chunk is read from its origin (the array a
    new dataset was created from, or the previous version's raw_data rows) when touched, and
    kept in memory once written.

    ``dirty`` keeps the modified chunks in the order the package's commit stores them: it
    stages each operation's new chunks in a new slab and commits slab after slab, so a
    dataset created from an array lists its chunks column by column (:func:`slab_order`), and
    each later write or resize appends the chunks it stages in the order of
    :meth:`_stage_order`."""

    def __init__(self, name, shape, dtype, grid, fillvalue, *, parent=None, base=None,
                 raw=None, mapping=None, attrs=None, filters=None, chunks=None,
                 maxshape=None, wrapped=True):
        self.name = name
        self.parent = parent        # the StagedGroup holding it
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.grid = tuple(grid)     # the chunk shape raw_data stores
        self.fillvalue = fillvalue
        self.attrs = dict(attrs or {})
        self.filters = filters or {}    # the filters given (raw_data is created with them)
        self.chunks = chunks            # as the package reports it (None: not yet known)
        self.maxshape = tuple(shape if maxshape is None else maxshape)
        self._wrapped = wrapped     # a write of everything replaces the data (the package's
                                    # DatasetWrapper hot swap); not for create_dataset(shape)
        self._base = base       # a new dataset's initial array (its chunks are all dirty)
        self._raw = raw         # the previous version's raw_data
        self.mapping = dict(mapping or {})
        self.dirty = {}         # chunk index -> modified chunk (None: still its origin's),
                                # in the order the commit stores them
        self._pinned = set()    # chunks still where the creation array put them, in the
        self._views = None      # package's views of it (of this shape) that cannot grow
        self.kind = "inherited" if raw is not None else "sparse"   # the package's class of
                                # it: InMemoryDataset, InMemoryArrayDataset ("array": from an
                                # array, until grown) or InMemorySparseDataset
        self.guessed = False    # grid a guess from the shape, made again when the dataset
                                # first grows and at the commit (``group[name] = array``
                                # with no chunks known: the package's chunks=None)

    @classmethod
    def new(cls, name, data, grid, fillvalue, filters, **kwargs):
        """A dataset created from an array in this version: every chunk is to be stored."""
        fillvalue = _default_fill(data.dtype, fillvalue)
        staged = cls(name, data.shape, data.dtype, grid, fillvalue, filters=filters, **kwargs)
        staged._rebase(data)
        return staged

    @classmethod
    def empty(cls, name, shape, dtype, grid, fillvalue, filters, **kwargs):
        """A dataset created from a shape alone: nothing is stored until written."""
        dtype = np.dtype(dtype)
        staged = cls(name, shape, dtype, grid, _default_fill(dtype, fillvalue),
                     filters=filters, wrapped=False, **kwargs)
        return staged

    @classmethod
    def from_version(cls, name, dataset, parent=None):
        """The committed virtual dataset ``dataset`` of the previous version."""
        grid = tuple(int(c) for c in dataset.attrs["chunks"])
        attrs = {k: v for k, v in dataset.attrs.items() if k not in ("chunks", "raw_data")}
        raw = dataset.file[raw_path(name)]
        return cls(name, dataset.shape, raw.dtype, grid, _fill(raw), raw=raw,
                   mapping=read_mapping(dataset, grid), attrs=attrs, parent=parent,
                   chunks=grid, maxshape=dataset.maxshape)

    # -- h5py's description ---------------------------------------------------------------
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    def _reported(self, key):
        """A filter property as the package reports it: the arguments recorded for this
        name in its group (given to create_dataset, or read from raw_data)."""
        record = self.parent._filters.get(posixpath.basename(self.name), {}) \
            if self.parent is not None else self.filters
        return record.get(key, FILTER_DEFAULTS[key])

    compression = property(lambda self: self._reported("compression"))
    compression_opts = property(lambda self: self._reported("compression_opts"))
    shuffle = property(lambda self: self._reported("shuffle"))
    fletcher32 = property(lambda self: self._reported("fletcher32"))
    scaleoffset = property(lambda self: self._reported("scaleoffset"))

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self[()], dtype=dtype)

    # -- numpy-like reading and writing ----------------------------------------------------
    def __getitem__(self, key):
        """``array[key]``, read from the chunks it touches only; a key of integers gives
        the element itself (a numpy scalar), as numpy and h5py do."""
        selection = Selection(key, self.shape)
        out = np.empty(selection.lengths, self.dtype)
        for index, where, inside in selection.pieces(self.grid):
            out[_orthogonal(where)] = self._chunk(index)[_orthogonal(inside)]
        return out.reshape(selection.shape)[()] if not selection.shape else \
            out.reshape(selection.shape)

    def __setitem__(self, key, value):
        """``array[key] = value``, modifying the chunks it touches only; a key selecting
        everything replaces the data as a new array (the package's hot swap)."""
        selection = Selection(key, self.shape)
        if self._wrapped and selection.everything:
            self._rebase(np.broadcast_to(np.asarray(value, self.dtype), self.shape))
            return
        value = np.broadcast_to(np.asarray(value, self.dtype), selection.shape)
        value = value.reshape(selection.lengths)
        pieces = {index: (where, inside) for index, where, inside
                  in selection.pieces(self.grid)}
        partial, whole = [], []
        for index, (_, inside) in pieces.items():
            if index not in self.dirty:
                region = chunk_slices(index, self.grid, self.shape)
                covered = all(_count(p) == r.stop - r.start for p, r in zip(inside, region))
                (whole if covered else partial).append(index)
        for index in self._stage_order(partial):
            self._modified(index)
        for index in self._stage_order(whole):
            self.dirty[index] = np.full(self.grid, self.fillvalue, self.dtype)
        for index, (where, inside) in pieces.items():
            self._modified(index)[_orthogonal(inside)] = value[_orthogonal(where)]

    def resize(self, size, axis=None):
        """h5py's resize: new elements hold the fill value. Edge chunks of the previous
        version whose extent changes are staged as the package stages them (those on the
        edges shrunk to, axis by axis, then the old edges of the axes grown, each step in
        raw_data order); chunks of a creation array growing past the array (as it was when
        first grown) along axis 0 move after the others in C order (the package's views
        of the array cannot grow), those growing past it along other axes only (taken
        last axis first) keep their place (versioned-hdf5 2.6.0 on 2-D and 3-D arrays);
        chunks past the new shape are forgotten."""
        size = _new_shape(self.shape, size, axis)
        if len(size) != self.ndim or min(size, default=0) < 0:
            raise ValueError(f"Invalid shape {size} for dataset of shape {self.shape}")
        if any(a > b for a, b in zip(size, self.shape)):
            self.settle_grid(size)
        old = self.shape
        shrunk = tuple(min(a, b) for a, b in zip(old, size))
        self.mapping = {k: v for k, v in self.mapping.items() if _inside(k, self.grid, shrunk)}
        self.dirty = {k: v for k, v in self.dirty.items() if _inside(k, self.grid, shrunk)}
        edges = [(ax, shrunk[ax]) for ax in range(self.ndim)
                 if old[ax] > shrunk[ax] and shrunk[ax] % self.grid[ax]]
        edges += [(ax, old[ax]) for ax in range(self.ndim)
                  if size[ax] > old[ax] and old[ax] % self.grid[ax]]
        for ax, edge in edges:
            for index in self._stage_order(k for k in self.mapping
                                           if k not in self.dirty
                                           and k[ax] == edge // self.grid[ax]):
                self._modified(index)
        self._pinned &= self.dirty.keys()
        if self._pinned and self._views is None and size != shrunk:
            self._views = old       # the package's views of the array, made on growing
        for ax in reversed(range(self.ndim)):   # pinned chunks growing past their view
            if size[ax] > old[ax]:
                c, room = self.grid[ax], self._views[ax] if self._views else 0
                grown = sorted(k for k in self._pinned if min((k[ax] + 1) * c, size[ax]) > room)
                for index in grown if ax == 0 else ():
                    self.dirty[index] = self.dirty.pop(index)
                self._pinned.difference_update(grown)
        for index in self.dirty:      # what a shrink cut off reads as the fill value
            region = chunk_slices(index, self.grid, shrunk)
            if region != chunk_slices(index, self.grid, old):
                _refill(self._modified(index), region, self.fillvalue)
        if self.chunks is None and size != shrunk:    # known once grown, as the package's
            self.chunks = self.grid
        if self.kind == "array" and size != shrunk:
            self.kind = "sparse"
        self.shape = size

    def settle_grid(self, shape=None):
        """Fix a guessed grid as the package does: guessed again from ``shape`` (default the
        current shape) when the dataset first grows (DatasetWrapper.resize) or is committed
        (commit_version's normalize_chunks of the array's shape); the data is re-chunked
        if the guess changed."""
        if not self.guessed:
            return
        self.guessed = False
        grid = normalize_chunks(None, self.shape if shape is None else shape, self.dtype)
        if grid != self.grid:
            data = self[()]
            self.grid = grid
            self._rebase(data)

    def modified_chunks(self):
        """(index, edge-trimmed chunk) of each modified chunk, in the order modified."""
        for index in self.dirty:
            yield index, self._chunk(index)[_local(chunk_slices(index, self.grid, self.shape))]

    def holds_data(self):
        """Whether a commit would store a chunk: any of the previous version's, or any
        modified one not of the fill value (edge chunks, of another shape, always)."""
        fill = fill_hash(self.grid, self.dtype, self.fillvalue)
        return bool(self.mapping) or any(chunk_hash(chunk) != fill
                                         for _, chunk in self.modified_chunks())

    def renamed(self, name, parent, filters, keep=True):
        """This dataset staged as ``name`` of ``parent`` (a new dataset of that name with
        ``filters``): with the chunks it stages (``keep``) or none, all of it the fill
        value; its attributes copied."""
        twin = copy.copy(self)
        twin.name, twin.parent, twin.filters = name, parent, filters
        twin.attrs, twin.mapping = dict(self.attrs), dict(self.mapping) if keep else {}
        twin.dirty = dict(self.dirty) if keep else {}
        twin._pinned = set(self._pinned) if keep else set()
        return twin

    def _stage_order(self, indices):
        """Chunks staged by one operation in the order the package stacks them in a new
        slab: by where they come from (fill-value chunks first, then raw_data rows),
        then in C order."""
        return sorted(indices, key=lambda index: (1, self.mapping[index][0], index)
                      if index in self.mapping else (0, 0, index))

    def _rebase(self, data):
        """Make ``data`` this dataset's content, every chunk to be stored."""
        self._base, self.kind = data, "array"
        self.mapping, self.dirty = {}, {}
        for index in slab_order(chunk_grid(data.shape, self.grid)):
            self.dirty[index] = None
        self._pinned, self._views = set(self.dirty), None

    def _chunk(self, index):
        """Chunk ``index`` padded to the chunk shape with the fill value (not to modify)."""
        chunk = self.dirty.get(index)
        return self._load(index) if chunk is None else chunk

    def _modified(self, index):
        """Chunk ``index``, kept as modified."""
        if self.dirty.get(index) is None:
            self.dirty[index] = self._load(index)
        return self.dirty[index]

    def _load(self, index):
        """Chunk ``index`` as its origin holds it (the fill value if it has none)."""
        region = chunk_slices(index, self.grid, self.shape)
        local = _local(region)
        if self._base is not None and index in self.dirty:
            base = tuple(slice(r.start, min(r.stop, n)) for r, n in zip(region,
                                                                         self._base.shape))
            part = np.array(self._base[base], self.dtype)
            local = _local(base)
        elif index in self.mapping:
            start = self.mapping[index][0]
            part = np.require(self._raw[(slice(start, start + local[0].stop),) + local[1:]],
                              self.dtype, "W")
        else:
            part = None
        if part is not None and part.shape == self.grid:
            return part
        chunk = np.full(self.grid, self.fillvalue, self.dtype)
        if part is not None:
            chunk[local] = part
        return chunk

    def __repr__(self):
        return f'<Staged dataset "{self.name}": shape {self.shape}, type "{self.dtype.str}">'


def slab_order(indices):
    """Chunk indices in the order the package stacks one operation's chunks: columns of
    chunks along axis 0, the columns in C order of the other axes."""
    return sorted(indices, key=lambda index: (index[1:], index[0]))


def _count(part):
    """How many distinct positions a chunk-local key (slice or array) selects."""
    if isinstance(part, slice):
        return len(range(part.start, part.stop, part.step))
    return len(np.unique(part))


def _orthogonal(parts):
    """A key selecting the outer product of per-axis slices or arrays."""
    if sum(isinstance(p, np.ndarray) for p in parts) <= 1:
        return tuple(parts)
    return np.ix_(*(np.arange(p.start, p.stop, p.step) if isinstance(p, slice) else p
                    for p in parts))


def _local(region):
    """The region of a chunk's array that its (edge-trimmed) ``region`` occupies."""
    return tuple(slice(0, r.stop - r.start) for r in region)


def _inside(index, chunks, shape):
    return all(i * c < s for i, c, s in zip(index, chunks, shape))


def _refill(chunk, region, fillvalue):
    """Set the part of ``chunk`` outside its ``region`` to the fill value."""
    for axis, r in enumerate(region):
        chunk[(slice(None),) * axis + (slice(r.stop - r.start, None),)] = fillvalue


def _fill(raw):
    return b"" if is_vlen_string(raw.dtype) else raw.fillvalue


def _default_fill(dtype, fillvalue):
    """The fill value staged: a scalar of ``dtype``, or for strings b"" unless another is
    given (the package's staged reads then give it; its raw_data takes none other than
    "" at the commit: backend.check_raw_data)."""
    if is_vlen_string(dtype):
        return b"" if fillvalue in (None, 0) else fillvalue
    return np.zeros((), dtype)[()] if fillvalue is None else np.array(fillvalue, dtype)[()]


def _new_shape(shape, size, axis):
    if axis is None:
        return (size,) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    new = list(shape)
    new[axis] = int(size)
    return tuple(new)
