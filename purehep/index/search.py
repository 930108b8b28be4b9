"""The query operation over an index's sorted key fields (RFC §5.2 "Query": "the select
operation recognizes the sorted fields and takes advantage of these for improved efficiency").

Records are sorted by the key fields in precedence order, so key ``k[i]`` is sorted within
each run of records that agree on ``k[0] .. k[i-1]`` (for ``k[0]``: the whole table). A
predicate on such a key is answered by binary search in each run the candidate records
cover; AND narrows the candidates item by item (sorted keys first), OR unites and NOT
subtracts record-number sets. Everything else — non-key fields, values a column cannot hold
exactly, too many runs — is handed to :func:`purehep.query.evaluate` on the candidates only,
so the answer is always the one a full scan gives.
"""
import functools
import math

import numpy as np

from ..query import And, Between, Compare, Field, In, IsNull, Not, Or, evaluate, fields
from ..query.evaluate import coerce

MAX_PIECES = 256   # runs searched one by one before a vectorised scan is cheaper
_NAN = object()    # a NaN literal: equal to nothing, different from everything


class Searcher:
    """Answers queries over records sorted by ``keys``: ``columns`` (name -> 1-D array) holds
    the key fields, read once; ``dtypes`` (name -> dtype) names every queryable field;
    ``read(name, lo, hi)`` gives a non-key field's values for records ``lo:hi`` (only the
    candidates' spans are read).

    Built once per loaded index (the sort order is checked here, not at each query)."""

    def __init__(self, columns, keys, dtypes, read, n):
        self.columns, self.dtypes, self.read, self.n = columns, dtypes, read, n
        self.levels, self.bounds = _sorted_levels(columns, keys, self.n)

    def run(self, expr):
        """Record numbers (ascending int64) of the records satisfying ``expr``."""
        # the same KeyError / ValueError a full scan raises, before any shortcut is taken
        evaluate(expr, {f: np.zeros(0, self.dtypes[f]) for f in fields(expr) if f in self.dtypes})
        found = self.select(expr, None)
        return np.arange(self.n, dtype=np.int64) if found is None else found

    def select(self, expr, cand):
        """The subset of the candidate record numbers ``cand`` (None: every record) where
        ``expr`` holds."""
        if cand is not None and not len(cand):
            return cand
        if isinstance(expr, And):
            for item in sorted(expr.items, key=self._order):
                cand = self.select(item, cand)
            return cand
        if isinstance(expr, Or):
            return functools.reduce(np.union1d, (self._all(self.select(e, cand))
                                                 for e in expr.items))
        if isinstance(expr, Not):
            return np.setdiff1d(self._all(cand), self._all(self.select(expr.item, cand)),
                                assume_unique=True)
        return self._leaf(expr, cand)

    def _all(self, cand):
        return np.arange(self.n, dtype=np.int64) if cand is None else cand

    def _order(self, item):
        """AND items on sorted keys first, in precedence order: each narrows the next."""
        field = getattr(item, "field", None)
        return self.levels.get(field, len(self.levels))

    def _values(self, name, cand):
        """Field ``name`` of the records ``cand`` (ascending; None: all)."""
        if cand is None:
            return self.columns[name] if name in self.columns else self.read(name, 0, self.n)
        if name in self.columns:
            return self.columns[name][cand]
        return self.read(name, int(cand[0]), int(cand[-1]) + 1)[cand - cand[0]]

    def _leaf(self, expr, cand):
        level = self.levels.get(expr.field)
        search = None if level is None else _piece_search(expr, self.columns[expr.field])
        pieces = None if search is None else self._pieces(level, cand)
        if pieces is None:
            hit = evaluate(expr, {f: self._values(f, cand) for f in fields(expr)})
            return np.flatnonzero(hit) if cand is None else cand[hit]
        column = self.columns[expr.field]
        found = [np.arange(a + lo, a + hi) for a, b in pieces for lo, hi in search(column[a:b])]
        return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)

    def _pieces(self, level, cand):
        """(start, stop) runs of consecutive candidates within which key ``level`` is sorted,
        or None when there are more than MAX_PIECES."""
        if cand is None:                  # every record: the runs of the preceding keys
            edges = np.r_[0, self.bounds[level], self.n]
            return None if len(edges) - 1 > MAX_PIECES else \
                list(zip(edges[:-1].tolist(), edges[1:].tolist()))
        cut = np.flatnonzero(np.diff(cand) != 1) + 1
        starts = cand[np.r_[0, cut]]
        stops = cand[np.r_[cut - 1, len(cand) - 1]] + 1
        edges = np.union1d(np.r_[starts, stops], self.bounds[level])
        first, last = edges[:-1], edges[1:]
        run = np.searchsorted(starts, first, "right") - 1
        keep = (run >= 0) & (first < stops[np.maximum(run, 0)])
        if keep.sum() > MAX_PIECES:
            return None
        return list(zip(first[keep].tolist(), last[keep].tolist()))


def _sorted_levels(columns, keys, n):
    """{key: level} for the longest prefix of ``keys`` the records are sorted by (checked,
    not trusted: a foreign table may claim more), and per level the record numbers where
    the preceding keys change."""
    levels, bounds = {}, []
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for level, key in enumerate(keys):
        column = columns[key]
        if column.dtype.kind not in "iufS" or not _nondecreasing(column, change):
            break
        levels[key] = level
        bounds.append(np.flatnonzero(change) + 1)
        change = change | (column[1:] != column[:-1])
    return levels, bounds


def _nondecreasing(column, change):
    """True if ``column`` never decreases inside a run (NaN sorts last, as numpy sorts)."""
    ok = column[:-1] <= column[1:]
    if column.dtype.kind == "f":
        ok |= np.isnan(column[1:])
    return bool(np.all(ok | change))


def _exact(column, value):
    """``value`` as a scalar of the column's type when that conversion is exact (so every
    numpy promotion compares alike), _NAN for a NaN, else None.

    A float literal on an integer column is compared by the scan in float64, where every
    integer rounding to the literal equals it (2**53 + 1 == 2.0**53): only below 2**53,
    where float64 holds every integer, does that agree with the exact integer search, so
    larger float literals are left to the scan."""
    value = coerce(column, value)
    kind = column.dtype.kind
    if kind == "S":
        return value if isinstance(value, bytes) else None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return None
    if kind == "f" and math.isnan(value):
        return _NAN
    if kind in "iu" and isinstance(value, (float, np.floating)) and not abs(value) < 2.0 ** 53:
        return None
    try:
        scalar = column.dtype.type(value)
    except (OverflowError, ValueError):
        return None
    return scalar if scalar == value else None


def _piece_search(expr, column):
    """A function sorted piece -> [(lo, hi), ...] intervals satisfying the leaf ``expr``, or
    None when a literal is not exactly representable in the column."""
    if isinstance(expr, IsNull) or isinstance(getattr(expr, "value", None), Field):
        return None                 # missing values and field-to-field comparisons: scanned
    values = {Compare: lambda e: (e.value,), Between: lambda e: (e.lo, e.hi),
              In: lambda e: e.values}[type(expr)](expr)
    exact = [_exact(column, v) for v in values]
    if any(v is None for v in exact):
        return None
    if isinstance(expr, Compare):
        return lambda piece: _compare(piece, expr.op, exact[0])
    if isinstance(expr, Between):
        return lambda piece: _between(piece, *exact)
    return lambda piece: [iv for v in exact for iv in _compare(piece, "==", v)]


def _valid(piece):
    """Length of the piece's leading non-NaN part (NaNs sort last)."""
    return int(np.searchsorted(piece, np.nan)) if piece.dtype.kind == "f" else len(piece)


def _compare(piece, op, x):
    n = len(piece)
    if x is _NAN:
        return [(0, n)] if op == "!=" else []
    m = _valid(piece)
    lo, hi = (int(np.searchsorted(piece[:m], x, side)) for side in ("left", "right"))
    return {"==": [(lo, hi)], "<": [(0, lo)], "<=": [(0, hi)], ">": [(hi, m)],
            ">=": [(lo, m)], "!=": [(0, lo), (hi, n)]}[op]


def _between(piece, lo, hi):
    if lo is _NAN or hi is _NAN:
        return []
    m = _valid(piece)
    a = int(np.searchsorted(piece[:m], lo, "left"))
    b = int(np.searchsorted(piece[:m], hi, "right"))
    return [(a, b)] if a < b else []
