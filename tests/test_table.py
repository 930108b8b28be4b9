"""purehep.table: HEP001 column tables, the four search indexes, validator and queries.
h5py is the oracle for the bytes; numpy's evaluation of the raw columns for the queries."""
import math

import h5py
import mmh3
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import purehep
from purehep.query import evaluate, parse
from purehep.table import Table, create_table, validate

N = 3000
KINDS = ("chunk_minmax", "sorted_rows", "bitmap", "chunk_bloom")


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.normal(0, 10, n).round(1)
    f[rng.random(n) < 0.05] = np.nan
    i = rng.integers(-40, 40, n)
    i[rng.random(n) < 0.05] = np.iinfo(np.int64).min        # missing = fill value
    return {"ts": np.arange(n, dtype=np.int64), "f": f, "i": i,
            "u": rng.integers(0, 20, n).astype(np.uint16), "flag": rng.random(n) < 0.3,
            "s": np.array([b"k%02d" % v for v in rng.integers(0, 30, n)]),
            "label": rng.integers(-1, 3, n)}


def _build(path, mode="w"):
    data = _data()
    with purehep.File(path, mode) as fh:
        t = create_table(fh, "t", data, chunks=256, categories={"label": ["a", "b", "c"]},
                         index={"row_id": np.arange(N, dtype=np.uint64)}, title="Sample run",
                         fillvalue={"i": np.iinfo(np.int64).min})
        for col in ("f", "i", "u", "s"):
            for kind in KINDS:
                t.create_search_index(col, kind)
        for kind in ("chunk_minmax", "sorted_rows", "chunk_bloom"):
            t.create_search_index("ts", kind)
        t.create_search_index("label", "bitmap")
        t.create_search_index("flag", "bitmap")
    return data


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp("table") / "t.h5"
    return path, _build(path)


def _ascii(attrs, name, value):
    tid = attrs.get_id(name)
    assert tid.shape == () and tid.dtype == np.dtype(f"S{len(value)}")
    assert h5py.check_string_dtype(tid.dtype).encoding == "ascii"
    assert attrs[name] == value.encode()


def test_h5py_sees_the_standard_layout(built):
    path, data = built
    with h5py.File(path, "r") as f:
        g = f["t"]
        _ascii(g.attrs, "CLASS", "COLUMN_TABLE")
        _ascii(g.attrs, "VERSION", "1.0")
        assert h5py.check_string_dtype(g.attrs.get_id("TITLE").dtype).encoding == "utf-8"
        assert [v.decode() for v in g.attrs["column-order"]] == list(data)
        assert g.attrs["_index"] == b"row_id"
        assert [f[r].name for r in g["row_id"].attrs["_columns_list"]] == [f"/t/{c}" for c in data]
        for c in data:
            assert g[c].fillvalue is not None and [f[r].name for r in g[c].attrs["_indexes"]] == ["/t/row_id"]
        cats = f[g["label"].attrs["_categories"]]
        assert cats.attrs["encoding-type"] == b"categorical" and cats.attrs["ordered"] == np.False_
        assert g["i"].fillvalue == np.iinfo(np.int64).min and np.isnan(g["f"].fillvalue)
        si = g["_search_indexes"]
        for col in ("f", "i", "u", "s"):
            refs = [f[r].name for r in g[col].attrs["_search_indexes"]]
            assert refs == [f"/t/_search_indexes/{col}__{k}" for k in KINDS]
            for k in KINDS:
                ds = si[f"{col}__{k}"]
                _ascii(ds.attrs, "KIND", k.upper())
                assert ds.attrs.get_id("_columns_list").shape == (1,)
                assert f[ds.attrs["_columns_list"][0]].name == f"/t/{col}"
        _check_minmax(si["f__chunk_minmax"], data["f"], np.nan)
        _check_minmax(si["i__chunk_minmax"], data["i"], np.iinfo(np.int64).min)
        _check_sorted(si["i__sorted_rows"], data["i"], np.iinfo(np.int64).min)
        _check_sorted(si["f__sorted_rows"], data["f"], np.nan)
        _check_bitmap(f, si["u__bitmap"], data["u"])
        _check_bitmap(f, si["s__bitmap"], data["s"])
        _check_bloom(si["u__chunk_bloom"], data["u"])
        _check_bloom(si["s__chunk_bloom"], data["s"])


def _check_minmax(ds, col, fill):
    assert ds.dtype.names == ("min", "max", "nan_count", "fill_count", "n")
    assert [ds.dtype[n] for n in ds.dtype.names] == [col.dtype, col.dtype] + [np.dtype("u8")] * 3
    assert ds.attrs["chunk_shape"].tolist() == [256] and ds.attrs["chunk_shape"].dtype == np.uint64
    assert ds.shape == (math.ceil(len(col) / 256),)
    for i, row in enumerate(ds[()]):
        chunk = col[i * 256:(i + 1) * 256]
        nan = np.isnan(chunk) if chunk.dtype.kind == "f" else np.zeros(len(chunk), bool)
        fills = chunk == fill
        good = chunk[~nan & ~fills]
        assert (row["nan_count"], row["fill_count"], row["n"]) == (nan.sum(), fills.sum(), len(chunk))
        assert (row["min"], row["max"]) == (good.min(), good.max())


def _check_sorted(ds, col, fill):
    nan = np.isnan(col) if col.dtype.kind == "f" else np.zeros(len(col), bool)
    fills = col == fill
    body = np.flatnonzero(~nan & ~fills)
    expect = np.concatenate([body[np.argsort(col[body], kind="stable")],
                             np.flatnonzero(fills), np.flatnonzero(nan)])
    assert ds.dtype == np.uint64 and np.array_equal(ds[()], expect)
    assert ds.attrs["nan_tail_length"] == nan.sum() and ds.attrs["fill_tail_length"] == fills.sum()
    for name in ("nan_tail_length", "fill_tail_length"):
        assert ds.attrs.get_id(name).dtype == np.uint64 and ds.attrs.get_id(name).shape == ()
    assert ds.attrs["ordered"] == np.True_


def _check_bitmap(f, ds, col):
    values = f[ds.attrs["_values"]]
    assert values.name == ds.name + "__values" and values.dtype == col.dtype
    assert np.array_equal(values[()], np.unique(col))
    assert ds.shape == (len(values), (len(col) + 7) // 8) and ds.dtype == np.uint8
    for k, v in enumerate(values[()]):
        rows = np.flatnonzero([(ds[k, r // 8] >> (r % 8)) & 1 for r in range(len(col))])
        assert np.array_equal(rows, np.flatnonzero(col == v))


def _check_bloom(ds, col):
    """Recompute each filter from the standard's text with mmh3 directly."""
    k, m_bits = int(ds.attrs["k"]), int(ds.attrs["m_bits"])
    assert ds.attrs.get_id("k").dtype == np.uint16 and ds.attrs.get_id("m_bits").dtype == np.uint64
    assert ds.attrs["hash_family"] == b"murmur3_128_double" and m_bits == 8 * ds.shape[1]
    for c in range(ds.shape[0]):
        bits = np.zeros(m_bits, bool)
        for v in set(col[c * 256:(c + 1) * 256].tolist()):
            key = v if isinstance(v, bytes) else np.array(v, col.dtype.newbyteorder("<")).tobytes()
            ha = mmh3.hash64(key, 0, signed=False)[0]
            hb = mmh3.hash64(key, 0x9E3779B9, signed=False)[1]
            for i in range(k):
                bits[((ha + i * hb) % 2**64) % m_bits] = True
        assert np.array_equal(np.packbits(bits, bitorder="little"), ds[c])


@pytest.mark.parametrize("text", [
    "(ts>3 AND ts<7) AND u=10", "i = -3", "i BETWEEN -5 AND 5 OR f > 15", "f != 0.5",
    "NOT (u IN (1, 2, 3)) AND s = 'k07'", "s < 'k03' OR flag = true", "label = 'b'",
    "label IN ('a', 'c') AND NOT i < 0", "f = nan", "f != nan", "i = -9223372036854775808",
    "u = 3.5", "u > -1 AND ts >= 2990", "s IN ('k01', 'zz')", "ts = 1500 OR ts = 17",
])
def test_queries_equal_numpy(built, text):
    path, data = built
    expr = parse(text)
    ref = dict(data, label=data["label"])
    if "label" in text:
        names = np.array(["a", "b", "c", None], dtype=object)[data["label"]]
        ref["label"] = np.where(data["label"] < 0, "\0", names).astype(str)
    expect = np.flatnonzero(evaluate(expr, ref))
    with purehep.File(path, "r") as f:
        for trust in (True, False):
            t = Table(f["t"], trust_indexes=trust)
            assert np.array_equal(t.where(expr), expect), (text, trust)


_OPS = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
_LEAF = st.one_of(
    st.builds(lambda c, o, v: f"{c} {o} {v}", st.sampled_from(["i", "u", "ts"]), _OPS,
              st.integers(-50, 3100)),
    st.builds(lambda o, v: f"f {o} {v!r}", _OPS, st.floats(-30, 30).map(lambda x: round(x, 1))),
    st.builds(lambda o, v: f"s {o} 'k{v:02d}'", _OPS, st.integers(0, 31)),
    st.builds(lambda c, a, b: f"{c} BETWEEN {a} AND {b}", st.sampled_from(["i", "u", "f"]),
              st.integers(-20, 20), st.integers(-20, 20)),
    st.builds(lambda c, vs: f"{c} IN ({', '.join(map(str, vs))})", st.sampled_from(["i", "u"]),
              st.lists(st.integers(-5, 25), min_size=1, max_size=3)))
_TREE = st.recursive(_LEAF, lambda sub: st.one_of(
    st.builds(lambda a, b: f"({a}) AND ({b})", sub, sub),
    st.builds(lambda a, b: f"({a}) OR ({b})", sub, sub),
    st.builds(lambda a: f"NOT ({a})", sub)), max_leaves=4)


@settings(max_examples=60, deadline=None)
@given(_TREE)
def test_random_queries_equal_numpy(built, text):
    path, data = built
    expr = parse(text)
    with purehep.File(path, "r") as f:
        assert np.array_equal(Table(f["t"]).where(expr), np.flatnonzero(evaluate(expr, data)))


def test_query_returns_rows(built):
    path, data = built
    with purehep.File(path, "r") as f:
        t = Table(f["t"])
        rows = t.query("u = 4 AND i > 0")
        got = t.query("u = 4 AND i > 0", fields=["ts", "s"])
        assert np.array_equal(got["ts"], data["ts"][rows]) and np.array_equal(got["s"], data["s"][rows])
        rec = t.query("u = 4 AND i > 0", structured=True)
        assert rec.dtype.names == tuple(t.columns) and np.array_equal(rec["f"], data["f"][rows], equal_nan=True)
        assert validate(f["t"]) == []


def test_worked_example_built_with_h5py(tmp_path):
    """HEP001 §11.1 + §11.2, written with h5py, read, validated and queried by purehep."""
    path = tmp_path / "example.h5"
    n = 500
    ts, energy = np.arange(n, dtype=np.int64) * 10, np.linspace(0, 50, n).astype(np.float32)
    label = (np.arange(n) % 3).astype(np.int8)
    utf8 = lambda s: np.array(s.encode(), dtype=h5py.string_dtype("utf-8", len(s.encode())))
    with h5py.File(path, "w") as f:
        g = f.create_group("my_table")
        g.attrs["CLASS"] = np.bytes_("COLUMN_TABLE")
        g.attrs["VERSION"] = np.bytes_("1.0")
        g.attrs["TITLE"] = utf8("Sample run")
        g.attrs.create("column-order", np.array([b"ts", b"energy", b"label"]),
                       dtype=h5py.string_dtype("utf-8", 6))
        g.attrs["_index"] = utf8("row_id")
        grow = {"maxshape": (None,), "chunks": (64,)}
        c_ts = g.create_dataset("ts", data=ts, fillvalue=-1, **grow)
        c_en = g.create_dataset("energy", data=energy, fillvalue=np.nan, **grow)
        c_lb = g.create_dataset("label", data=label, fillvalue=-1, **grow)
        cats = g.create_dataset("label_categories", data=["x", "y", "z"], dtype=h5py.string_dtype())
        cats.attrs["encoding-type"] = utf8("categorical")
        cats.attrs["ordered"] = np.False_
        c_ts.attrs["units"], c_ts.attrs["units_vocabulary"] = utf8("s"), utf8("UDUNITS-2")
        c_en.attrs["units"] = utf8("MeV")
        c_lb.attrs["_categories"] = cats.ref
        row_id = g.create_dataset("row_id", data=np.arange(n, dtype=np.uint64), **grow)
        row_id.attrs["_columns_list"] = np.array([c_ts.ref, c_en.ref, c_lb.ref], dtype=h5py.ref_dtype)
        for c in (c_ts, c_en, c_lb):
            c.attrs["_indexes"] = np.array([row_id.ref], dtype=h5py.ref_dtype)
        mm = np.zeros(8, dtype=[("min", "<i8"), ("max", "<i8"), ("nan_count", "<u8"),
                                ("fill_count", "<u8"), ("n", "<u8")])
        for i in range(8):
            chunk = ts[i * 64:(i + 1) * 64]
            mm[i] = (chunk.min(), chunk.max(), 0, 0, len(chunk))
        si = g.create_group("_search_indexes").create_dataset("ts__chunk_minmax", data=mm)
        si.attrs["KIND"] = np.bytes_("CHUNK_MINMAX")
        si.attrs["chunk_shape"] = np.array([64], dtype=np.uint64)
        si.attrs["_columns_list"] = np.array([c_ts.ref], dtype=h5py.ref_dtype)
        c_ts.attrs["_search_indexes"] = np.array([si.ref], dtype=h5py.ref_dtype)
    with purehep.File(path, "r") as f:
        t = Table(f["my_table"])
        assert validate(f["my_table"]) == []
        assert t.columns == ["ts", "energy", "label"] and t.index_datasets == ["row_id"]
        assert [i.kind for i in t.search_indexes("ts")] == ["CHUNK_MINMAX"]
        assert t.query("ts BETWEEN 100 AND 130").tolist() == [10, 11, 12, 13]
        assert np.array_equal(t.query("label = 'y' AND energy < 1"),
                              np.flatnonzero((label == 1) & (energy < 1)))
    with purehep.File(path, "r+") as f:                   # purehep extends h5py's table
        t = Table(f["my_table"])
        t.create_search_index("energy", "sorted_rows")
        t.append({"ts": [5000], "energy": [99.0], "label": ["z"], "row_id": [n]})
        assert validate(f["my_table"]) == [] and t.query("energy > 60").tolist() == [n]
    with h5py.File(path, "r") as f:
        assert f["my_table/label"][-1] == 2 and f["my_table/_search_indexes/ts__chunk_minmax"].shape == (8,)


def test_stale_and_inconsistent_indexes_are_detected(tmp_path):
    path = tmp_path / "stale.h5"
    data = _build(path)
    with h5py.File(path, "r+") as f:                      # a foreign writer appends to one column
        f["t/u"].resize((N + 1,))
        f["t/u"][N] = 7
    with purehep.File(path, "r") as f:
        problems = validate(f["t"], raise_=False)
        paths = {p for p, _ in problems}
        assert "/t" in paths and "/t/_search_indexes/u__sorted_rows" in paths
        with pytest.raises(purehep.ValidationError, match="u__chunk_minmax"):
            validate(f["t"])
    path2 = tmp_path / "tampered.h5"
    _build(path2)
    with h5py.File(path2, "r+") as f:                     # same shapes, wrong contents
        mm = f["t/_search_indexes/i__chunk_minmax"]
        row = mm[0]
        row["max"] = -100
        mm[0] = row
        f["t/_search_indexes/u__sorted_rows"][0:2] = f["t/_search_indexes/u__sorted_rows"][0:2][::-1]
        del f["t/ts"].attrs["_search_indexes"]
        f["t/_search_indexes"].create_dataset("junk", data=[1])
    with purehep.File(path2, "r") as f:
        problems = validate(f["t"], raise_=False)
        text = "\n".join(f"{p}: {m}" for p, m in problems)
        assert "/t/_search_indexes/i__chunk_minmax: contents differ" in text
        assert "/t/_search_indexes/u__sorted_rows: contents differ" in text
        assert "/t/_search_indexes/ts__chunk_minmax: _columns_list -> /t/ts" in text
        assert "/t/_search_indexes/junk: missing attribute KIND (§8.3, §9.4)" in text
        assert validate(f["t"], verify_indexes=False, raise_=False) != []
        t = Table(f["t"], trust_indexes=False)
        assert np.array_equal(t.query("i > 0"), np.flatnonzero(data["i"] > 0))


def test_drop_and_refresh(tmp_path):
    path = tmp_path / "drop.h5"
    _build(path)
    with purehep.File(path, "a") as f:
        t = Table(f["t"])
        t.drop_search_index("u", "bitmap")
        t.drop_search_index("s")
        assert "u__bitmap__values" not in f["t/_search_indexes"]
        assert sorted(i.kind for i in t.search_indexes("u")) == ["CHUNK_BLOOM", "CHUNK_MINMAX", "SORTED_ROWS"]
        assert "_search_indexes" not in f["t/s"].attrs
        t.append({c: v[:10] for c, v in _data(10, seed=5).items()} | {"row_id": np.arange(10)})
        assert validate(f["t"]) == [] and len(t) == N + 10
    with h5py.File(path, "r") as f:
        assert f["t/_search_indexes/u__sorted_rows"].shape == (N + 10,)


def test_not_a_table(tmp_path):
    with purehep.File(tmp_path / "x.h5", "w") as f:
        g = f.create_group("g")
        g.attrs["CLASS"] = np.bytes_("TABLE")
        with pytest.raises(purehep.ValidationError, match="/g"):
            Table(g)
        assert validate(g, raise_=False)[0][0] == "/g"


def test_anndata_reads_the_table(tmp_path):
    ad = pytest.importorskip("anndata")
    path = tmp_path / "ad.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "obs", {"cell": ["c0", "c1", "c2"], "x": np.array([1.5, 2.5, 3.5]),
                                "n": np.array([1, 2, 3])}, index="cell", anndata=True)
        Table(f["obs"]).add_column("y", np.array([7, 8, 9]))
        assert validate(f["obs"]) == []
    with h5py.File(path, "r") as f:
        df = ad.io.read_elem(f["obs"])
    assert list(df.columns) in (["x", "n", "y"], ["cell", "x", "n", "y"])
    assert df["x"].tolist() == [1.5, 2.5, 3.5] and list(df.index) == ["c0", "c1", "c2"]
    assert df["y"].tolist() == [7, 8, 9]


@pytest.mark.parametrize("length", [0, 1, 4, 7, 8, 9, 15, 16, 17, 31, 33])
def test_murmur3_matches_mmh3(length):
    """The vectorised MurmurHash3_x64_128 that hashes Bloom keys equals mmh3's."""
    from purehep.kernels.murmur3 import hash128
    keys = np.random.default_rng(length).integers(0, 256, (50, length), dtype=np.uint8)
    for seed in (0, 0x9E3779B9):
        h1, h2 = hash128(keys, seed)
        assert list(zip(h1.tolist(), h2.tolist())) == \
            [mmh3.hash64(k.tobytes(), seed, signed=False) for k in keys]


def _batch(n, seed, spread):
    """Rows whose value ranges widen with ``spread`` (new BITMAP values below and above)."""
    rng = np.random.default_rng(seed)
    f = rng.normal(0, 10, n).round(0)
    f[rng.random(n) < 0.1] = np.nan
    i = rng.integers(-spread, spread, n)
    i[rng.random(n) < 0.1] = np.iinfo(np.int64).min
    return {"f": f, "i": i, "s": np.array([b"k%02d" % v for v in rng.integers(0, spread, n)])}


@pytest.mark.parametrize("kind", KINDS)
def test_append_updates_indexes_in_place(tmp_path, monkeypatch, kind):
    """Each append (empty ones, ones filling the last partial chunk) leaves every index equal
    to a rebuild, updated in place (never rebuilt)."""
    from purehep.table import indexes as ix
    path = tmp_path / "append.h5"
    with purehep.File(path, "w") as f:
        t = create_table(f, "t", _batch(37, 0, 3), chunks=16)
        for col in ("f", "i", "s"):
            t.create_search_index(col, kind)
        monkeypatch.setattr(Table, "_rebuild", lambda self, index: pytest.fail("rebuilt"))
        for step, n in enumerate([0, 11, 5, 0, 40, 1, 16, 3]):
            t.append(_batch(n, step + 1, 3 + 4 * step))
            assert len(t.search_indexes()) == 3
            for index in t.search_indexes():
                assert ix.content_problems(index, index.column[()], t._fill_of(index)) == []
            assert validate(f["t"], verify_indexes=True) == []
        data = {c: f["t"][c][()] for c in ("f", "i", "s")}
        for text in ("i = 5", "i BETWEEN -9 AND 2", "f > 3 OR s = 'k04'", "f = nan",
                     "i = -9223372036854775808", "s IN ('k00', 'k20')"):
            assert np.array_equal(t.query(text), np.flatnonzero(evaluate(parse(text), data))), text
    with h5py.File(path, "r") as f:
        assert len(f["t/f"]) == 113 and f["t"].attrs["CLASS"] == b"COLUMN_TABLE"


def test_append_drops_a_bitmap_beyond_max_values(tmp_path):
    with purehep.File(tmp_path / "drop.h5", "w") as f:
        t = create_table(f, "t", _batch(20, 0, 3), chunks=8)
        t.create_search_index("i", "bitmap", max_values=8)
        t.create_search_index("i", "chunk_minmax")
        t.append(_batch(5, 1, 3))
        assert [i.kind for i in t.search_indexes("i")] == ["BITMAP", "CHUNK_MINMAX"]
        t.append(_batch(30, 2, 50))
        assert [i.kind for i in t.search_indexes("i")] == ["CHUNK_MINMAX"]
        assert "i__bitmap__values" not in f["t/_search_indexes"]
        assert validate(f["t"], verify_indexes=True) == []


@pytest.mark.parametrize("tamper", [
    lambda ds: ds.__setitem__(3, 1000),                              # a row past the end
    lambda ds: ds.__setitem__(0, 2**64 - 1),
    lambda ds: ds.attrs.__setitem__("nan_tail_length", np.uint64(50)),
    lambda ds: ds.attrs.__delitem__("fill_tail_length")],
    ids=["row_past_end", "row_2**64-1", "nan_tail_too_long", "no_fill_tail_length"])
def test_append_rebuilds_a_damaged_sorted_rows(tmp_path, tamper):
    """A SORTED_ROWS permutation damaged by another writer (shape still current) is rebuilt
    by the next append, which keeps its rows; before: IndexError / KeyError on every append."""
    from purehep.table import indexes as ix
    path = tmp_path / "damaged.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "t", _batch(20, 0, 3), chunks=8).create_search_index("f", "sorted_rows")
    with h5py.File(path, "r+") as f:
        tamper(f["t/_search_indexes/f__sorted_rows"])
    batch = _batch(7, 1, 5)
    with purehep.File(path, "r+") as f:
        t = Table(f["t"])
        t.append(batch)
        assert len(t) == 27 and np.array_equal(f["t/f"][20:], batch["f"], equal_nan=True)
        [index] = t.search_indexes("f")
        assert ix.content_problems(index, index.column[()], t._fill_of(index)) == []
        data = {"f": f["t/f"][()]}
        for text in ("f >= 0", "f = nan", "f BETWEEN -5 AND 5"):
            want = np.flatnonzero(evaluate(parse(text), data))
            assert np.array_equal(Table(f["t"], indexes="trust").query(text), want), text


def test_add_and_drop_columns(tmp_path):
    """Columns added and dropped on an existing table keep column-order, row-index links,
    categories and search indexes consistent (validator and h5py agree)."""
    path = tmp_path / "cols.h5"
    _build(path)
    with purehep.File(path, "a") as f:
        t = Table(f["t"])
        t.add_column("e", np.arange(N, dtype=np.float32) / 7, units="GeV")
        t.add_column("kind", ["up", "down", "up"] * (N // 3), categories=["down", "up"])
        t.create_search_index("e", "sorted_rows")
        t.create_search_index("kind", "bitmap")
        assert t.columns[-2:] == ["e", "kind"] and validate(f["t"]) == []
        assert len(t.query("kind = 'up' AND e < 1")) == 5
        with pytest.raises(ValueError, match="rows"):
            t.add_column("short", [1, 2])
        t.drop_column("u")
        t.drop_column("kind")
        with pytest.raises(ValueError, match="row index"):
            t.drop_column("row_id")
        t.append({c: v[:4] for c, v in _data(4, seed=9).items() if c != "u"}
                 | {"e": np.ones(4, np.float32), "row_id": np.arange(4)})
        assert validate(f["t"], verify_indexes=True) == []
    with h5py.File(path, "r") as f:
        g = f["t"]
        assert [v.decode() for v in g.attrs["column-order"]][-2:] == ["label", "e"]
        assert "u" not in g and "kind" not in g and "kind_categories" not in g
        assert not any(n.startswith(("u__", "kind__")) for n in g["_search_indexes"])
        assert [f[r].name for r in g["row_id"].attrs["_columns_list"]][-1] == "/t/e"
        assert f[g["e"].attrs["_indexes"][0]].name == "/t/row_id" and g["e"].attrs["units"] == b"GeV"
        assert g["e"].shape == (N + 4,) and g["e"].chunks == (256,)
