"""Row selections the query planner combines: exact row sets (what BITMAP and SORTED_ROWS
answer) and supersets (what CHUNK_MINMAX and CHUNK_BLOOM answer, at chunk granularity).

A :class:`Selection` holds sorted unique int64 row numbers (``rows``) or sorted disjoint
half-open row spans (``starts``, ``stops``), or neither (every row may match). Only a
``rows`` selection can be ``exact`` (the rows are exactly those where its expression holds);
otherwise it is a superset that the planner narrows by evaluating the expression over it.
No operation builds an array of the table's length unless the answer is that large (NOT).
"""
import numpy as np


class Selection:
    def __init__(self, rows=None, spans=None, exact=False):
        self.rows, self.spans = rows, spans
        self.exact = exact and rows is not None

    @classmethod
    def everything(cls):
        """No information: every row is a candidate."""
        return cls()

    @property
    def is_everything(self):
        return self.rows is None and self.spans is None

    def as_spans(self):
        """(starts, stops) covering the candidates; None for every row."""
        if self.rows is not None:
            return merge_spans(self.rows, self.rows + 1)
        return self.spans

    def count(self, n):
        """Number of candidate rows (``n``: the table's length)."""
        if self.rows is not None:
            return len(self.rows)
        return n if self.spans is None else int(np.sum(self.spans[1] - self.spans[0]))

    def rows_in(self, lo, hi):
        """A bool mask of the candidates among rows ``lo:hi``."""
        mask = np.zeros(hi - lo, dtype=bool)
        if self.rows is not None:
            sub = self.rows[np.searchsorted(self.rows, lo):np.searchsorted(self.rows, hi)]
            mask[sub - lo] = True
            return mask
        if self.spans is None:
            mask[:] = True
            return mask
        starts, stops = self.spans
        for a, b in zip(*_overlapping(starts, stops, lo, hi)):
            mask[max(a, lo) - lo:min(b, hi) - lo] = True
        return mask


def _overlapping(starts, stops, lo, hi):
    """The spans that meet [lo, hi)."""
    first = np.searchsorted(stops, lo, "right")
    last = np.searchsorted(starts, hi, "left")
    return starts[first:last].tolist(), stops[first:last].tolist()


def merge_spans(starts, stops):
    """Sorted spans with touching neighbours joined (input: sorted, non-overlapping)."""
    starts, stops = np.asarray(starts, np.int64), np.asarray(stops, np.int64)
    if not len(starts):
        return starts, stops
    cut = np.flatnonzero(starts[1:] != stops[:-1]) + 1
    return starts[np.r_[0, cut]], stops[np.r_[cut - 1, len(stops) - 1]]


def inside(spans, points):
    """Whether each of the sorted ``points`` lies in one of the ``spans``."""
    starts, stops = spans
    if not len(starts):
        return np.zeros(len(points), dtype=bool)
    i = np.searchsorted(starts, points, "right") - 1
    return (i >= 0) & (points < stops[np.maximum(i, 0)])


def combine_spans(a, b, both):
    """The intersection (``both``) or union of two span sets."""
    edges = np.union1d(np.r_[a[0], a[1]], np.r_[b[0], b[1]])
    lo, hi = edges[:-1], edges[1:]
    op = np.logical_and if both else np.logical_or
    keep = op(inside(a, lo), inside(b, lo))
    return merge_spans(lo[keep], hi[keep])


def intersect(a, b):
    """Rows in both selections; exact when both are."""
    if a.is_everything or b.is_everything:
        other = b if a.is_everything else a
        return Selection(other.rows, other.spans)
    if a.rows is not None and b.rows is not None:
        small, large = sorted((a.rows, b.rows), key=len)
        rows = small[np.isin(small, large, assume_unique=True)] if len(small) else small
        return Selection(rows, exact=a.exact and b.exact)
    if a.rows is not None or b.rows is not None:
        rows, other = (a.rows, b) if a.rows is not None else (b.rows, a)
        return Selection(rows[inside(other.spans, rows)])
    return Selection(spans=combine_spans(a.spans, b.spans, True))


def unite(a, b):
    """Rows in either selection; exact when both are."""
    if a.is_everything or b.is_everything:
        return Selection.everything()
    if a.rows is not None and b.rows is not None:
        return Selection(np.union1d(a.rows, b.rows), exact=a.exact and b.exact)
    return Selection(spans=combine_spans(a.as_spans(), b.as_spans(), False))


def complement(a, n):
    """The rows outside an exact selection; a superset's complement is unknown."""
    if not a.exact:
        return Selection.everything()
    mask = np.ones(n, dtype=bool)
    mask[a.rows] = False
    return Selection(np.flatnonzero(mask).astype(np.int64), exact=True)


def spans_to_regions(spans, n, gap, longest):
    """[lo, hi) regions to read for candidate spans (None: every row): spans closer than
    ``gap`` rows are read together, and no region is longer than ``longest`` rows."""
    if spans is None:
        starts, stops = np.array([0], np.int64), np.array([n], np.int64)
    else:
        starts, stops = spans
    if not len(starts):
        return []
    cut = np.flatnonzero(starts[1:] - stops[:-1] >= gap) + 1
    out = []
    firsts, lasts = starts[np.r_[0, cut]].tolist(), stops[np.r_[cut - 1, len(stops) - 1]].tolist()
    for lo, hi in zip(firsts, lasts):
        out.extend((a, min(a + longest, hi)) for a in range(lo, hi, longest))
    return out
