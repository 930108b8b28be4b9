"""The query planner: answers a query expression over a HEP001 table using its search
indexes (§8) where they are present and current, scanning otherwise.

Each leaf predicate gets a row mask that is either exact (BITMAP, SORTED_ROWS) or a superset
at chunk granularity (CHUNK_MINMAX, CHUNK_BLOOM). AND/OR combine them; NOT keeps only exact
masks. When the root is not exact, the candidate blocks are read and the whole expression is
evaluated there, exact leaves reusing their masks — so the answer equals a plain scan as long
as the indexes used are current. Which indexes are used is the table's ``indexes`` mode
(HEP001 §12): "verify" (default) uses an index only once it has been checked against its
column's current values, "trust" uses every structurally current one unchecked, "ignore" none.
"""
import functools

import numpy as np

from ..query import And, Between, Compare, Field, In, IsNull, Not, Or, evaluate, fields
from ..query.evaluate import coerce
from . import bloom
from . import indexes as ix
from ._attrs import get_refs, text
from .anndata_layout import column_name

SCAN_BLOCK = 1 << 16
PREFERENCE = ("BITMAP", "SORTED_ROWS", "CHUNK_MINMAX", "CHUNK_BLOOM")


def plan_rows(table, expr, mode=None):
    """Sorted int64 row numbers where ``expr`` holds."""
    n = len(table)
    expr = categorical_rewrite(table, expr)
    mode = mode or table.indexes
    usable = _usable_indexes(table, n, fields(expr), mode) if mode != "ignore" else {}
    exact = {}
    is_exact, mask = _node(expr, table, usable, exact, n)
    if not is_exact:
        mask = _scan(expr, table, exact, mask)
    return np.flatnonzero(mask).astype(np.int64)


def chunk_candidates(table, expr, kinds=("CHUNK_MINMAX", "CHUNK_BLOOM")):
    """A row mask holding every row where ``expr`` may hold, from the chunk-level indexes
    (§8.4, §8.7) of the table's ``indexes`` mode alone: in "trust" mode no column is read.
    Used to skip row ranges before reading them (purehep.dask.read_table)."""
    n = len(table)
    expr = categorical_rewrite(table, expr)
    usable = _usable_indexes(table, n, fields(expr), table.indexes) \
        if table.indexes != "ignore" else {}
    usable = {name: [i for i in found if i.kind in kinds] for name, found in usable.items()}
    return _node(expr, table, usable, {}, n)[1]


def rows_in_span(table, expr, lo, hi):
    """Sorted int64 row numbers in [lo, hi) where ``expr`` holds, by reading the rows (the
    scan ``plan_rows`` falls back to, on one span)."""
    expr = categorical_rewrite(table, expr)
    return lo + np.flatnonzero(_eval(expr, table, {}, lo, hi, {})).astype(np.int64)


def _usable_indexes(table, n, names, mode):
    """{column name: [SearchIndex]} of the indexes of the queried columns that match their
    column's current shape and, in "verify" mode, its current values."""
    out = {}
    for index in table.search_indexes():
        name = column_name(index.column)
        if name in names and index.column.parent.name == table.group.name and \
                not ix.structural_problems(index, n, table.fillvalue(name)) and \
                (mode == "trust" or table.verified(index)):
            out.setdefault(name, []).append(index)
    for found in out.values():
        found.sort(key=lambda i: PREFERENCE.index(i.kind))
    return out


def categorical_rewrite(table, expr):
    """String literals on categorical columns become the codes of the matching categories;
    a missing category (the fill code) then matches no comparison (§6.6)."""
    if isinstance(expr, (And, Or)):
        return type(expr)(tuple(categorical_rewrite(table, e) for e in expr.items))
    if isinstance(expr, Not):
        return Not(categorical_rewrite(table, expr.item))
    if isinstance(expr, IsNull) or isinstance(getattr(expr, "value", None), Field):
        return expr
    cats = table.categories(expr.field) if expr.field in table.group else None
    literals = (expr.value,) if isinstance(expr, Compare) else \
        (expr.lo, expr.hi) if isinstance(expr, Between) else expr.values
    if cats is None or not any(isinstance(v, (str, bytes)) for v in literals):
        return expr
    names = np.array([text(c) for c in cats], dtype=object)
    if isinstance(expr, In):
        ints = tuple(v for v in expr.values if not isinstance(v, (str, bytes)))
        strs = In(expr.field, tuple(v for v in expr.values if isinstance(v, (str, bytes))))
        return In(expr.field, ints + tuple(np.flatnonzero(evaluate(strs, {expr.field: names})).tolist()))
    return In(expr.field, tuple(np.flatnonzero(evaluate(expr, {expr.field: names})).tolist()))


def _node(expr, table, usable, exact, n):
    """(exact?, mask) for an expression node."""
    if isinstance(expr, (And, Or)):
        parts = [_node(e, table, usable, exact, n) for e in expr.items]
        combine = np.logical_and if isinstance(expr, And) else np.logical_or
        mask = parts[0][1].copy()
        for _, m in parts[1:]:
            combine(mask, m, out=mask)
        return all(p[0] for p in parts), mask
    if isinstance(expr, Not):
        child_exact, mask = _node(expr.item, table, usable, exact, n)
        return (True, ~mask) if child_exact else (False, np.ones(n, dtype=bool))
    return _leaf(expr, table, usable.get(expr.field, []), exact, n)


def _leaf(leaf, table, found, exact, n):
    mask = np.ones(n, dtype=bool)
    if isinstance(leaf, IsNull) or isinstance(getattr(leaf, "value", None), Field):
        return False, mask          # missing values, field-to-field comparisons: scanned
    for index in found:
        if index.kind in ("BITMAP", "SORTED_ROWS"):
            rows = (_bitmap_leaf if index.kind == "BITMAP" else _sorted_leaf)(leaf, table, index, n)
            exact[id(leaf)] = rows
            return True, rows
        chunks = (_minmax_leaf if index.kind == "CHUNK_MINMAX" else _bloom_leaf)(leaf, table, index)
        if chunks is not None:
            mask &= np.repeat(chunks, ix.chunk_length(index.column))[:n]
    return False, mask


def _matches(leaf, values):
    """The leaf predicate applied to an array of candidate values."""
    return evaluate(leaf, {leaf.field: values})


def _scalar_matches(leaf, value, dtype):
    """Whether the leaf holds for one value (fill or NaN) of the column's type."""
    return value is not None and bool(_matches(leaf, np.array([value], dtype=dtype))[0])


def _bitmap_leaf(leaf, table, index, n):
    """Exact rows from a BITMAP (§8.6): OR the rows of the values the predicate accepts;
    NaN rows (in no bitmap row) join when the predicate holds for NaN."""
    values = get_refs(index.ds, "_values")[0][()]
    wanted = np.flatnonzero(_matches(leaf, values))
    mask = _unpack(_or_rows(index.ds, wanted), n)
    if index.column.dtype.kind == "f" and _scalar_matches(leaf, np.nan, index.column.dtype):
        mask |= ~_unpack(_or_rows(index.ds, range(len(values))), n)
    return mask


def _unpack(bits, n):
    return np.unpackbits(bits, bitorder="little", count=n).astype(bool)


def _or_rows(ds, rows):
    out = np.zeros(ds.shape[1], dtype=np.uint8)
    for k in rows:
        out |= ds[int(k)]
    return out


class _SortedView:
    """Column values in SORTED_ROWS order for binary search: each probe reads one element
    of the permutation and one of the column; probed positions are remembered (the two
    bounds of a range share their first probes)."""

    def __init__(self, index, n):
        self.perm, self.col = index.ds, index.column
        self.probed = {}
        tails = int(index.ds.attrs["nan_tail_length"]) + int(index.ds.attrs["fill_tail_length"])
        self.body = n - tails

    def value(self, i):
        if i not in self.probed:
            self.probed[i] = self.col[int(self.perm[i])]
        return self.probed[i]

    def bound(self, value, right):
        """First position whose value is > value (right) or >= value (left)."""
        lo, hi = 0, self.body
        while lo < hi:
            mid = (lo + hi) // 2
            v = self.value(mid)
            if (v <= value) if right else (v < value):
                lo = mid + 1
            else:
                hi = mid
        return lo


def _sorted_ranges(leaf, view, sample):
    """[lo, hi) spans of the sorted body where the leaf holds."""
    if isinstance(leaf, In):
        return [r for v in leaf.values for r in _sorted_ranges(Compare(leaf.field, "==", v), view, sample)]
    if isinstance(leaf, Between):
        lo, hi = coerce(sample, leaf.lo), coerce(sample, leaf.hi)
        return [(view.bound(lo, False), view.bound(hi, True))] if _ordered(lo, hi) else []
    value = coerce(sample, leaf.value)
    if isinstance(value, float) and np.isnan(value):
        return [(0, view.body)] if leaf.op == "!=" else []
    left, right = view.bound(value, False), view.bound(value, True)
    return {"==": [(left, right)], "!=": [(0, left), (right, view.body)], "<": [(0, left)],
            "<=": [(0, right)], ">": [(right, view.body)], ">=": [(left, view.body)]}[leaf.op]


def _ordered(lo, hi):
    try:
        return bool(lo <= hi)
    except TypeError:
        return False


def _sorted_leaf(leaf, table, index, n):
    """Exact rows from a SORTED_ROWS permutation (§8.5) by binary search, plus the fill and
    NaN tails when the predicate holds for them."""
    view = _SortedView(index, n)
    col = index.column
    sample = col[0:1]
    spans = _sorted_ranges(leaf, view, sample) if view.body else []
    fill_len = int(index.ds.attrs["fill_tail_length"])
    if fill_len and _scalar_matches(leaf, table.fillvalue(column_name(col)), col.dtype):
        spans.append((view.body, view.body + fill_len))
    if n > view.body + fill_len and _scalar_matches(leaf, np.nan, col.dtype):
        spans.append((view.body + fill_len, n))
    mask = np.zeros(n, dtype=bool)
    for lo, hi in spans:
        if hi > lo:
            mask[index.ds[lo:hi].astype(np.intp)] = True
    return mask


def _minmax_leaf(leaf, table, index):
    """Chunks that may hold a match according to CHUNK_MINMAX (§8.4)."""
    mm = index.ds[()]
    col = index.column
    dtype = col.dtype
    valid = mm["n"] > mm["nan_count"] + mm["fill_count"]
    may = valid & _range_may(leaf, mm["min"], mm["max"])
    fill = table.fillvalue(column_name(col))
    if _scalar_matches(leaf, fill, dtype):
        may |= mm["fill_count"] > 0
    if dtype.kind == "f" and _scalar_matches(leaf, np.nan, dtype):
        may |= mm["nan_count"] > 0
    return may


def _range_may(leaf, lo, hi):
    """Whether some value in [lo, hi] can satisfy the leaf, chunk by chunk."""
    if isinstance(leaf, In):
        out = np.zeros(len(lo), dtype=bool)
        for v in leaf.values:
            out |= _range_may(Compare(leaf.field, "==", v), lo, hi)
        return out
    if isinstance(leaf, Between):
        return _matches(Compare(leaf.field, ">=", leaf.lo), hi) & \
            _matches(Compare(leaf.field, "<=", leaf.hi), lo)
    op, f = leaf.op, leaf.field
    if op == "==":
        return _matches(Compare(f, "<=", leaf.value), lo) & _matches(Compare(f, ">=", leaf.value), hi)
    if op == "!=":
        return ~(_matches(Compare(f, "==", leaf.value), lo) & _matches(Compare(f, "==", leaf.value), hi))
    return _matches(leaf, lo if op in ("<", "<=") else hi)


def _bloom_leaf(leaf, table, index):
    """Chunks that may hold an equality match according to CHUNK_BLOOM (§8.7); None when the
    filter cannot answer the predicate."""
    if isinstance(leaf, Compare) and leaf.op == "==":
        values = (leaf.value,)
    elif isinstance(leaf, In):
        values = leaf.values
    else:
        return None
    ds = index.ds
    k, read_byte_column = int(ds.attrs["k"]), functools.cache(lambda j: ds[:, j])
    may = np.zeros(ds.shape[0], dtype=bool)
    for value in values:
        key = _canonical_literal(value, index.column)
        if key is not None:
            may |= bloom.may_contain(read_byte_column, key, k, 8 * ds.shape[1])
    return may


def _canonical_literal(value, col):
    """The literal's canonical bytes in the column's type; None when no element can equal it."""
    sample = col[0:1]
    try:
        value = coerce(sample, value)
        if col.dtype.kind in "iufb":
            cast = np.array([value]).astype(col.dtype)
            if not cast[0] == value:
                return None
            keys = bloom.canonical_bytes(cast)
            return keys[0] if keys else None
    except (ValueError, OverflowError, TypeError):
        return None
    return bloom.canonical_bytes(np.array([value], dtype=object))[0]


def _scan(expr, table, exact, candidates):
    """Evaluate ``expr`` on the blocks holding candidates; exact leaves reuse their masks."""
    n = len(candidates)
    out = np.zeros(n, dtype=bool)
    starts = np.arange(0, n, SCAN_BLOCK)
    if n == 0:
        return out
    hit = np.logical_or.reduceat(candidates, starts)
    for lo, hi in _runs(hit, starts, n):
        out[lo:hi] = _eval(expr, table, exact, lo, hi, {}) & candidates[lo:hi]
    return out


def _runs(hit, starts, n):
    """Merge consecutive hit blocks into (lo, hi) row spans."""
    edges = np.diff(np.concatenate([[0], hit.astype(np.int8), [0]]))
    for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
        yield int(starts[a]), int(starts[b]) if b < len(starts) else n


def _eval(expr, table, exact, lo, hi, cache):
    if isinstance(expr, (And, Or)):
        combine = np.logical_and if isinstance(expr, And) else np.logical_or
        parts = [_eval(e, table, exact, lo, hi, cache) for e in expr.items]
        out = parts[0]
        for p in parts[1:]:
            out = combine(out, p)
        return out
    if isinstance(expr, Not):
        return ~_eval(expr.item, table, exact, lo, hi, cache)
    if id(expr) in exact:
        return exact[id(expr)][lo:hi]
    for name in fields(expr):
        if name not in cache:
            cache[name] = table._ds(name)[lo:hi]
    return evaluate(expr, cache, table.missing_at(slice(lo, hi)))
