"""h5netcdf's own test suite (``h5netcdf/tests`` in the installed 1.8 wheel) with purehep as
its HDF5 backend, run in a subprocess through the plugin tests/h5netcdf_suite/purehep_backend.py
(the suite's h5py backend is replaced by purehep; h5py stays the oracle the tests read back
with), memory-capped by tests/suite_run.py. The run must pass at least FLOOR tests and fail
none outside NEEDS_H5PY.

Measured (h5netcdf 1.8.2, h5py 3.16 / HDF5 2.0.0, netCDF4 1.7.5, ncdump installed):
h5py 333 passed, 0 failed; purehep 319 passed, 14 failed (all in NEEDS_H5PY); the same
3 xfailed and 17 xpassed (h5dump comparisons with netCDF4-python's files) on both.

The tests of NEEDS_H5PY that assert h5netcdf drives the h5py module run again below with
backend="purehep", in this process.
"""
import os

import numpy as np
import pytest

try:        # h5py's plugin filters first: importing netCDF4 points HDF5_PLUGIN_PATH at
    import hdf5plugin  # noqa: F401  its own plugins, which h5py's libhdf5 cannot load
except ImportError:
    pass
h5netcdf = pytest.importorskip("h5netcdf", minversion="1.8")
pytest.importorskip("h5py")
pytest.importorskip("netCDF4")
if not h5netcdf.__version__.startswith("1.8."):
    pytest.skip("purehep.h5netcdf patches h5netcdf 1.8.x", allow_module_level=True)

import purehep.h5netcdf  # noqa: E402,F401
from h5netcdf.tests import test_h5netcdf as suite  # noqa: E402
from suite_run import run_suite  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FLOOR = 323

_MODULE = "asserts ds._h5py.__name__ == 'h5py': h5netcdf drives purehep here (rerun below " \
          "with backend='purehep')"
NEEDS_H5PY = {
    **{f"test_dimensions[{w}->{r}::h5py]": _MODULE
       for w in ("netCDF4", "h5netcdf", "h5netcdf.legacyapi")
       for r in ("h5netcdf", "h5netcdf.legacyapi")},
    "test_array_attributes[w:h5py-r:h5py]": _MODULE,
    "test_vlen_string_dataset_fillvalue[True-h5py]": _MODULE,
    "test_vlen_string_dataset_fillvalue[False-h5py]": _MODULE,
    "test_invalid_netcdf_okay[w:h5py-r:pyfive]":
        "pyfive reads an LZF chunk without its optional python-neo-lzf codec; h5py's LZF "
        "declines to compress the 8-byte chunk (stored unfiltered), purehep's compresses it",
}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    """(outcome counts, names of failed tests, pytest's output) of the suite on purehep."""
    return run_suite(tmp_path_factory.mktemp("h5netcdf_suite"),
                     [os.path.join(HERE, "h5netcdf_suite")],
                     ["-p", "purehep_backend", "--pyargs", "h5netcdf.tests"])


def test_h5netcdf_suite_on_purehep(suite_run):
    counts, failed, out = suite_run
    print(f"h5netcdf suite on purehep: {counts}")
    assert not failed - set(NEEDS_H5PY), (sorted(failed - set(NEEDS_H5PY)), out[-3000:])
    assert counts["error"] == 0, out[-3000:]
    assert counts["passed"] >= FLOOR, out[-3000:]


# --- the module-asserting tests of NEEDS_H5PY, with backend="purehep" ---------------------

@pytest.fixture
def purehep_default(monkeypatch):
    monkeypatch.setenv("H5NETCDF_READ_BACKEND", "purehep")
    monkeypatch.setenv("H5NETCDF_WRITE_BACKEND", "purehep")


@pytest.mark.parametrize("write", ["netCDF4", "h5netcdf", "h5netcdf.legacyapi"])
@pytest.mark.parametrize("read", ["h5netcdf", "h5netcdf.legacyapi"])
def test_dimensions_purehep(tmp_path, purehep_default, write, read):
    import importlib
    path = str(tmp_path / "dims.nc")
    suite.write_dimensions(path, importlib.import_module(write))
    suite.check_netcdf_dimensions(path, importlib.import_module(write),
                                  importlib.import_module(read), "purehep")


def test_array_attributes_purehep(tmp_path, purehep_default):
    suite.test_array_attributes("purehep", "purehep", str(tmp_path / "attrs.nc"))


@pytest.mark.parametrize("decode", [True, False])
def test_vlen_string_dataset_fillvalue_purehep(tmp_path, purehep_default, decode):
    suite.test_vlen_string_dataset_fillvalue(str(tmp_path / "fill.nc"),
                                             {"decode_vlen_strings": decode}, "purehep")


def test_backend_routing(tmp_path, monkeypatch):
    """backend= and the environment variables choose purehep; h5py stays h5py's."""
    import h5py
    path = str(tmp_path / "r.nc")
    with h5netcdf.File(path, "w", backend="purehep") as f:
        assert f.backend == "purehep" and f._h5py is purehep
        f.dimensions = {"x": 2}
        f.create_variable("v", ("x",), "f4", data=np.array([1.5, 2.5], "f4"))
    with h5netcdf.File(path, "r") as f:
        assert f.backend == "h5py"
    monkeypatch.setenv("H5NETCDF_READ_BACKEND", "purehep")
    with h5netcdf.File(path, "r") as f:
        assert f.backend == "purehep"
        np.testing.assert_array_equal(f["v"][:], [1.5, 2.5])
    with h5py.File(path, "r") as h, h5netcdf.File(h, "r") as f:
        assert f.backend == "h5py"
    with pytest.raises(ValueError, match="only works with 'h5py'"):
        h5netcdf.File(path, "r", backend="purehep", driver="core")
