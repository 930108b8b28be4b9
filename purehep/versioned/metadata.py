"""Rewriting one dataset in every version, as the package's ``replay.recreate_dataset``,
``tmp_group``, ``swap`` and ``modify_metadata`` (versioned-hdf5 2.6.0).

``modify_metadata`` rewrites a dataset for new chunks, filters, dtype or fill value: every
version holding it is read back (versions in name order), converted and written a block of
chunks at a time into a new raw_data and hash table under ``_version_data/__tmp__`` (chunks
of one block in the order the package stages an array, blocks tiled as its
``rewrite_dataset`` tiles them, so that raw_data rows come out in the package's order), then
:func:`swap` exchanges the new raw_data, hash table and virtual datasets with the old ones and
the temporary group is deleted."""
import itertools
import math
import posixpath

import numpy as np

from ..format import selection as S
from ..hl.vds import VirtualLayout
from ..write.values import cast
from .api import FIRST_VERSION, initialize
from .backend import (DATA_GROUP, FILTER_KEYS, check_raw_data, chunk_grid, chunk_slices,
                      commit_chunks, create_raw_data, is_vlen_string, normalize_chunks,
                      write_virtual_dataset)
from .group import StagedGroup
from .staging import slab_order

TMP_GROUP = "__tmp__"
REWRITE_BLOCK_BYTES_MIN = 1 << 26       # the package's bounds of the bytes of chunks
REWRITE_BLOCK_BYTES_MAX = 1 << 29       # rewritten at a time, and of the bytes per chunk
REWRITE_BLOCK_BYTES_PER_CHUNK = 1 << 11  # already in raw_data between them
OBJECT_ITEMSIZE = 56                    # its estimate of a variable-length string's size
H5PY_UNLIMITED = (1 << 64) - 1        # as get_regular_hyperslab reports it


class _Default:
    """The value of a filter argument left out (``None`` asks for no filter)."""

    def __repr__(self):
        return "DEFAULT"


DEFAULT = _Default()


def tmp_group(f):
    """The group ``_version_data/__tmp__`` of ``f`` (a purehep.File or VersionedHDF5File),
    laid out as a versioned file with a group per committed version (their attributes
    copied), for :func:`recreate_dataset`; an existing one is returned as it is."""
    f = getattr(f, "f", f)
    data = f[DATA_GROUP]
    if TMP_GROUP in data:
        return data[TMP_GROUP]
    tmp = data.create_group(TMP_GROUP)
    initialize(tmp)
    versions = f[f"{DATA_GROUP}/versions"]
    for name in versions:
        if name != FIRST_VERSION:
            group = tmp[f"{DATA_GROUP}/versions"].create_group(name)
            for key, value in versions[name].attrs.items():
                group.attrs[key] = value
    return tmp


def recreate_dataset(f, name, newf, callback=None):
    """Write dataset ``name`` of every version of ``f`` again into ``newf`` (an initialized
    versioned file or group, typically :func:`tmp_group`) with a new raw_data and hash
    table. ``callback(dataset, version_name)`` may return the dataset to write instead
    (anything with the shape, dtype, chunks, fillvalue, attrs and filter properties of a
    staged dataset, read by slices), or None to leave the version without it. The first
    dataset written fixes the raw data's dtype, chunks, fill value and filters."""
    f = getattr(f, "f", f)
    f[f"{DATA_GROUP}/{name}/raw_data"]      # KeyError when there is no such dataset
    versions = f[f"{DATA_GROUP}/versions"]
    target = None
    for version in versions:
        if version == FIRST_VERSION or name not in versions[version]:
            continue
        dataset = StagedGroup.committed_dataset(f, versions[version], name)
        if callback is not None:
            dataset = callback(dataset, version)
            if dataset is None:
                continue
        if target is None:
            target = _create_target(newf, name, dataset)
        target = _rewrite_version(newf, name, version, dataset, *target)


def _create_target(newf, name, dataset):
    """The empty raw_data and hash table of ``newf`` for the first dataset rewritten."""
    dtype = np.dtype(dataset.dtype)
    chunks = normalize_chunks(dataset.chunks, (0,) * len(dataset.shape), dtype)
    check_raw_data(None, dataset)
    filters = {key: getattr(dataset, key) for key in FILTER_KEYS}
    return create_raw_data(newf, name, dtype, chunks, dataset.fillvalue, filters)


def _rewrite_version(newf, name, version, dataset, raw, table):
    """Every chunk of ``dataset`` committed to ``raw`` (deduplicated by ``table``, chunks
    of the fill value left out), a block of chunks at a time; the version's virtual
    dataset in ``newf``. Returns the raw data and the hash table."""
    dtype, shape = raw.dtype, tuple(dataset.shape)
    chunks = dataset.chunks if isinstance(dataset.chunks, tuple) else \
        tuple(int(c) for c in raw.attrs["chunks"])
    if len(chunks) != len(shape):
        raise ValueError("shape and chunk_size must have the same dimensionality")
    fill = dataset.fillvalue
    itemsize = OBJECT_ITEMSIZE if np.dtype(dataset.dtype) == object else \
        getattr(dataset, "itemsize_max", np.dtype(dataset.dtype).itemsize)
    budget = min(REWRITE_BLOCK_BYTES_MAX,
                 max(REWRITE_BLOCK_BYTES_MIN, REWRITE_BLOCK_BYTES_PER_CHUNK * table.largest_index))
    mapping = {}
    for block in _chunk_blocks(shape, chunks, itemsize, budget):
        data = np.asarray(dataset[block], dtype)
        corner = tuple(b.start // c for b, c in zip(block, chunks))
        modified = [(tuple(c + i for c, i in zip(corner, index)),
                     data[chunk_slices(index, chunks, data.shape)])
                    for index in slab_order(chunk_grid(data.shape, chunks))]
        _, table = commit_chunks(raw, table, modified, chunks, dtype, fill, mapping)
    group = newf[f"{DATA_GROUP}/versions/{version}"]
    vds = write_virtual_dataset(group, name, shape, dtype, chunks, fill, mapping, raw.shape,
                                raw.name)
    for key, value in dataset.attrs.items():
        if key not in ("chunks", "raw_data"):
            vds.attrs[key] = value
    return raw, table


def _chunk_blocks(shape, chunks, itemsize, budget):
    """Blocks of whole chunks (tuples of slices) tiling ``shape`` in C order, each of at most
    ``budget`` bytes but at least one chunk, grown along the last axis first (the package's
    ``_chunk_blocks``)."""
    counts = [math.ceil(s / c) for s, c in zip(shape, chunks)]
    if not all(counts):
        return
    block, nbytes = [1] * len(shape), itemsize * math.prod(chunks)
    for axis in reversed(range(len(shape))):
        block[axis] = max(1, min(counts[axis], budget // nbytes))
        nbytes *= block[axis]
        if block[axis] < counts[axis]:
            break
    for start in itertools.product(*(range(0, n, b) for n, b in zip(counts, block))):
        yield tuple(slice(i * c, min((i + b) * c, s))
                    for i, b, c, s in zip(start, block, chunks, shape))


def swap(old, new):
    """Exchange every dataset below group ``old`` with the dataset of the same path below
    group ``new`` (those without one are left alone): virtual datasets are written again
    with their sources (and string attributes holding a path) moved from one group's
    prefix to the other's, other datasets trade links."""
    names = []
    old.visititems(lambda name, obj: names.append(name)
                   if hasattr(obj, "shape") and name in new else None)
    for name in names:
        if getattr(new[name], "is_virtual", False):
            _swap_virtual(old, new, name)
        else:
            old.move(name, posixpath.join(new.name, name + "__tmp"))
            new.move(name, posixpath.join(old.name, name))
            new.move(name + "__tmp", name)
            _replace_attrs_prefix(old[name], new.name, old.name)
            _replace_attrs_prefix(new[name], old.name, new.name)


def _swap_virtual(old, new, name):
    mine, theirs = old[name], new[name]
    mine_layout = _moved_layout(mine, old.name, new.name)
    theirs_layout = _moved_layout(theirs, new.name, old.name)
    saved = [(d.fillvalue, dict(d.attrs)) for d in (mine, theirs)]
    for group, layout, (fillvalue, attrs), src, dst in (
            (old, theirs_layout, saved[1], new.name, old.name),
            (new, mine_layout, saved[0], old.name, new.name)):
        del group[name]
        vds = group.create_virtual_dataset(
            name, layout, fillvalue=None if is_vlen_string(layout.dtype) else fillvalue)
        for key, value in attrs.items():
            vds.attrs[key] = _moved_path(value, src, dst)


def _moved_layout(dataset, src, dst):
    """The layout of virtual dataset ``dataset`` with its sources' names moved from prefix
    ``src`` to prefix ``dst``."""
    layout = VirtualLayout(dataset.shape, dataset.dtype)
    for vspace, file_name, source, src_space in dataset.virtual_sources():
        moved = _moved_path(source, src, dst)
        if moved == source:
            raise ValueError(f"virtual dataset {dataset.name!r} maps {source!r}, not below "
                             f"{src!r}")
        layout.mappings.append((file_name, moved, _dims(src_space), _dims(vspace)))
    return layout


def _dims(space):
    """A mapping's selection as VirtualLayout stores it: None for all of it, else
    (start, stride, count, block) per axis."""
    if space.get_select_type() == 3:
        return None
    start, stride, count, block = space.get_regular_hyperslab()
    return [tuple(S.UNLIMITED if v == H5PY_UNLIMITED else v for v in axis)
            for axis in zip(start, stride, count, block)]


def _prefix(path):
    return path if path.endswith("/") else path + "/"


def _moved_path(value, src, dst):
    """``value`` with the group path ``src`` at its start replaced by ``dst`` (values that
    are not such strings as they are)."""
    if isinstance(value, str) and value.startswith(_prefix(src)):
        return _prefix(dst) + value[len(_prefix(src)):]
    return value


def _replace_attrs_prefix(obj, src, dst):
    for key, value in obj.attrs.items():
        moved = _moved_path(value, src, dst)
        if moved is not value:
            obj.attrs[key] = moved


class MetadataView:
    """A committed dataset as :func:`modify_metadata` rewrites it (the package's
    MetadataTransformView): its values cast to ``dtype`` as libhdf5 converts a read, then
    (when the fill value changes) the elements equal to the old fill value set to the new
    one; chunks and filters as given."""

    def __init__(self, dataset, dtype, fillvalue, chunks, filters):
        self.source = dataset
        self.name, self.shape = dataset.name, dataset.shape
        self.dtype = np.dtype(dtype)
        self._fillvalue = fillvalue
        self._prev_fillvalue = dataset.fillvalue
        self.chunks = chunks
        self.attrs = dict(dataset.attrs)
        self.filters = filters
        self.itemsize_max = max(self.dtype.itemsize, dataset.dtype.itemsize)

    compression = property(lambda self: self.filters["compression"])
    compression_opts = property(lambda self: self.filters["compression_opts"])
    shuffle = property(lambda self: self.filters["shuffle"])
    fletcher32 = property(lambda self: self.filters["fletcher32"])
    scaleoffset = property(lambda self: self.filters["scaleoffset"])

    @property
    def fillvalue(self):
        """The new fill value as a scalar of the new dtype (b"" for strings given none)."""
        value = self._fillvalue
        if value is None and is_vlen_string(self.dtype):
            value = b""
        return np.zeros((), self.dtype)[()] if value is None else \
            np.asarray(value, dtype=self.dtype)[()]

    def __getitem__(self, block):
        """The values of ``block`` (a tuple of slices, as :func:`_rewrite_version` reads)."""
        data = np.asarray(self.source[block])
        if data.dtype != self.dtype:
            data = self._converted(data, block)
        if self._fillvalue != self._prev_fillvalue:
            data = np.array(data)
            data[data == self._prev_fillvalue] = self._fillvalue
        return data

    def _converted(self, data, block):
        """``data`` read from ``block`` in the new dtype: what raw_data holds as libhdf5
        converts it, the chunks the version does not store (its fill value) as numpy
        converts the fill value (the package's StagedChangesArray.astype)."""
        if "O" in data.dtype.kind + self.dtype.kind:
            return data.astype(self.dtype)
        out = cast(data, self.dtype)
        grid = self.source.grid
        with np.errstate(invalid="ignore", over="ignore"):
            fill = np.asarray(self._prev_fillvalue).astype(self.dtype)
        for index in itertools.product(*(range(b.start // c, -(-b.stop // c))
                                         for b, c in zip(block, grid))):
            if index not in self.source.mapping:
                region = chunk_slices(index, grid, self.shape)
                out[tuple(slice(max(r.start, b.start) - b.start, min(r.stop, b.stop) - b.start)
                          for r, b in zip(region, block))] = fill
        return out


def modify_metadata(f, dataset_name, *, chunks=None, dtype=None, fillvalue=None,
                    compression=DEFAULT, compression_opts=DEFAULT, scaleoffset=DEFAULT,
                    shuffle=DEFAULT, fletcher32=DEFAULT):
    """Change the chunks, dtype, fill value or filters of dataset ``dataset_name`` of ``f``
    (a purehep.File or VersionedHDF5File) in every version, as the package's: arguments
    left out (None for chunks, dtype and fillvalue) keep what the dataset has; values are
    cast to the new dtype, and those equal to the old fill value become the new one; a
    filter argument given as None removes that filter (``compression=None`` also drops
    the compression options unless they are given)."""
    f = getattr(f, "f", f)
    given = {"compression": compression, "compression_opts": compression_opts,
             "scaleoffset": scaleoffset, "shuffle": shuffle, "fletcher32": fletcher32}

    def callback(dataset, version_name):
        return MetadataView(dataset, dataset.dtype if dtype is None else dtype,
                            dataset.fillvalue if fillvalue is None else fillvalue,
                            dataset.chunks if chunks is None else chunks,
                            _new_filters(dataset, given))

    newf = tmp_group(f)
    try:
        recreate_dataset(f, dataset_name, newf, callback=callback)
        swap(f, newf)
    finally:
        del f[newf.name]


def _new_filters(dataset, given):
    """The dataset's filters with those ``given`` (not DEFAULT) replaced; no compression
    options left when there is no compression and none are given."""
    filters = {key: getattr(dataset, key) for key in FILTER_KEYS}
    filters.update({key: value for key, value in given.items() if value is not DEFAULT})
    if given["compression_opts"] is DEFAULT and filters["compression"] is None:
        filters["compression_opts"] = None
    return filters
