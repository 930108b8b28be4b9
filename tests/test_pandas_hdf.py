"""purehep.pandas: pandas' HDFStore files (DataFrame.to_hdf / pandas.read_hdf) without PyTables.

Oracles: the installed pandas (2 or 3) with PyTables. Files pandas writes read equal to ``pandas.read_hdf`` of the
same file (check_exact, dtypes, index and column names, freq); files purehep writes read back
by pandas equal to pandas' own round trip of the same object, carry the attributes PyTables
and pandas write (compared through h5py) and open in PyTables with no warning; ``where``
conditions select the rows pandas selects, and the ones purehep does not evaluate raise.
"""
import pickle
import sys
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
tables = pytest.importorskip("tables")
h5py = pytest.importorskip("h5py")

import purehep  # noqa: E402
import purehep.pandas as pp  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::tables.NaturalNameWarning",
                                        "ignore::pandas.errors.PerformanceWarning")
N = 6


def _objects():
    """name -> (object, formats pandas stores it in)."""
    both, fixed_only, table_only = ("fixed", "table"), ("fixed",), ("table",)
    mixed = pd.DataFrame({
        **{k: np.arange(N, dtype=k) for k in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8")},
        "f4": np.linspace(0, 1, N, dtype="f4"), "f8": np.r_[np.nan, np.linspace(0, 1, N - 1)],
        "b": np.arange(N) % 2 == 0, "s": ["a", "bb", None, "dddd", "é", ""],
        "t": pd.date_range("2020-01-01", periods=N, freq="h"),
        "tz": pd.date_range("2020-01-01", periods=N, tz="US/Eastern"),
        "tzu": pd.date_range("2021-01-01", periods=N, tz="UTC"),
        "td": pd.to_timedelta(np.arange(N), unit="s")})
    return {
        "mixed": (mixed, both),
        "strindex": (pd.DataFrame({"x": np.arange(3.0)}, index=pd.Index(list("abc"), name="k")),
                     both),
        "dtindex": (pd.DataFrame({"x": np.arange(4)}, index=pd.date_range(
            "2020", periods=4, freq="D", name="when")), both),
        "dttzindex": (pd.DataFrame({"x": np.arange(4)}, index=pd.date_range(
            "2020", periods=4, freq="D", tz="Europe/Paris")), both),
        "tdindex": (pd.DataFrame({"x": np.arange(3)}, index=pd.timedelta_range("1s", periods=3)),
                    both),
        "periodindex": (pd.DataFrame({"x": np.arange(3)},
                                     index=pd.period_range("2020-01", periods=3, freq="M")), both),
        "int64index": (pd.DataFrame({"x": [1.5, 2.5]}, index=pd.Index([10, 3])), both),
        "boolindex": (pd.Series([1.5, 2.5, 3.5], index=pd.Index([True, False, True],
                                                                  name="b")), both),
        "multiindex": (pd.DataFrame({"v": np.arange(4.0)}, index=pd.MultiIndex.from_product(
            [["x", "y"], [1, 2]], names=["k", None])), both),
        "intcolumns": (pd.DataFrame(np.arange(6).reshape(3, 2), columns=[5, 7]), both),
        "empty": (pd.DataFrame({"a": pd.Series([], dtype="f8"), "b": pd.Series([], dtype="i8")}),
                  fixed_only),
        "series": (pd.Series(np.arange(5.0), name="ser"), both),
        "series_str": (pd.Series(["a", "b", None], index=pd.Index(["x", "y", "z"])), both),
        "series_tz": (pd.Series(pd.date_range("2020", periods=3, tz="Asia/Tokyo"), name="t"),
                      both),
        "series_multi": (pd.Series([1.0, 2.0], index=pd.MultiIndex.from_tuples(
            [("a", 1), ("b", 2)], names=["l", "n"])), both),
        "categorical": (pd.DataFrame({"c": pd.Categorical(["a", "b", None, "a", "c", "b"]),
                                      "d": pd.Categorical([1, 2, 1, 2, 1, 1], ordered=True),
                                      "x": np.arange(N)}), table_only),
        "string_dtype": (pd.DataFrame({"s": pd.array(["a", None, "c"], dtype="string"),
                                       "x": [1, 2, 3]}), both),
        "series_string_dtype": (pd.Series(pd.array(["a", None], dtype="string")), both),
        "seconds": (pd.DataFrame({"t": pd.to_datetime(["2020-01-01", "2021-06-01"])
                                  .as_unit("s")}), both),     # pandas 2 reads ns (wrongly)
        "object_index": (pd.Series([1.0, 2.0, 3.0], index=pd.Index(["a", 1, None],
                                                                   dtype=object)), ()),
    }


OBJECTS = _objects()
COMPRESSION = [(None, None), (5, "zlib"), (3, "blosc:lz4")]
BLOSC_ON = ("mixed", "series_str", "categorical")        # blosc on a few, to keep it short
CASES = [(name, fmt, dc, comp) for name, (_, fmts) in OBJECTS.items() for fmt in fmts
         for dc in ((None, True) if fmt == "table" else (None,)) for comp in COMPRESSION
         if not (dc is True and name == "intcolumns")
         and not (comp[1] == "blosc:lz4" and name not in BLOSC_ON)
         # pandas 2 fails compressing string-dtype arrays in the fixed format (Atom.from_dtype)
         and not (fmt == "fixed" and comp[0] and "string_dtype" in name
                  and int(pd.__version__.split(".")[0]) < 3)]


def _equal(got, expected):
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    else:
        pd.testing.assert_series_equal(got, expected, check_exact=True)


def _need_codec(complib):
    if complib and complib.startswith("blosc"):
        pytest.importorskip("imagecodecs")


@pytest.mark.parametrize("name,fmt,dc,comp", CASES,
                         ids=[f"{n}-{f}-dc{d}-{c[1]}" for n, f, d, c in CASES])
def test_both_directions(tmp_path, name, fmt, dc, comp):
    """pandas' file read by purehep equals pandas' reading; purehep's file read by pandas (and
    by purehep) equals pandas' own round trip."""
    obj = OBJECTS[name][0]
    complevel, complib = comp
    _need_codec(complib)
    extra = {"data_columns": dc} if fmt == "table" else {}
    index = {"index": False} if fmt == "table" else {}   # no PyTables search index (u8)
    ref, mine = tmp_path / "pandas.h5", tmp_path / "purehep.h5"
    obj.to_hdf(ref, key="obj", mode="w", format=fmt, complevel=complevel, complib=complib,
               **extra, **index)
    expected = pd.read_hdf(ref, "obj")
    _equal(pp.read_hdf(ref, "obj"), expected)
    _equal(pp.read_hdf(ref), expected)
    pp.to_hdf(obj, mine, key="obj", mode="w", format=fmt, complevel=complevel, complib=complib,
              **extra)
    _equal(pd.read_hdf(mine, "obj"), expected)
    _equal(pp.read_hdf(mine, "obj"), expected)


def _attribute_signature(path):
    """{node: {attribute: (type class, size or (pad, cset), dataspace class, value)}} by h5py,
    without PyTables' optional search indexes (_i_table), which purehep does not write."""
    out = {}

    def visit(name, obj):
        if "_i_table" in name:
            return
        entry = {}
        for key in obj.attrs:
            aid = obj.attrs.get_id(key)
            t = aid.get_type()
            detail = (t.get_strpad(), t.get_cset()) if t.get_class() == h5py.h5t.STRING \
                else t.get_size()
            value = obj.attrs[key]
            entry[key] = (t.get_class(), detail, aid.get_space().get_simple_extent_type(),
                          repr(value.tolist() if isinstance(value, np.ndarray) else value))
        if isinstance(obj, h5py.Dataset):
            entry["<dtype>"] = (str(obj.dtype), obj.shape, obj.id.get_type().get_class())
        out[name] = entry
    with h5py.File(path, "r") as f:
        visit("/", f)
        f.visititems(visit)
    return out


def test_pickled_object_index_read(tmp_path):
    """pandas pickles an index of mixed objects in a VLArray (purehep reads, does not write)."""
    obj = OBJECTS["object_index"][0]
    obj.to_hdf(tmp_path / "o.h5", key="k")
    _equal(pp.read_hdf(tmp_path / "o.h5", "k"), pd.read_hdf(tmp_path / "o.h5", "k"))
    with pytest.raises(purehep.UnsupportedFeatureError, match="index"):
        pp.to_hdf(obj, tmp_path / "p.h5", key="k")


@pytest.mark.parametrize("name,fmt", [("mixed", "fixed"), ("mixed", "table"),
                                      ("multiindex", "fixed"), ("multiindex", "table"),
                                      ("empty", "fixed"), ("series_tz", "table"),
                                      ("categorical", "table"), ("periodindex", "fixed")])
def test_attributes_as_pandas_writes_them(tmp_path, name, fmt):
    obj = OBJECTS[name][0]
    obj.to_hdf(tmp_path / "a.h5", key="k", mode="w", format=fmt, index=False)
    pp.to_hdf(obj, tmp_path / "b.h5", key="k", mode="w", format=fmt)
    assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")


def test_existing_file(tmp_path):
    """A file of other content keeps its root as it is; the object is added beside it."""
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(3)
        f.attrs["note"] = "mine"
    pp.to_hdf(OBJECTS["series"][0], path, key="s", format="table")
    with h5py.File(path, "r") as f:
        assert set(f.attrs) == {"note"} and f["x"][2] == 2
    _equal(pd.read_hdf(path, "s"), OBJECTS["series"][0])


def test_pytables_opens_purehep_files_without_warnings(tmp_path):
    path = tmp_path / "p.h5"
    pp.to_hdf(OBJECTS["mixed"][0], path, key="fixed", mode="w", complevel=5)
    pp.to_hdf(OBJECTS["mixed"][0], path, key="a/table", format="table", complevel=5,
              data_columns=["i8", "s"])
    pp.to_hdf(OBJECTS["categorical"][0], path, key="cat", format="table")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tables.open_file(path) as f:
            kinds = {}
            for node in f.walk_nodes():
                kinds[node._v_pathname] = type(node).__name__
                if isinstance(node, tables.Leaf):
                    node.read()
                    assert node.filters.complevel in (0, 5)
            assert kinds["/a/table/table"] == "Table" and kinds["/fixed/block0_values"] == "CArray"
            assert f.root.a.table.table.nrows == N
        with pd.HDFStore(path, "r") as store:
            assert store.keys() == pp.HDFStore(path, "r").keys()


def _where_frame():
    rng = np.random.default_rng(0)
    n = 50
    df = pd.DataFrame({
        "A": rng.random(n), "B": rng.integers(-5, 5, n), "s": rng.choice(["foo", "bar", "baz",
                                                                          None], n),
        "t": pd.date_range("2020-01-01", periods=n, freq="D"),
        "tz": pd.date_range("2020-01-01", periods=n, freq="h", tz="US/Eastern"),
        "c": pd.Categorical(rng.choice(["x", "y", "z"], n)), "b": rng.random(n) > 0.5,
        "td": pd.to_timedelta(np.arange(n), unit="min"), "u": rng.integers(0, 100, n)
        .astype("u2"), "other": rng.random(n)})
    df.loc[3, "A"] = np.nan
    return df


WHERE_DC = ["A", "B", "s", "t", "tz", "c", "b", "td", "u"]
WHERES = [("df", "index > 5 & A < 0.3"), ("df", "A > 0.5"), ("df", "A != 0.5"),
          ("df", "B == 2"), ("df", "B >= -2 | A < 0.1"), ("df", "s == 'foo'"),
          ("df", 's != "bar"'), ("df", "s == 'nan'"), ("df", "s > 'bar'"),
          ("df", "t > '2020-01-10'"), ("df", "t <= 20200105"),
          ("df", "tz > '2020-01-01 05:00-05:00'"), ("df", "tz < '2020-01-01 06:00'"),
          ("df", "c == 'y'"), ("df", "c != 'y'"), ("df", "c == 'q'"), ("df", "b == True"),
          ("df", "td > '5min'"), ("df", "td < 3"), ("df", "u > 50"), ("df", "B > 1.5"),
          ("df", "B > 2.5"), ("df", "(A < 0.2 | A > 0.8) & B != 0"),
          ("df", "index < 10 and B < 0 or index > 45"), ("df", "B == [1, 2, 3]"),
          ("df", "B != [1, 2]"), ("df", ["A < 0.5", "B > 0"]), ("df", "A < -1e-3"),
          ("dti", "index > '2020-01-20'"), ("dti", "index >= '2020-01-20' & A < 0.5"),
          ("s", "index == 'k3'"), ("s", "index > 'k5'"), ("mi", "s == 'foo' & B > 0"),
          ("mi", "A < 0.5 | B == -5"), ("df", "t > Timestamp('2020-01-10')"),
          ("df", "tz <= Timestamp('2020-01-01 05:00-05:00') | B == 1"),
          ("df", "t == [Timestamp('2020-01-03'), '2020-01-05']"),
          ("dti", "index < Timestamp(20200105)")]


@pytest.fixture(scope="module")
def where_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("where")
    df = _where_frame()
    s = pd.Series(np.arange(10.0), index=[f"k{i}" for i in range(10)])
    for path, write in ((d / "pandas.h5", lambda o, p, **kw: o.to_hdf(p, **kw)),
                        (d / "purehep.h5", lambda o, p, **kw: pp.to_hdf(o, p, **kw))):
        write(df, path, key="df", mode="w", format="table", data_columns=WHERE_DC)
        write(df.set_index("t"), path, key="dti", format="table", data_columns=["A"])
        write(s, path, key="s", format="table")
        write(df.set_index(["s", "B"]), path, key="mi", format="table", data_columns=["A"])
    return d


@pytest.mark.filterwarnings("ignore:Querying with a nested:UserWarning")   # pandas 3's
@pytest.mark.parametrize("key,where", WHERES, ids=[str(w) for _, w in WHERES])
def test_where_matches_pandas(where_files, key, where):
    for start, stop in ((None, None), (5, 40)):
        expected = pd.read_hdf(where_files / "pandas.h5", key, where=where, start=start,
                               stop=stop)
        for name in ("pandas.h5", "purehep.h5"):
            _equal(pp.read_hdf(where_files / name, key, where=where, start=start, stop=stop),
                   expected)


@pytest.mark.parametrize("where", ["other > 0.5", "columns == ['A']", "A > x", "A + 1 > 2",
                                   "~(A > 0.5)", "5 < index", "A >", "B == [" + ",".join(
                                       map(str, range(40))) + "]", "sin(A) > 0",
                                   "t > Timestamp('2020', tz='UTC')"])
def test_unsupported_where_raises(where_files, where):
    with pytest.raises(pp.UnsupportedWhereError):
        pp.read_hdf(where_files / "pandas.h5", "df", where=where)


def test_columns_start_stop(where_files):
    for kw in ({"columns": ["B", "A"]}, {"columns": ["A"], "where": "B > 0"},
               {"start": 3, "stop": 9}, {"start": -5}, {"columns": ["s"], "start": 10}):
        _equal(pp.read_hdf(where_files / "purehep.h5", "df", **kw),
               pd.read_hdf(where_files / "pandas.h5", "df", **kw))
    path = where_files / "fixed.h5"
    _where_frame().drop(columns="c").to_hdf(path, key="f", mode="w")
    _equal(pp.read_hdf(path, "f", start=2, stop=7), pd.read_hdf(path, "f", start=2, stop=7))
    with pytest.raises(TypeError, match="Fixed format"):
        pp.read_hdf(path, "f", columns=["A"])


@pytest.mark.parametrize("writers", [("pd", "pp"), ("pp", "pd"), ("pp", "pp")])
@pytest.mark.parametrize("data_columns,min_itemsize", [(None, {"s": 10}), (["s"], 8)])
def test_append(tmp_path, writers, data_columns, min_itemsize):
    parts = [pd.DataFrame({"x": [1.0 + i], "s": ["a" * (i + 1)],
                           "t": pd.date_range(f"202{i}", periods=1, tz="UTC")}, index=[i])
             for i in range(3)]

    def put(who, obj, path, **kw):
        if who == "pd":
            obj.to_hdf(path, key="k", format="table", data_columns=data_columns,
                       min_itemsize=min_itemsize, index=False, **kw)
        else:
            pp.to_hdf(obj, path, key="k", format="table", data_columns=data_columns,
                      min_itemsize=min_itemsize, **kw)
    ref, mine = tmp_path / "ref.h5", tmp_path / "mine.h5"
    put("pd", parts[0], ref, mode="w")
    put(writers[0], parts[0], mine, mode="w")
    for part in parts[1:]:
        put("pd", part, ref, append=True)
        put(writers[1], part, mine, append=True)
    expected = pd.read_hdf(ref, "k")
    assert len(expected) == 3
    _equal(pd.read_hdf(mine, "k"), expected)
    _equal(pp.read_hdf(mine, "k"), expected)
    pp.to_hdf(parts[0], mine, key="fixed")
    with pytest.raises(ValueError, match="only append to Tables"):
        pp.to_hdf(parts[1], mine, key="fixed", append=True)
    too_long = pd.DataFrame({"x": [9.0], "s": ["z" * 20], "t": parts[0]["t"].array}, index=[9])
    with pytest.raises(ValueError, match="limit"):
        pp.to_hdf(too_long, mine, key="k", append=True, data_columns=data_columns)


def test_nan_rep_and_min_itemsize(tmp_path):
    df = pd.DataFrame({"s": ["a", None, "nan"], "x": [1, 2, 3]}, index=["i", "j", "k"])
    for kw in ({"nan_rep": "NA"}, {"min_itemsize": {"s": 7, "index": 4}}, {"min_itemsize": 5}):
        df.to_hdf(tmp_path / "a.h5", key="k", mode="w", format="table", data_columns=["s"],
                  index=False, **kw)
        pp.to_hdf(df, tmp_path / "b.h5", key="k", mode="w", format="table", data_columns=["s"],
                  **kw)
        expected = pd.read_hdf(tmp_path / "a.h5", "k")
        _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
        _equal(pp.read_hdf(tmp_path / "a.h5", "k"), expected)
        with h5py.File(tmp_path / "a.h5") as a, h5py.File(tmp_path / "b.h5") as b:
            assert a["k/table"].dtype == b["k/table"].dtype


def test_store(tmp_path):
    path = tmp_path / "s.h5"
    df = OBJECTS["categorical"][0]
    df.to_hdf(path, key="a/t", mode="w", format="table")
    df[["x"]].to_hdf(path, key="f")
    with pd.HDFStore(path, "r") as ref, pp.HDFStore(path, "r") as store:
        assert store.keys() == ref.keys()
        assert "/f" in store and "a/t" in store and "nope" not in store
        _equal(store["a/t"], ref["a/t"])
        _equal(store.select("a/t", where="index > 2", columns=["c"]),
               ref.select("a/t", where="index > 2", columns=["c"]))
        assert store.get_storer("a/t").nrows == ref.get_storer("a/t").nrows == N
        assert store.get_storer("/f").nrows is ref.get_storer("/f").nrows is None
    with pytest.raises(ValueError, match="key must be provided"):
        pp.read_hdf(path)
    with purehep.File(path) as f:                     # an open purehep File (left open)
        _equal(pp.read_hdf(f, "f"), pd.read_hdf(path, "f"))
        assert f.id.valid
    with open(path, "rb") as fh:                      # a file object
        _equal(pp.read_hdf(fh, "f"), pd.read_hdf(path, "f"))
    with pp.HDFStore(path, mode="r") as store, pytest.raises(ValueError, match="not writable"):
        store.put("x", df)


class _Evil:
    def __reduce__(self):
        import os
        return (os.system, ("echo owned > owned.txt",))


def test_restricted_unpickler_refuses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.h5"
    pd.DataFrame({"s": ["a", "b"]}).to_hdf(path, key="k", mode="w")
    with purehep.File(path, "a") as f:                # the object block's pickled array
        f["k/block0_values"][0] = np.frombuffer(pickle.dumps(_Evil()), np.uint8)
    with pytest.raises(pp.UnsafePickleError, match="system"):
        pp.read_hdf(path, "k")
    with purehep.File(path, "a") as f:                # an attribute pickle
        f["k/block0_values"][0] = np.frombuffer(pickle.dumps(np.array(["a"], object)), np.uint8)
        f["k/axis0"].attrs["name"] = np.bytes_(pickle.dumps(_Evil(), 0))
    with pytest.raises(pp.UnsafePickleError):
        pp.read_hdf(path, "k")
    assert not (tmp_path / "owned.txt").exists()
    with pytest.raises(TypeError, match="str"):
        pp.to_hdf(pd.DataFrame({"o": [1, "a"]}), tmp_path / "o.h5", key="k", mode="w")
    with pytest.raises(NotImplementedError, match="category"):
        pp.to_hdf(OBJECTS["categorical"][0], tmp_path / "o.h5", key="k", mode="w")


def test_not_pandas_groups(tmp_path):
    path = tmp_path / "plain.h5"
    with purehep.File(path, "w") as f:
        f.create_dataset("g/x", data=np.arange(3))
    with pytest.raises(pp.PandasFormatError, match="not a pandas object"):
        pp.read_hdf(path, "g")
    with pytest.raises(pp.PandasFormatError, match="not a pandas object"):
        pp.read_hdf(path, "g/x")                      # a dataset
    with pytest.raises(KeyError):
        pp.read_hdf(path, "missing")
    with pytest.raises(ValueError, match="no datasets"):
        pp.read_hdf(path)
    pd.DataFrame({"x": [1.0]}).to_hdf(path, key="d", mode="w")
    with purehep.File(path, "a") as f:
        del f["d/block0_values"]
    with pytest.raises(pp.PandasFormatError, match="incomplete"):
        pp.read_hdf(path, "d")
    with purehep.File(path, "a") as f:
        f["d"].attrs["pandas_type"] = np.bytes_(b"wide")
    with pytest.raises(pp.PandasFormatError, match="wide"):
        pp.read_hdf(path, "d")
    with h5py.File(path, "w") as f:                   # a PyTables-like table pandas did not write
        f.create_dataset("t/table", data=np.zeros(2, [("a", "i4")]))
        f["t/table"].attrs["CLASS"] = np.bytes_(b"TABLE")
    with pytest.raises(pp.PandasFormatError, match="did not write"):
        pp.read_hdf(path, "t")


PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def _units_frame():
    """Datetimes in microseconds and seconds (columns and index), zoned, timedeltas."""
    when = pd.to_datetime(["2021-01-01 00:00", "2021-06-01 12:00", "2022-03-04 00:00"])
    return pd.DataFrame({"us": when.as_unit("us"), "s": when.as_unit("s"),
                         "tz": when.as_unit("us").tz_localize("Europe/Paris"),
                         "td": pd.to_timedelta([1, 2, 3], unit="s").as_unit("us"),
                         "x": [1.0, 2.0, 3.0]}, index=pd.DatetimeIndex(when.as_unit("us")))


@pytest.mark.parametrize("fmt", ["fixed", "table"])
def test_stored_units_read_as_pandas_reads_them(tmp_path, fmt):
    """A file pandas wrote with datetime64[us]/[s] and timedelta64[us] values: pandas 3 reads
    them in their unit (purehep read 2021-01-01 as 1970-01-19 before); pandas 2 takes the
    fixed format's and a table's datetime integers as nanoseconds, and purehep with it."""
    df = _units_frame()
    path = tmp_path / "u.h5"
    df.to_hdf(path, key="k", mode="w", format=fmt, **({"data_columns": True, "index": False}
                                                       if fmt == "table" else {}))
    got, expected = pp.read_hdf(path, "k"), pd.read_hdf(path, "k")
    _equal(got, expected)
    if PANDAS_3:
        _equal(got, df)
        assert got["us"].iloc[0] == pd.Timestamp("2021-01-01")
        assert got.index.unit == "us" and got["s"].dtype == "M8[s]"
        assert str(got["tz"].dtype) == "datetime64[us, Europe/Paris]"
    pp.to_hdf(df, tmp_path / "p.h5", key="k", mode="w", format=fmt)
    _equal(pd.read_hdf(tmp_path / "p.h5", "k"), expected)
    if fmt == "table":
        for where in ("index > '2021-03-01'", "us <= '2021-06-01 12:00'", "td > 1",
                      "tz > '2021-06-01 12:00+02:00'"):
            _equal(pp.read_hdf(path, "k", where=where), pd.read_hdf(path, "k", where=where))


def test_legacy_units_read_as_nanoseconds(tmp_path):
    """What older pandas wrote (value_type / kind "datetime64" and "timedelta64" with no
    unit) is nanoseconds to pandas 2 and pandas 3 alike."""
    df = pd.DataFrame({"t": pd.to_datetime(["2020-01-01", "2020-01-02"]).as_unit("ns"),
                       "d": pd.to_timedelta([1, 2], unit="s").as_unit("ns")},
                      index=pd.to_timedelta([3, 4], unit="s").as_unit("ns"))
    path = tmp_path / "legacy.h5"
    df.to_hdf(path, key="k", mode="w")
    from purehep.integrations.pandas_hdf import pytables as pt
    with purehep.File(path, "a") as f:
        for name in ("block0_values", "block1_values"):
            node = f["k"][name]
            pt.set_attr(node, "value_type", pt.attr(node, "value_type").split("[")[0])
        pt.set_attr(f["k/axis1"], "kind", "timedelta64")
    expected = pd.read_hdf(path, "k")
    _equal(expected, df)
    _equal(pp.read_hdf(path, "k"), expected)


@pytest.mark.parametrize("fmt,nan_rep", [("fixed", None), ("table", None), ("table", "NA")])
def test_missing_strings_and_literal_nan(tmp_path, fmt, nan_rep):
    """pandas 3 (GH#9604) stores a table's missing strings as a sentinel no present string
    equals and reads a literal "nan" back as "nan"; pandas 2 reads every "nan" of a table as
    missing. Both directions, with the attributes pandas writes."""
    df = pd.DataFrame({"s": ["a", None, "nan", "_nan_"], "o": ["nan", "b", "c", "d"],
                       "x": np.arange(4)}, index=["i", "j", "k", "l"])
    extra = {"data_columns": ["s"], "nan_rep": nan_rep} if fmt == "table" else {}
    df.to_hdf(tmp_path / "a.h5", key="k", mode="w", format=fmt,
              **extra, **({"index": False} if fmt == "table" else {}))
    pp.to_hdf(df, tmp_path / "b.h5", key="k", mode="w", format=fmt, **extra)
    expected = pd.read_hdf(tmp_path / "a.h5", "k")
    if fmt == "table" and nan_rep is None:
        assert (expected.loc["k", "s"] == "nan") is PANDAS_3
    _equal(pp.read_hdf(tmp_path / "a.h5", "k"), expected)
    _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
    assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")
    if fmt == "table":
        for where in ("s == 'nan'", "s != 'a'", "s == '__nan__'"):
            _equal(pp.read_hdf(tmp_path / "b.h5", "k", where=where),
                   pd.read_hdf(tmp_path / "a.h5", "k", where=where))


@pytest.mark.parametrize("writers", [("pd", "pp"), ("pp", "pd"), ("pp", "pp")])
def test_append_keeps_or_makes_sentinels(tmp_path, writers):
    """Appends keep a column's sentinel, or make one that avoids the strings already stored
    (pandas 3); a string index with a missing value likewise."""
    str_index = pd.Index(["x", "nan", np.nan], dtype="str")
    parts = [pd.DataFrame({"s": ["nan", "a", "b"], "x": [1, 2, 3]}, index=str_index[:1]
                          .append(pd.Index(["y", "z"], dtype="str"))),
             pd.DataFrame({"s": [None, "_nan_", "c"], "x": [4, 5, 6]}, index=str_index)]
    if pd.api.types.infer_dtype(str_index, skipna=False) != "string":
        parts[1].index = pd.Index(["u", "v", "w"])         # pandas 2 pickles such an index
    ref, mine = tmp_path / "ref.h5", tmp_path / "mine.h5"
    for i, part in enumerate(parts):
        part.to_hdf(ref, key="k", format="table", append=True, data_columns=["s"],
                    min_itemsize=8, index=False)
        if writers[min(i, 1)] == "pd":
            part.to_hdf(mine, key="k", format="table", append=True, data_columns=["s"],
                        min_itemsize=8, index=False)
        else:
            pp.to_hdf(part, mine, key="k", format="table", append=True, data_columns=["s"],
                      min_itemsize=8)
    expected = pd.read_hdf(ref, "k")
    _equal(pd.read_hdf(mine, "k"), expected)
    _equal(pp.read_hdf(mine, "k"), expected)
    _equal(pp.read_hdf(ref, "k"), expected)


def test_pandas_3_only_kinds_read(tmp_path):
    """A CategoricalIndex (codes beside their categories) and period columns, which pandas 3
    stores (pandas 2 cannot write them), read as pandas reads them."""
    objects = [pd.DataFrame({"x": [1, 2, 3]}, index=pd.CategoricalIndex(["b", "a", "b"],
                                                                        name="c")),
               pd.DataFrame({"p": pd.period_range("2020-01", periods=3, freq="M"),
                             "x": [1, 2, 3]})]
    for obj in objects:
        for fmt in ("fixed", "table"):
            path = tmp_path / f"{fmt}.h5"
            try:
                obj.to_hdf(path, key="k", mode="w", format=fmt)
            except (AssertionError, TypeError):
                assert not PANDAS_3                     # pandas 2 cannot store them
                continue
            _equal(pp.read_hdf(path, "k"), pd.read_hdf(path, "k"))


def test_zoneinfo_and_na_pickles(tmp_path):
    """pandas 3 pickles a table index's zoneinfo zone as getattr(ZoneInfo, "_unpickle")(key)
    and pd.NA as pandas.NA: both read; any other getattr or a ZoneInfo call is refused."""
    import zoneinfo
    from purehep.integrations.pandas_hdf import pickles
    zone = zoneinfo.ZoneInfo("Europe/Paris")
    assert pickles.loads(pickle.dumps({"tz": zone}, 0)) == {"tz": zone}
    assert pickles.loads(pickle.dumps(zone, 4)) is zone
    assert pickles.loads(b"cpandas\nNA\np0\n.") is pd.NA
    for evil in (b"c__builtin__\ngetattr\n(czoneinfo\nZoneInfo\nVclear_cache\ntR(tR.",
                 b"c__builtin__\ngetattr\n(cnumpy\nndarray\nVtofile\ntR.",
                 b"czoneinfo\nZoneInfo\n(VEurope/Paris\ntR.",
                 b"cdateutil.tz._tzfile\ntzfile\n(V/etc/passwd\ntR.",
                 b"cdateutil.tz._tzfile\n_unpickle\n(cnumpy\nndarray\nVk\nVf\n(ttR."):
        with pytest.raises(pp.UnsafePickleError):
            pickles.loads(evil)
    df = pd.DataFrame({"x": np.arange(3)}, index=pd.date_range("2020", periods=3, tz=zone))
    df.to_hdf(tmp_path / "z.h5", key="k", mode="w", format="table")
    _equal(pp.read_hdf(tmp_path / "z.h5", "k"), pd.read_hdf(tmp_path / "z.h5", "k"))


def _zones():
    """Time zones of the kinds pandas stores differently (timezones.get_timezone)."""
    import datetime
    import zoneinfo
    zones = [zoneinfo.ZoneInfo("America/New_York"), zoneinfo.ZoneInfo("UTC"), "US/Eastern",
             datetime.timezone(datetime.timedelta(hours=5, minutes=30))]
    try:
        import pytz
        zones += [pytz.UTC, pytz.timezone("Asia/Tokyo")]
    except ImportError:
        pass
    if PANDAS_3:                # pandas 2 fails to localize with the newest dateutil zones
        import dateutil.tz
        zones += ["dateutil/Europe/Paris", dateutil.tz.tzutc(),
                  dateutil.tz.tzoffset("X", 3600)]
    return zones


@pytest.mark.parametrize("fmt", ["fixed", "table"])
@pytest.mark.parametrize("tz", _zones(), ids=str)
def test_time_zones_stored_as_pandas_stores_them(tmp_path, fmt, tz):
    """Zoned values and index keep their kind of zone: pandas stores a zoneinfo zone as the
    object with pandas 2 (purehep stored its name, which pandas 2 reads back as pytz), a
    dateutil zone as "dateutil/<file>" (purehep refused it), pytz's UTC pickled (purehep
    refused to unpickle it), and a table's index zone as the object itself (pandas 3 pickles
    a dateutil zone there, which purehep refused to unpickle)."""
    index = pd.date_range("2020-03-28", periods=3, freq="h", tz=tz, name="when")
    df = pd.DataFrame({"t": index, "x": np.arange(3)}, index=index)
    kw = {"index": False} if fmt == "table" else {}
    df.to_hdf(tmp_path / "a.h5", key="k", mode="w", format=fmt, **kw)
    pp.to_hdf(df, tmp_path / "b.h5", key="k", mode="w", format=fmt)
    expected = pd.read_hdf(tmp_path / "a.h5", "k")
    _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
    _equal(pp.read_hdf(tmp_path / "a.h5", "k"), expected)
    _equal(pp.read_hdf(tmp_path / "b.h5", "k"), expected)
    assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")


@pytest.mark.parametrize("name", [0, "", None, "s"])
def test_series_table_with_a_false_name(tmp_path, name):
    """pandas stores a Series table under ``name or "values"``: a Series named 0 or "" is
    read back unnamed (purehep refused 0 as a non-string data column label)."""
    s = pd.Series([1.5, 2.5], name=name)
    s.to_hdf(tmp_path / "a.h5", key="k", mode="w", format="table", index=False)
    pp.to_hdf(s, tmp_path / "b.h5", key="k", mode="w", format="table")
    expected = pd.read_hdf(tmp_path / "a.h5", "k")
    _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
    _equal(pp.read_hdf(tmp_path / "b.h5", "k"), expected)
    assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")


def test_fixed_block_of_missing_strings(tmp_path):
    """pandas 3 reads a fixed-format object block of strings and missing values as "str"
    (is_string_array with skipna), a column with no string at all too: purehep left an
    all-missing object column object."""
    df = pd.DataFrame({"none": np.array([None, None], object),
                       "nan": np.array([np.nan, np.nan], object),
                       "s": np.array(["a", None], object), "x": [1, 2]})
    df.to_hdf(tmp_path / "a.h5", key="k", mode="w")
    _equal(pp.read_hdf(tmp_path / "a.h5", "k"), pd.read_hdf(tmp_path / "a.h5", "k"))
    for column in ("none", "s"):
        df[[column]].to_hdf(tmp_path / "b.h5", key="k", mode="w")
        _equal(pp.read_hdf(tmp_path / "b.h5", "k"), pd.read_hdf(tmp_path / "b.h5", "k"))


def _pandas_3_kinds():
    return {
        "catindex_str": pd.DataFrame({"x": [1, 2, 3]}, index=pd.CategoricalIndex(
            ["b", "a", "b"], categories=["c", "a", "b"], ordered=True, name="ci")),
        "catindex_int": pd.Series([1.5, 2.5, 3.5], index=pd.CategoricalIndex([5, 1, 5])),
        "periods": pd.DataFrame({"p": pd.period_range("2020-01", periods=3, freq="M"),
                                 "q": pd.period_range("2020-01-01", periods=3, freq="D"),
                                 "x": [1, 2, 3]}),
        "period_series": pd.Series(pd.period_range("2020", periods=3, freq="Y"), name="s"),
    }


@pytest.mark.parametrize("fmt,kw", [("fixed", {}), ("fixed", {"complevel": 5}),
                                    ("table", {}), ("table", {"data_columns": True})])
@pytest.mark.parametrize("name", list(_pandas_3_kinds()))
def test_pandas_3_only_kinds_written(tmp_path, name, fmt, kw):
    """A CategoricalIndex (GH#33909) and period values (GH#41978), written as pandas 3 writes
    them (same attributes, read back equal, appendable); pandas 2 cannot write them and
    purehep refuses them there."""
    obj = _pandas_3_kinds()[name]
    if not PANDAS_3:
        with pytest.raises((TypeError, purehep.UnsupportedFeatureError)):
            pp.to_hdf(obj, tmp_path / "b.h5", key="k", format=fmt, **kw)
        return
    extra = {"index": False} if fmt == "table" else {}
    obj.to_hdf(tmp_path / "a.h5", key="k", mode="w", format=fmt, **kw, **extra)
    pp.to_hdf(obj, tmp_path / "b.h5", key="k", mode="w", format=fmt, **kw)
    expected = pd.read_hdf(tmp_path / "a.h5", "k")
    _equal(expected, obj)
    _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
    _equal(pp.read_hdf(tmp_path / "b.h5", "k"), expected)
    assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")
    if fmt == "table":
        pp.to_hdf(obj, tmp_path / "b.h5", key="k", append=True, **kw)
        _equal(pd.read_hdf(tmp_path / "b.h5", "k"), pd.concat([obj, obj]))


def test_where_on_a_categorical_index(tmp_path):
    """pandas 3 compares a where literal on a CategoricalIndex with its categories, as on a
    categorical data column (purehep converted 'b' as a number and raised ValueError)."""
    if not PANDAS_3:
        pytest.skip("pandas 2 cannot write a CategoricalIndex")
    df = _pandas_3_kinds()["catindex_str"]
    path = tmp_path / "a.h5"
    df.to_hdf(path, key="k", mode="w", format="table")
    for where in ("index == 'b'", "index != 'a'", "index == ['a', 'c']", "index > 'a'",
                  "index == 'q'"):
        _equal(pp.read_hdf(path, "k", where=where), pd.read_hdf(path, "k", where=where))


def test_empty_categorical_index_fixed(tmp_path):
    """An empty CategoricalIndex in the fixed format (pandas 3): its codes are the dummy
    element of an empty array, read by its ``shape`` (purehep read the dummy code: 'Length of
    values (0) does not match length of index (1)')."""
    if not PANDAS_3:
        pytest.skip("pandas 2 cannot write a CategoricalIndex")
    index = pd.CategoricalIndex([], categories=["a", "b"], name="c")
    for obj in (pd.Series([], dtype="i4", index=index),
                pd.DataFrame({"p": pd.PeriodIndex([], freq="D")}, index=index)):
        obj.to_hdf(tmp_path / "a.h5", key="k", mode="w")
        pp.to_hdf(obj, tmp_path / "b.h5", key="k", mode="w")
        expected = pd.read_hdf(tmp_path / "a.h5", "k")
        _equal(pp.read_hdf(tmp_path / "a.h5", "k"), expected)
        _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)


def test_multiindex_table_with_all_data_columns(tmp_path):
    """data_columns=True on a MultiIndex frame: pandas takes the frame's own columns, then
    inserts each level in front (level_1, level_0, a); purehep took the columns after the reset
    (level_0, level_1, a), a different table layout, on which pandas reads a columns name
    back that its own file loses."""
    df = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]},
                      index=pd.MultiIndex.from_arrays([["p", "q"], [3, 4]], names=[None, "n"]))
    df.columns.name = "cols"
    df.to_hdf(tmp_path / "a.h5", key="k", mode="w", format="table", data_columns=True,
              index=False)
    pp.to_hdf(df, tmp_path / "b.h5", key="k", mode="w", format="table", data_columns=True)
    expected = pd.read_hdf(tmp_path / "a.h5", "k")
    _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
    _equal(pp.read_hdf(tmp_path / "b.h5", "k"), expected)
    assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")


def test_where_literals_and_names_beyond_ascii(tmp_path):
    """A quoted literal is Python's string literal (purehep decoded escapes of one holding
    non-ASCII characters through latin-1, so 'é\\\\b' matched nothing), and a column name may
    be any Python identifier ('é1' raised UnsupportedWhereError), as pandas parses them."""
    df = pd.DataFrame({"s": ["é\\b", "a\\b", "é\t", "x"], "é1": [1, 2, 3, 4]})
    path = tmp_path / "a.h5"
    df.to_hdf(path, key="k", mode="w", format="table", data_columns=True, index=False)
    for where in ("s == 'é\\\\b'", "s == 'é\\t'", "s == \"a\\\\b\"", "s == '\\u00e9\\t'",
                  "é1 > 2", "s != ['é\\t', 'x'] & é1 < 4"):
        expected = pd.read_hdf(path, "k", where=where)
        assert len(expected), where
        _equal(pp.read_hdf(path, "k", where=where), expected)


def _layout_objects():
    dt = pd.date_range("2020", periods=2, freq="D")
    return {
        "complex_data_column": (pd.DataFrame({"c": [1 + 2j, 3j], "x": [1, 2]}), "table",
                                {"data_columns": ["c"]}),
        "blocks_beside_data_columns": (pd.DataFrame({"b": [1, 2], "z": ["u", "v"],
                                                     "a": [1.5, 2.5], "k": [3, 4],
                                                     "c": [True, False]}), "table",
                                       {"data_columns": ["k"]}),
        "datetime_level": (pd.DataFrame({"x": [1, 2]}, index=pd.MultiIndex.from_arrays(
            [dt, ["p", "q"]])), "fixed", {}),
        "empty_string_dtype": (pd.DataFrame({"s": pd.array([], dtype="string")}), "fixed", {}),
    }


@pytest.mark.parametrize("name", list(_layout_objects()))
def test_layout_as_pandas_writes_it(tmp_path, name):
    """Attributes and Table layout as pandas writes them (read back the same either way):
    complex fill values as numbers (purehep pickled them) and a complex data column with
    shape (1,); the values blocks beside data columns in Index.difference order (sorted);
    MultiIndex levels without index_class/freq; an empty string array not 'transposed'."""
    obj, fmt, kw = _layout_objects()[name]
    extra = {"index": False} if fmt == "table" else {}
    obj.to_hdf(tmp_path / "a.h5", key="k", mode="w", format=fmt, **kw, **extra)
    pp.to_hdf(obj, tmp_path / "b.h5", key="k", mode="w", format=fmt, **kw)
    expected = pd.read_hdf(tmp_path / "a.h5", "k")
    _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
    _equal(pp.read_hdf(tmp_path / "b.h5", "k"), expected)
    assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")


@pytest.mark.parametrize("index", [pd.Index([], dtype=object, name="e"),
                                   pd.Index([None, np.nan], dtype=object),
                                   pd.MultiIndex.from_arrays([pd.Index([], dtype=object), []])],
                         ids=["empty", "all_missing", "empty_level"])
def test_object_index_without_values(tmp_path, index):
    """An object index that is empty or all missing is pickled with kind "object", as pandas
    stores it (purehep refused it with UnsupportedFeatureError: 'an index of empty values');
    a table cannot hold one, as pandas."""
    obj = pd.Series(np.arange(len(index), dtype="f8"), index=index)
    for kw in ({}, {"complevel": 3}):
        obj.to_hdf(tmp_path / "a.h5", key="k", mode="w", **kw)
        pp.to_hdf(obj, tmp_path / "b.h5", key="k", mode="w", **kw)
        expected = pd.read_hdf(tmp_path / "a.h5", "k")
        _equal(pd.read_hdf(tmp_path / "b.h5", "k"), expected)
        _equal(pp.read_hdf(tmp_path / "b.h5", "k"), expected)
        assert _attribute_signature(tmp_path / "b.h5") == _attribute_signature(tmp_path / "a.h5")
    if len(obj):
        with pytest.raises(TypeError):
            obj.to_hdf(tmp_path / "a.h5", key="t", format="table")
        with pytest.raises(TypeError):
            pp.to_hdf(obj, tmp_path / "b.h5", key="t", format="table")


@pytest.mark.parametrize("fmt", ["fixed", "table"])
def test_strings_with_an_embedded_nul(tmp_path, fmt):
    """A string holding a NUL keeps the bytes after it, as PyTables reads them (in the file's
    own string type): purehep's reads end a null-terminated string at its first NUL as h5py
    does, so the index 'a\\0b' came back 'a' (duplicated labels, a MultiIndex refused)."""
    df = pd.DataFrame({"s": np.array(["a\x00b", "x\x00", "a", "😀"], object),
                       "t": ["a\x00b", "v", "a", "z"], "x": np.arange(4)},
                      index=pd.Index(["a\x00b", "a", "c", "d"], dtype=object))
    extra = {"data_columns": ["t"], "index": False} if fmt == "table" else {}
    path = tmp_path / "a.h5"
    df.to_hdf(path, key="k", mode="w", format=fmt, **extra)
    df.set_index(["s", "x"]).to_hdf(path, key="m", format=fmt, **extra)
    for key in ("k", "m"):
        expected = pd.read_hdf(path, key)
        _equal(pp.read_hdf(path, key), expected)
    if fmt == "table":
        for where in ("t == 'a\\x00b'", "index == 'a\\x00b'", "t != 'a'"):
            _equal(pp.read_hdf(path, "k", where=where), pd.read_hdf(path, "k", where=where))


def test_conflicting_index_freq_warns_as_pandas(tmp_path):
    """Appending rows whose index has another freq: pandas' AttributeConflictWarning, naming
    the caller's line, and the freq reset as pandas resets it."""
    a = pd.DataFrame({"x": [1.0, 2.0]}, index=pd.date_range("2020", periods=2, freq="D"))
    b = pd.DataFrame({"x": [3.0, 4.0]}, index=pd.date_range("2021", periods=2, freq="h"))
    ours, theirs = tmp_path / "purehep.h5", tmp_path / "pandas.h5"
    a.to_hdf(theirs, key="k", format="table")
    b.to_hdf(theirs, key="k", format="table", append=True)
    pp.to_hdf(a, ours, key="k", format="table")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pp.to_hdf(b, ours, key="k", format="table", append=True); line = sys._getframe().f_lineno  # noqa
    assert [(x.category, x.filename, x.lineno) for x in w] == \
        [(pd.errors.AttributeConflictWarning, __file__, line)]
    for path in (ours, theirs):
        pd.testing.assert_frame_equal(pd.read_hdf(path, "k"), pd.read_hdf(theirs, "k"))
