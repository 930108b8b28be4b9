"""HEP001 conformance of search indexes (§8.1–§8.7, §9 items 3–4, §12 verification), for
:func:`.validate.validate`: where they live, their links, KIND, per-kind datatypes, shapes
and attributes, and (``verify``) their contents against a rebuild from the column."""
import posixpath

import numpy as np

from ..errors import PurehepError
from ..hl.base import ExternalLink
from . import bloom
from . import indexes as ix
from ._attrs import deref, is_dataset, is_group, same, text
from .table import members
from .vtypes import attr_type, bool_attr, ref_attr, string_attr, uint_attr

SECTION = {"CHUNK_MINMAX": "§8.4", "SORTED_ROWS": "§8.5", "BITMAP": "§8.6", "CHUNK_BLOOM": "§8.7"}
READ_ERRORS = (PurehepError, OSError, KeyError, ValueError)


def label(obj):
    """An object's path, or what it is when no path reaches it (an unlinked object)."""
    return obj.name if obj.name is not None else f"an unlinked object (address {obj.addr})"


def search_problems(parts, verify):
    """Problems of the table's search indexes (``parts``: validate's _Parts)."""
    sgroup = parts.objects.get(ix.SEARCH_GROUP)
    sgroup = sgroup if is_group(sgroup) else None
    problems = []
    for ds in parts.datasets.values():
        problems += _column_side(ds, sgroup)
    if sgroup is None:
        return problems
    problems += _group_contents(sgroup)
    found = {n: o for n, o in members(sgroup).items() if is_dataset(o)}
    values = _values_datasets(found.values())
    for ds in found.values():
        if ds.addr not in values:
            try:
                problems += [(ds.name, m) for m in _index_problems(parts, ds, sgroup, verify)]
            except READ_ERRORS as e:
                problems.append((ds.name, f"unreadable: {type(e).__name__}: {e} (§8)"))
    return problems


def _column_side(ds, sgroup):
    """A column's _search_indexes: 1-D references to datasets in _search_indexes that list
    the column back (§6.5, §8.1, §8.2, §9.3)."""
    if attr_type(ds, "_search_indexes") is None:
        return []
    bad = ref_attr(ds, "_search_indexes", 1, section="§6.5")
    if bad:
        return [(ds.name, m) for m in bad]
    problems = []
    for target in deref(ds.file, ds.attrs["_search_indexes"]):
        if target is None:
            problems.append((ds.name, "_search_indexes holds a reference that does not resolve (§9.3)"))
        elif sgroup is None or not is_dataset(target) or _parent(target) != sgroup.name:
            problems.append((ds.name, f"search index {label(target)} is not a dataset in the "
                                      "table's _search_indexes group (§8.1)"))
        elif not _lists(target, "_columns_list", ds):
            problems.append((ds.name, f"_search_indexes -> {target.name}, which does not list it "
                                      "in _columns_list (§8.2, §9.3)"))
    return problems


def _parent(obj):
    """The path of the group holding ``obj`` (None for an object no path reaches)."""
    return None if obj.name is None else posixpath.dirname(obj.name)


def _lists(obj, attr, target):
    if attr_type(obj, attr) is None or ref_attr(obj, attr, 1) != []:
        return False
    return any(same(t, target) for t in deref(obj.file, obj.attrs[attr]))


def _group_contents(sgroup):
    """_search_indexes holds search-index datasets (and bitmap values) and nothing else (§8.1)."""
    problems = []
    resolved = members(sgroup)
    for name in sgroup.keys():
        path = f"{sgroup.name}/{name}"
        if isinstance(sgroup.get(name, getlink=True), ExternalLink) or name not in resolved:
            problems.append((path, "a link in _search_indexes that does not resolve to one of "
                                   "its datasets (§8.1, §5.5)"))
        elif not is_dataset(resolved[name]):
            problems.append((path, "only search-index datasets may live in _search_indexes (§8.1)"))
    return problems


def _values_datasets(datasets):
    """Addresses of the BITMAP values datasets the bitmaps' ``_values`` name (§8.6)."""
    out = set()
    for ds in datasets:
        if attr_type(ds, "_values") is not None and ref_attr(ds, "_values", 0) == []:
            out |= {v.addr for v in deref(ds.file, ds.attrs["_values"]) if v is not None}
    return out


def _index_problems(parts, ds, sgroup, verify):
    """One search-index dataset: KIND (§8.3, §9.4), its one column (§8.2), its kind's rules."""
    problems = string_attr(ds, "KIND", ascii=True, required=True, section="§8.3, §9.4")
    if "KIND" not in ds.attrs or string_attr(ds, "KIND", fixed=False) != []:
        return problems
    kind = text(ds.attrs["KIND"])
    if kind not in ix.KINDS:
        return problems            # consumers ignore unknown KINDs (§8.3)
    section = SECTION[kind]
    link = ref_attr(ds, "_columns_list", 1, section="§8.2")
    if link:
        return problems + link
    columns = deref(ds.file, ds.attrs["_columns_list"])
    if len(columns) != 1:
        return problems + [f"a {kind} index links exactly one column via _columns_list, not "
                           f"{len(columns)} ({section})"]
    col = columns[0]
    if col is None or not is_dataset(col) or parts.name_of(col) is None:
        return problems + ["_columns_list does not name a column dataset of the table (§8.2)"]
    if not _lists(col, "_search_indexes", ds):
        problems.append(f"_columns_list -> {col.name}, which does not list it in "
                        "_search_indexes (§8.2, §9.3)")
    if len(col.shape) != 1:
        return problems
    structure = KIND_CHECKS[kind](ds, col, sgroup)
    problems += structure
    if verify and not structure:          # the rebuild compares contents (§12)
        fill = None if col.dtype.kind == "O" else col.fillvalue
        index = ix.SearchIndex(ds, kind, col)
        problems += [f"{p} ({section}, §12)" for p in ix.content_problems(index, col[()], fill)]
    return problems


def _chunk_shape(ds, col, section):
    """chunk_shape: 1-D uint64, the column's chunk length (its length if contiguous, §8.4)."""
    if attr_type(ds, "chunk_shape") is None:
        return [f"missing attribute chunk_shape ({section})"]
    dtype, shape = ds.attrs.get_dtype("chunk_shape"), ds.attrs.get_shape("chunk_shape")
    if dtype.kind != "u" or dtype.itemsize != 8 or shape is None or len(shape) != 1:
        return [f"chunk_shape must be a 1-D uint64 array, is {dtype} {shape} ({section})"]
    stored = np.asarray(ds.attrs["chunk_shape"]).tolist()
    if stored != [ix.chunk_length(col)]:
        return [f"chunk_shape {stored} is not the column's chunk shape "
                f"[{ix.chunk_length(col)}] ({section})"]
    return []


def _n_chunks(col):
    return ix.n_chunks(col.shape[0], ix.chunk_length(col))


def _minmax(ds, col, sgroup):
    problems = _chunk_shape(ds, col, "§8.4")
    if len(ds.shape) != 1 or ds.shape[0] != _n_chunks(col):
        problems.append(f"shape {ds.shape}: one row per column chunk, ({_n_chunks(col)},) (§8.4)")
    names = ds.dtype.names or ()
    if names != ix.MINMAX_FIELDS:
        return problems + [f"compound fields {names} must be {ix.MINMAX_FIELDS} in that order (§8.4)"]
    for field in ("min", "max"):
        if ds.dtype[field] != col.dtype:
            problems.append(f"field {field} is {ds.dtype[field]}, the column's type is {col.dtype} (§8.4)")
    for field in ix.MINMAX_FIELDS[2:]:
        if ds.dtype[field].kind != "u" or ds.dtype[field].itemsize != 8:
            problems.append(f"field {field} must be uint64, is {ds.dtype[field]} (§8.4)")
    if not problems and col.dtype.kind != "f" and len(ds.shape) == 1 and \
            np.any(ds.fields("nan_count")[()] != 0):
        problems.append("nan_count is not 0 for a column that is not floating-point (§8.4)")
    return problems


def _sorted(ds, col, sgroup):
    n = col.shape[0]
    problems = []
    if ds.shape != (n,):
        problems.append(f"shape {ds.shape}: the column's length ({n},) (§8.5, §9.1)")
    if ds.dtype.kind != "u":
        problems.append(f"datatype {ds.dtype}: an unsigned integer (§8.5)")
    elif n and n - 1 > np.iinfo(ds.dtype).max:
        problems.append(f"{ds.dtype} cannot address row {n - 1} (§8.5)")
    for attr in ("nan_tail_length", "fill_tail_length"):
        problems += uint_attr(ds, attr, 8, "§8.5")
    problems += bool_attr(ds, "ordered", section="§8.5")
    if not problems and not bool(ds.attrs["ordered"]):
        problems.append("ordered must be true for SORTED_ROWS (§8.5)")
    return problems


def _bitmap(ds, col, sgroup):
    problems = bool_attr(ds, "ordered", section="§8.6")
    bad = ref_attr(ds, "_values", 0, section="§8.6")
    if bad:
        return problems + bad
    values = deref(ds.file, ds.attrs["_values"])[0]
    if values is None or not is_dataset(values) or _parent(values) != sgroup.name:
        return problems + ["_values does not name a dataset in _search_indexes (§8.6)"]
    if len(values.shape) != 1 or values.dtype != col.dtype:
        problems.append(f"values dataset {values.name} is {values.dtype} {values.shape}: 1-D of "
                        f"the column's type {col.dtype} (§8.6)")
    want = (values.shape[0] if values.shape else -1, (col.shape[0] + 7) // 8)
    if ds.dtype != np.uint8 or ds.shape != want:
        problems.append(f"{ds.dtype} {ds.shape}: uint8 of (values, ceil(rows / 8)) = {want} (§8.6)")
    return problems


def _bloom(ds, col, sgroup):
    problems = _chunk_shape(ds, col, "§8.7")
    if ds.dtype != np.uint8 or len(ds.shape) != 2 or ds.shape[0] != _n_chunks(col):
        problems.append(f"{ds.dtype} {ds.shape}: uint8 of (column chunks = {_n_chunks(col)}, "
                        "m_bytes) (§8.7)")
    k = uint_attr(ds, "k", 2, "§8.7")
    problems += k
    if not k and int(ds.attrs["k"]) < 1:
        problems.append("k must be at least 1 (§8.7)")
    m_bits = uint_attr(ds, "m_bits", 8, "§8.7")
    problems += m_bits
    if not m_bits and len(ds.shape) == 2 and int(ds.attrs["m_bits"]) != 8 * ds.shape[1]:
        problems.append(f"m_bits {int(ds.attrs['m_bits'])} != 8 * m_bytes = {8 * ds.shape[1]} (§8.7)")
    family = string_attr(ds, "hash_family", ascii=True, required=True, section="§8.7")
    problems += family
    if not family and text(ds.attrs["hash_family"]) != bloom.HASH_FAMILY:
        problems.append(f"hash_family {text(ds.attrs['hash_family'])!r} must be "
                        f"{bloom.HASH_FAMILY!r} (§8.7)")
    return problems


KIND_CHECKS = {"CHUNK_MINMAX": _minmax, "SORTED_ROWS": _sorted, "BITMAP": _bitmap,
               "CHUNK_BLOOM": _bloom}
