"""The group-like object a version is staged in (the package's InMemoryGroup): a tree of
staged groups and datasets with h5py's Group members, and the attributes to store on the
version's group.

Members are listed as the package lists them: subgroups first, by name (they exist in the
file), then datasets in the order they were added (a previous version's in name order).
Where the package departs from h5py's Group by accident, h5py's behaviour is kept:
``require_dataset`` returns an existing compatible dataset (the package's raises TypeError
for any existing dataset: h5py opens it in the file, where staged datasets are not yet),
``visit`` lists datasets too (the package's lists the subgroups only, for the same reason),
and ``visit``/``visititems`` stop at the first callback result that is not None. A staged
dataset's ``maxshape`` is that of the virtual dataset it was read from (the package's: not
updated by a resize); a dataset new in this version, which has none in the package, reports
its shape at creation."""
import posixpath

import numpy as np

from ..dtypes import string_dtype
from .backend import DEFAULT_CHUNK_SIZE, FILTER_KEYS, normalize_chunks, raw_filters, raw_path
from .staging import StagedDataset


class StagedAttrs(dict):
    """Attributes of a staged group, read back as h5py reads them (the package's staged
    groups are groups in the file): a number as a numpy scalar, a sequence as an array
    (of str objects for str), a str as itself, Python bytes as str (h5py stores them as
    variable-length strings), ``np.bytes_`` as itself."""

    def __setitem__(self, key, value):
        if type(value) is bytes:
            value = value.decode("utf-8", "surrogateescape")
        if not isinstance(value, str):
            value = np.array(value)
            if value.dtype.kind == "U":
                value = value.astype(object)
            value = value[()] if value.ndim == 0 else value
        super().__setitem__(key, value)


class StagedGroup:
    """A group of a version being staged."""

    def __init__(self, file, name="", parent=None):
        self.file = file            # the purehep.File (raw data of existing datasets)
        self.name = name            # path relative to the version group
        self.parent = parent
        self.attrs = StagedAttrs()
        self._groups = {}
        self._datasets = {}
        self._chunks = {}           # chunk shape recorded per dataset name (the package's
        self._filters = {}          # _chunks) and filter arguments (its _filters)
        self._ledger = {}           # the root's: (chunks, filters) recorded by path, kept when
                                    # a group is deleted (the package's commit reads these)

    @classmethod
    def from_version(cls, file, group, name="", parent=None):
        """A staged copy of the committed version group ``group`` (datasets read lazily)."""
        staged = cls(file, name, parent)
        for key, obj in group.items():
            path = posixpath.join(name, key)
            if hasattr(obj, "shape"):
                staged._adopt(key, StagedDataset.from_version(path, obj, staged))
            else:
                staged._groups[key] = cls.from_version(file, obj, path, staged)
                staged._groups[key].attrs = StagedAttrs(obj.attrs.items())
        return staged

    @classmethod
    def committed_dataset(cls, file, version, path):
        """Dataset ``path`` of the committed version group ``version``, staged alone (in a
        group holding nothing else), as the package's replay reads one dataset of a
        version."""
        group = cls(file, posixpath.dirname(path))
        dataset = StagedDataset.from_version(path, version[path], group)
        group._adopt(posixpath.basename(path), dataset)
        return dataset

    def _adopt(self, key, dataset):
        """Hold the committed ``dataset`` as ``key``, with the chunks and filters of its
        raw data recorded (the package's ``_set_chunks``/``_set_filters``)."""
        self._datasets[key] = dataset
        self._record(key, dataset.grid, raw_filters(dataset._raw))

    def _record(self, key, chunks, filters):
        """Record the chunks and filters of dataset ``key``, here and by path in the root
        (the package's _set_chunks/_set_filters record them in every group up to the root;
        a group deleted takes its records with it, the root's stay)."""
        self._chunks[key], self._filters[key] = chunks, filters
        self._root()._ledger[posixpath.join(self.name, key)] = (chunks, filters)

    def _recorded(self, key):
        """(chunks, filters) the commit takes for dataset ``key`` ((None, {}): none)."""
        return self._root()._ledger.get(posixpath.join(self.name, key), (None, {}))

    def _root(self):
        return self if self.parent is None else self.parent._root()

    # -- lookup -----------------------------------------------------------------------------
    def _split(self, path, create=False):
        """The staged group holding ``path`` and the last name of it."""
        head, _, tail = path.strip("/").rpartition("/")
        group = self
        for part in filter(None, head.split("/")):
            if part not in group._groups:
                if not create or part in group._datasets:
                    raise KeyError(f"{path!r} not found")
                group._groups[part] = StagedGroup(self.file, posixpath.join(group.name, part),
                                                  group)
            group = group._groups[part]
        return group, tail

    def _members(self):
        return {**dict(sorted(self._groups.items())), **self._datasets}

    def __getitem__(self, path):
        group, last = self._split(path)
        found = group._groups.get(last, group._datasets.get(last))
        if found is None:
            raise KeyError(f"{path!r} not found")
        return found

    def get(self, path, default=None):
        try:
            return self[path]
        except KeyError:
            return default

    def __contains__(self, path):
        return self.get(path) is not None

    def __delitem__(self, path):
        group, last = self._split(path)
        if last in group._groups:
            del group._groups[last]
        elif last in group._datasets:
            del group._datasets[last]
        else:
            raise KeyError(f"{path!r} not found")

    def __iter__(self):
        return iter(self._members())

    def __len__(self):
        return len(self._groups) + len(self._datasets)

    def keys(self):
        return self._members().keys()

    def values(self):
        return self._members().values()

    def items(self):
        return self._members().items()

    def visititems(self, func):
        """Call ``func(name, object)`` for every member below this group, depth first, until
        it returns something other than None."""
        for name, obj in self._walk(""):
            result = func(name, obj)
            if result is not None:
                return result
        return None

    def visit(self, func):
        """Call ``func(name)`` for every member below this group (as :meth:`visititems`)."""
        return self.visititems(lambda name, obj: func(name))

    def _walk(self, prefix):
        for key, obj in self._members().items():
            name = posixpath.join(prefix, key)
            yield name, obj
            if isinstance(obj, StagedGroup):
                yield from obj._walk(name)

    # -- creation ---------------------------------------------------------------------------
    def __setitem__(self, path, value):
        """A new dataset of ``value``; one replacing a dataset keeps its fill value, its
        attributes and its place (the package's hot swap); a new one takes the fill value
        of a raw_data an older version stored; a staged dataset is shared (:meth:`_share`)."""
        group, last = self._split(path, create=True)
        if isinstance(value, StagedDataset):
            group._share(last, value)
            return
        if last in group._groups:
            raise ValueError(f"{path!r} is a group")
        old = group._datasets.get(last)
        name = posixpath.join(group.name, last)
        raw = self.file.get(raw_path(name))
        fillvalue = old.fillvalue if old is not None else \
            None if raw is None or raw.dtype.kind in "OT" else raw.fillvalue
        data = _initial_data(None, value)
        chunks, filters = group._recorded(last)
        grid, filters = group._grid(name, data, chunks, filters if raw is None else {})
        staged = StagedDataset.new(name, data, grid, fillvalue, filters, parent=group,
                                   chunks=group._chunks.get(last))
        staged.guessed = chunks is None and raw is None
        if old is not None:
            staged.attrs.update(old.attrs)
        group._datasets[last] = staged

    def _share(self, key, dataset):
        """``group[key] = group[other]``, as the package's: the same staged dataset under a
        second name (a write through either name shows through both, attributes included);
        one of the previous version not yet wholly replaced lends the name its chunks and
        filters. The commit stores it under each name (:meth:`datasets`)."""
        if key in self._groups:
            raise ValueError(f"{key!r} is a group")
        self._datasets[key] = dataset
        if dataset.kind == "inherited":
            self._record(key, dataset.grid, raw_filters(dataset._raw))

    def _alias(self, key, dataset, first):
        """What the commit stores as ``key`` of this group for a dataset staged under another
        name too (``first``: not stored under another name before), as the package's commit
        stores the one object under each name: an array of this version as a new array of
        that name (chunked and filtered so, its fill value and attributes kept); a dataset
        created from a shape or grown as itself renamed the first time, then (its chunks
        now rows of the first name's raw data) only if all of it is the fill value; never a
        dataset of the previous version. Those the package cannot store (its commit fails
        an assertion or on a name, or stores an unchanged one under its first name) raise
        RuntimeError."""
        name = posixpath.join(self.name, key)
        chunks, filters = self._recorded(key)
        if dataset.kind == "array":
            data = dataset[()]
            grid, filters = self._grid(name, data, chunks, filters)
            alias = StagedDataset.new(name, data, grid, dataset.fillvalue, filters,
                                      parent=self, chunks=self._chunks.get(key))
            alias.guessed = chunks is None and self.file.get(raw_path(name)) is None
        elif dataset.kind == "sparse" and (first or not dataset.holds_data()):
            alias = dataset.renamed(name, self, filters, keep=first)
        else:
            raise RuntimeError(f"{name!r} stages dataset {dataset.name!r}, which the package "
                               "cannot commit under this name")
        alias.attrs.update(dataset.attrs)
        return alias

    def create_group(self, path):
        group, last = self._split(path, create=True)
        if last in group._groups or last in group._datasets:
            raise ValueError(f"{path!r} already exists")
        group._groups[last] = StagedGroup(self.file, posixpath.join(group.name, last), group)
        return group._groups[last]

    def require_group(self, path):
        """The group ``path``, created if missing (TypeError if a dataset has the name)."""
        found = self.get(path)
        if found is None:
            return self.create_group(path)
        if not isinstance(found, StagedGroup):
            raise TypeError(f"Incompatible object ({type(found).__name__}) already exists")
        return found

    def create_dataset(self, path, shape=None, dtype=None, data=None, chunks=None,
                       fillvalue=None, maxshape=None, **filters):
        """A new dataset of this version (h5py's arguments; ``maxshape`` is ignored, as every
        versioned dataset can be resized). Without ``data`` nothing is stored until
        written; without ``chunks`` a 1-D dataset has chunks of 4096 (the package's)."""
        unknown = set(filters) - set(FILTER_KEYS)
        if unknown:
            raise TypeError(f"unsupported create_dataset arguments: {sorted(unknown)}")
        group, last = self._split(path, create=True)
        if last in group._groups or last in group._datasets:
            raise ValueError(f"{path!r} already exists")
        name = posixpath.join(group.name, last)
        if data is not None:
            data = _initial_data(dtype, data)
        shape = _checked_shape(shape, data)
        chunks = _checked_chunks(chunks, shape)
        if data is None:
            dtype = np.dtype("f8" if dtype is None else dtype)
            grid, kept = group._grid(name, np.broadcast_to(np.empty((), dtype), shape),
                                     chunks, filters)
            staged = StagedDataset.empty(name, shape, dtype, grid, fillvalue, kept,
                                         parent=group, chunks=grid)
        else:
            grid, kept = group._grid(name, data, chunks, filters)
            staged = StagedDataset.new(name, data, grid, fillvalue, kept, parent=group,
                                       chunks=grid)
        group._record(last, grid, dict(filters))
        group._datasets[last] = staged
        return staged

    def require_dataset(self, path, shape, dtype, exact=False, **kwds):
        """The dataset ``path``, created if missing; an existing one must have the shape
        and a dtype ``dtype`` casts to safely (the same dtype if ``exact``), as h5py's."""
        found = self.get(path)
        if found is None:
            return self.create_dataset(path, shape, dtype, **kwds)
        if not isinstance(found, StagedDataset):
            raise TypeError(f"Incompatible object ({type(found).__name__}) already exists")
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if shape != found.shape:
            raise TypeError(f"Shapes do not match (existing {found.shape} vs new {shape})")
        dtype = np.dtype(dtype)
        if exact and dtype != found.dtype:
            raise TypeError(f"Datatypes do not exactly match (existing {found.dtype} vs "
                            f"new {dtype})")
        if not exact and not np.can_cast(dtype, found.dtype):
            raise TypeError(f"Datatypes cannot be safely cast (existing {found.dtype} vs "
                            f"new {dtype})")
        return found

    def _grid(self, name, data, chunks, filters):
        """Chunks and filters of a new dataset: as given, the chunks of its raw data if an
        older version stored one and none are given (what is given is checked against
        that raw data at the commit, as the package's write_dataset does). An array of
        several dimensions given none is held as one chunk until the commit (or a resize
        growing it) guesses them and fails, as the package's."""
        raw = self.file.get(raw_path(name))
        if chunks is None and raw is None and data.ndim != 1:
            return tuple(max(1, n) for n in data.shape), filters
        if raw is None or chunks is not None:
            return normalize_chunks(chunks, data.shape, data.dtype), filters
        return tuple(int(c) for c in raw.attrs["chunks"]), filters

    # -- what the commit stores -------------------------------------------------------------
    def datasets(self):
        """Every staged dataset below this group by path, in the package's commit order:
        this group's own, then those below in :meth:`visititems` order (a dataset staged
        under two names is stored under each)."""
        found, stored = {}, set()
        paths = [*self._datasets, *(path for path, obj in self._walk("")
                                    if isinstance(obj, StagedDataset))]
        for path in paths:
            group, key = self._split(path)
            name, dataset = posixpath.join(group.name, key), group._datasets[key]
            if name in found:
                continue
            first = id(dataset) not in stored
            stored.add(id(dataset))
            found[name] = dataset if dataset.name == name and first else \
                group._alias(key, dataset, first)
        return found

    def groups(self):
        """Every staged group below this group (parents first)."""
        for _, obj in self._walk(""):
            if isinstance(obj, StagedGroup):
                yield obj

    def __repr__(self):
        return f'<Staged group "/{self.name}" ({len(self)} members)>'


def _checked_shape(shape, data):
    """create_dataset's shape, checked as the package's: given or the data's (not both,
    unless equal); never scalar."""
    if shape is None:
        if data is None:
            raise TypeError("Either shape or data must be specified")
        shape = data.shape
    shape = tuple(int(n) for n in np.atleast_1d(shape))
    if data is not None and data.shape != shape:
        raise ValueError(f"data.shape {data.shape} does not match specified shape {shape}")
    if not shape:
        raise NotImplementedError("Scalar datasets are not implemented.")
    return shape


def _checked_chunks(chunks, shape):
    """create_dataset's chunk shape, checked as the package's: 4096 for a 1-D dataset
    given none, else as many as the shape has dimensions."""
    if chunks is False:
        raise ValueError("chunks=False is not supported for versioned datasets")
    if chunks in (None, True):
        if len(shape) != 1:
            raise NotImplementedError("chunks must be specified for multi-dimensional "
                                      "datasets")
        return (DEFAULT_CHUNK_SIZE,)
    chunks = (int(chunks),) if isinstance(chunks, (int, np.integer)) else tuple(chunks)
    if len(chunks) != len(shape):
        raise ValueError(f"Dimensions of chunks ({chunks}) must equal the dimensions of the "
                         f"shape ({shape})")
    return chunks


def _initial_data(dtype, data):
    """The array a new dataset starts with: a copy of ``data`` (a read-only array of the
    dtype is kept as given, a broadcast one thus costing no memory)."""
    array = np.asarray(data, dtype=dtype)
    if array is data and array.flags.writeable:
        array = array.copy()
    if array.dtype.kind in "UO":
        array = array.astype(string_dtype())
    if array.ndim == 0:
        raise NotImplementedError("Scalar datasets are not implemented.")
    return array
