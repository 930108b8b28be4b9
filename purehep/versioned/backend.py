"""The data side of a versioned file: ``_version_data/<path>/raw_data`` and ``hash_table``,
chunk grids, and the commit of one dataset into a version's virtual dataset
(/work/shared/reference/versioned-hdf5-layout.md §3-§5)."""
import hashlib
import itertools
import math
from collections import OrderedDict

import numpy as np

from ..hl.vds import VirtualLayout, VirtualSource
from ..hl.virtual import mapping_block
from ..write.policy import guess_chunk
from .hashing import Hashtable, chunk_hash, fill_hash

DATA_GROUP = "_version_data"
FILTER_KEYS = ("compression", "compression_opts", "shuffle", "fletcher32", "scaleoffset")
FILTER_DEFAULTS = {"compression": None, "compression_opts": None, "shuffle": False,
                   "fletcher32": False, "scaleoffset": None}
DEFAULT_CHUNK_SIZE = 4096       # the package's chunk length for create_dataset(chunks=None)
WRITE_BATCH = 1 << 24           # bytes of new chunks written to raw_data at a time
MAPPINGS_KEPT = 16              # decoded mappings kept, by the bytes that encode them
_MAPPINGS = OrderedDict()
H5PY_NAMED_FILTERS = frozenset([1, 2, 3, 4, 6, 32000])   # deflate shuffle fletcher32 szip
                                                         # scaleoffset lzf


def raw_path(name):
    """Absolute path of the raw dataset of dataset ``name`` (relative to a version)."""
    return f"/{DATA_GROUP}/{name}/raw_data"


def is_vlen_string(dtype):
    return dtype.kind in "OT"


def normalize_chunks(chunks, shape, dtype):
    """The chunk shape the package picks: as given, or h5py's guess for 1-D datasets."""
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        return (int(chunks),)
    if chunks is not None and not isinstance(chunks, bool):
        return tuple(int(c) for c in chunks)
    if len(shape) != 1:
        raise NotImplementedError("chunks must be specified for multi-dimensional datasets")
    return guess_chunk(shape, None, dtype.itemsize)


def raw_filters(raw):
    """The filter arguments the package reads back from ``raw`` (its ``Filters.from_dataset``
    under h5py 3.16, whose ``compression`` is ``'unknown'`` when a filter h5py does not name
    is present)."""
    found = {key: getattr(raw, key) for key in FILTER_KEYS}
    if found["compression"] is None and set(raw.filter_ids) - H5PY_NAMED_FILTERS:
        found["compression"] = "unknown"
    return found


def chunk_slices(index, chunks, shape):
    """The edge-trimmed region of chunk ``index`` as a tuple of slices."""
    return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(index, chunks, shape))


def chunk_grid(shape, chunks):
    """Every chunk index of ``shape``, in C order."""
    return itertools.product(*(range(math.ceil(s / c)) for s, c in zip(shape, chunks)))


def create_raw_data(f, name, dtype, chunks, fillvalue, filters):
    """``raw_data`` (empty, growing along axis 0 only) and an empty ``hash_table``."""
    group = f.require_group(f"{DATA_GROUP}/{name}")
    raw = group.create_dataset("raw_data", shape=(0,) + chunks[1:], dtype=dtype,
                               chunks=chunks, maxshape=(None,) + chunks[1:],
                               fillvalue=None if is_vlen_string(dtype) else fillvalue,
                               **{k: v for k, v in filters.items() if v is not None})
    raw.attrs["chunks"] = np.array(chunks, np.int64)
    return raw, Hashtable.create(group)


def open_raw_data(f, name, dtype, known=None):
    """(raw_data, hash table) of dataset ``name``, read before a commit writes anything
    (a read after a write stages the file's changes); (None, None) when the dataset has no
    raw_data yet, a None table when none is left (rebuild_hash_table leaves none when no
    version holds the dataset). ``known`` is the Hashtable the last commit left, taken
    instead of reading the table again when the file still holds that table as it left
    it (the same dataset, not recreated, with as many rows)."""
    raw = f.get(raw_path(name))
    if raw is None:
        return None, None
    if raw.dtype != dtype and not (is_vlen_string(raw.dtype) and is_vlen_string(dtype)):
        raise ValueError(f"dtypes are not compatible ({dtype} != {raw.dtype})")
    group = f[f"/{DATA_GROUP}/{name}"]
    if "hash_table" not in group:
        return raw, None
    dataset = group["hash_table"]
    if known is not None and known.dataset == dataset and \
            int(dataset.attrs["largest_index"]) == known.largest_index and not known.added:
        known.dataset = dataset
        return raw, known
    return raw, Hashtable(dataset)


def check_raw_data(raw, staged):
    """A dataset committed where an older version left raw_data ``raw`` must match it as
    the package's write_dataset requires: the chunk shape given, the filters given and
    the fill value (variable-length strings, whose raw_data has none, apart; NaN matches
    NaN here, where the package, comparing with ``!=``, refuses a NaN fill value); a new
    string dataset takes no fill value but "" (its create_base_dataset)."""
    if raw is None:
        if is_vlen_string(staged.dtype) and staged.fillvalue not in (b"", ""):
            raise ValueError("Non-default fillvalue not supported for variable length "
                             "strings")
        return
    if staged.grid != tuple(int(c) for c in raw.attrs["chunks"]):
        raise ValueError("Chunk size specified but doesn't match already existing chunk size")
    if any(staged.filters.get(k) not in (None, getattr(raw, k)) for k in staged.filters):
        raise ValueError("Compression options and other filters can only be specified for "
                         f"the first version of a dataset (dataset {staged.name})")
    if is_vlen_string(raw.dtype):
        return
    mine, theirs = staged.fillvalue, raw.fillvalue
    if not (mine == theirs or raw.dtype.kind in "fc" and np.isnan(mine) and np.isnan(theirs)):
        raise ValueError(f"fillvalues do not match ({mine} != {theirs})")


def commit_chunks(raw, table, modified, chunks, dtype, fillvalue, mapping):
    """Store the ``modified`` chunks ((index, edge-trimmed array) pairs, in order)
    copy-on-write: a chunk of fill values is dropped, a chunk whose digest is in the hash
    table re-uses its rows, any other is appended to raw_data. ``mapping`` (chunk index ->
    raw rows) is updated in place. Returns raw_data's shape and the hash table."""
    if table is None:
        table = Hashtable.create(raw.parent)
    pending = []
    fill = fill_hash(chunks, dtype, fillvalue)   # edge chunks never match: shapes differ
    for index, chunk in modified:
        digest = chunk_hash(chunk)
        if digest == fill:
            mapping.pop(index, None)
            continue
        rows = table.get(digest)
        if rows is None:
            start = table.largest_index * chunks[0]
            rows = (start, start + chunk.shape[0])
            table.add(digest, *rows)
            pending.append((rows, chunk))
        mapping[index] = rows
    if pending:
        raw.resize((table.largest_index * chunks[0],) + tuple(chunks[1:]))
        _write_rows(raw, pending, chunks, dtype, fillvalue)
    table.write()
    return raw.shape, table


def _write_rows(raw, pending, chunks, dtype, fillvalue):
    """Write the new chunks ((rows, chunk) pairs at consecutive chunk-sized row blocks) to
    raw_data: fixed-size ones a batch of up to WRITE_BATCH bytes at a time, each chunk
    padded to the chunk shape with the fill value (what the unwritten part of a raw_data
    chunk holds)."""
    per_batch = 1 if is_vlen_string(dtype) else \
        max(1, WRITE_BATCH // (math.prod(chunks) * dtype.itemsize))
    for at in range(0, len(pending), per_batch):
        batch = pending[at:at + per_batch]
        if len(batch) == 1:
            (start, stop), chunk = batch[0]
            raw[(slice(start, stop),) + tuple(slice(0, n) for n in chunk.shape[1:])] = chunk
            continue
        first = batch[0][0][0]
        block = np.full((len(batch) * chunks[0],) + tuple(chunks[1:]), fillvalue, dtype)
        for (start, _), chunk in batch:
            block[(slice(start - first, start - first + chunk.shape[0]),) +
                  tuple(slice(0, n) for n in chunk.shape[1:])] = chunk
        raw[first:first + len(block)] = block


def write_virtual_dataset(group, name, shape, dtype, chunks, fillvalue, mapping, raw_shape,
                          raw=None):
    """The version's dataset ``name``: a virtual dataset of ``shape`` whose chunk regions map
    to raw_data (of ``raw_shape``; at the absolute path ``raw``, by default
    :func:`raw_path`) rows (regions without a mapping read as the fill value)."""
    raw = raw or raw_path(name)
    layout = VirtualLayout(shape, dtype, maxshape=shape)
    source = VirtualSource(".", raw, shape=raw_shape, dtype=dtype)
    zeros = (0,) * (len(shape) - 1)
    for index in sorted(mapping):
        corner = [i * c for i, c in zip(index, chunks)]
        count = [min(c, s - a) for a, c, s in zip(corner, chunks, shape)]
        layout.map_block(corner, count, source, (mapping[index][0],) + zeros)
    vds = group.create_virtual_dataset(name, layout,
                                       fillvalue=None if is_vlen_string(dtype) else fillvalue)
    vds.attrs["chunks"] = np.array(chunks, np.int64)
    vds.attrs["raw_data"] = raw
    return vds


def dataset_names(group, prefix=""):
    """Paths of the datasets that own a raw_data below ``group`` (``_version_data``; the
    versions apart), depth first in name order as the package finds them."""
    found = []
    for key, obj in group.items():
        if hasattr(obj, "shape") or (not prefix and key == "versions"):
            continue
        if "raw_data" in obj:
            found.append(prefix + key)
        else:
            found.extend(dataset_names(obj, f"{prefix}{key}/"))
    return found


def rebuild_hash_table(f, name):
    """Replace dataset ``name``'s hash table by one hashing what the versions map, as the
    package's ``Hashtable.from_versions_traverse``: versions in name order, each one's
    mappings in order, a digest's first rows kept. No version holding ``name`` leaves no
    hash table (as the package leaves it)."""
    group = f[f"/{DATA_GROUP}/{name}"]
    if "hash_table" in group:
        del group["hash_table"]
    table = None
    for version in f[f"/{DATA_GROUP}/versions"].values():
        if name not in version:
            continue
        dataset = version[name]
        table = table or Hashtable.create(group)
        for vmap in dataset.virtual_sources():
            region = tuple(slice(a, b + 1) for a, b in zip(*vmap.vspace.get_select_bounds()))
            start, stop = vmap.src_space.get_select_bounds()
            digest = chunk_hash(dataset[region])
            if stop[0] >= start[0] and table.get(digest) is None:
                table.add(digest, int(start[0]), int(stop[0]) + 1)
    if table is not None:
        _cover_unmapped_rows(table, group["raw_data"], name)
        table.write()


def _cover_unmapped_rows(table, raw, name):
    """Pad the rebuilt ``table`` with one entry per raw_data chunk of rows no version maps
    (left by deleted versions), under a digest no chunk hashes to, so that
    ``largest_index`` (the package's and purehep's next append position, in chunks) lies past
    every row: with the live chunks alone it lies among them, and the next commit, of either
    library, wrote over rows a version still maps and truncated raw_data after them (the
    package's ``from_versions_traverse`` has that flaw; the padded table reads the same in
    both libraries)."""
    step = raw.chunks[0]
    slots = -(-raw.shape[0] // step)
    used = {start // step for start, _ in table.index.values()}
    for slot in range(slots):
        if table.largest_index >= slots:
            break
        if slot not in used:
            mark = hashlib.sha256(f"purehep: unmapped raw_data rows {slot} of {name}".encode())
            table.add(mark.digest(), slot * step, (slot + 1) * step)


def source_blocks(dataset):
    """(first element of the region, raw_data block as ``((start, stop), ...)`` per axis) of
    each mapping of a committed version's virtual dataset."""
    for vmap in dataset.virtual_sources():
        vstart, _ = vmap.vspace.get_select_bounds()
        sstart, sstop = vmap.src_space.get_select_bounds()
        yield vstart, tuple((int(a), int(b) + 1) for a, b in zip(sstart, sstop))


def read_mapping(dataset, chunks):
    """Chunk index -> raw_data rows of a committed version's virtual dataset (decoded once
    for the bytes of its mappings: :func:`remember_mapping`)."""
    key = (mapping_block(dataset), tuple(chunks))
    found = _MAPPINGS.get(key)
    if found is None:
        found = {tuple(int(s) // c for s, c in zip(vstart, chunks)): block[0]
                 for vstart, block in source_blocks(dataset)}
        _keep(key, found)
    else:
        _MAPPINGS.move_to_end(key)
    return dict(found)


def remember_mapping(dataset, chunks, mapping):
    """Note that the virtual dataset ``dataset`` just written holds ``mapping``, so that
    staging the next version from it decodes nothing."""
    _keep((mapping_block(dataset), tuple(chunks)), dict(mapping))


def _keep(key, mapping):
    _MAPPINGS[key] = mapping
    while len(_MAPPINGS) > MAPPINGS_KEPT:
        _MAPPINGS.popitem(last=False)
