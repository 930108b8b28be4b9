"""The group-like and dataset-like objects a version is staged in: a dataset reads the chunks
a read touches from the previous version (or the array it was created from) and keeps the
chunks written to in memory, in the order first modified, so that the commit hashes those
only and keeps the previous version's rows for the others."""
import itertools
import posixpath

import numpy as np

from ..dtypes import string_dtype
from .backend import (FILTER_KEYS, chunk_grid, chunk_slices, is_vlen_string, normalize_chunks,
                      raw_path, read_mapping)
from .selection import Selection


class StagedDataset:
    """A dataset of a version being staged (the package's InMemoryDataset), chunk by chunk:
    a chunk is read from its origin (the array a new dataset was created from, or the
    previous version's raw_data rows) when touched, and kept in memory once written."""

    def __init__(self, name, shape, dtype, chunks, fillvalue, *, base=None, raw=None,
                 mapping=None, attrs=None, filters=None):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.chunks = tuple(chunks)
        self.fillvalue = fillvalue
        self.attrs = dict(attrs or {})
        self.filters = filters or {}
        self._base = base       # a new dataset's initial array (its chunks are all dirty)
        self._raw = raw         # the previous version's raw_data
        self.mapping = dict(mapping or {})
        self.dirty = {}         # chunk index -> modified chunk (None: still its origin's),
                                # in the order first modified

    @classmethod
    def new(cls, name, data, chunks, fillvalue, filters):
        """A dataset created in this version: every chunk is to be stored."""
        fillvalue = _default_fill(data.dtype, fillvalue)
        staged = cls(name, data.shape, data.dtype, chunks, fillvalue, base=data, filters=filters)
        staged._mark(slab_order(chunk_grid(data.shape, staged.chunks)))
        return staged

    @classmethod
    def from_version(cls, name, dataset):
        """The committed virtual dataset ``dataset`` of the previous version."""
        chunks = tuple(int(c) for c in dataset.attrs["chunks"])
        attrs = {k: v for k, v in dataset.attrs.items() if k not in ("chunks", "raw_data")}
        raw = dataset.file[raw_path(name)]
        return cls(name, dataset.shape, raw.dtype, chunks, _fill(raw), raw=raw,
                   mapping=read_mapping(dataset, chunks), attrs=attrs)

    # -- numpy-like reading and writing ----------------------------------------------------
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self[()], dtype=dtype)

    def __getitem__(self, key):
        """``array[key]``, read from the chunks it touches only."""
        selection = Selection(key, self.shape)
        out = np.empty(selection.lengths, self.dtype)
        for index, where, inside in selection.pieces(self.chunks):
            out[_orthogonal(where)] = self._chunk(index)[_orthogonal(inside)]
        return out.reshape(selection.shape)

    def __setitem__(self, key, value):
        """``array[key] = value``, modifying the chunks it touches only."""
        selection = Selection(key, self.shape)
        value = np.broadcast_to(np.asarray(value, self.dtype), selection.shape)
        value = value.reshape(selection.lengths)
        pieces = {index: (where, inside) for index, where, inside
                  in selection.pieces(self.chunks)}
        for index in slab_order(pieces):
            where, inside = pieces[index]
            self._modified(index)[_orthogonal(inside)] = value[_orthogonal(where)]

    def resize(self, size, axis=None):
        """h5py's resize: new elements hold the fill value; chunks whose extent changes are
        re-stored, chunks past the new shape are forgotten."""
        size = _new_shape(self.shape, size, axis)
        changed = [index for index in dict.fromkeys(itertools.chain(self.dirty, self.mapping))
                   if _inside(index, self.chunks, size)
                   and chunk_slices(index, self.chunks, self.shape)
                   != chunk_slices(index, self.chunks, size)]
        for axis in range(self.ndim):     # the package resizes one axis after the other
            for index in slab_order(k for k in changed
                                    if _extent(k, self.chunks, self.shape, axis)
                                    != _extent(k, self.chunks, size, axis)):
                self._modified(index)
        self.mapping = {k: v for k, v in self.mapping.items() if _inside(k, self.chunks, size)}
        self.dirty = {k: v for k, v in self.dirty.items() if _inside(k, self.chunks, size)}
        self.shape = size
        for index in changed:
            _refill(self.dirty[index], chunk_slices(index, self.chunks, size), self.fillvalue)

    def modified_chunks(self):
        """(index, edge-trimmed chunk) of each modified chunk, in the order modified."""
        for index in self.dirty:
            yield index, self._chunk(index)[_local(chunk_slices(index, self.chunks, self.shape))]

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
        region = chunk_slices(index, self.chunks, self.shape)
        local = _local(region)
        if self._base is not None and index in self.dirty:
            part = np.array(self._base[region], self.dtype)
        elif index in self.mapping:
            start = self.mapping[index][0]
            part = np.require(self._raw[(slice(start, start + local[0].stop),) + local[1:]],
                              self.dtype, "W")
        else:
            part = None
        if part is not None and part.shape == self.chunks:
            return part
        chunk = np.full(self.chunks, self.fillvalue, self.dtype)
        if part is not None:
            chunk[local] = part
        return chunk

    def _mark(self, indices):
        """Record modified chunks, keeping the order in which they were first modified."""
        for index in indices:
            self.dirty.setdefault(index, None)

    def __repr__(self):
        return f'<Staged dataset "{self.name}": shape {self.shape}, type "{self.dtype.str}">'


def slab_order(indices):
    """Chunk indices in the order the package stacks one operation's chunks: columns of
    chunks along axis 0, the columns in C order of the other axes."""
    return sorted(indices, key=lambda index: (index[1:], index[0]))


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


def _extent(index, chunks, shape, axis):
    return chunk_slices(index, chunks, shape)[axis]


def _refill(chunk, region, fillvalue):
    """Set the part of ``chunk`` outside its ``region`` to the fill value."""
    for axis, r in enumerate(region):
        chunk[(slice(None),) * axis + (slice(r.stop - r.start, None),)] = fillvalue


def _fill(raw):
    return b"" if is_vlen_string(raw.dtype) else raw.fillvalue


def _default_fill(dtype, fillvalue):
    """The fill value as raw_data holds it: a scalar of ``dtype``, or b"" for strings
    (which take no other)."""
    if is_vlen_string(dtype):
        if fillvalue not in (None, 0, "", b""):
            raise ValueError("Non-default fillvalue not supported for variable length strings")
        return b""
    return np.zeros((), dtype)[()] if fillvalue is None else np.array(fillvalue, dtype)[()]


def _new_shape(shape, size, axis):
    if axis is None:
        return (size,) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    new = list(shape)
    new[axis] = int(size)
    return tuple(new)


class StagedGroup:
    """A group of a version being staged (the package's InMemoryGroup): a tree of staged
    groups and datasets, with the attributes to store on the version's group."""

    def __init__(self, file, name=""):
        self.file = file            # the purehep.File (raw data of existing datasets)
        self.name = name            # path relative to the version group
        self.attrs = {}
        self._members = {}

    @classmethod
    def from_version(cls, file, group, name=""):
        """A staged copy of the committed version group ``group`` (datasets read lazily)."""
        staged = cls(file, name)
        for key, obj in group.items():
            path = posixpath.join(name, key)
            if hasattr(obj, "shape"):
                staged._members[key] = StagedDataset.from_version(path, obj)
            else:
                staged._members[key] = cls.from_version(file, obj, path)
                staged._members[key].attrs = dict(obj.attrs)
        return staged

    def _split(self, path, create=False):
        """The staged group holding ``path`` and the last name of it."""
        head, _, tail = path.strip("/").rpartition("/")
        group = self
        for part in filter(None, head.split("/")):
            if part not in group._members and create:
                group._members[part] = StagedGroup(self.file, posixpath.join(group.name, part))
            group = group._members[part]
        return group, tail

    def __getitem__(self, path):
        group, last = self._split(path)
        return group._members[last]

    def __contains__(self, path):
        try:
            self[path]
        except (KeyError, AttributeError):
            return False
        return True

    def __delitem__(self, path):
        group, last = self._split(path)
        del group._members[last]

    def __iter__(self):
        return iter(self._members)

    def __len__(self):
        return len(self._members)

    def keys(self):
        return self._members.keys()

    def values(self):
        return self._members.values()

    def items(self):
        return self._members.items()

    def __setitem__(self, path, value):
        """A new dataset of ``value``; one replacing a dataset keeps its fill value and
        attributes."""
        if isinstance(value, StagedDataset):
            value = value[()]
        old = self[path] if path in self else None
        if not isinstance(old, StagedDataset):
            self.create_dataset(path, data=value)
            return
        del self[path]
        self.create_dataset(path, data=value, fillvalue=old.fillvalue).attrs.update(old.attrs)

    def create_group(self, path):
        group, last = self._split(path, create=True)
        if last in group._members:
            raise ValueError(f"{path!r} already exists")
        group._members[last] = StagedGroup(self.file, posixpath.join(group.name, last))
        return group._members[last]

    def require_group(self, path):
        return self[path] if path in self else self.create_group(path)

    def create_dataset(self, path, shape=None, dtype=None, data=None, chunks=None,
                       fillvalue=None, maxshape=None, **filters):
        """A new dataset of this version (h5py's arguments; ``maxshape`` is ignored, as every
        versioned dataset can be resized)."""
        group, last = self._split(path, create=True)
        if last in group._members:
            raise ValueError(f"{path!r} already exists")
        name = posixpath.join(group.name, last)
        data = _initial_data(shape, dtype, data, fillvalue)
        chunks, filters = self._settings(name, data, chunks, filters)
        staged = StagedDataset.new(name, data, chunks, fillvalue, filters)
        group._members[last] = staged
        return staged

    def _settings(self, name, data, chunks, filters):
        """Chunks and filters of a new dataset: those of its raw data if an older version
        stored one (filters may only be set the first time), else as given."""
        unknown = set(filters) - set(FILTER_KEYS)
        if unknown:
            raise TypeError(f"unsupported create_dataset arguments: {sorted(unknown)}")
        raw = self.file.get(raw_path(name))
        if raw is None:
            return normalize_chunks(chunks, data.shape, data.dtype), filters
        existing = tuple(int(c) for c in raw.attrs["chunks"])
        if chunks is not None and normalize_chunks(chunks, data.shape, data.dtype) != existing:
            raise ValueError("Chunk size specified but doesn't match already existing "
                             "chunk size")
        if any(filters.get(k) not in (None, getattr(raw, k)) for k in filters):
            raise ValueError("Compression options and other filters can only be specified "
                             "for the first version of a dataset")
        return existing, {}

    def datasets(self):
        """Every staged dataset below this group, by path."""
        found = {}
        for member in self._members.values():
            if isinstance(member, StagedDataset):
                found[member.name] = member
            else:
                found.update(member.datasets())
        return found

    def groups(self):
        """Every staged group below this group (parents first)."""
        for member in self._members.values():
            if isinstance(member, StagedGroup):
                yield member
                yield from member.groups()

    def __repr__(self):
        return f'<Staged group "/{self.name}" ({len(self)} members)>'


def _initial_data(shape, dtype, data, fillvalue):
    """The array a new dataset starts with: a copy of ``data`` (a read-only array of the
    dtype is kept as given, a broadcast one thus costing no memory), or one fill value
    broadcast to ``shape``."""
    if data is None:
        if shape is None:
            raise TypeError("One of data or shape must be specified")
        data = np.broadcast_to(np.array(_default_fill(np.dtype(dtype), fillvalue), dtype), shape)
    array = np.asarray(data, dtype=dtype)
    if array is data and array.flags.writeable:
        array = array.copy()
    if array.dtype.kind in "UO":
        array = array.astype(string_dtype())
    if shape is not None and tuple(np.atleast_1d(shape)) != array.shape:
        array = array.reshape(shape)
    if array.ndim == 0:
        raise ValueError("scalar datasets are not supported by versioned HDF5")
    return array
