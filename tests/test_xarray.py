"""xarray on purehep (no libhdf5): ``engine="purehep"`` for reading, ``to_netcdf(engine=
"h5netcdf")`` with H5NETCDF_WRITE_BACKEND=purehep for writing.

Oracles: netCDF4-python (libnetcdf) reads every file purehep writes, equal to the source, and
writes the files purehep reads; xarray's h5netcdf engine on h5py reads the corpus files
purehep's engine must read equal; ``ncdump`` (Debian netcdf-bin) prints purehep's files as it
prints the same datasets written through h5netcdf on h5py (skipped without it).
"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

try:        # h5py's plugin filters first: importing netCDF4 points HDF5_PLUGIN_PATH at
    import hdf5plugin  # noqa: F401  its own plugins, which h5py's libhdf5 cannot load
except ImportError:
    pass
xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
netCDF4 = pytest.importorskip("netCDF4")
h5netcdf = pytest.importorskip("h5netcdf", minversion="1.8")

import purehep  # noqa: E402
from purehep.integrations.xarray_backend import PurehepBackendEntrypoint  # noqa: E402

ENGINE = PurehepBackendEntrypoint


@pytest.fixture
def purehep_writes(monkeypatch):
    monkeypatch.setenv("H5NETCDF_WRITE_BACKEND", "purehep")


def _time(n=4, **kw):
    return pd.date_range("2001-02-03", periods=n, freq="6h", **kw)


# --- the round-trip cases: (dataset, encoding) ----------------------------------------------

def case_dtypes():
    rng = np.random.default_rng(1)
    data = {f"v_{t}": ("x", rng.integers(0, 100, 5).astype(t))
            for t in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8")}
    data.update({"f4": ("x", rng.random(5).astype("f4")), "f8": ("x", rng.random(5)),
                 "flag": ("x", np.array([True, False, True, True, False]))})
    return xr.Dataset(data, coords={"x": np.arange(5, dtype="i4")},
                      attrs={"title": "dtypes", "version": np.int32(3),
                             "levels": np.array([1.5, 2.5])}), {}


def case_fill_values():
    ds = xr.Dataset({"temp": (("y", "x"), np.array([[1.0, np.nan], [np.nan, 4.0]])),
                     "count": ("x", np.array([7, -1], "i4"))})
    ds["count"] = ds["count"].where(ds["count"] != -1)
    return ds, {"temp": {"_FillValue": -9999.0}, "count": {"dtype": "i4", "_FillValue": -1}}


def case_packing():
    values = np.array([[10.0, 10.5, np.nan], [11.2, 12.3, 13.4]])
    ds = xr.Dataset({"packed": (("y", "x"), values, {"units": "K"})})
    return ds, {"packed": {"dtype": "i2", "scale_factor": 0.1, "add_offset": 10.0,
                           "_FillValue": -32768}}


def case_cf_time():
    import cftime
    ds = xr.Dataset({"v": ("time", np.arange(4.0)),
                     "dt": ("time", pd.to_timedelta([1, 2, 3, 4], unit="h"))},
                    coords={"time": _time(),
                            "noleap": ("n", xr.date_range("2000-02-27", periods=3,
                                                          calendar="noleap",
                                                          use_cftime=True).values)})
    assert isinstance(ds["noleap"].values[0], cftime.datetime)
    return ds, {"time": {"units": "hours since 2001-01-01"}, "dt": {"units": "minutes"}}


def case_strings():
    return xr.Dataset({"names": ("x", np.array(["alpha", "β", "", "gamma-long"], object)),
                       "codes": ("x", np.array([b"ab", b"c", b"def", b""], "S3"))},
                      attrs={"comment": "ünïcode attribute", "tags": ["one", "two"]}), {}


def case_chunked_compressed():
    rng = np.random.default_rng(2)
    ds = xr.Dataset({"a": (("t", "x"), rng.random((20, 30)).astype("f4")),
                     "b": (("t", "x"), rng.integers(0, 9, (20, 30)).astype("i2"))})
    return ds, {"a": {"zlib": True, "complevel": 5, "shuffle": True, "chunksizes": (5, 30)},
                "b": {"zlib": True, "complevel": 1, "fletcher32": True, "chunksizes": (20, 7)}}


def case_unlimited():
    ds = xr.Dataset({"v": (("time", "x"), np.arange(12.0).reshape(4, 3))},
                    coords={"time": _time(), "x": [1, 2, 3]})
    return ds, {}


def case_2d_coordinate():
    lat, lon = np.meshgrid(np.linspace(-10, 10, 3), np.linspace(0, 30, 4), indexing="ij")
    return xr.Dataset({"v": (("y", "x"), np.arange(12.0).reshape(3, 4))},
                      coords={"lat": (("y", "x"), lat), "lon": (("y", "x"), lon)}), {}


CASES = {f.__name__[5:]: f for f in (case_dtypes, case_fill_values, case_packing,
                                      case_cf_time, case_strings, case_chunked_compressed,
                                      case_unlimited, case_2d_coordinate)}
UNLIMITED = {"unlimited": ["time"]}


def _write(ds, path, encoding, engine, case=None, **kw):
    ds.to_netcdf(path, engine=engine, encoding=encoding, unlimited_dims=UNLIMITED.get(case),
                 **kw)


def _read(path, engine, **kw):
    with xr.open_dataset(path, engine=engine, **kw) as ds:
        return ds.load()


@pytest.mark.parametrize("name", CASES)
def test_purehep_writes_netcdf4_reads(tmp_path, purehep_writes, name):
    """purehep writes (h5netcdf reading back in the same session); libnetcdf reads it equal
    to the source, and so does purehep."""
    ds, encoding = CASES[name]()
    path = str(tmp_path / f"{name}.nc")
    _write(ds, path, encoding, "h5netcdf", name)
    with h5netcdf.File(path, "r", backend="purehep") as f:
        assert f._h5file.attrs["_NCProperties"].startswith(b"version=2,h5netcdf=")
    xr.testing.assert_identical(_read(path, "netcdf4"), ds)
    xr.testing.assert_identical(_read(path, ENGINE), ds)
    if name == "unlimited":
        with netCDF4.Dataset(path) as nc:
            assert nc.dimensions["time"].isunlimited()


@pytest.mark.parametrize("name", CASES)
def test_netcdf4_writes_purehep_reads(tmp_path, name):
    ds, encoding = CASES[name]()
    path = str(tmp_path / f"{name}.nc")
    _write(ds, path, encoding, "netcdf4", name)
    xr.testing.assert_identical(_read(path, ENGINE), _read(path, "netcdf4"))
    xr.testing.assert_identical(_read(path, ENGINE), ds)


def test_encoding_read_back(tmp_path, purehep_writes):
    """Chunks and filters purehep writes are what netCDF4-python reports, and what the
    purehep engine puts in ``encoding`` (h5netcdf reads them through Dataset._filters)."""
    ds, encoding = case_chunked_compressed()
    path = str(tmp_path / "enc.nc")
    _write(ds, path, encoding, "h5netcdf")
    back = xr.open_dataset(path, engine=ENGINE)
    with netCDF4.Dataset(path) as nc:
        for name, enc in encoding.items():
            filters = nc[name].filters()
            assert filters["zlib"] and filters["complevel"] == enc["complevel"]
            assert filters["shuffle"] == enc.get("shuffle", False)
            assert filters["fletcher32"] == enc.get("fletcher32", False)
            assert tuple(nc[name].chunking()) == enc["chunksizes"]
            got = back[name].encoding
            assert got["zlib"] and got["complevel"] == enc["complevel"]
            assert got["chunksizes"] == enc["chunksizes"]
            assert got["shuffle"] == enc.get("shuffle", False)
            assert got["fletcher32"] == enc.get("fletcher32", False)
    back.close()


def test_groups_and_append(tmp_path, purehep_writes):
    """Groups written one by one (mode="a" reopens purehep's file), and a variable appended
    to a file netCDF4-python wrote."""
    path = str(tmp_path / "groups.nc")
    root = xr.Dataset({"r": ("x", np.arange(3))}, attrs={"level": "root"})
    g1 = xr.Dataset({"a": ("y", np.linspace(0, 1, 4))}, attrs={"level": "one"})
    g2 = xr.Dataset({"b": ("z", np.array(["p", "q"], object))})
    root.to_netcdf(path, engine="h5netcdf")
    g1.to_netcdf(path, engine="h5netcdf", mode="a", group="g1")
    g2.to_netcdf(path, engine="h5netcdf", mode="a", group="g1/g2")
    for engine in ("netcdf4", ENGINE):
        xr.testing.assert_identical(_read(path, engine), root)
        xr.testing.assert_identical(_read(path, engine, group="g1"), g1)
        xr.testing.assert_identical(_read(path, engine, group="g1/g2"), g2)
    tree = xr.open_datatree(path, engine=ENGINE)
    assert set(tree.groups) == {"/", "/g1", "/g1/g2"}
    xr.testing.assert_identical(tree["g1/g2"].to_dataset(), g2)
    tree.close()

    other = str(tmp_path / "by_netcdf4.nc")
    root.to_netcdf(other, engine="netcdf4")
    more = xr.Dataset({"extra": ("x", np.array([0.5, 1.5, 2.5]))})
    more.to_netcdf(other, engine="h5netcdf", mode="a")
    xr.testing.assert_identical(_read(other, "netcdf4"), xr.merge([root, more]))


def test_datatree_round_trip(tmp_path, purehep_writes):
    tree = xr.DataTree.from_dict({
        "/": xr.Dataset({"top": ("x", [1, 2])}),
        "/child": xr.Dataset({"c": ("y", np.arange(3.0))}, attrs={"k": "v"}),
        "/child/leaf": xr.Dataset({"l": ("z", np.array(["u", "v"], object))})})
    path = str(tmp_path / "tree.nc")
    tree.to_netcdf(path, engine="h5netcdf")
    for engine in ("netcdf4", ENGINE):
        back = xr.open_datatree(path, engine=engine)
        xr.testing.assert_identical(back.load(), tree)
        back.close()


def test_unlimited_append(tmp_path):
    """Records appended along the unlimited dimension of a purehep-written file, by purehep
    (h5netcdf 'a') and then by netCDF4-python; each reads the other's records."""
    ds, _ = case_unlimited()
    path = str(tmp_path / "unlimited.nc")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("H5NETCDF_WRITE_BACKEND", "purehep")
        _write(ds, path, {}, "h5netcdf", "unlimited")
    with h5netcdf.File(path, "a", backend="purehep") as f:
        f.resize_dimension("time", 6)
        f["v"][4:6] = np.array([[12.0, 13, 14], [15, 16, 17]])
        f["time"][4:6] = f["time"][2:4] + 24
        assert f["v"].shape == (6, 3)
        np.testing.assert_array_equal(f["v"][5], [15, 16, 17])     # read in the session
    with netCDF4.Dataset(path, "a") as nc:
        nc["v"][6] = [18.0, 19, 20]
        nc["time"][6] = nc["time"][5] + 6
    back = _read(path, ENGINE)
    np.testing.assert_array_equal(back["v"].values, np.arange(21.0).reshape(7, 3))
    xr.testing.assert_identical(back, _read(path, "netcdf4"))


def test_classic_model(tmp_path, purehep_writes):
    ds = xr.Dataset({"v": ("x", np.arange(3, dtype="i4"), {"units": "m"}),
                     "c": ("x", np.array(["a", "b", "c"], "S1"))},
                    attrs={"title": "classic", "n": np.int32(1)})
    path = str(tmp_path / "classic.nc")
    ds.to_netcdf(path, engine="h5netcdf", format="NETCDF4_CLASSIC")
    with netCDF4.Dataset(path) as nc:
        assert nc.data_model == "NETCDF4_CLASSIC"
        assert nc.getncattr("title") == "classic"
    xr.testing.assert_identical(_read(path, "netcdf4"), ds)
    xr.testing.assert_identical(_read(path, ENGINE), ds)


def test_same_session_reads(tmp_path):
    """What h5netcdf writes through purehep reads back before the file is closed: values,
    dimension scales (object references) and attributes, after further writes."""
    path = str(tmp_path / "session.nc")
    with h5netcdf.File(path, "w", backend="purehep") as f:
        f.dimensions = {"x": 3, "t": None}
        v = f.create_variable("data", ("t", "x"), "f8", fillvalue=-1.0)
        x = f.create_variable("x", ("x",), "i4", data=np.arange(3, dtype="i4"))
        f.resize_dimension("t", 2)
        v[:] = np.ones((2, 3))
        assert v.dimensions == ("t", "x") and x.dimensions == ("x",)
        np.testing.assert_array_equal(v[:], np.ones((2, 3)))
        g = f.create_group("g")
        w = g.create_variable("w", ("x",), "f4", data=np.array([1, 2, 3], "f4"))
        w.attrs["units"] = "s"
        assert f["g/w"].attrs["units"] == "s" and f["g/w"].dimensions == ("x",)
        f.resize_dimension("t", 3)
        assert f["data"].shape == (3, 3)
        np.testing.assert_array_equal(f["data"][2], [-1, -1, -1])
    with netCDF4.Dataset(path) as nc:
        assert nc["data"].dimensions == ("t", "x") and nc["g/w"].dimensions == ("x",)
        np.testing.assert_array_equal(nc["data"][:2], np.ones((2, 3)))


def test_fixed_length_string_attributes_with_trailing_nuls(tmp_path):
    """Fixed-length string attributes whose text is shorter than the type (b"x" in an S5, an
    empty S3), as h5py writes them: h5netcdf on h5py decodes them by their type's length and
    character set, to str; purehep's must too (the scalar's value alone is an S1 b"x",
    which h5netcdf left as bytes)."""
    h5py = pytest.importorskip("h5py")
    path = str(tmp_path / "padded.nc")
    xr.Dataset({"v": ("x", [1, 2])}).to_netcdf(path, engine="netcdf4")
    with h5py.File(path, "a") as f:
        attrs = f["v"].attrs
        attrs["short"] = np.array(b"x", "S5")
        attrs["empty"] = np.array(b"", "S3")
        attrs["one"] = np.array([b"p"], "S4")
        attrs["many"] = np.array([b"p", b"qq"], "S4")
        attrs["high"] = np.array(b"\xfc", "S3")          # not ASCII: surrogate-escaped
        attrs.create("utf8", np.array("é".encode(), "S5"),
                     dtype=h5py.string_dtype("utf-8", 5))
    for backend_attrs in (_attrs_of(path, "h5py"), _attrs_of(path, "purehep")):
        assert backend_attrs["short"] == (str, "x") and backend_attrs["empty"] == (str, "")
    assert _attrs_of(path, "purehep") == _attrs_of(path, "h5py")
    xr.testing.assert_identical(_read(path, ENGINE), _read(path, "h5netcdf"))
    assert _read(path, ENGINE)["v"].attrs == _read(path, "h5netcdf")["v"].attrs


def _attrs_of(path, backend, name="v"):
    with h5netcdf.File(path, "r", backend=backend) as f:
        return {k: (type(v), v) for k, v in f[name].attrs.items() if k != "_FillValue"}


# --- the corpus: purehep's engine equals h5netcdf on h5py ------------------------------------

def test_corpus_netcdf_files(corpus_dir):
    pytest.importorskip("h5py")
    files = sorted(glob.glob(os.path.join(corpus_dir, "files", "**", "*.nc*"), recursive=True))
    compared = 0
    for path in files:
        try:
            expected = _read(path, "h5netcdf", phony_dims="sort")
        except Exception:       # noqa: BLE001 - files h5py's engine cannot read are not compared
            continue
        xr.testing.assert_identical(_read(path, ENGINE, phony_dims="sort"), expected)
        compared += 1
    assert compared >= 1


# --- ncdump --------------------------------------------------------------------------------

def _ncdump(path):
    out = subprocess.run(["ncdump", path], capture_output=True, text=True, check=True).stdout
    return out.split("\n", 1)[1]          # the first line names the file


@pytest.mark.parametrize("name", CASES)
def test_ncdump_reads_purehep_files(tmp_path, monkeypatch, name):
    """ncdump prints purehep's file exactly as the same dataset written through h5netcdf on
    h5py (libhdf5)."""
    if shutil.which("ncdump") is None:
        pytest.skip("ncdump (netcdf-bin) is not installed")
    pytest.importorskip("h5py")
    ds, encoding = CASES[name]()
    mine, theirs = str(tmp_path / f"{name}.nc"), str(tmp_path / f"{name}_h5py.nc")
    monkeypatch.setenv("H5NETCDF_WRITE_BACKEND", "purehep")
    _write(ds, mine, encoding, "h5netcdf", name)
    monkeypatch.setenv("H5NETCDF_WRITE_BACKEND", "h5py")
    _write(ds, theirs, encoding, "h5netcdf", name)
    assert _ncdump(mine) == _ncdump(theirs)


def _string_variables(path, backend):
    """String variables never written, written in part, and grown along the unlimited
    dimension in a second session, through h5netcdf on ``backend``."""
    h5py = pytest.importorskip("h5py")
    with h5netcdf.File(path, "w", backend=backend) as f:
        f.dimensions = {"x": 3, "t": None}
        f.create_variable("never", ("x",), h5py.string_dtype())
        w = f.create_variable("grown", ("t", "x"), h5py.string_dtype(), chunks=(1, 3))
        f.resize_dimension("t", 2)
        w[0, :] = ["a", "b", "c"]
        w[1, 1] = ""
    _grow(path, backend, 3)


def _grow(path, backend, size):
    with h5netcdf.File(path, "a", backend=backend) as f:
        f.resize_dimension("t", size)
        f["grown"][size - 1, 0] = "z"


def test_ncdump_null_strings(tmp_path):
    """Variable-length strings never written are null (libhdf5's zero fill value), which
    libnetcdf tells from an empty string (ncdump prints NIL, and "_" for ""): as h5py leaves
    them in what purehep writes, and in a file h5py wrote that purehep grows (purehep wrote
    empty strings, and rewrote the null strings it read as empty ones)."""
    if shutil.which("ncdump") is None:
        pytest.skip("ncdump (netcdf-bin) is not installed")
    mine, theirs = str(tmp_path / "mine.nc"), str(tmp_path / "theirs.nc")
    _string_variables(mine, "purehep")
    _string_variables(theirs, "h5py")
    assert "NIL, _, NIL" in _ncdump(theirs)
    assert _ncdump(mine) == _ncdump(theirs)
    grown = str(tmp_path / "grown.nc")
    shutil.copy(theirs, grown)
    _grow(grown, "purehep", 4)
    _grow(theirs, "h5py", 4)
    assert _ncdump(grown) == _ncdump(theirs)
    xr.testing.assert_identical(_read(grown, ENGINE), _read(theirs, "netcdf4"))


def _string_fill_grown(path, backend):
    """A string variable with a fill value, grown along the unlimited dimension in the
    session that made it and in a later one; (values read in the session, netCDF4's)."""
    h5py = pytest.importorskip("h5py")
    with h5netcdf.File(path, "w", backend=backend) as f:
        f.dimensions = {"t": None}
        v = f.create_variable("s", ("t",), h5py.string_dtype(), fillvalue="missing")
        f.resize_dimension("t", 2)
        v[0] = "a"
        session = v[...].tolist()
    with h5netcdf.File(path, "a", backend=backend) as f:
        f.resize_dimension("t", 4)
        f["s"][3] = "z"
        session += f["s"][...].tolist()
    with netCDF4.Dataset(path) as nc:
        return session, nc["s"][:].tolist()


def test_string_fill_value_on_resize(tmp_path):
    """Elements a resize adds to a variable-length string variable read as its fill value,
    as libhdf5 fills them (purehep's in-memory store added empty strings)."""
    mine = _string_fill_grown(str(tmp_path / "mine.nc"), "purehep")
    theirs = _string_fill_grown(str(tmp_path / "theirs.nc"), "h5py")
    assert theirs[1] == ["a", "missing", "missing", "z"]
    assert mine == theirs


def test_entry_point_declared():
    """pyproject declares the xarray engine "purehep"; once installed, xarray lists it."""
    import tomllib
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
        points = tomllib.load(fh)["project"]["entry-points"]["xarray.backends"]
    module, cls = points["purehep"].split(":")
    assert module == "purehep.integrations.xarray_backend" and cls == ENGINE.__name__
    if "purehep" not in xr.backends.list_engines():
        pytest.skip("purehep's entry point is not installed (pip install -e .)")
    assert isinstance(xr.backends.list_engines()["purehep"], ENGINE)


def test_h5py_driver_refused(tmp_path):
    path = str(tmp_path / "d.nc")
    xr.Dataset({"v": ("x", [1])}).to_netcdf(path, engine="netcdf4")
    with pytest.raises(ValueError, match="h5py option"):
        xr.open_dataset(path, engine=ENGINE, driver="core")
    assert purehep.File(path)["v"][()].tolist() == [1]


def test_without_libhdf5(tmp_path):
    """h5netcdf writes and xarray reads through purehep with h5py and netCDF4 unimportable
    (a subprocess where importing either fails)."""
    path = str(tmp_path / "nolib.nc")
    script = f"""
import sys
for name in ("h5py", "netCDF4", "pyfive", "h5pyd"):
    sys.modules[name] = None
import numpy as np, xarray as xr, h5netcdf
import purehep.h5netcdf
from purehep.integrations.xarray_backend import PurehepBackendEntrypoint
with h5netcdf.File({path!r}, "w", backend="purehep") as f:
    f.dimensions = {{"x": 3, "t": None}}
    f.create_variable("x", ("x",), "i8", data=[1, 2, 3])
    v = f.create_variable("v", ("t", "x"), "f8")
    f.resize_dimension("t", 2)
    v[:] = np.arange(6.0).reshape(2, 3)
    v.attrs["units"] = "m"
with xr.open_dataset({path!r}, engine=PurehepBackendEntrypoint) as ds:
    assert ds["v"].values.tolist() == [[0, 1, 2], [3, 4, 5]], ds
    assert ds["v"].attrs == {{"units": "m"}} and ds["x"].values.tolist() == [1, 2, 3]
assert not [m for m in sys.modules if m.split(".")[0] in ("h5py", "netCDF4")
            and sys.modules[m] is not None]
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=str(tmp_path))
    xr.testing.assert_identical(_read(path, ENGINE), _read(path, "netcdf4"))


_WRITE_WITHOUT_H5PY = """
import os, pickle, sys
sys.modules["h5py"] = None              # importing h5py fails, as where it is not installed
os.environ["H5NETCDF_WRITE_BACKEND"] = "purehep"
import purehep.h5netcdf
with open(sys.argv[1], "rb") as f:
    ds, encoding, path, unlimited = pickle.load(f)
ds.to_netcdf(path, engine="h5netcdf", encoding=encoding, unlimited_dims=unlimited)
assert sys.modules["h5py"] is None
"""


@pytest.mark.parametrize("name", CASES)
def test_xarray_writes_without_h5py(tmp_path, monkeypatch, name):
    """``to_netcdf(engine="h5netcdf")`` on purehep where h5py cannot be imported (xarray's
    h5netcdf store imports it to write any variable): libnetcdf reads the file equal to the
    source, and ncdump prints it as the same write with h5py importable."""
    import pickle
    ds, encoding = CASES[name]()
    lone, beside = str(tmp_path / "lone.nc"), str(tmp_path / "beside.nc")
    args = tmp_path / "args.pickle"
    args.write_bytes(pickle.dumps((ds, encoding, lone, UNLIMITED.get(name))))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", _WRITE_WITHOUT_H5PY, str(args)], env=env,
                          capture_output=True, text=True, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    xr.testing.assert_identical(_read(lone, "netcdf4"), ds)
    monkeypatch.setenv("H5NETCDF_WRITE_BACKEND", "purehep")
    _write(ds, beside, encoding, "h5netcdf", name)
    if shutil.which("ncdump") is not None:
        assert _ncdump(lone) == _ncdump(beside)


def test_enum_round_trip(tmp_path, purehep_writes):
    """An enum variable netCDF4-python wrote, read by purehep and written again through
    xarray: netCDF4-python sees the same enum type and values (ncdump: as h5py's file)."""
    src = str(tmp_path / "enum_src.nc")
    with netCDF4.Dataset(src, "w") as nc:
        et = nc.createEnumType("u1", "cloud_t", {"clear": 0, "cumulus": 1, "missing": 255})
        nc.createDimension("x", 3)
        nc.createVariable("cloud", et, ("x",), fill_value=255)[:] = np.array([0, 1, 255], "u1")
    ds = _read(src, ENGINE)
    xr.testing.assert_identical(ds, _read(src, "netcdf4"))
    out = str(tmp_path / "enum.nc")
    ds.to_netcdf(out, engine="h5netcdf")
    with netCDF4.Dataset(out) as nc:
        assert nc["cloud"].datatype.enum_dict == {"clear": 0, "cumulus": 1, "missing": 255}
        assert nc["cloud"][:].filled().tolist() == [0, 1, 255]
    xr.testing.assert_identical(_read(out, "netcdf4"), ds)
    xr.testing.assert_identical(_read(out, ENGINE), ds)


def test_vlen_through_h5netcdf(tmp_path):
    """A variable-length type and variable (h5netcdf's create_vltype; xarray itself cannot
    decode vlen variables on any engine), read in the session and by netCDF4-python."""
    path = str(tmp_path / "vlen.nc")
    rows = [np.array([1, 2], "i4"), np.array([3], "i4"), np.array([4, 5, 6], "i4")]
    with h5netcdf.File(path, "w", backend="purehep") as f:
        f.dimensions = {"x": 3}
        v = f.create_variable("ragged", ("x",), f.create_vltype(np.int32, "ragged_t"))
        for i, row in enumerate(rows):
            v[i] = row
        assert [r.tolist() for r in v[:]] == [r.tolist() for r in rows]
    with netCDF4.Dataset(path) as nc:
        assert nc["ragged"].datatype.name == "ragged_t"
        assert [r.tolist() for r in nc["ragged"][:]] == [r.tolist() for r in rows]
    with h5netcdf.File(path, "r", backend="purehep") as f:
        assert [r.tolist() for r in f["ragged"][:]] == [r.tolist() for r in rows]


@pytest.mark.parametrize("compression", ["zlib", "szip", "zstd", "bzip2", "blosc_lz",
                                         "blosc_zstd"])
def test_netcdf4_compression_read(tmp_path, compression):
    """Files libnetcdf compresses with its filters read equal, with the encoding xarray
    reports on h5py (with hdf5plugin's filters)."""
    pytest.importorskip("hdf5plugin")
    import hdf5plugin  # noqa: F401
    data = np.arange(2000, dtype="f4").reshape(40, 50)
    path = str(tmp_path / f"{compression}.nc")
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("y", 40)
        nc.createDimension("x", 50)
        nc.createVariable("v", "f4", ("y", "x"), compression=compression,
                          chunksizes=(10, 50))[:] = data
    with xr.open_dataset(path, engine=ENGINE) as mine, \
            xr.open_dataset(path, engine="h5netcdf") as theirs:
        np.testing.assert_array_equal(mine["v"].values, data)
        xr.testing.assert_identical(mine.load(), theirs.load())
        drop = ("source",)
        assert {k: v for k, v in mine["v"].encoding.items() if k not in drop} == \
            {k: v for k, v in theirs["v"].encoding.items() if k not in drop}


def test_coordinate_after_its_variable(tmp_path):
    """Coordinate variables created after the data variable that uses their dimensions
    (h5netcdf then turns the dimension scales it made into the coordinates)."""
    path = str(tmp_path / "late.nc")
    with h5netcdf.File(path, "w", backend="purehep") as f:
        f.dimensions = {"x": 3, "y": 2}
        f.create_variable("data", ("y", "x"), "f8", data=np.arange(6.0).reshape(2, 3))
        f.create_variable("x", ("x",), "i4", data=np.array([5, 6, 7], "i4"))
        f.create_variable("y", ("y",), "f4", data=np.array([0.5, 1.5], "f4"))
        assert f["data"].dimensions == ("y", "x") and f["x"][:].tolist() == [5, 6, 7]
    expected = xr.Dataset({"data": (("y", "x"), np.arange(6.0).reshape(2, 3))},
                          coords={"x": np.array([5, 6, 7], "i4"),
                                  "y": np.array([0.5, 1.5], "f4")})
    xr.testing.assert_identical(_read(path, "netcdf4"), expected)
    xr.testing.assert_identical(_read(path, ENGINE), expected)
