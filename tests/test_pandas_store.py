"""purehep.pandas.HDFStore against pandas.HDFStore: each test does the same operations on a
pandas store and a purehep store (twin files) and compares what the methods return
(``check_exact``), what each reads from the other's file, and the files themselves through
h5py (attributes, Table layout, filter pipelines, chunk shapes).

pandas' own put/append run with ``index=False`` (no PyTables search index, which purehep
does not write).
"""
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
tables = pytest.importorskip("tables")
h5py = pytest.importorskip("h5py")

import purehep.pandas as pp  # noqa: E402
from test_pandas_hdf import _attribute_signature, _equal  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::tables.NaturalNameWarning",
                                        "ignore::pandas.errors.PerformanceWarning")


def _frame(n=20):
    df = pd.DataFrame({"a": np.arange(n, dtype="f8"), "b": np.arange(n),
                       "s": [f"x{i % 7}" for i in range(n)],
                       "t": pd.date_range("2021", periods=n, freq="h", tz="UTC")},
                      index=pd.Index(np.arange(n) * 2, name="i"))
    df.loc[df.index[3], "a"] = np.nan
    return df


def _warned(call, *args, **kwargs):
    """(call's result, [(warning class, message)]) without PyTables' own warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args, **kwargs)
    return result, [(w.category, str(w.message)) for w in caught
                    if not w.category.__module__.startswith("tables")]


class Twins:
    """A pandas store and a purehep store, on ``pandas.h5`` and ``purehep.h5``; ``do`` calls
    one method on both and returns the two results."""

    def __init__(self, tmp_path, mode="w", **kw):
        self.paths = tmp_path / "pandas.h5", tmp_path / "purehep.h5"
        self.kw, self.mode = kw, mode
        self.open(mode)

    def open(self, mode):
        self.stores = pd.HDFStore(self.paths[0], mode, **self.kw), \
            pp.HDFStore(self.paths[1], mode, **self.kw)

    def do(self, method, *args, **kwargs):
        """Both results; the warnings both gave must be the same (class and words)."""
        ours = dict(kwargs)
        if method in ("put", "append"):
            kwargs["index"] = False
        theirs, their_warnings = _warned(getattr(self.stores[0], method), *args, **kwargs)
        mine, my_warnings = _warned(getattr(self.stores[1], method), *args, **ours)
        assert my_warnings == their_warnings, (method, args, kwargs)
        return theirs, mine

    def same(self, method, *args, **kwargs):
        theirs, ours = self.do(method, *args, **kwargs)
        if isinstance(theirs, (pd.DataFrame, pd.Series)):
            _equal(ours, theirs)
        elif isinstance(theirs, pd.Index):
            pd.testing.assert_index_equal(ours, theirs, exact=True)
        else:
            assert ours == theirs, (method, args, kwargs)
        return ours

    def close(self):
        for store in self.stores:
            store.close()

    def check_files(self, attributes=True):
        """Each file read by pandas and purehep equal to pandas' reading of pandas' file."""
        self.close()
        with pd.HDFStore(self.paths[0], "r") as ref:
            keys = ref.keys()
            expected = {k: ref[k] for k in keys}
        for path in self.paths:
            with pd.HDFStore(path, "r") as theirs, pp.HDFStore(path, "r") as ours:
                assert theirs.keys() == ours.keys() == keys
                for k in keys:
                    _equal(theirs[k], expected[k])
                    _equal(ours[k], expected[k])
        if attributes:
            assert _attribute_signature(self.paths[1]) == _attribute_signature(self.paths[0])


def _info_body(store):
    """info() without its first lines (the class, the file's path, which it names)."""
    head, path, body = store.info().split("\n", 2)
    assert path == f"File path: {store.filename}"
    return body


def test_session(tmp_path):
    """The methods users port, in one session: put/append/[]=, select with where and
    chunksize, select_column, remove (rows and objects), del, info, walk, len, in."""
    df = _frame()
    tw = Twins(tmp_path, complevel=5, complib="zlib")
    tw.do("put", "df", df, format="table", data_columns=["a", "s"])
    tw.do("append", "df", df.iloc[:5])
    tw.do("__setitem__", "s", df.a)
    tw.do("put", "g/h/f", df[["a", "b"]])
    tw.do("put", "g/t", df, format="t", data_columns=True)
    for key in ("df", "s", "/g/h/f", "g/t"):
        tw.same("get", key)
        tw.same("__getitem__", key)
    _equal(tw.stores[1].df, tw.stores[0].df)
    for where in (None, "a > 3", "s == 'x2' | index < 6"):
        theirs, ours = tw.do("select", "df", where=where, chunksize=7)
        theirs, ours = list(theirs), list(ours)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _equal(a, b)
    for column in ("a", "s", "index", "t"):
        tw.same("select_column", "g/t", column, start=2, stop=9)
    tw.same("select_as_coordinates", "df", "a > 10 & s != 'x1'", start=1)
    assert _info_body(tw.stores[1]) == _info_body(tw.stores[0])
    tw.same("__len__")
    tw.same("keys")
    tw.same("keys", "native")
    theirs, ours = tw.do("groups")
    assert [g.name for g in ours] == [g._v_pathname for g in theirs]
    for key in ("df", "/df", "g", "g/h", "/g/t/table", "nope", "df/"):
        tw.same("__contains__", key)
    tw.same("remove", "df", where="a > 12 | s == 'x3'")
    tw.same("remove", "df", start=-4)
    tw.same("remove", "s")
    tw.stores[0].__delitem__("g/h")
    tw.stores[1].__delitem__("g/h")
    tw.same("flush", fsync=True)
    assert tw.stores[1].is_open and tw.stores[1].filename == str(tw.paths[1])
    tw.check_files()


def test_walk_and_info_after_reopening(tmp_path):
    """walk() (a group's children by name once the file is reopened: PyTables lists the
    ones created in the session in creation order), groups() in walk_groups order, info()
    of fixed frames, series and tables, keys of nested groups."""
    df = _frame(6)
    tw = Twins(tmp_path)
    for key, obj, fmt in (("z", df, "fixed"), ("a/b", df.a, "fixed"), ("a/c/d", df, "table"),
                          ("m", df.set_index("b", append=True), "table"), ("a/s", df.s,
                                                                             "table")):
        tw.do("put", key, obj, format=fmt)
    tw.close()
    tw.open("r")
    for where in ("/", "/a", "/a/c"):
        theirs, ours = tw.do("walk", where)
        assert list(ours) == list(theirs)
    theirs, ours = tw.do("groups")
    assert [g.name for g in ours] == [g._v_pathname for g in theirs]
    theirs, ours = tw.do("items")
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    assert _info_body(tw.stores[1]) == _info_body(tw.stores[0])
    tw.close()
    for store in tw.stores:
        assert _info_body(store) == "File is CLOSED"
        assert not store.is_open


def test_overwriting_and_empty_writes(tmp_path):
    """put over a key with keys nested below it (pandas 3.1 keeps them, GH#17267, and the
    stored object's own "meta" group goes), empty objects in table format (nothing written;
    pandas 3.1 warns), a complib without complevel (pandas 3.1 warns), with the same
    warnings as pandas."""
    df = _frame(6)
    cat = df.assign(c=pd.Categorical(df.s))
    tw = Twins(tmp_path)
    tw.do("put", "a", cat, format="table")
    tw.do("put", "a/b", df)
    tw.do("put", "a/b/c", df.a, format="table")
    tw.do("put", "a", df.iloc[:2], format="table", track_times=False)
    tw.do("put", "a/b", df.a)
    tw.do("put", "e", df.iloc[:0], format="table")
    tw.do("append", "e", df.iloc[:0])
    tw.do("put", "e", df.iloc[:0])
    tw.same("keys")
    theirs, ours = tw.do("walk")
    assert list(ours) == list(theirs)
    tw.check_files()
    theirs = _warned(pd.HDFStore, tw.paths[0], "a", complib="zlib")
    ours = _warned(pp.HDFStore, tw.paths[1], "a", complib="zlib")
    assert ours[1] == theirs[1]
    ours[0].close()
    theirs[0].close()


def test_modes_and_errors(tmp_path):
    """pandas' (PyTables') mode semantics and the errors it raises, the same classes. (pandas
    deletes the object at the key before refusing a put, purehep leaves it: those are tried
    on a new key.)"""
    missing = tmp_path / "missing.h5"
    for mode in ("r", "r+"):
        for store in (pd.HDFStore, pp.HDFStore):
            with pytest.raises(FileNotFoundError):
                store(missing, mode)
    for store in (pd.HDFStore, pp.HDFStore):
        with pytest.raises(ValueError, match="invalid mode"):
            store(missing, "x")
        with pytest.raises(ValueError, match="format is not a defined argument"):
            store(missing, "a", format="table")
        with pytest.raises(ValueError, match="complib only supports"):
            store(missing, "a", complib="gzip")
    df = _frame(4)
    tw = Twins(tmp_path)
    tw.do("put", "f", df)
    for method, args, kw, err in (
            ("put", ("x", df), {"complib": "zlib"}, ValueError),       # fixed + complib
            ("put", ("f", df), {"format": "nope"}, TypeError),
            ("append", ("f", df), {}, ValueError),                     # append to fixed
            ("append", ("t", df), {"columns": ["a"]}, TypeError),
            ("put", ("x", [1, 2]), {}, TypeError),
            ("select", ("f",), {"chunksize": 2}, TypeError),
            ("select_column", ("f", "a"), {}, TypeError),
            ("select_as_coordinates", ("f",), {}, TypeError),
            ("remove", ("f",), {"start": 1}, ValueError),
            ("get", ("nope",), {}, KeyError),
            ("remove", ("nope",), {}, KeyError)):
        raised = []
        for store in tw.stores:
            extra = {"index": False} if store is tw.stores[0] and method == "put" else {}
            with pytest.raises(err) as info:
                getattr(store, method)(*args, **kw, **extra)
            raised.append(str(info.value))
        assert raised[1] == raised[0]
    tw.do("put", "t", df, format="table", data_columns=["a"])
    for rows in ((3, 1), (-1, -3)):              # PyTables fails in libhdf5, purehep refuses
        with pytest.raises(Exception, match="HDF5 error"):
            tw.stores[0].remove("t", start=rows[0], stop=rows[1])
        with pytest.raises(ValueError, match="cannot remove rows"):
            tw.stores[1].remove("t", start=rows[0], stop=rows[1])
    for column, err in (("b", KeyError), ("values_block_0", ValueError)):
        for store in tw.stores:
            with pytest.raises(err):
                store.select_column("t", column)
    tw.close()
    for store in tw.stores:
        with pytest.raises(pd.errors.ClosedFileError, match="file is not open"):
            store.keys()
    tw.open("r")                      # read-only: PyTables' FileModeError is a ValueError too
    for store in tw.stores:
        for call in (lambda: store.put("n", df), lambda: store.remove("f")):
            with pytest.raises(ValueError, match="not writable"):
                call()
    tw.close()
    tw.open("a")                      # "a" keeps what is there, "w" truncates
    assert tw.stores[1].keys() == tw.stores[0].keys() == ["/f", "/t"]
    tw.close()
    tw.open("w")
    assert tw.stores[1].keys() == tw.stores[0].keys() == []
    tw.close()


@pytest.mark.parametrize("where,start,stop", [
    ("a > 5 & a < 9", None, None), ("s == 'x1'", None, None), (None, 3, 7), (None, -5, None),
    (None, None, 2), ("b > 2", 4, 15), ("s == 'none'", None, None), ("b >= 0", None, None),
    (None, 5, 5), (None, 25, 30), (None, -30, 3), ("b > 2", 9, 4)])
def test_remove_rows(tmp_path, where, start, stop):
    """remove(key, where, start, stop) deletes those rows as pandas' delete through
    PyTables' remove_rows: same count returned, same rows left, the dataset shrunk and NROWS
    updated as PyTables leaves them; appending afterwards continues the table."""
    df = _frame()
    tw = Twins(tmp_path)
    tw.do("put", "t", df, format="table", data_columns=["a", "s", "b"])
    tw.same("remove", "t", where=where, start=start, stop=stop)
    tw.do("append", "t", df.iloc[:3])
    tw.same("select", "t")
    tw.check_files()
    with h5py.File(tw.paths[0]) as a, h5py.File(tw.paths[1]) as b:
        assert a["t/table"].shape == b["t/table"].shape
        assert a["t/table"].attrs["NROWS"] == b["t/table"].attrs["NROWS"]
        assert a["t/table"][()].tobytes() == b["t/table"][()].tobytes()


@pytest.mark.parametrize("kw", [{"chunksize": 3}, {"iterator": True},
                                {"chunksize": 4, "start": -8}, {"chunksize": 6, "stop": -3},
                                {"chunksize": 4, "where": "a > 4", "columns": ["b"]},
                                {"chunksize": 5, "start": 2, "stop": 17, "where": "b < 15"},
                                {"chunksize": 50, "where": "b > 100"}])
def test_select_iterator(tmp_path, kw):
    """select(iterator/chunksize): the chunks pandas' TableIterator gives (the where rows
    found first, start/stop taken as positions in them, empty chunks skipped)."""
    df = _frame()
    tw = Twins(tmp_path)
    tw.do("put", "t", df, format="table", data_columns=["a", "b"])
    theirs, ours = tw.do("select", "t", **kw)
    theirs, ours = list(theirs), list(ours)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        _equal(a, b)
    tw.close()
    chunks = list(pp.read_hdf(tw.paths[1], "t", **kw))        # read_hdf closes at the end
    assert len(chunks) == len(theirs)
    with pp.HDFStore(tw.paths[1], "a"):                       # the file is not held
        pass


def _pipelines(path):
    """{dataset: (chunks, [(filter id, client data)])} by h5py, without PyTables' search
    indexes (pandas' put makes them for the meta tables)."""
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.chunks and "_i_table" not in name:
            plist = obj.id.get_create_plist()
            out[name] = (obj.chunks, [plist.get_filter(i)[::2]
                                      for i in range(plist.get_nfilters())])
    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return out


def _blosc2_block_size_masked(pipeline):
    """cd[1] of blosc2 is the block size PyTables' plugin computes (Blosc2's heuristics):
    purehep stores 0 (Blosc2 chooses; the frames carry their own)."""
    return [(fid, cd[:1] + (0,) + cd[2:] if fid == 32026 else cd) for fid, cd in pipeline]


@pytest.mark.parametrize("complib", ["zlib", "lzo", "bzip2", "blosc2", "blosc2:zstd",
                                     "blosc:zstd"])
@pytest.mark.parametrize("fletcher32", [False, True])
def test_filters(tmp_path, complib, fletcher32):
    """Store-wide complib/fletcher32 as PyTables writes them: the filter ids and client data
    of tables (chunk shape included, blosc2's x16), and the filters of the fixed format's
    arrays; lzo becomes zlib with a warning, as PyTables without LZO does."""
    pytest.importorskip("blosc2" if complib.startswith("blosc2") else "imagecodecs")
    df = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # lzo: both warn (FiltersWarning / ours)
        tw = Twins(tmp_path, complevel=4, complib=complib, fletcher32=fletcher32)
    tw.do("put", "t", df, format="table", data_columns=["s"])
    # pandas 3 filters the pickled strings' VLArray too, which PyTables cannot create with
    # fletcher32 or blosc2 ("not suitable for filters")
    tw.do("put", "f", df if not fletcher32 and "blosc2" not in complib else df.drop(columns="s"))
    tw.check_files()
    theirs, ours = _pipelines(tw.paths[0]), _pipelines(tw.paths[1])
    assert ours["t/table"][0] == theirs["t/table"][0]
    assert _blosc2_block_size_masked(ours["t/table"][1]) == \
        _blosc2_block_size_masked(theirs["t/table"][1])
    assert sorted(ours) == sorted(theirs)
    for name in ours:                       # the arrays: chunked by purehep its own way
        assert [(fid, cd[:1]) for fid, cd in ours[name][1]] == \
            [(fid, cd[:1]) for fid, cd in theirs[name][1]] or "blosc" in complib, name
        assert [fid for fid, _ in ours[name][1]] == [fid for fid, _ in theirs[name][1]], name


def test_lzo_warns(tmp_path):
    with pytest.warns(UserWarning, match="lzo.*not available.*zlib"):
        pp.HDFStore(tmp_path / "a.h5", "w", complevel=1, complib="lzo").close()


@pytest.mark.parametrize("complib,complevel", [("bzip2", None), ("blosc2:lz4", 2),
                                               ("zlib", 0)])
def test_table_complib_of_its_own(tmp_path, complib, complevel):
    """put/append with a complib of their own (level: theirs, else the store's, else 9)
    over the store's filters; a categorical's meta table keeps the store's filters (pandas
    puts it through the store: purehep gave it the table's)."""
    pytest.importorskip("blosc2")
    df = _frame().assign(c=lambda d: pd.Categorical(d.s))
    tw = Twins(tmp_path, complevel=3, complib="zlib", fletcher32=True)
    tw.do("append", "t", df, complib=complib, complevel=complevel)
    tw.do("put", "u", df, format="table", complib=complib, complevel=complevel)
    tw.check_files()
    theirs, ours = _pipelines(tw.paths[0]), _pipelines(tw.paths[1])
    assert sorted(ours) == sorted(theirs)
    assert any("/meta/" in key for key in ours)
    for key in ours:
        assert ours[key][0] == theirs[key][0]
        assert _blosc2_block_size_masked(ours[key][1]) == \
            _blosc2_block_size_masked(theirs[key][1])


def test_dropna(tmp_path):
    """append(dropna=True) leaves out the rows missing in every value column, as pandas
    judges them (a float NaN; not a NaT or a missing object string; a categorical or
    string-dtype column is left out of the test, pandas 3's strings too)."""
    nan = np.nan
    frames = {
        "floats": pd.DataFrame({"a": [1.0, nan, nan, 4.0], "c": [nan, nan, 2.0, nan]}),
        "with_ints": pd.DataFrame({"a": [nan, nan], "i": [1, 2]}),
        "with_strings": pd.DataFrame({"a": [nan, nan, 1.0], "s": [None, "x", None]}),
        "with_times": pd.DataFrame({"a": [nan, nan], "t": pd.to_datetime([None, "2020"])}),
        "complex": pd.DataFrame({"z": [complex(nan, 0), 1j]}),
        "data_columns": pd.DataFrame({"a": [nan, 1.0, nan], "b": [nan, nan, nan]}),
        "with_categorical": pd.DataFrame({"a": [nan, nan, 1.0],
                                          "c": pd.Categorical([None, "u", "u"])}),
        "with_zoned": pd.DataFrame({"a": [nan, 2.0], "t": pd.to_datetime(["2020", None],
                                                                         utc=True)}),
        "with_string_dtype": pd.DataFrame({"a": [nan, nan], "s": pd.array(["x", None],
                                                                          "string")}),
    }
    tw = Twins(tmp_path)
    for name, df in frames.items():
        kw = {"data_columns": ["a"]} if name == "data_columns" else {}
        tw.do("append", name, df, dropna=True, **kw)
        tw.do("append", name, df, dropna=True)
        tw.do("put", f"put_{name}", df, format="table", dropna=True, **kw)
        tw.do("append", f"keep_{name}", df)
        tw.same("select", name)
    with pd.option_context("io.hdf.dropna_table", True):
        tw.do("append", "by_option", frames["floats"])
    tw.same("select", "by_option")
    tw.check_files()
    assert len(pd.read_hdf(tw.paths[1], "floats")) == 6


@pytest.mark.parametrize("kw", [{"expectedrows": 10 ** 6}, {"expectedrows": 10 ** 8},
                                {"expectedrows": 5}, {"chunksize": 3},
                                {"chunksize": 7, "expectedrows": 3 * 10 ** 5,
                                 "complib": "blosc2", "complevel": 1}])
def test_expectedrows_and_chunksize(tmp_path, kw):
    """append(expectedrows): the table chunked as PyTables chunks it for that many rows;
    append(chunksize): the rows written that many at a time, the same table."""
    if "complib" in kw:
        pytest.importorskip("blosc2")
    df = _frame()
    tw = Twins(tmp_path)
    tw.do("append", "t", df, **kw)
    tw.do("append", "t", df, chunksize=kw.get("chunksize"))
    tw.same("select", "t")
    tw.check_files()
    theirs, ours = _pipelines(tw.paths[0]), _pipelines(tw.paths[1])
    assert ours["t/table"][0] == theirs["t/table"][0]


def test_track_times(tmp_path):
    """put(track_times=False) writes the table without modification times, as PyTables;
    by default it has them."""
    df = _frame(5)
    tw = Twins(tmp_path)
    tw.do("put", "untracked", df, format="table", track_times=False)
    tw.do("put", "tracked", df, format="table")
    tw.check_files()
    for path in tw.paths:
        with h5py.File(path) as f:
            assert h5py.h5o.get_info(f["untracked/table"].id).ctime == 0
            assert h5py.h5o.get_info(f["tracked/table"].id).ctime > 0


def test_to_hdf_and_read_hdf_with_a_store(tmp_path):
    """to_hdf/read_hdf given an open HDFStore use it (and leave it open); to_hdf's dropna
    goes to append (pandas 3.1: to put too), with the same warnings."""
    df = _frame(5)
    df.loc[df.index[1], ["a"]] = np.nan
    tw = Twins(tmp_path)
    for kw in ({"key": "t", "append": True, "dropna": True},
               {"key": "p", "format": "table", "dropna": True}, {"key": "f"}):
        theirs = _warned(df[["a"]].to_hdf, tw.stores[0], index=False, **kw)
        ours = _warned(pp.to_hdf, df[["a"]], tw.stores[1], **kw)
        assert ours == theirs
        _equal(pp.read_hdf(tw.stores[1], kw["key"]), pd.read_hdf(tw.stores[0], kw["key"]))
    assert tw.stores[1].is_open
    tw.check_files()
    with pytest.raises(ValueError, match="not allowed while performing a read"):
        pp.read_hdf(tw.paths[1], "t", mode="w")
