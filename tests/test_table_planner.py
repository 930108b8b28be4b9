"""purehep.table's query planner against a full scan: tables carrying one search-index kind
on every column (and one mixing kinds), queries with several range leaves on one column
(merged into one range), open and closed bounds, NaN and missing values, empty answers and
ranges beyond the data; the planner's cost limits varied so both the indexed and the scanned
path of every kind are taken. The oracle is numpy's evaluation of the columns h5py reads,
with the fill values as the missing values."""
import functools

import h5py
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import purehep
from purehep import query as Q
from purehep.table import Table, create_table, planner

N = 2000
FILL_I = np.iinfo(np.int64).min
KINDS = ("chunk_minmax", "sorted_rows", "bitmap", "chunk_bloom")
MIXED = {"ts": "sorted_rows", "f": "chunk_minmax", "i": "bitmap", "u": "chunk_bloom"}


def _data(seed=1):
    rng = np.random.default_rng(seed)
    ts = np.sort(rng.integers(0, 400, N)).astype(np.int64)        # increasing, with ties
    f = rng.integers(-20, 20, N) / 4
    f[rng.random(N) < 0.05] = np.nan
    i = rng.integers(-30, 30, N)
    i[rng.random(N) < 0.05] = FILL_I
    return {"ts": ts, "f": f, "i": i, "u": rng.integers(0, 25, N).astype(np.uint16)}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """{name: path}: one table per kind (that kind on every column), one with MIXED."""
    out = {}
    for name in KINDS + ("mixed",):
        path = tmp_path_factory.mktemp(name) / "t.h5"
        with purehep.File(path, "w") as f:
            t = create_table(f, "t", _data(), chunks=128, fillvalue={"i": FILL_I})
            for column in ("ts", "f", "i", "u"):
                t.create_search_index(column, MIXED[column] if name == "mixed" else name)
        out[name] = path
    return out


@pytest.fixture(scope="module")
def opened(tables):
    """{(name, mode): Table} kept open (a "verify" table checks its indexes once)."""
    files = {name: purehep.File(path, "r") for name, path in tables.items()}
    yield {(name, mode): Table(f["t"], indexes=mode) for name, f in files.items()
           for mode in ("verify", "trust", "ignore")}
    for f in files.values():
        f.close()


def _oracle(path, expr):
    columns = _columns(str(path))
    missing = {"i": lambda v: v == FILL_I, "f": np.isnan, "ts": lambda v: v == FILL_I,
               "u": lambda v: v == np.iinfo(np.uint16).max}
    return np.flatnonzero(Q.evaluate(expr, columns, missing))


@functools.cache
def _columns(path):
    with h5py.File(path, "r") as g:
        return {c: g["t"][c][()] for c in ("ts", "f", "i", "u")}


_VALUES = {"ts": [-5, 0, 1, 57, 200, 201, 399, 400, 10**9],
           "f": [-100.0, -5.0, -0.25, 0.0, 2.5, 4.75, 5.0, 1e300, float("nan")],
           "i": [-31, -30, -1, 0, 29, 30, FILL_I, -2**62],
           "u": [0, 1, 12, 24, 25, 65535, 3.5, -1]}


@st.composite
def _leaf(draw, field=None):
    field = field or draw(st.sampled_from(sorted(_VALUES)))
    value = st.sampled_from(_VALUES[field])
    kind = draw(st.sampled_from(["cmp", "cmp", "cmp", "between", "in", "null"]))
    if kind == "cmp":
        return Q.Compare(field, draw(st.sampled_from(Q.OPS)), draw(value))
    if kind == "between":
        return Q.Between(field, draw(value), draw(value))
    if kind == "in":
        return Q.In(field, tuple(draw(st.lists(value, min_size=1, max_size=3))))
    return Q.IsNull(field)


@st.composite
def _range(draw):
    """Two or three leaves on one column in one AND: a range to merge."""
    field = draw(st.sampled_from(sorted(_VALUES)))
    return Q.And(tuple(draw(st.lists(_leaf(field), min_size=2, max_size=3))))


@st.composite
def _exprs(draw, depth=2):
    if depth == 0 or draw(st.booleans()):
        return draw(st.one_of(_leaf(), _range()))
    kind = draw(st.sampled_from(["and", "and", "or", "not"]))
    if kind == "not":
        return Q.Not(draw(_exprs(depth - 1)))
    items = tuple(draw(st.lists(_exprs(depth - 1), min_size=2, max_size=3)))
    return Q.And(items) if kind == "and" else Q.Or(items)


_LIMITS = st.fixed_dictionaries({"SORTED_SHARE": st.sampled_from([1 / 32, 1.0]),
                                 "BITMAP_BITS": st.sampled_from([8, 10**6]),
                                 "SCAN_GAP": st.sampled_from([1, 300, 1 << 16]),
                                 "SCAN_REGION": st.sampled_from([7, 1 << 21])})


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(KINDS + ("mixed",)), expr=_exprs(), limits=_LIMITS)
def test_planner_equals_full_scan(tables, opened, name, expr, limits):
    path = tables[name]
    want = _oracle(path, expr)
    saved = {key: getattr(planner, key) for key in limits}
    try:
        for key, value in limits.items():
            setattr(planner, key, value)
        for mode in ("verify", "trust", "ignore"):
            got = opened[name, mode].where(expr)
            assert got.dtype == np.int64 and got.tolist() == want.tolist(), (mode, str(expr))
    finally:
        for key, value in saved.items():
            setattr(planner, key, value)


@pytest.mark.parametrize("name", KINDS + ("mixed",))
@pytest.mark.parametrize("text", [
    "ts >= 100 AND ts < 120", "ts > 100 AND ts <= 120 AND ts != 110", "ts >= 120 AND ts < 100",
    "ts >= 1000 AND ts < 2000", "ts < -1 OR ts > 399", "ts >= 0 AND ts <= 399",
    "f > -1 AND f < 1 AND i >= 0 AND i < 10", "f >= nan AND f <= 5", "NOT (f < 0 AND f > -3)",
    "i > -2 AND i < 3 AND u IN (1, 2)", "i <= -9223372036854775808 AND i < 0",
    "ts BETWEEN 50 AND 60 AND ts BETWEEN 55 AND 70 AND f IS NULL", "u = 3.5 AND u < 10",
])
def test_merged_ranges_equal_full_scan(tables, name, text):
    path = tables[name]
    expr = Q.parse(text)
    with purehep.File(path, "r") as f:
        assert Table(f["t"]).query(text).tolist() == _oracle(path, expr).tolist()


def test_range_on_sorted_rows_reads_one_slice_and_candidate_spans(tables, monkeypatch):
    """``ts >= a AND ts < b`` on SORTED_ROWS: one slice of the permutation (no mask of the
    table's length), then the other column read only over the candidates' span."""
    path = tables["mixed"]
    reads = []
    real = purehep.Dataset.__getitem__

    def spy(self, key):
        if isinstance(key, slice) and key.stop != key.start and \
                self.name in ("/t/_search_indexes/ts__sorted_rows", "/t/f"):
            reads.append((self.name.rsplit("/", 1)[-1], key.start, key.stop))
        return real(self, key)
    with purehep.File(path, "r") as f:
        t = Table(f["t"], indexes="trust")
        text = "ts >= 100 AND ts < 104 AND f > 0"
        monkeypatch.setattr(purehep.Dataset, "__getitem__", spy)
        got = t.query(text)
    assert got.tolist() == _oracle(path, Q.parse(text)).tolist()
    ts = _data()["ts"]
    lo, hi = np.searchsorted(ts, 100), np.searchsorted(ts, 104)
    assert reads == [("ts__sorted_rows", lo, hi), ("f", lo, hi)]


@pytest.mark.parametrize("name", KINDS)
def test_errors_as_full_scan_whatever_rows_are_read(opened, name):
    """A scan's errors are raised even when the indexes leave no row to read."""
    t = opened[name, "verify"]
    with pytest.raises(ValueError):
        t.query("ts > 1000000 AND f > 'x'")
    with pytest.raises(KeyError):
        t.query("ts < -5 AND nope = 1")


def test_and_reads_no_index_costlier_than_its_candidates(tables, monkeypatch):
    """In ``ts`` narrow AND ``u = 3``, both on SORTED_ROWS, the narrow group is answered
    first and u's permutation is not read for the ~80 rows ``u = 3`` covers: u is
    evaluated on ts's ~20 candidates instead."""
    path = tables["sorted_rows"]
    reads = []
    real = purehep.Dataset.__getitem__

    def spy(self, key):
        if isinstance(key, slice) and key.stop - key.start > 1:
            reads.append(self.name.rsplit("/", 1)[-1])
        return real(self, key)
    text = "u = 3 AND ts >= 100 AND ts < 104"
    with purehep.File(path, "r") as f:
        t = Table(f["t"], indexes="trust")
        monkeypatch.setattr(purehep.Dataset, "__getitem__", spy)
        got = t.query(text)
    assert got.tolist() == _oracle(path, Q.parse(text)).tolist()
    assert "ts__sorted_rows" in reads and "u__sorted_rows" not in reads and "u" in reads
