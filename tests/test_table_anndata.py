"""HEP001 tables and Anndata dataframes, both ways, with the real anndata: purehep's
``anndata=True`` tables read by ``anndata.io.read_elem`` / ``read_h5ad`` (categoricals,
ordered, missing categories, the row index, tables without one), and Anndata's own
``write_h5ad`` obs/var read by purehep (categoricals, nullable columns, the index), equal to
what anndata reads, queries included. The layout choice is README "Anndata"."""
import warnings

import h5py
import numpy as np
import pytest

import purehep
from purehep.table import Table, create_table, validate

ad = pytest.importorskip("anndata")
pd = pytest.importorskip("pandas")


def _obs(n=6):
    return pd.DataFrame({
        "cluster": pd.Categorical(["a", "b", None, "a", "c", "b"][:n], categories=["a", "b", "c", "d"]),
        "grade": pd.Categorical(["lo", "hi", "hi", "lo", "mid", "lo"][:n],
                                categories=["lo", "mid", "hi"], ordered=True),
        "level": pd.Categorical([1, 2, 1, 3, 2, 1][:n]),
        "n": np.arange(n, dtype=np.int32), "x": np.linspace(0, 1, n), "s": list("uvwxyz")[:n],
        "ok": np.array([True, False] * 3)[:n]},
        index=pd.Index([f"cell{i}" for i in range(n)], name="cell"))


def _h5ad(path, obs, var):
    """An .h5ad file whose obs and var are purehep tables written with anndata=True."""
    with purehep.File(path, "w") as f:
        f.attrs["encoding-type"], f.attrs["encoding-version"] = "anndata", "0.1.0"
        x = f.create_dataset("X", data=np.arange(len(obs) * len(var), dtype=np.float32)
                             .reshape(len(obs), len(var)))
        x.attrs["encoding-type"], x.attrs["encoding-version"] = "array", "0.2.0"
        for name in ("layers", "obsm", "varm", "obsp", "varp", "uns"):
            g = f.create_group(name)
            g.attrs["encoding-type"], g.attrs["encoding-version"] = "dict", "0.1.0"
        create_table(f, "obs", obs, anndata=True)
        create_table(f, "var", var, anndata=True)
        assert validate(f["obs"]) == [] and validate(f["var"]) == []


def test_anndata_reads_purehep_tables(tmp_path):
    obs = _obs()
    var = pd.DataFrame({"gene": ["g1", "g2", "g3"], "kind": pd.Categorical(["p", "q", "p"])},
                       index=pd.Index(["G1", "G2", "G3"]))
    path = tmp_path / "p.h5ad"
    _h5ad(path, obs, var)
    with h5py.File(path) as f:
        got = ad.io.read_elem(f["obs"])
        pd.testing.assert_frame_equal(got, obs)              # dtypes, categories, ordered, index
        assert got["cluster"].isna().tolist() == [False, False, True, False, False, False]
        assert got["grade"].cat.ordered and not got["cluster"].cat.ordered
        pd.testing.assert_frame_equal(ad.io.read_elem(f["var"]), var.rename_axis(None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adata = ad.read_h5ad(path)
    assert adata.shape == (6, 3) and list(adata.obs_names) == list(obs.index)
    pd.testing.assert_frame_equal(adata.obs, obs)
    assert adata.var["kind"].dtype == "category" and list(adata.var_names) == ["G1", "G2", "G3"]
    with purehep.File(path) as f:                  # and purehep reads them as written
        pd.testing.assert_frame_equal(Table(f["obs"]).to_pandas(), obs)
        t = Table(f["obs"])
        assert t.query("cluster = 'a'").tolist() == [0, 3]
        assert t.query("cluster IS NULL").tolist() == [2]
        assert t.query("grade = 'hi' AND n > 1").tolist() == [2]


def test_table_without_row_index(tmp_path):
    df = _obs().reset_index(drop=True)
    path = tmp_path / "noindex.h5"
    with purehep.File(path, "w") as f:
        t = create_table(f, "obs", df, anndata=True, chunks=4)
        t.create_search_index("cluster", "BITMAP")
        t.create_search_index("n", "CHUNK_MINMAX")
        assert validate(f["obs"]) == []
    with h5py.File(path) as f:
        got = ad.io.read_elem(f["obs"])              # anndata needs an _index: it has one
    assert list(got.index) == [str(i) for i in range(6)]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), df)
    with purehep.File(path, "r+") as f:
        t = Table(f["obs"])
        pd.testing.assert_frame_equal(t.to_pandas(), df)          # a RangeIndex again
        t.append(df.iloc[:2])                                      # labels continue
        t.add_column("tag", pd.Categorical(["p", "q"] * 4))
        assert validate(f["obs"]) == []
        assert t.query("cluster = 'b'").tolist() == [1, 5, 7]
    with h5py.File(path) as f:
        got = ad.io.read_elem(f["obs"])
    assert list(got.index) == [str(i) for i in range(8)]
    assert got["cluster"].tolist()[-2:] == ["a", "b"] and got["tag"].dtype == "category"
    with purehep.File(path, "r+") as f:
        Table(f["obs"]).drop_column("tag")
        assert "tag" not in f["obs"] and validate(f["obs"]) == []


def _anndata_file(path):
    obs = _obs()
    obs["ni"] = pd.array([1, None, 3, 4, None, 6], dtype="Int64")
    obs["nb"] = pd.array([True, None, False, True, True, None], dtype="boolean")
    obs["nf"] = np.array([0.5, np.nan, 1.5, 0.0, 2.0, 0.0])
    var = pd.DataFrame({"kind": pd.Categorical(["p", "q"])}, index=["g1", "g2"])
    adata = ad.AnnData(X=np.ones((6, 2), np.float32), obs=obs, var=var)
    adata.write_h5ad(path)
    return obs


def test_purehep_reads_anndata_output(tmp_path):
    path = tmp_path / "a.h5ad"
    obs = _anndata_file(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ad.read_h5ad(path)
    with purehep.File(path) as f:
        with pytest.raises(purehep.ValidationError, match="anndata=True"):
            Table(f["obs"])                          # not a HEP001 table (§5.1)
        t = Table(f["obs"], anndata=True)
        got = t.to_pandas()
        pd.testing.assert_frame_equal(got, want.obs)
        pd.testing.assert_frame_equal(got, obs)     # categoricals, nullables, index intact
        pd.testing.assert_frame_equal(Table(f["var"], anndata=True).to_pandas(), want.var)
        assert t.query("cluster = 'a'").tolist() == [0, 3]
        assert t.query("ni IS NULL").tolist() == [1, 4] and t.query("nb IS NULL").tolist() == [1, 5]
        assert t.query("n = 0").tolist() == [0]      # 0 is a value: no fill value was set
        assert t.query("level = '1'").tolist() == [0, 2, 5]   # category values as strings
        assert t.query("level = 1").tolist() == [1, 4]         # numbers compare codes
        with pytest.raises(ValueError, match="read-only"):
            t.append(obs)
        assert validate(f["obs"], raise_=False)[0][1].endswith("(§5.1)")


def test_validator_and_anndata_groups(tmp_path):
    """Anndata categorical groups are columns only in tables marked as dataframes."""
    path = tmp_path / "v.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "a", _obs(), anndata=True)
        create_table(f, "b", {"n": np.arange(6)})
    with h5py.File(path, "r+") as f:
        g = f["b"].create_group("cat")
        g.attrs["encoding-type"], g.attrs["encoding-version"] = "categorical", "0.2.0"
        g.attrs["ordered"] = False
        g["codes"], g["categories"] = np.zeros(6, np.int8), np.array([b"x"])
        del f["a/cluster"].attrs["ordered"]
        del f["a/grade/codes"].attrs["_categories"]
    with purehep.File(path) as f:
        problems = validate(f["a"], raise_=False)
        assert ("/a/cluster", "missing attribute ordered (§6.6, §10)") in problems
        assert ("/a/grade/codes", "Anndata categorical codes lack the _categories reference (§6.6)") \
            in problems
        assert any(p == "/b/cat" and "§5.5" in m for p, m in validate(f["b"], raise_=False))


# --- property: random frames both ways ------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_WORDS = st.text("abcé", min_size=0, max_size=3)


@st.composite
def _frames(draw):
    """DataFrames of the column kinds Anndata and HEP001 both represent exactly."""
    n = draw(st.integers(0, 12))
    kinds = draw(st.lists(st.sampled_from(["i1", "i8", "u2", "u8", "f4", "f8", "bool", "str",
                                           "cat", "numcat"]), min_size=1, max_size=5))
    cols = {}
    for i, kind in enumerate(kinds):
        name = f"{kind}_{i}"
        if kind in ("cat", "numcat"):
            cats = draw(st.lists(_WORDS if kind == "cat" else st.integers(-5, 5),
                                 min_size=1, max_size=5, unique=True))
            codes = draw(st.lists(st.integers(-1, len(cats) - 1), min_size=n, max_size=n))
            cols[name] = pd.Categorical.from_codes(codes, categories=cats, ordered=draw(st.booleans()))
        elif kind == "str":
            cols[name] = np.array(draw(st.lists(_WORDS, min_size=n, max_size=n)), dtype=object)
        elif kind == "bool":
            cols[name] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
        else:
            dt = np.dtype(kind)
            if dt.kind == "f":
                values = st.floats(allow_nan=True, width=8 * dt.itemsize)
            else:
                info = np.iinfo(dt)
                values = st.integers(int(info.min), int(info.max))
            cols[name] = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=dt)
    index = None
    if draw(st.booleans()):
        index = pd.Index(draw(st.lists(_WORDS, min_size=n, max_size=n, unique=True)), dtype=object,
                         name=draw(st.sampled_from([None, "cell"])))
    return pd.DataFrame(cols, index=index)


@settings(max_examples=25, deadline=None)
@given(_frames())
def test_random_frames_purehep_to_anndata(tmp_path_factory, df):
    path = tmp_path_factory.mktemp("rand") / "p.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "obs", df, anndata=True, chunks=4)
        assert validate(f["obs"]) == []
        back = Table(f["obs"]).to_pandas()
    with h5py.File(path) as f:
        got = ad.io.read_elem(f["obs"])
    want = df
    if isinstance(df.index, pd.RangeIndex):
        assert list(got.index) == [str(i) for i in range(len(df))]
        got = got.reset_index(drop=True)
    else:        # an object index of str comes back as pandas' default for str (pandas 3: str)
        want = df.set_axis(pd.Index(df.index.tolist(), name=df.index.name))
    pd.testing.assert_frame_equal(got, want, check_index_type=len(df) > 0)
    pd.testing.assert_frame_equal(back, want, check_index_type=len(df) > 0)


@settings(max_examples=25, deadline=None)
@given(_frames())
def test_random_frames_anndata_to_purehep(tmp_path_factory, df):
    path = tmp_path_factory.mktemp("rand") / "a.h5"
    if isinstance(df.index, pd.RangeIndex):
        df.index = df.index.astype(str)
    with h5py.File(path, "w") as f:
        ad.io.write_elem(f, "obs", df)
    with h5py.File(path) as f:
        want = ad.io.read_elem(f["obs"])
    with purehep.File(path) as f:
        got = Table(f["obs"], anndata=True).to_pandas()
    pd.testing.assert_frame_equal(got, want, check_index_type=len(df) > 0)


def test_nullable_strings_and_unknown_encodings(tmp_path):
    path = tmp_path / "s.h5"
    df = pd.DataFrame({"ns": pd.array(["a", None, "b"], dtype="string"), "k": [1, 2, 3]},
                      index=["x", "y", "z"])
    with ad.settings.override(allow_write_nullable_strings=True), h5py.File(path, "w") as f:
        ad.io.write_elem(f, "obs", df)
        assert f["obs/ns"].attrs["encoding-type"] == "nullable-string-array"
    with h5py.File(path) as f:
        want = ad.io.read_elem(f["obs"])
    with purehep.File(path) as f:
        t = Table(f["obs"], anndata=True)
        pd.testing.assert_frame_equal(t.to_pandas(), want)
        assert t.to_arrow().column("ns").to_pylist() == ["a", None, "b"]
        assert t.query("ns IS NULL").tolist() == [1] and t.query("ns = 'b'").tolist() == [2]
    with h5py.File(path, "r+") as f:             # a column in an encoding purehep does not read
        g = f["obs"].create_group("aw")
        g.attrs["encoding-type"], g.attrs["encoding-version"] = "awkward-array", "0.1.0"
        f["obs"].attrs["column-order"] = np.array(["ns", "k", "aw"], dtype=object)
    with purehep.File(path) as f:
        with pytest.raises(purehep.UnsupportedFeatureError, match="'awkward-array'"):
            Table(f["obs"], anndata=True)


def test_nullable_string_na_value(tmp_path):
    """A nullable-string-array's ``na-value`` ("NaN": pandas' "str" dtype, as anndata >= 0.13
    writes str columns; "NA" or absent: "string") says which StringDtype it reads as."""
    path = tmp_path / "na.h5"
    df = pd.DataFrame({"nan": pd.array(["a", None], dtype="string"),
                       "na": pd.array(["b", None], dtype="string"),
                       "plain": pd.array(["c", None], dtype="string")}, index=["x", "y"])
    with ad.settings.override(allow_write_nullable_strings=True), h5py.File(path, "w") as f:
        ad.io.write_elem(f, "obs", df)
        f["obs/nan"].attrs["na-value"], f["obs/na"].attrs["na-value"] = "NaN", "NA"
        f["obs/plain"].attrs.pop("na-value", None)
    with purehep.File(path) as f:
        got = Table(f["obs"], anndata=True).to_pandas()
    assert got["nan"].dtype == pd.StringDtype(na_value=np.nan)
    assert got["nan"].tolist() == ["a", np.nan]
    assert got["na"].dtype == got["plain"].dtype == pd.StringDtype()
    assert got["plain"].tolist() == ["c", pd.NA]


def test_nullable_columns_warn_in_anndata_mode(tmp_path):
    df = pd.DataFrame({"ni": pd.array([1, None], dtype="Int64"), "ok": pd.array([1, 2], dtype="Int64"),
                       "nb": pd.array([True, False], dtype="boolean")})
    with purehep.File(tmp_path / "w.h5", "w") as f:
        with pytest.warns(purehep.errors.PurehepWarning, match=r"\[.ni., .nb.\]"):
            create_table(f, "a", df, anndata=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            create_table(f, "b", df, anndata=False)
            create_table(f, "c", df[["ok"]], anndata=True)
        pd.testing.assert_frame_equal(Table(f["a"]).to_pandas(), df)
