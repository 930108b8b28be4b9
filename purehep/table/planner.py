"""The query planner: answers a query expression over a HEP001 table using its search
indexes (§8) where they are present and current, scanning otherwise.

The leaves of one AND on the same column (``ts >= a AND ts < b``) form a group that the
column's index answers at once. A group's answer is a :class:`.selection.Selection`: exact
sorted row numbers (BITMAP; SORTED_ROWS, whose group is one intersection of spans of the
permutation), or candidate row spans at chunk granularity (CHUNK_MINMAX, CHUNK_BLOOM). AND
and OR combine selections as row sets or spans; NOT keeps only exact ones. Unless the root is
exact, the expression is then evaluated over the candidates only — their spans of the
columns it reads, exact groups reusing their rows — so the answer equals a plain scan as
long as the indexes used are current. An AND takes its items cheapest first (chunk
indexes, SORTED_ROWS groups smallest first, BITMAPs, subexpressions) and stops at an empty
candidate set; an index is skipped where it would cost more than evaluating its group over
the candidates left (a SORTED_ROWS group covering more rows than that, or than 1/8 of the
table; a BITMAP OR of more bytes than the column over them).
Which indexes are used is the table's ``indexes`` mode (HEP001 §12): "verify" (default) uses
an index only once it has been checked against its column's current values (checked once
the scans it would have saved repay the check: ``Table.checked_when_worth``), "trust" uses
every structurally current one unchecked, "ignore" none.
"""
import functools
from dataclasses import dataclass

import numpy as np

from ..errors import PurehepError
from ..query import And, Between, Compare, Field, In, IsNull, Not, Or, evaluate, fields
from ..query.evaluate import coerce
from . import bloom
from . import indexes as ix
from ._attrs import get_refs, text
from .anndata_layout import column_name
from .selection import (Selection, combine_spans, complement, intersect, merge_spans,
                        spans_to_regions, unite)

SCAN_GAP = 1 << 16          # candidate spans closer than this many rows are read together
SCAN_REGION = 1 << 21       # at most this many rows of each column are read at once
SORTED_SHARE = 1 / 8        # a SORTED_ROWS group over more of the table: scanned instead
BITMAP_BITS = 8             # a BITMAP ORs at most this many rows per byte of a column value
PREFERENCE = ("BITMAP", "SORTED_ROWS", "CHUNK_MINMAX", "CHUNK_BLOOM")


@dataclass(frozen=True, eq=False)
class Group:
    """Comparison leaves of one AND (or a lone leaf) on the same column: their conjunction."""
    field: str
    leaves: tuple

    @property
    def expr(self):
        return self.leaves[0] if len(self.leaves) == 1 else And(self.leaves)


def plan_rows(table, expr, mode=None):
    """Sorted int64 row numbers where ``expr`` holds."""
    n = len(table)
    expr = categorical_rewrite(table, expr)
    mode = mode or table.indexes
    # the errors a scan raises (unknown column, string literal on a numeric column) are
    # raised whatever the indexes answer and however few rows the scan reads
    evaluate(expr, {name: table._ds(name)[0:0] for name in fields(expr)},
             table.missing_at(slice(0, 0)))
    usable = _usable_indexes(table, n, fields(expr)) if mode != "ignore" else {}
    tree = grouped(expr)
    planner = _Planner(table, usable, n, mode)
    found = planner.node(tree)
    if found.exact:
        return found.rows
    return _scan(tree, table, planner.exact, found, n)


def grouped(expr):
    """``expr`` with each AND's comparison leaves gathered by column into Groups (a lone
    comparison leaf becomes a Group of one); other leaves are left as they are."""
    if isinstance(expr, And):
        by_field, items = {}, []
        for item in expr.items:
            if _indexable(item):
                if item.field not in by_field:
                    by_field[item.field] = []
                    items.append(item.field)
                by_field[item.field].append(item)
            else:
                items.append(grouped(item))
        return And(tuple(Group(i, tuple(by_field[i])) if isinstance(i, str) else i
                         for i in items))
    if isinstance(expr, Or):
        return Or(tuple(grouped(e) for e in expr.items))
    if isinstance(expr, Not):
        return Not(grouped(expr.item))
    return Group(expr.field, (expr,)) if _indexable(expr) else expr


def _indexable(leaf):
    """Comparisons with literals (IS NULL and field-to-field comparisons are scanned)."""
    return isinstance(leaf, (Compare, Between, In)) and \
        not isinstance(getattr(leaf, "value", None), Field)


def chunk_candidates(table, expr, kinds=("CHUNK_MINMAX", "CHUNK_BLOOM")):
    """A Selection holding every row where ``expr`` may hold, from the chunk-level indexes
    (§8.4, §8.7) of the table's ``indexes`` mode alone: in "trust" mode no column is read.
    Used to skip row ranges before reading them (purehep.dask.read_table)."""
    n = len(table)
    expr = categorical_rewrite(table, expr)
    usable = _usable_indexes(table, n, fields(expr)) if table.indexes != "ignore" else {}
    usable = {name: [i for i in found if i.kind in kinds] for name, found in usable.items()}
    return _Planner(table, usable, n, table.indexes).node(grouped(expr))


def rows_in_span(table, expr, lo, hi):
    """Sorted int64 row numbers in [lo, hi) where ``expr`` holds, by reading the rows (the
    scan ``plan_rows`` falls back to, on one span)."""
    expr = categorical_rewrite(table, expr)
    return lo + np.flatnonzero(_eval(expr, table, {}, lo, hi, {})).astype(np.int64)


def _usable_indexes(table, n, names):
    """{column name: [SearchIndex]} of the indexes of the queried columns that match their
    column's current shape (in "verify" mode, the planner checks an index against the
    column's values only when about to use it: :meth:`_Planner.current`)."""
    out = {}
    for index in table.search_indexes():
        name = column_name(index.column)
        if name in names and index.column.parent.name == table.group.name and \
                not ix.structural_problems(index, n, table.fillvalue(name)):
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


class _Planner:
    """Selections of the nodes of one grouped expression; ``exact`` keeps the exact ones by
    node id for the final scan."""

    def __init__(self, table, usable, n, mode):
        self.table, self.usable, self.n, self.mode = table, usable, n, mode
        self.exact = {}
        self.positions = {}     # id(group) -> its SORTED_ROWS positions, once searched

    def current(self, index):
        """Whether ``index`` may be used: any structurally current one in "trust" mode, in
        "verify" mode once checked against its column, which waits until the scans it
        would have saved repay the check (``Table.checked_when_worth``). Asked only of an
        index about to answer a group, so that an index of a queried column that cannot
        answer the query (a CHUNK_BLOOM under a range) costs nothing."""
        return self.mode == "trust" or self.table.checked_when_worth(index)

    def node(self, expr, limit=None):
        """The Selection of a node; ``limit``: the candidates an enclosing AND has left (an
        index costing more than evaluating the node over them is not used)."""
        if isinstance(expr, And):
            return self._and(expr)
        if isinstance(expr, Or):
            return functools.reduce(unite, (self.node(e) for e in expr.items))
        if isinstance(expr, Not):
            return complement(self.node(expr.item), self.n)
        return self._group(expr, limit) if isinstance(expr, Group) else Selection.everything()

    def _and(self, expr):
        """Items cheapest first (chunk indexes, then SORTED_ROWS groups by size, BITMAPs,
        subexpressions), each told how many candidates are left; none left: exactly none."""
        found = Selection.everything()
        for item in sorted(expr.items, key=self._rank):
            limit = None if found.is_everything else found.count(self.n)
            if limit == 0:
                return Selection(np.zeros(0, np.int64), exact=True)
            found = intersect(found, self.node(item, limit))
        return found

    def _rank(self, item):
        if not isinstance(item, Group):
            return (3, 0)
        kinds = [i.kind for i in self.usable.get(item.field, [])]
        if "BITMAP" in kinds:
            return (2, 0)
        if "SORTED_ROWS" in kinds:     # (an order only: the index is checked before use)
            index = next(i for i in self.usable[item.field] if i.kind == "SORTED_ROWS")
            positions = self._positions(item, index)
            return (1, self.n) if positions is None else (1, _count(positions))
        return (0, 0)

    def _positions(self, group, index):
        """The group's SORTED_ROWS spans, or None when the permutation lists a row past the
        table's (a stale index, which verification rejects)."""
        if id(group) not in self.positions:
            try:
                found = _sorted_positions(group, self.table, index, self.n)
            except _StaleIndex:
                found = None
            self.positions[id(group)] = found
        return self.positions[id(group)]

    def _group(self, group, limit):
        """Exact rows from the first affordable BITMAP or SORTED_ROWS index, else the chunks
        every CHUNK_MINMAX / CHUNK_BLOOM index of the column leaves (each index checked, in
        "verify" mode, once it is known to answer the group and to be worth using). A
        group with a number for a string column is scanned (numpy finds such a literal
        equal to no string; the indexes cannot order or hash it)."""
        found = Selection.everything()
        indexes = self.usable.get(group.field, [])
        if indexes and not _literals_fit(group, indexes[0].column):
            return found
        for index in indexes:
            try:
                rows, spans = self._consult(index, group, limit)
            except PurehepError:
                if self.mode == "trust":
                    raise
                continue        # (verify: an index that fails to read is not used)
            if rows is not None:
                self.exact[id(group)] = Selection(rows, exact=True)
                return self.exact[id(group)]
            if spans is not None:
                found = intersect(found, Selection(spans=spans))
        return found

    def _consult(self, index, group, limit):
        """(exact rows, or None; spans of candidate chunks, or None) of one index."""
        if index.kind == "BITMAP":
            rows = _bitmap_rows(group, self.table, index, self.n, limit)
            return (rows if rows is None or self.current(index) else None), None
        if index.kind == "SORTED_ROWS":
            positions = self._positions(group, index)
            if positions is not None and \
                    _count(positions) <= min(max(SORTED_SHARE * self.n, 1),
                                             self.n if limit is None else limit) and \
                    self.current(index):
                return _sorted_rows(index, positions), None
            return None, None
        probe = _minmax_chunks if index.kind == "CHUNK_MINMAX" else _bloom_chunks
        chunks = probe(group, self.table, index)
        if chunks is not None and self.current(index):
            return None, _chunk_spans(chunks, index.column, self.n)
        return None, None


def _literals_fit(group, column):
    """False when a leaf of ``group`` compares the string column ``column`` with a literal
    that is not a string."""
    if column.dtype.kind not in "SUO":
        return True
    return all(isinstance(v, (str, bytes)) for leaf in group.leaves for v in _literals(leaf))


def _literals(leaf):
    if isinstance(leaf, In):
        return leaf.values
    return (leaf.lo, leaf.hi) if isinstance(leaf, Between) else (leaf.value,)


def _count(spans):
    return int(np.sum(spans[1] - spans[0]))


def _chunk_spans(chunks, column, n):
    """Row spans of the chunks flagged in ``chunks``."""
    length = ix.chunk_length(column)
    first = np.flatnonzero(chunks).astype(np.int64) * length
    return merge_spans(first, np.minimum(first + length, n))


def _matches(expr, values):
    """A leaf, or an AND of leaves on one field, applied to an array of candidate values."""
    return evaluate(expr, dict.fromkeys(fields(expr), values))


def _scalar_matches(leaf, value, dtype):
    """Whether the leaf holds for one value (fill or NaN) of the column's type."""
    return value is not None and bool(_matches(leaf, np.array([value], dtype=dtype))[0])


def _bitmap_rows(group, table, index, n, limit=None):
    """Exact rows from a BITMAP (§8.6): OR the rows of the values the group accepts; NaN
    rows (in no bitmap row) join when the group holds for NaN. None when reading those
    bitmap rows costs more than reading the column over the ``limit`` candidates (default:
    all rows)."""
    values = get_refs(index.ds, "_values")[0][()]
    wanted = np.flatnonzero(_matches(group.expr, values))
    with_nan = index.column.dtype.kind == "f" and \
        _scalar_matches(group.expr, np.nan, index.column.dtype)
    reads = len(values) if with_nan else len(wanted)
    if reads * n > BITMAP_BITS * index.column.dtype.itemsize * (n if limit is None else limit):
        return None
    bits = _or_rows(index.ds, wanted)
    if with_nan:
        bits |= ~_or_rows(index.ds, range(len(values)))
    return np.flatnonzero(_unpack(bits, n)).astype(np.int64)


def _unpack(bits, n):
    return np.unpackbits(bits, bitorder="little", count=n).astype(bool)


def _or_rows(ds, rows):
    out = np.zeros(ds.shape[1], dtype=np.uint8)
    for k in rows:
        out |= ds[int(k)]
    return out


class _StaleIndex(Exception):
    """A SORTED_ROWS permutation lists a row past the column's end."""


class _SortedView:
    """Column values in SORTED_ROWS order for binary search: each probe reads one element
    of the permutation and one of the column; probed positions are remembered (the bounds
    of a group's leaves share their first probes; a read-only table keeps them across
    queries)."""

    def __init__(self, index, n, probed):
        self.perm, self.col = index.ds, index.column
        self.probed = probed
        tails = int(index.ds.attrs["nan_tail_length"]) + int(index.ds.attrs["fill_tail_length"])
        self.body = n - tails

    def value(self, i):
        if i not in self.probed:
            row = int(self.perm[i])
            if row >= self.col.shape[0]:
                raise _StaleIndex(row)
            self.probed[i] = self.col[row]
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
        if _is_nan(lo) or _is_nan(hi):
            return []
        # (empty or not by the positions, found with the column's comparisons: bounds out of
        # order as Python numbers may be equal in the column's type, 0.1 and 0.10000000001
        # in float32)
        start, stop = view.bound(lo, False), view.bound(hi, True)
        return [(start, stop)] if stop > start else []
    value = coerce(sample, leaf.value)
    if _is_nan(value):
        return [(0, view.body)] if leaf.op == "!=" else []
    left, right = view.bound(value, False), view.bound(value, True)
    return {"==": [(left, right)], "!=": [(0, left), (right, view.body)], "<": [(0, left)],
            "<=": [(0, right)], ">": [(right, view.body)], ">=": [(left, view.body)]}[leaf.op]


def _is_nan(value):
    return isinstance(value, (float, np.floating)) and bool(np.isnan(value))


def _sorted_positions(group, table, index, n):
    """(starts, stops) of the SORTED_ROWS permutation (§8.5) where every leaf of the group
    holds: each leaf's by binary search (plus the fill and NaN tails when the leaf holds
    for them), intersected."""
    view = _SortedView(index, n, table.sorted_probes(index))
    positions = None
    for leaf in group.leaves:
        spans = _leaf_positions(leaf, table, index, view, n)
        positions = spans if positions is None else combine_spans(positions, spans, True)
    return positions


def _sorted_rows(index, positions):
    """The rows at the permutation's ``positions`` (one read per span), in row order."""
    parts = [index.ds[lo:hi] for lo, hi in zip(positions[0].tolist(), positions[1].tolist())]
    return _ascending(np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64))


def _ascending(rows):
    """Distinct row numbers in ascending order: marked in a mask over their range when it
    is dense enough (linear time), sorted otherwise."""
    if not len(rows):
        return rows
    lo, hi = int(rows.min()), int(rows.max()) + 1
    if hi - lo > 8 * len(rows):
        rows.sort()
        return rows
    mask = np.zeros(hi - lo, dtype=bool)
    mask[rows - lo] = True
    return np.flatnonzero(mask).astype(np.int64) + lo


def _leaf_positions(leaf, table, index, view, n):
    """Sorted disjoint (starts, stops) positions of the permutation where ``leaf`` holds."""
    col = index.column
    spans = _sorted_ranges(leaf, view, col[0:1]) if view.body else []
    fill_len = int(index.ds.attrs["fill_tail_length"])
    if fill_len and _scalar_matches(leaf, table.fillvalue(column_name(col)), col.dtype):
        spans.append((view.body, view.body + fill_len))
    if n > view.body + fill_len and _scalar_matches(leaf, np.nan, col.dtype):
        spans.append((view.body + fill_len, n))
    spans = sorted((lo, hi) for lo, hi in spans if hi > lo)
    merged = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return (np.array([a for a, _ in merged], np.int64), np.array([b for _, b in merged], np.int64))


def _minmax_chunks(group, table, index):
    """Chunks that may hold a match of every leaf according to CHUNK_MINMAX (§8.4)."""
    mm = index.ds[()]
    return functools.reduce(np.logical_and,
                            (_minmax_leaf(leaf, table, index, mm) for leaf in group.leaves))


def _minmax_leaf(leaf, table, index, mm):
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


def _bloom_chunks(group, table, index):
    """Chunks that may hold a match according to CHUNK_BLOOM (§8.7), from the group's
    equality leaves; None when none of them is one."""
    found = [may for may in (_bloom_leaf(leaf, index) for leaf in group.leaves) if may is not None]
    return functools.reduce(np.logical_and, found) if found else None


def _bloom_leaf(leaf, index):
    """Chunks that may hold an equality match; None when the filter cannot answer."""
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
        if key is _ANY:
            return None
        if key is not None:
            may |= bloom.may_contain(read_byte_column, key, k, 8 * ds.shape[1])
    return may


_ANY = object()     # a literal that several stored values may equal (no one key to hash)


def _canonical_literal(value, col):
    """The literal's canonical bytes in the column's type; None when no element can equal
    it; _ANY when elements of several values may: numpy compares a 64-bit integer column
    with a float in float64, where every integer that rounds to a float of 2**53 or more
    equals it."""
    sample = col[0:1]
    try:
        value = coerce(sample, value)
        if col.dtype.kind in "iu" and col.dtype.itemsize == 8 and \
                isinstance(value, (float, np.floating)) and abs(value) >= 2.0 ** 53:
            return _ANY if np.isfinite(value) else None
        if col.dtype.kind in "iufb":
            cast = np.array([value]).astype(col.dtype)
            if not cast[0] == value:
                return None
            keys = bloom.canonical_bytes(cast)
            return keys[0] if keys else None
    except (ValueError, OverflowError, TypeError):
        return None
    return bloom.canonical_bytes(np.array([value], dtype=object))[0]


def _scan(tree, table, exact, candidates, n):
    """Evaluate the grouped expression over the candidates: only the spans of the columns
    it reads that hold candidates; exact groups reuse their rows."""
    found = []
    for lo, hi in spans_to_regions(candidates.as_spans(), n, SCAN_GAP, SCAN_REGION):
        mask = _eval(tree, table, exact, lo, hi, {}) & candidates.rows_in(lo, hi)
        found.append(np.flatnonzero(mask) + lo)
    return np.concatenate(found).astype(np.int64) if found else np.zeros(0, np.int64)


def _eval(expr, table, exact, lo, hi, cache):
    """``expr`` over rows ``lo:hi``; an AND stops (reads no more columns) once no row is
    left, trying its exact groups first."""
    if isinstance(expr, And):
        mask = None
        for item in sorted(expr.items, key=lambda e: id(e) not in exact):
            part = _eval(item, table, exact, lo, hi, cache)
            mask = part if mask is None else mask & part
            if not mask.any():
                break
        return mask
    if isinstance(expr, Or):
        return functools.reduce(np.logical_or,
                                (_eval(e, table, exact, lo, hi, cache) for e in expr.items))
    if isinstance(expr, Not):
        return ~_eval(expr.item, table, exact, lo, hi, cache)
    if id(expr) in exact:
        return exact[id(expr)].rows_in(lo, hi)
    expr = expr.expr if isinstance(expr, Group) else expr
    for name in fields(expr):
        if name not in cache:
            cache[name] = table._ds(name)[lo:hi]
    return evaluate(expr, cache, table.missing_at(slice(lo, hi)))
