"""HEP001 conformance checks: every MUST of §5–§9 that can be read from the file.

``validate(group)`` returns a list of ``(object path, problem)``; with ``raise_=True``
(the default) a non-empty list raises :class:`purehep.ValidationError` naming the paths.
"""
import numpy as np

from ..errors import ValidationError
from . import indexes as ix
from ._attrs import get_refs, get_text, same, text
from .table import CLASS, Table, _layout, is_table, members


def validate(group, verify_indexes=True, raise_=True):
    """Check a table group; ``verify_indexes`` also rebuilds each index and compares (§12)."""
    problems = []
    if not is_table(group):
        problems.append((group.name, f"no scalar CLASS attribute equal to {CLASS!r} (§5.1)"))
    else:
        table = Table(group)
        for check in (_group_attrs, _shapes, _links, _categoricals, _contents, _search_group):
            problems += check(table)
        if verify_indexes:
            problems += _index_contents(table)
    if problems and raise_:
        raise ValidationError("HEP001 violations:\n" + "\n".join(f"  {p}: {m}" for p, m in problems))
    return problems


def _fixed_ascii(obj, name, value=None):
    """Problems unless ``obj.attrs[name]`` is a scalar fixed-length ASCII string (= value)."""
    if name not in obj.attrs:
        return [(obj.name, f"missing attribute {name} (§5)")]
    dtype, shape = obj.attrs.get_dtype(name), obj.attrs.get_shape(name)
    problems = []
    if dtype.kind != "S" or shape != ():
        problems.append((obj.name, f"{name} must be a scalar fixed-length string, is {dtype} {shape}"))
    if value is not None and text(obj.attrs[name]) != value:
        problems.append((obj.name, f"{name} = {text(obj.attrs[name])!r}, expected {value!r}"))
    return problems


def _group_attrs(table):
    g = table.group
    problems = _fixed_ascii(g, "CLASS", CLASS) + _fixed_ascii(g, "VERSION")
    version = get_text(g, "VERSION") or ""
    if version.split(".")[0] != "1":
        problems.append((g.name, f"VERSION {version!r} is not a 1.x revision (§5.2)"))
    if "column-order" in g.attrs:
        order = [text(v) for v in np.asarray(g.attrs["column-order"]).reshape(-1)]
        datasets = {n for n, o in members(g).items() if hasattr(o, "dtype")}
        if len(order) != len(set(order)) or not set(order) <= datasets:
            problems.append((g.name, f"column-order {order} repeats names or names non-datasets (§9.6)"))
        unlisted = set(table.columns) - set(order)
        if unlisted:
            problems.append((g.name, f"column-order omits columns {sorted(unlisted)} (§9.6)"))
    return problems


def _shapes(table):
    """Rank 1 and one length for every column and index dataset (§6.1, §7.1, §9.1)."""
    g = table.group
    columns, labels, _ = _layout(g)
    problems = [(g[n].name, f"rank {g[n].ndim}, columns must be 1-D (§6.1)")
                for n in dict.fromkeys(columns + labels) if g[n].ndim != 1]
    lengths = {n: g[n].shape[0] for n in dict.fromkeys(columns + labels) if g[n].ndim == 1}
    if len(set(lengths.values())) > 1:
        problems.append((g.name, f"columns differ in length: {lengths} (§9.1)"))
    resolved = members(g)
    for name in g.keys():
        if name not in resolved:
            problems.append((f"{g.name.rstrip('/')}/{name}", "a link that does not resolve to "
                             "an object of the table (§5.5)"))
    for name, obj in resolved.items():
        if name == ix.SEARCH_GROUP and hasattr(obj, "dtype"):
            problems.append((obj.name, "_search_indexes must be a group (§8.1; reserved name, §6.1)"))
        elif not hasattr(obj, "dtype") and name != ix.SEARCH_GROUP:
            problems.append((obj.name, "only columns, indexes, categories and _search_indexes "
                                       "may live under a table group (§5.5)"))
    return problems


def _mutual(a, attr_a, targets, attr_b, where):
    """Both-way reference consistency (§7.2, §8.2, §9.2–3)."""
    problems = []
    for t in targets:
        if t is None:
            problems.append((a.name, f"{attr_a} holds an unresolvable reference"))
        elif not any(same(b, a) for b in get_refs(t, attr_b)):
            problems.append((a.name, f"{attr_a} -> {t.name}, which does not list it in {attr_b} ({where})"))
    return problems


def _links(table):
    g = table.group
    problems = []
    for name, obj in members(g).items():
        if not hasattr(obj, "dtype"):
            continue
        problems += _mutual(obj, "_indexes", get_refs(obj, "_indexes"), "_columns_list", "§9.2")
        problems += _mutual(obj, "_search_indexes", get_refs(obj, "_search_indexes"),
                            "_columns_list", "§9.3")
        if "_columns_list" in obj.attrs:
            problems += _mutual(obj, "_columns_list", get_refs(obj, "_columns_list"), "_indexes", "§9.2")
            if obj.attrs.get_shape("_columns_list").__len__() != 1:
                problems.append((obj.name, "_columns_list must be rank 1 (§7.1)"))
        for target in get_refs(obj, "_search_indexes"):
            if target is not None and target.parent.name != f"{g.name.rstrip('/')}/{ix.SEARCH_GROUP}":
                problems.append((obj.name, f"search index {target.name} is outside _search_indexes (§8.1)"))
    return problems


def _categoricals(table):
    """Integer codes and a categories dataset per §6.7 (§9.5)."""
    g = table.group
    problems = []
    for name, obj in members(g).items():
        if not hasattr(obj, "dtype") or "_categories" not in obj.attrs:
            continue
        if obj.dtype.kind not in "iu":
            problems.append((obj.name, f"categorical column has non-integer type {obj.dtype}"))
        cats = get_refs(obj, "_categories")
        if obj.attrs.get_shape("_categories") != () or len(cats) != 1 or cats[0] is None:
            problems.append((obj.name, "_categories must be one scalar resolvable reference"))
            continue
        cat = cats[0]
        if cat.parent.name != g.name or cat.ndim != 1:
            problems.append((cat.name, "categories must be a 1-D dataset directly under the table"))
        if get_text(cat, "encoding-type") != "categorical":
            problems.append((cat.name, "encoding-type must be 'categorical'"))
        if "ordered" not in cat.attrs or cat.attrs.get_shape("ordered") != () or \
                cat.attrs.get_dtype("ordered").kind not in "bui":
            problems.append((cat.name, "missing scalar boolean attribute ordered"))
    return problems


def _contents(table):
    """Per-index-kind attributes and structure (§8.3–§8.7)."""
    problems = []
    n = len(table)
    for ds in _search_datasets(table):
        kind = get_text(ds, "KIND")
        if kind is None:
            problems.append((ds.name, "missing KIND (§9.4)"))
            continue
        problems += _fixed_ascii(ds, "KIND")
        if kind not in ix.KINDS:
            continue
        columns = get_refs(ds, "_columns_list")
        if len(columns) != 1 or columns[0] is None:
            problems.append((ds.name, f"{kind} must link exactly one column via _columns_list"))
            continue
        problems += _mutual(ds, "_columns_list", columns, "_search_indexes", "§9.3")
        problems += _kind_attrs(ds, kind)
        index = ix.SearchIndex(ds, kind, columns[0])
        name = columns[0].name.rsplit("/", 1)[-1]
        problems += [(ds.name, p) for p in ix.structural_problems(index, n, table.fillvalue(name))]
    return problems


REQUIRED = {"CHUNK_MINMAX": ("chunk_shape",), "SORTED_ROWS": ("nan_tail_length", "fill_tail_length", "ordered"),
            "BITMAP": ("_values", "ordered"), "CHUNK_BLOOM": ("k", "m_bits", "hash_family", "chunk_shape")}
TYPES = {"nan_tail_length": "<u8", "fill_tail_length": "<u8", "m_bits": "<u8", "k": "<u2"}


def _kind_attrs(ds, kind):
    problems = [(ds.name, f"{kind} index lacks attribute {a}") for a in REQUIRED[kind] if a not in ds.attrs]
    for attr, dtype in TYPES.items():
        if attr in REQUIRED[kind] and attr in ds.attrs and \
                (ds.attrs.get_dtype(attr) != np.dtype(dtype) or ds.attrs.get_shape(attr) != ()):
            problems.append((ds.name, f"{attr} must be a scalar {np.dtype(dtype)}"))
    if kind == "SORTED_ROWS" and "ordered" in ds.attrs and not bool(ds.attrs["ordered"]):
        problems.append((ds.name, "ordered must be true for SORTED_ROWS (§8.5)"))
    if kind == "CHUNK_MINMAX" and ds.dtype.names != ix.MINMAX_FIELDS:
        problems.append((ds.name, f"compound fields {ds.dtype.names} != {ix.MINMAX_FIELDS} (§8.4)"))
    return problems


def _search_members(table):
    """The resolvable members of the _search_indexes group ({} when absent or not a group)."""
    sgroup = members(table.group).get(ix.SEARCH_GROUP)
    return members(sgroup) if sgroup is not None and not hasattr(sgroup, "dtype") else {}


def _search_datasets(table):
    found = [o for o in _search_members(table).values() if hasattr(o, "dtype")]
    values = {v.name for ds in found for v in get_refs(ds, "_values") if v}
    return [ds for ds in found if ds.name not in values]


def _search_group(table):
    """_search_indexes holds search-index datasets (and bitmap values) only (§8.1)."""
    return [(obj.name, "only search-index datasets may live in _search_indexes (§8.1)")
            for obj in _search_members(table).values() if not hasattr(obj, "dtype")]


def _index_contents(table):
    """Rebuild each structurally sound index and compare (§12 verification mode)."""
    problems = []
    n = len(table)
    for index in table.search_indexes():
        name = index.column.name.rsplit("/", 1)[-1]
        fill = table.fillvalue(name)
        if not ix.structural_problems(index, n, fill):
            problems += [(index.ds.name, p) for p in
                         ix.content_problems(index, index.column[()], fill)]
    return problems
