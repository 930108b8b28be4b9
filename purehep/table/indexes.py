"""The four search-index kinds of HEP001 §8: build, write, link, drop, and load for queries.

Each builder takes the column's values, its fill value and its chunk length and returns the
index array plus its kind-specific attributes; :func:`write_index` stores it under
``_search_indexes/<column>__<kind>`` and links both ways (§8.2).
"""
import math
from dataclasses import dataclass

import numpy as np

from . import bloom
from .anndata_layout import column_name
from ._attrs import (get_refs, get_text, is_dataset, is_group, same, set_ascii, set_bool,
                     set_ref, set_refs, set_u64)

SEARCH_GROUP = "_search_indexes"
KINDS = ("CHUNK_MINMAX", "SORTED_ROWS", "BITMAP", "CHUNK_BLOOM")
MINMAX_FIELDS = ("min", "max", "nan_count", "fill_count", "n")
MAX_VALUES = 1024          # default BITMAP cardinality limit
# what checking an index against its column costs ("verify" mode), in scans of the column:
# the column read and the index rebuilt or compared (20 M rows, the HEP001 benchmark:
# CHUNK_MINMAX ~1, SORTED_ROWS ~3-5 (reading the permutation, a gather), CHUNK_BLOOM 16-24
# (hashing every value)); BITMAP reads a row per value
VERIFY_SCANS = {"CHUNK_MINMAX": 1, "SORTED_ROWS": 4, "BITMAP": 2, "CHUNK_BLOOM": 16}
GROW_CHUNK_BYTES = 1 << 16  # chunk size cap of the extendible index datasets
WIDE_ROW_CHUNK = 256        # elements of a Bloom filter row per chunk: queries read k columns


class TooManyValues(ValueError):
    """A BITMAP column has more distinct values than its max_values."""


def index_name(column, kind):
    """The recommended ``<column>__<kind>`` name (§8.1)."""
    return f"{column}__{kind.lower()}"


def chunk_length(ds):
    """Rows per chunk; a contiguous column is one chunk (§8.4)."""
    return ds.chunks[0] if ds.chunks else max(len(ds), 1)


def n_chunks(n_rows, length):
    return math.ceil(n_rows / length) if length else 0


def nan_mask(values):
    return np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)


def fill_mask(values, fill):
    """Rows whose value equals the fill value (§6.4); NaN equals nothing."""
    if fill is None:
        return np.zeros(len(values), dtype=bool)
    return np.asarray(values == fill, dtype=bool)


def minmax_dtype(dtype):
    return np.dtype([("min", dtype), ("max", dtype), ("nan_count", "<u8"),
                     ("fill_count", "<u8"), ("n", "<u8")])


def build_minmax(values, fill, length):
    """CHUNK_MINMAX rows (§8.4): extrema ignore NaN and fill; all-missing chunks hold fill."""
    if values.dtype.kind not in "iufbS":
        raise ValueError(f"CHUNK_MINMAX needs an orderable fixed-size column, not {values.dtype}")
    count = n_chunks(len(values), length)
    out = np.zeros(count, dtype=minmax_dtype(values.dtype))
    nan, filled = nan_mask(values), fill_mask(values, fill)
    for i in range(count):
        sl = slice(i * length, (i + 1) * length)
        chunk = values[sl][~(nan[sl] | filled[sl])]
        empty = fill if fill is not None else 0
        lo, hi = (np.sort(chunk)[[0, -1]] if chunk.dtype.kind == "S" else (chunk.min(), chunk.max())) \
            if len(chunk) else (empty, empty)
        out[i] = (lo, hi, nan[sl].sum(), filled[sl].sum(), len(values[sl]))
    return out, {"chunk_shape": np.array([length], dtype=np.uint64)}


def build_sorted(values, fill, length):
    """SORTED_ROWS permutation (§8.5): ordered values, then fill rows, then NaN rows."""
    nan, filled = nan_mask(values), fill_mask(values, fill)
    body = np.flatnonzero(~(nan | filled))
    body = body[np.argsort(values[body], kind="stable")]
    perm = np.concatenate([body, np.flatnonzero(filled), np.flatnonzero(nan)]).astype(np.uint64)
    return perm, {"nan_tail_length": int(nan.sum()), "fill_tail_length": int(filled.sum()),
                  "ordered": True}


def build_bitmap(values, fill, length, max_values=MAX_VALUES):
    """BITMAP rows (§8.6), one per distinct non-NaN value in sorted order, LSB-first bits."""
    distinct = np.unique(values[~nan_mask(values)])
    if len(distinct) > max_values:
        raise TooManyValues(f"{len(distinct)} distinct values exceed max_values={max_values}")
    return bitmap_rows(values, distinct), {"ordered": True, "values": distinct,
                                           "max_values": max_values}


def bitmap_rows(values, distinct):
    """(len(distinct), ceil(len(values) / 8)) packed bits: row k marks values == distinct[k]."""
    if not len(distinct):
        return np.zeros((0, (len(values) + 7) // 8), dtype=np.uint8)
    keep = ~nan_mask(values)
    codes = np.full(len(values), -1, dtype=np.int64)
    codes[keep] = np.searchsorted(distinct, values[keep])
    return np.stack([np.packbits(codes == k, bitorder="little") for k in range(len(distinct))])


def build_bloom(values, fill, length, m_bytes=None, k=None):
    """CHUNK_BLOOM filters (§8.7), one row per chunk, hashed as in :mod:`.bloom`."""
    count = n_chunks(len(values), length)
    chunks = [values[i * length:(i + 1) * length] for i in range(count)]
    if m_bytes is None or k is None:
        auto_m, auto_k = bloom.sizing(max([len(np.unique(c)) for c in chunks] + [1]))
        m_bytes, k = m_bytes or auto_m, k or auto_k
    filters = np.zeros((count, m_bytes), dtype=np.uint8)
    for i, chunk in enumerate(chunks):
        filters[i] = bloom.build_filter(chunk, k, m_bytes)
    return filters, {"k": k, "m_bits": 8 * m_bytes, "hash_family": bloom.HASH_FAMILY,
                     "chunk_shape": np.array([length], dtype=np.uint64)}


BUILDERS = {"CHUNK_MINMAX": build_minmax, "SORTED_ROWS": build_sorted, "BITMAP": build_bitmap,
            "CHUNK_BLOOM": build_bloom}


def _write_attrs(ds, kind, attrs):
    set_ascii(ds, "KIND", kind)
    for name, value in attrs.items():
        if name in ("ordered",):
            set_bool(ds, name, value)
        elif name in ("nan_tail_length", "fill_tail_length", "m_bits", "max_values"):
            set_u64(ds, name, value)
        elif name == "k":
            ds.attrs.create("k", np.uint16(value), dtype=np.uint16)
        elif name == "hash_family":
            set_ascii(ds, name, value)
        elif name == "chunk_shape":
            ds.attrs.create(name, value, dtype=np.uint64)


def write_index(group, column, kind, data, attrs, name=None):
    """Store an index under ``_search_indexes`` and link it with its column (§8.2)."""
    sgroup = group.require_group(SEARCH_GROUP)
    name = name or index_name(column_name(column), kind)
    if name in sgroup:
        drop_index(group, sgroup[name])
    ds = create_extendible(sgroup, name, data, data.dtype, grow_all=kind == "BITMAP")
    if kind == "BITMAP":
        values = create_extendible(sgroup, f"{name}__values", attrs.pop("values"), column.dtype)
        set_ref(ds, "_values", values)
    _write_attrs(ds, kind, attrs)
    set_refs(ds, "_columns_list", [column])
    set_refs(column, "_search_indexes", [*get_refs(column, "_search_indexes"), ds])
    return ds


def rewrite_index(group, index, data, attrs):
    """Store rebuilt contents into an existing index in place (same datasets, so references
    to them stay valid); False when its datasets cannot take the new shape."""
    ds, attrs = index.ds, dict(attrs)
    grow_all = index.kind == "BITMAP"
    if not extendible(ds, grow_all) or (not grow_all and ds.shape[1:] != data.shape[1:]):
        return False
    if grow_all:
        values = get_refs(ds, "_values")
        if len(values) != 1 or values[0] is None or not extendible(values[0]):
            return False
        new_values = attrs.pop("values")
        values[0].resize(new_values.shape)
        if len(new_values):
            values[0][...] = new_values
        ds.resize(data.shape)
    else:
        ds.resize(data.shape[0], axis=0)
    if data.size:
        ds[...] = data
    _write_attrs(ds, index.kind, attrs)
    return True


def create_extendible(sgroup, name, data, dtype, grow_all=False):
    """An index dataset appends can grow in place (§9): chunked, unlimited along the first
    axis (every axis with ``grow_all``: a BITMAP gains values and rows)."""
    data = np.asarray(data)
    rest = data.shape[1:]
    if grow_all:
        chunks = (1,) * (data.ndim - 1) + (_grow_length(data.shape[-1], data.dtype.itemsize),)
    else:
        rest_chunk = tuple(max(1, min(r, WIDE_ROW_CHUNK)) for r in rest)
        row_bytes = data.dtype.itemsize * int(np.prod(rest_chunk, dtype=np.int64))
        chunks = (_grow_length(data.shape[0], row_bytes),) + rest_chunk
    maxshape = (None,) * data.ndim if grow_all else (None,) + rest
    return sgroup.create_dataset(name, data=data, dtype=dtype, chunks=chunks, maxshape=maxshape)


def _grow_length(length, item_bytes):
    """Elements per chunk along a growing axis: a power of two covering ``length``, at least
    1 KiB and at most GROW_CHUNK_BYTES worth."""
    cap = max(1, GROW_CHUNK_BYTES // item_bytes)
    floor = max(1, 1024 // item_bytes)
    return min(cap, max(floor, 1 << max(0, int(length) - 1).bit_length()))


def extendible(ds, grow_all=False):
    """Whether appends can grow ``ds`` in place (chunked, unlimited where it grows)."""
    axes = ds.maxshape if grow_all else ds.maxshape[:1]
    return ds.chunks is not None and all(m is None for m in axes)


def rebuild_options(index):
    """Build options that keep a rebuilt index's choices: Bloom ``m_bytes``/``k``, BITMAP
    ``max_values``."""
    if index.kind == "CHUNK_BLOOM":
        return {"m_bytes": index.ds.shape[1], "k": int(index.ds.attrs["k"])}
    if index.kind == "BITMAP":
        return {"max_values": int(index.ds.attrs.get("max_values", MAX_VALUES))}
    return {}


def drop_index(group, ds):
    """Delete a search index, its values dataset and the back-references to it (§9)."""
    for column in get_refs(ds, "_columns_list"):
        if column is not None:
            kept = [s for s in get_refs(column, "_search_indexes") if not same(s, ds)]
            set_refs(column, "_search_indexes", kept)
    values = get_refs(ds, "_values")
    sgroup = group[SEARCH_GROUP]
    for target in [ds, *values]:
        if target is not None:
            del sgroup[target.name.rsplit("/", 1)[-1]]


@dataclass
class SearchIndex:
    """A loaded search index: its dataset, KIND and the one column it covers."""
    ds: object
    kind: str
    column: object

    @property
    def name(self):
        return self.ds.name.rsplit("/", 1)[-1]


def load_indexes(group):
    """Every search index with a registered KIND and exactly one resolvable column."""
    from .table import members
    sgroup = members(group).get(SEARCH_GROUP)
    if not is_group(sgroup):
        return []
    out = []
    for ds in members(sgroup).values():
        kind = get_text(ds, "KIND") if is_dataset(ds) else None
        columns = get_refs(ds, "_columns_list") if kind in KINDS else []
        if len(columns) == 1 and is_dataset(columns[0]):
            out.append(SearchIndex(ds, kind, columns[0]))
    return out


def structural_problems(index, n_rows, fill):
    """Why ``index`` does not describe its column's current shape (empty list when it does)."""
    ds, col, kind = index.ds, index.column, index.kind
    length = chunk_length(col)
    problems = []
    if not any(same(s, ds) for s in get_refs(col, "_search_indexes")):
        problems.append("column does not reference it in _search_indexes")
    if kind in ("CHUNK_MINMAX", "CHUNK_BLOOM"):
        shape = np.asarray(ds.attrs.get("chunk_shape", []), dtype=np.uint64).tolist()
        if shape != [length]:
            problems.append(f"chunk_shape {shape} != column chunk length {length}")
        if ds.shape[0] != n_chunks(n_rows, length):
            problems.append(f"{ds.shape[0]} rows for {n_chunks(n_rows, length)} chunks")
    if kind == "CHUNK_MINMAX" and ds.dtype != minmax_dtype(col.dtype):
        problems.append(f"datatype {ds.dtype} is not {minmax_dtype(col.dtype)}")
    if kind == "SORTED_ROWS" and (ds.shape != (n_rows,) or ds.dtype.kind != "u"):
        problems.append(f"shape {ds.shape} / dtype {ds.dtype} for {n_rows} rows")
    if kind == "BITMAP":
        problems += _bitmap_problems(ds, n_rows)
    if kind == "CHUNK_BLOOM":
        problems += _bloom_problems(ds)
    return problems


def _bitmap_problems(ds, n_rows):
    values = get_refs(ds, "_values")
    if len(values) != 1 or values[0] is None:
        return ["_values does not resolve"]
    if ds.ndim != 2 or ds.shape != (values[0].shape[0], (n_rows + 7) // 8) or ds.dtype != np.uint8:
        return [f"shape {ds.shape} / dtype {ds.dtype} for {values[0].shape[0]} values, {n_rows} rows"]
    return []


def _bloom_problems(ds):
    problems = []
    if ds.ndim != 2 or ds.dtype != np.uint8:
        problems.append(f"shape {ds.shape} / dtype {ds.dtype} is not 2-D uint8")
    elif int(ds.attrs.get("m_bits", 0)) != 8 * ds.shape[1]:
        problems.append(f"m_bits {ds.attrs.get('m_bits')} != 8 * {ds.shape[1]}")
    if get_text(ds, "hash_family") != bloom.HASH_FAMILY:
        problems.append(f"hash_family {get_text(ds, 'hash_family')!r}")
    if int(ds.attrs.get("k", 0)) < 1:
        problems.append("k < 1")
    return problems


def content_problems(index, values, fill):
    """Differences between the stored index and one rebuilt from the column's values (for
    SORTED_ROWS, checked without sorting: :func:`sorted_problems`)."""
    kind, ds = index.kind, index.ds
    if kind == "SORTED_ROWS":
        return sorted_problems(ds, values, fill)
    options = {"CHUNK_BLOOM": rebuild_options(index), "BITMAP": {"max_values": math.inf}}.get(kind, {})
    rebuilt, attrs = BUILDERS[kind](values, fill, chunk_length(index.column), **options)
    stored = ds[()]
    problems = []
    if kind == "BITMAP":
        stored_values = get_refs(ds, "_values")[0][()]
        if not np.array_equal(stored_values, attrs["values"]):
            problems.append("values dataset differs from the column's distinct values")
    if not _equal(stored, rebuilt):
        problems.append("contents differ from the column's values (stale index)")
    return problems


def sorted_problems(ds, values, fill):
    """Differences between the SORTED_ROWS permutation ``ds`` and the one ``build_sorted``
    makes of ``values``, found in linear time: that permutation is the only one listing
    every row once, the rows of values neither fill nor NaN first with their values
    ascending and equal values in row order (a stable sort), then the fill rows and the NaN
    rows in row order."""
    nan, filled = nan_mask(values), fill_mask(values, fill)
    problems = []
    tails = (("nan_tail_length", int(nan.sum())), ("fill_tail_length", int(filled.sum())))
    for name, want in tails:
        if int(ds.attrs.get(name, -1)) != want:
            problems.append(f"{name} {ds.attrs.get(name)} != {want}")
    perm = ds[()]
    n = len(values)
    if problems or perm.shape != (n,) or (n and int(perm.max()) >= n):
        return problems + ["contents differ from the column's values (stale index)"]
    perm = perm.astype(np.intp)
    body = n - int(nan.sum()) - int(filled.sum())
    seen = np.zeros(n, dtype=bool)
    seen[perm] = True
    head, v = perm[:body], values[perm[:body]]
    ok = seen.all() and not (nan | filled)[head].any() and \
        np.array_equal(perm[body:], np.concatenate([np.flatnonzero(filled), np.flatnonzero(nan)]))
    if ok and body > 1:
        later, same = v[1:] > v[:-1], v[1:] == v[:-1]
        ok = bool(np.all(later | (same & (head[1:] > head[:-1]))))
    return [] if ok else ["contents differ from the column's values (stale index)"]


def _equal(a, b):
    if a.shape != b.shape:
        return False
    if a.dtype.names:
        return all(_equal(a[n], b[n]) for n in a.dtype.names)
    return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
