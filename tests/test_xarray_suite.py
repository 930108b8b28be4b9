"""xarray's own backend tests (``xarray/tests/test_backends.py`` and
``test_backends_datatree.py`` in the installed wheel) on xarray's h5netcdf engine with purehep
as h5netcdf's HDF5 library, run in a subprocess (memory-capped by tests/suite_run.py) through
the plugins tests/h5netcdf_suite/purehep_backend.py (every file h5netcdf opens is opened with
purehep) and tests/xarray_suite/purehep_xarray.py (h5netcdf first in xarray's engine order,
files opened counted by library). netCDF4-python and h5py, which the tests call directly as
oracles, stay themselves. The run must pass at least FLOOR tests, fail none outside
EXPECTED_FAILURES, and open no file through h5py.

The selection (SELECT, a ``-k`` expression, deterministic) is every test named for the
h5netcdf engine, plus the tests with ``engine=None`` that the plugin's engine order sends
through h5netcdf (found by running all of test_backends, test_backends_datatree and
test_backends_api with the plugin and listing the tests that opened an h5netcdf file),
except TestOpenMFDatasetWithDataVarsAndCoordsKw: 56 variants of xarray's combine options over
the same small files (12 s), whose reading test_open_mfdataset_manyfiles[h5netcdf-*] covers.
Not run: the network-marked tests; xarray's test_distributed (its dask workers are spawned
processes without the plugin, where h5netcdf uses h5py); TestDask::test_load_async (an async
test: needs pytest-asyncio or anyio's plugin, not installed; fails the same way on h5py).

Measured (xarray 2026.9.0, h5netcdf 1.8.2, h5py 3.16 / HDF5 2.0.0, netCDF4 1.7.5, dask):
h5py 685 passed, 20 skipped, 8 xfailed, 4 xpassed, about 2350 files opened by h5netcdf;
purehep the same outcome test by test (the file count varies by one or two from run to run:
xarray's file cache reopens files as the garbage collector closes them); about 50 s.
"""
import ast
import os

import pytest

try:        # h5py's plugin filters first: importing netCDF4 points HDF5_PLUGIN_PATH at
    import hdf5plugin  # noqa: F401  its own plugins, which h5py's libhdf5 cannot load
except ImportError:
    pass
xarray = pytest.importorskip("xarray")
h5netcdf = pytest.importorskip("h5netcdf", minversion="1.8")
pytest.importorskip("h5py")
pytest.importorskip("netCDF4")
pytest.importorskip("dask")
if not h5netcdf.__version__.startswith("1.8."):
    pytest.skip("purehep.h5netcdf patches h5netcdf 1.8.x", allow_module_level=True)
if "netcdf_engine_order" not in xarray.get_options():
    pytest.skip("xarray without the netcdf_engine_order option", allow_module_level=True)

from suite_run import run_suite  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FLOOR = 675

SELECT = " or ".join([
    "h5netcdf",                         # TestH5NetCDF*, TestNetCDF4ClassicViaH5NetCDFData,
                                        # test_*h5netcdf*, [h5netcdf-*] parameters
    "TestDask", "test_use_cftime", "chunking_consistency", "TestGenericNetCDF4InMemory",
    "TestGenericNetCDFIO", "TestDataArrayToNetCDF", "write_file_from_np_str",
    "source_encoding_always_present", "open_mfdataset_list_attr", "TestValidateAttrs",
    "no_warning_from_dask_effective_get", "string_attributes_stored_as_char",
    "TestGenericNetCDFData and (roundtrip_via or test_engine)",
    "TestNetCDF4DatatreeIO and open_groups_to_dict",
    # written by netCDF4-python, read back with engine=None
    "(TestNetCDF4Data or TestNetCDF4DataTree) and (0dimensional_variable or open_encodings"
    " or encoding_masked_arrays or test_mask_and_scale or test_open_group"
    " or read_variable_len_strings or roundtrip_character_array)",
])
SELECT = f"({SELECT}) and not test_load_async"

# test name -> why it fails on purehep (none does: every selected test passing on h5py passes)
EXPECTED_FAILURES = {}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    """(outcome counts, names of failed tests, pytest's output) of the selection on purehep."""
    return run_suite(tmp_path_factory.mktemp("xarray_suite"),
                     [os.path.join(HERE, "h5netcdf_suite"), os.path.join(HERE, "xarray_suite")],
                     ["-p", "purehep_backend", "-p", "purehep_xarray", "-m", "not network",
                      "-k", SELECT, "--pyargs", "xarray.tests.test_backends",
                      "xarray.tests.test_backends_datatree"])


def test_xarray_suite_on_purehep(suite_run):
    counts, failed, out = suite_run
    print(f"xarray's h5netcdf tests on purehep: {counts}")
    assert not failed - set(EXPECTED_FAILURES), (sorted(failed - set(EXPECTED_FAILURES)),
                                                 out[-3000:])
    assert counts["error"] == 0, out[-3000:]
    assert counts["passed"] >= FLOOR, out[-3000:]


def test_every_file_through_purehep(suite_run):
    """h5netcdf opened every file of the run with purehep, none with h5py."""
    opened = [line for line in suite_run[2].splitlines()
              if line.startswith("h5netcdf files opened: ")]
    assert len(opened) == 1, suite_run[2][-3000:]
    counts = ast.literal_eval(opened[0].partition(": ")[2])
    assert set(counts) == {"purehep"} and counts["purehep"] > 1000, counts
