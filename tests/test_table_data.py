"""purehep.table keeping users' data (issue 16): index currency against edits behind the
indexes (purehep and h5py as writers, a scan as the oracle), atomic appends under injected
errors, missing values in queries, and lossless pandas / Arrow round trips (pandas' and
pyarrow's own equality as the oracle)."""
import h5py
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import purehep
from purehep.query import evaluate, parse
from purehep.table import Table, create_table, planner

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

KINDS = ("CHUNK_MINMAX", "SORTED_ROWS", "BITMAP", "CHUNK_BLOOM")


# --- 1. indexes never give answers a scan would not ------------------------------------------

def test_issue_example_write_through_table(tmp_path):
    with purehep.File(tmp_path / "a.h5", "w") as f:
        t = create_table(f, "t", {"a": np.arange(100)}, chunks=16)
        t.create_search_index("a", "CHUNK_MINMAX")
        t["a"][5] = 999999
        assert t.query("a = 999999").tolist() == [5]
        assert Table(f["t"], indexes="trust").query("a = 999999").tolist() == [5]
        assert t.validate() == []


def _queries(rng, values):
    picks = rng.choice(values, 4)
    return [f"a = {picks[0]}", f"a > {picks[1]}", f"a BETWEEN {min(picks[2:])} AND {max(picks[2:])}",
            f"a IN ({picks[0]}, {picks[3]})", f"NOT a <= {picks[1]}", "a IS NULL", "a != a"]


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(KINDS), st.booleans())
def test_edits_behind_indexes_never_change_answers(tmp_path_factory, seed, kind, floats):
    """Random edits through Table, through purehep datasets directly and through h5py;
    every query (default mode) equals a numpy scan of the column as it is on disk."""
    rng = np.random.default_rng(seed)
    path = tmp_path_factory.mktemp("edit") / "e.h5"
    n = 200
    a = rng.integers(0, 30, n).astype(np.float64 if floats else np.int64)
    with purehep.File(path, "w") as f:
        create_table(f, "t", {"a": a, "b": np.arange(n)}, chunks=32).create_search_index("a", kind)
    for step in range(6):
        where, value = int(rng.integers(0, n)), int(rng.integers(-5, 40))
        writer = step % 3
        if writer == 2:
            with h5py.File(path, "r+") as f:
                f["t/a"][where] = value
        else:
            with purehep.File(path, "r+") as f:
                t = Table(f["t"])
                if writer == 0:
                    t["a"][where] = value
                else:
                    f["t/a"][where] = value           # behind the table's back
                col = f["t/a"][()]
                for q in _queries(rng, col):
                    assert np.array_equal(t.query(q), np.flatnonzero(evaluate(parse(q), {"a": col}))), q
        with purehep.File(path, "r") as f:
            t = Table(f["t"])
            col = f["t/a"][()]
            for q in _queries(rng, col):
                expect = np.flatnonzero(evaluate(parse(q), {"a": col}))
                assert np.array_equal(t.query(q), expect), (q, kind, writer)
                assert np.array_equal(Table(f["t"], indexes="ignore").query(q), expect)


def test_trust_mode_is_what_it_says(tmp_path):
    """A tampered index: verify (default) and ignore answer right; trust follows the index."""
    path = tmp_path / "tamper.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "t", {"a": np.arange(64)}, chunks=16).create_search_index("a", "CHUNK_MINMAX")
    with h5py.File(path, "r+") as f:
        f["t/a"][3] = 500
    with purehep.File(path, "r") as f:
        assert Table(f["t"]).query("a = 500").tolist() == [3]
        assert Table(f["t"], indexes="ignore").query("a = 500").tolist() == [3]
        assert Table(f["t"], indexes="trust").query("a = 500").tolist() == []


@pytest.mark.parametrize("seed", range(8))
def test_sorted_rows_check_equals_rebuilding(seed):
    """The linear check of a SORTED_ROWS permutation (indexes.sorted_problems) finds it
    current exactly when it equals the one rebuilt by sorting: ties, fill values and NaN in
    the column; permutations with two entries swapped (within ties too), a row twice, a
    row past the end, tail lengths off."""
    from purehep.table import indexes as ix
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    values = rng.integers(0, 12, n).astype("f8")
    values[rng.random(n) < 0.1] = np.nan
    fill = 5.0 if seed % 2 else None
    built, attrs = ix.build_sorted(values, fill, 16)

    class Stored:                   # (what sorted_problems reads of the index dataset)
        def __init__(self, perm, **changed):
            self.perm, self.attrs = perm, {**attrs, **changed}

        def __getitem__(self, key):
            return self.perm

    assert ix.sorted_problems(Stored(built), values, fill) == []
    for _ in range(40):
        perm = built.copy()
        i, j = rng.integers(0, n, 2)
        change = rng.integers(0, 3)
        if change == 0:
            perm[[i, j]] = perm[[j, i]]
        elif change == 1:
            perm[i] = perm[j]
        else:
            perm[i] = n + int(rng.integers(0, 3))
        assert (ix.sorted_problems(Stored(perm), values, fill) == []) == \
            np.array_equal(perm, built), (perm, built)
    off = {"nan_tail_length": attrs["nan_tail_length"] + 1}
    assert ix.sorted_problems(Stored(built, **off), values, fill) != []


def test_an_index_that_cannot_answer_is_not_checked(tmp_path, monkeypatch):
    """A CHUNK_BLOOM index (equality only) of a column queried by range is not checked
    against the column (rebuilding it costs seconds on a big table); equality queries
    count towards checking it."""
    from purehep.table import indexes as ix
    path = tmp_path / "b.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "t", {"a": np.arange(64) % 10}, chunks=16) \
            .create_search_index("a", "CHUNK_BLOOM")
    checked = []
    real = Table.verified
    monkeypatch.setattr(Table, "verified", lambda self, index: checked.append(index.kind) or
                        real(self, index))
    with purehep.File(path, "r") as f:
        t = Table(f["t"])
        for _ in range(3 * ix.VERIFY_SCANS["CHUNK_BLOOM"]):
            assert t.query("a >= 8").tolist() == np.flatnonzero(np.arange(64) % 10 >= 8).tolist()
        assert checked == []
        for _ in range(ix.VERIFY_SCANS["CHUNK_BLOOM"]):
            assert t.query("a = 3").tolist() == np.flatnonzero(np.arange(64) % 10 == 3).tolist()
        assert checked == ["CHUNK_BLOOM"]


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_index_checked_once_the_scans_repay_it(tmp_path, monkeypatch, mode):
    """"verify" mode checks a SORTED_ROWS index (~4 scans of its column) only once as many
    queries would have used it, scanning until then; a file open for writing (nothing
    remembered between queries) scans every time. Answers equal the scan's throughout, and
    a stale index is never used (its check fails)."""
    from purehep.table import indexes as ix
    path = tmp_path / "s.h5"
    col = (np.arange(200) * 7919) % 200
    with purehep.File(path, "w") as f:
        create_table(f, "t", {"a": col}, chunks=32).create_search_index("a", "SORTED_ROWS")
    used = []
    real = planner._sorted_rows
    monkeypatch.setattr(planner, "_sorted_rows", lambda *a: used.append(1) or real(*a))
    cost = ix.VERIFY_SCANS["SORTED_ROWS"]
    with purehep.File(path, mode) as f:
        t = Table(f["t"])
        for q in range(2 * cost):
            assert t.query(f"a >= {q} AND a < {q + 3}").tolist() == \
                np.flatnonzero((col >= q) & (col < q + 3)).tolist()
    assert len(used) == (cost + 1 if mode == "r" else 0)
    with h5py.File(path, "r+") as f:
        f["t/a"][5] = 1000                                  # behind the index's back
    used.clear()
    with purehep.File(path, "r") as f:
        t = Table(f["t"])
        for _ in range(2 * cost):
            assert t.query("a >= 999").tolist() == [5]
    assert not used


# --- 2. atomic appends ------------------------------------------------------------------------

def _snapshot(path):
    """Every object under /t: shape, dtype, values and attributes (references by name)."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            attrs = {}
            for k, v in obj.attrs.items():
                if isinstance(v, np.ndarray) and v.dtype == object and v.size and \
                        isinstance(v.reshape(-1)[0], h5py.Reference):
                    v = [f[r].name for r in v.reshape(-1)]
                elif isinstance(v, h5py.Reference):
                    v = f[v].name
                attrs[k] = repr(v)
            data = repr(obj[()].tolist()) if isinstance(obj, h5py.Dataset) else None
            out[name] = (getattr(obj, "shape", None), str(getattr(obj, "dtype", "")), data, attrs)
        f["t"].visititems(visit)
        out["/t attrs"] = {k: repr(v) for k, v in f["t"].attrs.items()}
    return out


def _indexed(path):
    with purehep.File(path, "w") as f:
        t = create_table(f, "t", {"a": np.arange(50), "s": np.array([b"x%d" % (i % 5) for i in range(50)]),
                                  "c": pd.Categorical(["u", "v"] * 25)},
                         index={"row": np.arange(50, dtype=np.uint64)}, chunks=8)
        for kind in KINDS:
            t.create_search_index("a", kind)
        t.create_search_index("s", "BITMAP")


def test_failed_append_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "atomic.h5"
    _indexed(path)
    before = _snapshot(path)
    with purehep.File(path, "r+") as f:
        t = Table(f["t"])
        row = {"a": [1], "s": [b"q"], "c": ["u"], "row": [50]}
        for bad in ({**row, "a": ["oops"]}, {**row, "a": [1.7]}, {**row, "c": ["w"]},
                    {**row, "s": [None], "a": [None]} | {"s": ["text"]}, {**row, "x": [1]}):
            with pytest.raises(ValueError):
                t.append(bad)
    assert _snapshot(path) == before
    from purehep.table import table as table_module, update
    calls = {"n": 0}
    real_update = update.update_index

    def failing_update(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("injected: disk full")
        return real_update(*args)
    monkeypatch.setattr(table_module, "update_index", failing_update)
    with purehep.File(path, "r+") as f:
        with pytest.raises(OSError, match="injected"):
            Table(f["t"]).append({"a": np.arange(50, 70), "s": [b"x9"] * 20, "c": ["v"] * 20,
                                  "row": np.arange(50, 70)})
    assert _snapshot(path) == before
    monkeypatch.setattr(table_module, "update_index", real_update)
    real_write = Table._write_rows

    def failing_write(self, tx, name, arr, start):
        if name == "c":
            raise OSError("injected: write failed")
        return real_write(self, tx, name, arr, start)
    monkeypatch.setattr(Table, "_write_rows", failing_write)
    with purehep.File(path, "r+") as f:
        with pytest.raises(OSError, match="injected"):
            Table(f["t"]).append({"a": [99], "s": [b"n1"], "c": ["u"], "row": [50]})
    assert _snapshot(path) == before
    monkeypatch.setattr(Table, "_write_rows", real_write)
    with purehep.File(path, "r+") as f:                   # and a good append still works
        Table(f["t"]).append({"a": [99], "s": [b"n1"], "c": ["u"], "row": [50]})
        assert Table(f["t"]).validate() == [] and len(Table(f["t"])) == 51


# --- 3. missing values in queries ------------------------------------------------------------

def test_is_null_and_nan(tmp_path):
    df = pd.DataFrame({"x": [1.0, np.nan, 3.0, np.nan], "i": pd.array([1, None, 3, 4], dtype="Int64"),
                       "c": pd.Categorical(["a", None, "b", "a"]), "s": ["p", None, "q", "r"],
                       "b": pd.array([True, None, False, None], dtype="boolean")})
    with purehep.File(tmp_path / "n.h5", "w") as f:
        t = create_table(f, "t", df)
        t.create_search_index("x", "SORTED_ROWS")
        t.create_search_index("c", "BITMAP")
        assert t.query("x IS NULL").tolist() == [1, 3] == t.query("x != x").tolist()
        assert t.query("x = nan").tolist() == []                       # IEEE: NaN equals nothing
        assert t.query("x != nan").tolist() == [0, 1, 2, 3]
        assert t.query("x IS NOT NULL").tolist() == [0, 2]
        assert t.query("i IS NULL").tolist() == [1] and t.query("i > 2").tolist() == [2, 3]
        assert t.query("c IS NULL").tolist() == [1] and t.query("c = 'a'").tolist() == [0, 3]
        assert t.query("s IS NULL").tolist() == [1] and t.query("s = 'q'").tolist() == [2]
        assert t.query("b IS NULL").tolist() == [1, 3]
        assert f["t/c"].fillvalue == -1 and f["t/c"][1] == -1            # §6.6: missing code = fill


# --- 4. dtypes --------------------------------------------------------------------------------

def test_refusals_at_the_call(tmp_path):
    import decimal
    with purehep.File(tmp_path / "r.h5", "w") as f:
        for bad, match in (({"d": [decimal.Decimal("1.5")]}, "decimal"),
                           ({"l": [[1, 2], [3]]}, "nested"),
                           (pa.table({"l": pa.array([[1], [2]])}), "Arrow type"),
                           (pa.table({"d": pa.array([decimal.Decimal("1.5")])}), "Arrow type"),
                           ({"m": [1, "a"]}, "mixed")):
            with pytest.raises(ValueError, match=match):
                create_table(f, "bad", bad)
            assert "bad" not in f
        t = create_table(f, "t", {"i": np.arange(3), "c": pd.Categorical(["a", "b", "a"]),
                                  "s": ["x", "y", "z"]})
        for row, match in (({"i": [1.7]}, "without loss"), ({"c": ["q"]}, "not one of"),
                           ({"s": [None]}, "no fill value")):
            with pytest.raises(ValueError, match=match):
                t.append({"i": [1], "c": ["a"], "s": ["w"]} | row)
        t.append({"i": [1.7], "c": ["q"], "s": ["w"]}, lossy=True)
        assert t.read(["i"])["i"].tolist() == [0, 1, 2, 1]
        assert t.to_pandas()["c"].isna().tolist() == [False, False, False, True]
        with pytest.raises(ValueError, match="already holds"):
            create_table(f, None, {"a": [1]})
        # a fill value given that a pandas / Arrow value equals read back as missing
        for bad in (pd.DataFrame({"a": [0, 5]}), pa.table({"a": pa.array([0, 5])})):
            with pytest.raises(ValueError, match="also a value"):
                create_table(f, "bad", bad, fillvalue={"a": 0})
            assert "bad" not in f
        create_table(f, "sentinel", {"a": np.array([0, 5])}, fillvalue={"a": 0})   # HDF5's way
        assert Table(f["sentinel"]).to_pandas()["a"].tolist() == [pd.NA, 5]
        # an index named like a column overwrote the column's values (anndata refuses it)
        for bad, index in ((pd.DataFrame({"a": [1, 2]}, index=pd.Index([7, 8], name="a")), None),
                           ({"a": [1, 2]}, {"a": [7, 8]})):
            with pytest.raises(ValueError, match="has the name of a column"):
                create_table(f, "bad", bad, index=index)
            assert "bad" not in f


_N = st.shared(st.integers(0, 6), key="n")
_STR = pd.StringDtype(na_value=np.nan)      # "str": pandas 3's default string dtype, also in 2.3


def _col(kind):
    n = _N
    ints = lambda dt: n.flatmap(lambda k: st.lists(st.integers(np.iinfo(dt).min, np.iinfo(dt).max),
                                                    min_size=k, max_size=k).map(lambda v: np.array(v, dt)))
    opt = lambda s, k: st.lists(st.one_of(st.none(), s), min_size=k, max_size=k)
    text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=5)
    return {
        "int8": ints(np.int8), "uint64": ints(np.uint64), "int64": ints(np.int64),
        "float32": n.flatmap(lambda k: st.lists(st.floats(width=32, allow_nan=True), min_size=k,
                                                max_size=k).map(lambda v: np.array(v, np.float32))),
        "bool": n.flatmap(lambda k: st.lists(st.booleans(), min_size=k, max_size=k).map(np.array)),
        "str": n.flatmap(lambda k: st.lists(text, min_size=k, max_size=k).map(lambda v: np.array(v, dtype=object))),
        "bytes": n.flatmap(lambda k: st.lists(st.binary(max_size=4).filter(lambda b: not b.endswith(b"\0")),
                                              min_size=k, max_size=k).map(lambda v: np.array(v, dtype=object))),
        "cat": n.flatmap(lambda k: st.tuples(opt(st.sampled_from(["a", "b", "c"]), k), st.booleans()).map(
            lambda t: pd.Categorical(t[0], categories=["c", "a", "b"], ordered=t[1]))),
        "Int16": n.flatmap(lambda k: opt(st.integers(-2**15, 2**15 - 1), k).map(lambda v: pd.array(v, dtype="Int16"))),
        "UInt32": n.flatmap(lambda k: opt(st.integers(0, 2**32 - 1), k).map(lambda v: pd.array(v, dtype="UInt32"))),
        "boolean": n.flatmap(lambda k: opt(st.booleans(), k).map(lambda v: pd.array(v, dtype="boolean"))),
        "Float64": n.flatmap(lambda k: opt(st.floats(allow_nan=False), k).map(lambda v: pd.array(v, dtype="Float64"))),
        "string": n.flatmap(lambda k: opt(text, k).map(lambda v: pd.array(v, dtype="string"))),
        "strdtype": n.flatmap(lambda k: opt(text, k).map(lambda v: pd.array(v, dtype=_STR))),
        "strcat": n.flatmap(lambda k: opt(st.sampled_from(["a", "b", "c"]), k).map(
            lambda v: pd.Categorical(v, categories=pd.Index(["c", "a", "b"], dtype=_STR)))),
        "datetime": n.flatmap(lambda k: opt(st.integers(-2**40, 2**40), k).map(
            lambda v: pd.array([None if x is None else np.datetime64(x, "ms") for x in v],
                               dtype="datetime64[ms]"))),
        "datetimetz": n.flatmap(lambda k: opt(st.integers(-2**50, 2**50), k).map(
            lambda v: pd.arrays.DatetimeArray._from_sequence(
                [pd.NaT if x is None else pd.Timestamp(x, unit="ns", tz="UTC") for x in v],
                dtype=pd.DatetimeTZDtype("ns", "Asia/Tokyo")))),
        "timedelta": n.flatmap(lambda k: opt(st.integers(-2**40, 2**40), k).map(
            lambda v: pd.array([None if x is None else np.timedelta64(x, "us") for x in v],
                               dtype="timedelta64[us]"))),
    }[kind]


_KINDS = ["int8", "uint64", "int64", "float32", "bool", "str", "bytes", "cat", "Int16", "UInt32",
          "boolean", "Float64", "string", "strdtype", "strcat", "datetime", "datetimetz",
          "timedelta"]


@st.composite
def _frames(draw):
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=5))
    cols = {f"{k}_{i}": draw(_col(k)) for i, k in enumerate(kinds)}
    df = pd.DataFrame(cols)
    if draw(st.booleans()):
        df.index = pd.Index([f"r{i}" for i in range(len(df))], name=draw(st.sampled_from([None, "cell"])))
    return df


@settings(max_examples=40, deadline=None)
@given(_frames())
def test_dataframe_round_trip(tmp_path_factory, df):
    path = tmp_path_factory.mktemp("rt") / "rt.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "t", df, chunks=4)
    with purehep.File(path, "r") as f:
        t = Table(f["t"])
        pd.testing.assert_frame_equal(t.to_pandas(), df)
        expect = pa.Table.from_pandas(df, preserve_index=False)
        got = t.to_arrow()
        assert got.schema.names == expect.schema.names
        for name in expect.schema.names:
            e, g = expect.column(name), got.column(name)
            if pa.types.is_null(e.type):             # an object column of no values: no type
                continue
            if pa.types.is_dictionary(e.type):       # pandas picks the index width itself
                e = e.cast(pa.dictionary(g.type.index_type, e.type.value_type, e.type.ordered))
            if isinstance(df[name].dtype, np.dtype) and df[name].dtype.kind == "f":
                # pyarrow's from_pandas makes a numpy float column's NaN null; to_arrow keeps
                # NaN (Arrow tells them apart; test_arrow_round_trip checks nulls stay null)
                assert g.type == e.type and g.null_count == 0, name
                np.testing.assert_array_equal(g.to_numpy(), df[name].to_numpy())
                continue
            assert g.type == e.type and g.combine_chunks().equals(e.combine_chunks()), name


@settings(max_examples=30, deadline=None)
@given(_frames())
def test_arrow_round_trip(tmp_path_factory, df):
    at = pa.Table.from_pandas(df, preserve_index=False)
    if any(pa.types.is_null(t) for t in at.schema.types):
        at = at.select([n for n, t in zip(at.schema.names, at.schema.types) if not pa.types.is_null(t)])
    path = tmp_path_factory.mktemp("rta") / "rt.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "t", at, chunks=4)
    with purehep.File(path, "r") as f:
        got = Table(f["t"]).to_arrow()
    assert got.schema.names == at.schema.names
    for name in at.schema.names:
        e, g = at.column(name).combine_chunks(), got.column(name).combine_chunks()
        if pa.types.is_null(e.type):
            continue
        assert g.type == e.type and g.equals(e), name


def test_string_dtypes_and_arrow_string_widths(tmp_path):
    """pandas' "str" (missing: NaN) and "string" (missing: pd.NA) dtypes come back as
    themselves, str categories keep their dtype, and Arrow large_string / string columns keep
    their width (large_string is what pyarrow gives pandas' "str", the default in pandas 3)."""
    df = pd.DataFrame({"str": pd.array(["a", None, "b"], dtype=_STR),
                       "full": pd.array(["x", "y", "z"], dtype=_STR),
                       "string": pd.array(["a", None, "b"], dtype="string"),
                       "cat": pd.Categorical(["a", "b", None],
                                             categories=pd.Index(["b", "a"], dtype=_STR))})
    at = pa.table({"large": pa.array(["a", None, "b"], pa.large_string()),
                   "full": pa.array(["x", "y", "z"], pa.large_string()),
                   "small": pa.array(["a", None, "b"], pa.string()),
                   "dict": pa.array(["a", "b", None], pa.large_string()).dictionary_encode()})
    with purehep.File(tmp_path / "s.h5", "w") as f:
        create_table(f, "df", df)
        create_table(f, "at", at)
    with purehep.File(tmp_path / "s.h5") as f:
        got = Table(f["df"]).to_pandas()
        pd.testing.assert_frame_equal(got, df)
        assert got["str"].tolist()[1] is np.nan and got["string"].tolist()[1] is pd.NA
        assert Table(f["df"]).to_arrow().schema == pa.Table.from_pandas(df).schema.remove_metadata()
        assert Table(f["at"]).to_arrow().equals(at)


def test_big_endian_columns_come_out_native(tmp_path):
    """Big-endian columns and categories (kept so in the file) come out in native order, as
    pandas needs for groupby / take / merge ("Big-endian buffer not supported") and pyarrow
    for its arrays."""
    n = 10
    with purehep.File(tmp_path / "be.h5", "w") as f:
        create_table(f, "t", {"x": np.arange(n, dtype=">i4"), "f": np.arange(n, dtype=">f8") / 4,
                              "m": np.ma.masked_array(np.arange(n, dtype=">i2"), np.arange(n) % 4 == 0),
                              "c": np.arange(n) % 3 * 1.5},
                     chunks=4, categories={"c": np.array([0, 1.5, 3.0], ">f8")})
    want = pd.DataFrame({"x": np.arange(n, dtype="i4"), "f": np.arange(n) / 4,
                         "m": pd.array([None if i % 4 == 0 else i for i in range(n)], "Int16"),
                         "c": pd.Categorical(np.arange(n) % 3 * 1.5, categories=[0, 1.5, 3.0])})
    with purehep.File(tmp_path / "be.h5") as f:
        t = Table(f["t"])
        assert f["t/x"].dtype == ">i4" and f["t/c_categories"].dtype == ">f8"
        got = t.to_pandas()
        pd.testing.assert_frame_equal(got, want)
        pd.testing.assert_frame_equal(got.take([3, 1]), want.take([3, 1]))
        pd.testing.assert_frame_equal(got.groupby("c", observed=True)[["x", "m"]].sum(),
                                      want.groupby("c", observed=True)[["x", "m"]].sum())
        pd.testing.assert_frame_equal(got.merge(got, on="x"), want.merge(want, on="x"))
        pd.testing.assert_frame_equal(t.query("x >= 5", as_="pandas"),
                                      want[want.x >= 5])
        assert t.to_arrow().equals(pa.Table.from_pandas(want, preserve_index=False)
                                   .replace_schema_metadata())


def test_big_endian_times_stored_as_their_values(tmp_path):
    """Big-endian datetime64 / timedelta64 arrays (created and appended) store their values,
    not their byte-swapped int64 view (which read back as other times)."""
    d = np.array([0, 1, -5, 2**40], "datetime64[s]")
    m = np.array([3, 0, -1, 7], "timedelta64[ns]")
    with purehep.File(tmp_path / "bt.h5", "w") as f:
        t = create_table(f, "t", {"d": d.astype(">M8[s]"), "m": m.astype(">m8[ns]")})
        t.append({"d": d[:2].astype(">M8[s]"), "m": m[:2].astype(">m8[ns]")})
        want = pd.DataFrame({"d": np.r_[d, d[:2]], "m": np.r_[m, m[:2]]})
        pd.testing.assert_frame_equal(t.to_pandas(), want)
        assert t.query("d < 0").tolist() == [2]



@pytest.mark.parametrize("name", [None, "cell"])
def test_append_takes_the_dataframe_index(tmp_path, name):
    """A DataFrame appended to a table written from a DataFrame with an index gives the
    row index its index (append refused it: "append needs values for ['_index']"); pandas'
    concat is the oracle. A sliced default index is ignored as before."""
    df = pd.DataFrame({"a": [1, 2, 3], "s": ["x", "y", "z"]},
                      index=pd.Index(["r0", "r1", "r2"], name=name, dtype=object))
    with purehep.File(tmp_path / "ai.h5", "w") as f:
        t = create_table(f, "t", df.iloc[:1])
        t.append(df.iloc[1:])
        want = pd.concat([df.iloc[:1], df.iloc[1:]])
        want.index = pd.Index(want.index.tolist(), name=name)   # object str as pandas makes them
        pd.testing.assert_frame_equal(t.to_pandas(), want, check_exact=True)
        plain = df.reset_index(drop=True)
        u = create_table(f, "u", plain.iloc[:1])
        u.append(plain.iloc[1:])
        pd.testing.assert_frame_equal(u.to_pandas(), plain, check_exact=True)


def test_appended_times_in_the_column_unit(tmp_path):
    """Times of another unit are appended in the column's unit, as pandas' concat / astype
    gives them (with lossy=True the int64 count was stored as it was: 1 ms became 1 ns);
    finer units only with lossy=True (truncated as pandas truncates), nothing beyond the
    unit's range; datetimes and timedeltas, aware and naive values are refused."""
    d = pd.Series(np.array([0, 1, "NaT"], "datetime64[ns]"))
    more = pd.Series(np.array([1, "NaT", -7], "datetime64[ms]"))
    td = pd.Series(np.array([3, -2], "timedelta64[s]"))
    fine = pd.Series(np.array([1500, -1500, 2000], "timedelta64[ms]"))
    with purehep.File(tmp_path / "tu.h5", "w") as f:
        t = create_table(f, "t", pd.DataFrame({"d": d}))
        t.append(pd.DataFrame({"d": more}))
        t.append(pa.table({"d": pa.Array.from_pandas(more)}), lossy=True)
        want = pd.concat([d, more, more], ignore_index=True)
        assert want.dtype == "datetime64[ns]"
        pd.testing.assert_frame_equal(t.to_pandas(), pd.DataFrame({"d": want}), check_exact=True)
        for bad, kw, match in ((np.array([2**62], "datetime64[s]"), {"lossy": True}, "range"),
                               (np.array([1], "timedelta64[ns]"), {"lossy": True}, "takes"),
                               (d.dt.tz_localize("UTC"), {"lossy": True}, "naive")):
            with pytest.raises(ValueError, match=match):
                t.append({"d": bad}, **kw)
        assert len(t) == 9
        u = create_table(f, "u", pd.DataFrame({"td": td}))
        with pytest.raises(ValueError, match="lossy"):
            u.append({"td": fine})
        u.append({"td": fine}, lossy=True)
        pd.testing.assert_series_equal(u.to_pandas()["td"], pd.concat(
            [td, fine.astype("timedelta64[s]")], ignore_index=True), check_names=False)


@pytest.mark.parametrize("na_value", [pd.NA, np.nan], ids=["string", "str"])
@pytest.mark.parametrize("storage", ["python", "pyarrow"])
def test_string_storage_round_trips(tmp_path, storage, na_value):
    """A StringDtype comes back in the storage it was written in (pandas 2 restored
    "string[pyarrow]" as "string[python]", pandas 3 "string[python]" as pyarrow: the
    default storage), as columns, dictionary-encoded columns, categories, and in Arrow."""
    dtype = pd.StringDtype(storage, na_value=na_value)
    df = pd.DataFrame({"full": pd.array(["x", "y", "z"], dtype=dtype),
                       "gaps": pd.array(["a", None, "a"], dtype=dtype),
                       "cat": pd.Categorical(["b", None, "c"], categories=pd.Index(["c", "b"], dtype=dtype))})
    with purehep.File(tmp_path / "st.h5", "w") as f:
        t = create_table(f, "t", df.iloc[:2])
        t.append(df.iloc[2:])
        pd.testing.assert_frame_equal(t.to_pandas(), df, check_exact=True)
        assert t.to_arrow().schema == pa.Table.from_pandas(df).schema.remove_metadata()


@pytest.mark.parametrize("categories", [
    pd.DatetimeIndex(np.array([1, 2, 3], "datetime64[ms]")).tz_localize("UTC").tz_convert("Asia/Tokyo"),
    pd.Index(pd.array([1, 2, 3], "Int64")), pd.Index(pd.array([0.5, 1, 2], "Float32"))],
    ids=["tz", "Int64", "Float32"])
def test_categories_keep_their_dtype(tmp_path, categories):
    """Categories come back in their own dtype, as pandas and pyarrow.from_pandas have them
    (a time zone was dropped: the categories read back as naive UTC times, other instants
    on the wall clock; Int64 categories came back int64)."""
    df = pd.DataFrame({"c": pd.Categorical.from_codes([0, 2, -1, 0], categories=categories,
                                                      ordered=True)})
    with purehep.File(tmp_path / "cd.h5", "w") as f:
        t = create_table(f, "t", df)
        pd.testing.assert_frame_equal(t.to_pandas(), df, check_exact=True)
        want = pa.Table.from_pandas(df, preserve_index=False).column("c").combine_chunks()
        got = t.to_arrow().column("c").combine_chunks()
        assert got.dictionary.type == want.dictionary.type and got.dictionary.equals(want.dictionary)
        assert got.to_pylist() == want.to_pylist()


def _arrow_dtype_frame():
    """A frame of pandas ArrowDtype columns (``dtype_backend="pyarrow"``: what
    pd.read_parquet / read_csv give), of every Arrow type HEP001 stores, with nulls."""
    ts = pa.array([1, None, 3, 4], pa.int64())
    cols = {"i8": pa.array([1, None, -3, 4], pa.int8()), "u64": pa.array([1, 2, 3, 2**63], pa.uint64()),
            "f32": pa.array([0.5, None, 2.5, 3.0], pa.float32()),
            "f64": pa.array([0.5, 1.5, 2.5, 3.5], pa.float64()),
            "bool": pa.array([True, None, False, True]),
            "str": pa.array(["a", None, "β", ""], pa.string()),
            "full": pa.array(["a", "b", "c", "d"], pa.string()),
            "large": pa.array(["x", None, "y", "z"], pa.large_string()),
            "bin": pa.array([b"ab", None, b"c", b"cd"], pa.binary()),
            "ts": ts.cast(pa.timestamp("us")), "tstz": ts.cast(pa.timestamp("ms", "Asia/Tokyo")),
            "dur": ts.cast(pa.duration("s")),
            "dict": pa.array(["p", "q", None, "p"]).dictionary_encode().cast(
                pa.dictionary(pa.int16(), pa.string(), True))}
    return pd.DataFrame({n: pd.array(a, dtype=pd.ArrowDtype(a.type)) for n, a in cols.items()})


def test_arrow_dtypes_come_back(tmp_path):
    """pandas ArrowDtype columns come back as the same ArrowDtype (they came back as numpy or
    nullable dtypes, equal values of another dtype), appended to and through add_column too;
    to_arrow gives their Arrow types."""
    df = _arrow_dtype_frame()
    with purehep.File(tmp_path / "ad.h5", "w") as f:
        t = create_table(f, "t", df.iloc[:2])
        t.append(df.iloc[2:])
        t.add_column("late", pd.array(pa.array([7, None, 9, 10], pa.int32()),
                                      dtype=pd.ArrowDtype(pa.int32())))
    with purehep.File(tmp_path / "ad.h5") as f:
        t = Table(f["t"])
        want = df.assign(late=pd.array(pa.array([7, None, 9, 10], pa.int32()),
                                        dtype=pd.ArrowDtype(pa.int32())))
        pd.testing.assert_frame_equal(t.to_pandas(), want, check_exact=True)
        got = t.to_arrow()
        for name in df.columns:
            assert got.column(name).type == df[name].dtype.pyarrow_dtype, name


def test_nullable_boolean_takes_missing_values_later(tmp_path):
    """A boolean column with nothing missing yet is stored as int8 with the fill value -1
    (it was stored as bool, and a missing value appended later read back as True); one
    stored as bool (older files) refuses missing values."""
    df = pd.DataFrame({"b": pd.array([True, False], "boolean")})
    more = pd.DataFrame({"b": pd.array([None, False], "boolean")})
    path = tmp_path / "nb.h5"
    with purehep.File(path, "w") as f:
        t = create_table(f, "t", df)
        t.append(more)
        pd.testing.assert_frame_equal(t.to_pandas(), pd.concat([df, more], ignore_index=True))
        create_table(f, "old", {"b": np.array([True, False])})
    with h5py.File(path, "r+") as f:          # as purehep wrote a boolean column before
        f["old/b"].attrs["pandas_dtype"] = np.bytes_(b"boolean")
    with purehep.File(path, "r+") as f:
        t = Table(f["old"])
        with pytest.raises(ValueError, match="no fill value"):
            t.append(more)
        t.append(df)
        pd.testing.assert_frame_equal(t.to_pandas(), pd.concat([df, df], ignore_index=True))


def test_appended_categoricals_keep_their_missing_values(tmp_path):
    """An Arrow dictionary array (and a pandas Categorical) appended to a categorical column
    is looked up by the values its codes name; a null's index (arbitrary in Arrow) became a
    category before."""
    c = pd.Categorical.from_codes([0, 1, -1, 0, -1], categories=pd.Index([0.5, 1.5]))
    s = pd.Categorical(["u", None, "v", None], categories=["v", "u"])
    with purehep.File(tmp_path / "ca.h5", "w") as f:
        t = create_table(f, "t", {"c": c[:2]})
        t.append(pa.Table.from_pandas(pd.DataFrame({"c": c[2:]})))
        pd.testing.assert_series_equal(t.to_pandas()["c"], pd.Series(c, name="c"))
        t = create_table(f, "s", {"s": s[:1]})
        t.append(pa.table({"s": pa.array([None, "v", None], pa.string()).dictionary_encode()}))
        t.append({"s": s[1:]})
        pd.testing.assert_series_equal(t.to_pandas()["s"], pd.Series(pd.Categorical(
            list(s) + list(s[1:]), categories=s.categories), name="s"))


def test_appended_times_found_among_time_categories_by_instant(tmp_path):
    """Times appended to a column of time categories are looked up in the categories' unit
    (their int64 counts were compared: 5 ms and 10 s went in as the categories 5 ns and
    10 ns); times and non-time categories do not mix. pandas' own lookup is the oracle."""
    cats = pd.DatetimeIndex(np.array([5, 10, 5_000_000], "datetime64[ns]"))
    first = pd.Categorical.from_codes([0, 1], categories=cats)
    new = pd.Series(np.array([5, 0], "datetime64[ms]"))
    with purehep.File(tmp_path / "tc.h5", "w") as f:
        t = create_table(f, "t", pd.DataFrame({"c": first}))
        t.append(pd.DataFrame({"c": new}), lossy=True)           # 0 ms is no category
        want = pd.Categorical(list(first) + list(new), categories=cats)
        pd.testing.assert_series_equal(t.to_pandas()["c"], pd.Series(want, name="c"))
        for bad in (np.array([10], "datetime64[s]"), np.array([5])):
            with pytest.raises(ValueError, match="categories"):
                t.append({"c": bad})
        u = create_table(f, "u", {"c": pd.Categorical([1, 5])})
        with pytest.raises(ValueError, match="categories"):
            u.append({"c": np.array([5], "datetime64[ns]")})
        assert len(t) == 4 and len(u) == 2


def test_appended_bytes_found_among_bytes_categories(tmp_path):
    """Bytes categories stay bytes when appending (they were decoded: bytes values were
    refused, str ones taken for bytes, non-UTF-8 categories raised UnicodeDecodeError)."""
    first = pd.Categorical([b"a", b"\xff"])
    new = pd.Categorical([b"\xff", None, b"a"], categories=[b"a", b"\xff"])
    with purehep.File(tmp_path / "bc.h5", "w") as f:
        t = create_table(f, "t", pd.DataFrame({"c": first}))
        t.append(pd.DataFrame({"c": new}))
        t.append({"c": [b"a"]})
        with pytest.raises(ValueError, match="not one of the categories"):
            t.append({"c": ["a"]})
        want = pd.Categorical(list(first) + list(new) + [b"a"], categories=first.categories)
        pd.testing.assert_series_equal(t.to_pandas()["c"], pd.Series(want, name="c"))


def test_none_is_a_missing_value_of_any_column(tmp_path):
    """None (untyped: Python objects with nothing else) appended or written is a missing
    value of the column's dtype, as pandas makes it one (it was refused as str values by
    nullable boolean, numeric, time and time-category columns); columns without a fill
    value (plain bool, vlen str) refuse it."""
    df = pd.DataFrame({"b": pd.array([True, False], "boolean"), "i": pd.array([1, 2], "Int8"),
                       "d": np.array([0, 1], "datetime64[ns]"), "f": [0.5, 1.5],
                       "y": np.array([b"a", b"b"], dtype=object), "c": pd.Categorical(["a", "b"]),
                       "tc": pd.Categorical.from_codes([0, 1], categories=pd.DatetimeIndex(
                           np.array([1, 2], "datetime64[s]")))})
    with purehep.File(tmp_path / "none.h5", "w") as f:
        t = create_table(f, "t", df)
        t.append({c: [None] for c in df.columns})
        t["b"][0] = None
        want = pd.concat([df, pd.DataFrame({c: pd.Series([None], dtype=df[c].dtype)
                                            for c in df.columns})], ignore_index=True)
        want.loc[0, "b"] = None
        pd.testing.assert_frame_equal(t.to_pandas(), want, check_exact=True)
        u = create_table(f, "u", {"ok": [True], "s": ["x"]})
        for col in ("ok", "s"):
            with pytest.raises(ValueError, match="fill value"):
                u.append({"ok": [True], "s": ["y"], col: [None]})


def test_append_refuses_values_equal_to_the_fill_value(tmp_path):
    """A pandas / Arrow value equal to the column's fill value (chosen at creation among the
    values absent then) would read back as missing (§6.4): refused unless lossy, leaving the
    table as it was (plain numpy values are stored as given: HDF5's way to mark missing
    values); a bool column has no fill value, so a missing value cannot go into it (it
    became False)."""
    df = pd.DataFrame({"u": np.array([1, 2], np.uint16), "i": np.array([0, 5], np.int8),
                       "b": np.array([b"x", b"yy"], dtype=object), "t": [True, False]})
    row = pd.DataFrame({"u": np.array([3], np.uint16), "i": np.array([1], np.int8),
                        "b": np.array([b"z"], dtype=object), "t": [True]})
    with purehep.File(tmp_path / "fv.h5", "w") as f:
        t = create_table(f, "t", df)
        for col, bad in (("u", np.array([65535], np.uint16)), ("i", np.array([-128], np.int8)),
                         ("b", np.array([b""], dtype=object)),
                         ("t", pd.array([None], dtype="boolean"))):
            for wrap in (pd.Series, lambda v: pa.Array.from_pandas(pd.Series(v))):
                with pytest.raises(ValueError, match="fill value"):
                    t.append({**{c: row[c] for c in row.columns}, col: wrap(bad)})
                pd.testing.assert_frame_equal(t.to_pandas(), df, check_exact=True)
        with pytest.raises(ValueError, match="fill value"):
            t["i"][0:1] = pd.Series([-128], dtype=np.int8)
        t.append(row.assign(u=np.array([65535], np.uint16)), lossy=True)
        t.append({"u": np.array([65535], np.uint16), "i": [1], "b": [b"z"], "t": [True]})
        assert t.to_pandas()["u"].tolist() == [1, 2, pd.NA, pd.NA]
        assert t.validate() == []


# --- 5. the validator on foreign content ------------------------------------------------------

@pytest.mark.parametrize("case, section", [("soft", "§5.5"), ("external", "§5.5"),
                                           ("search_dataset", "§8.1")])
def test_validator_reports_foreign_links_without_crashing(tmp_path, case, section):
    path = tmp_path / "v.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "t", {"a": np.arange(4)}).create_search_index("a", "CHUNK_MINMAX") \
            if case != "search_dataset" else create_table(f, "t", {"a": np.arange(4)})
    with h5py.File(path, "r+") as f:
        if case == "soft":
            f["t/dangling"] = h5py.SoftLink("/nowhere")
        elif case == "external":
            f["t/ext"] = h5py.ExternalLink(str(tmp_path / "missing.h5"), "/x")
        else:
            f["t"].create_dataset("_search_indexes", data=[1])
    with purehep.File(path, "r") as f:
        problems = purehep.table.validate(f["t"], raise_=False)
        assert problems and all(section in m for _, m in problems), problems
        t = Table(f["t"])
        assert t.query("a > 1").tolist() == [2, 3]
