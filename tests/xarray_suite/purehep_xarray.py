"""pytest plugin: xarray's own backend tests (``xarray/tests`` in the installed wheel) on
xarray's h5netcdf engine. Used by tests/test_xarray_suite.py together with
tests/h5netcdf_suite/purehep_backend.py (which makes every file h5netcdf opens a purehep
file), as ``pytest -p purehep_backend -p purehep_xarray --pyargs xarray.tests...``; without
purehep_backend the same run is the h5py baseline.

- xarray's engine order puts h5netcdf first, so that the tests which leave ``engine=None``
  (``open_dataset(path)``, ``to_netcdf(path)`` as users write them: xarray's generic netCDF,
  dask and datatree tests) use h5netcdf where they would use netCDF4-python;
- the files h5netcdf opens are counted by the module under them (``File._h5py``: purehep or
  h5py), printed at the end of the run as ``h5netcdf files opened: {...}``, so that the
  caller can check that no file went to h5py.

netCDF4-python and h5py, which the tests call directly as oracles, are untouched.
"""
import collections

import h5netcdf.core
import xarray

xarray.set_options(netcdf_engine_order=("h5netcdf", "netcdf4", "scipy"))

OPENED = collections.Counter()
_init = h5netcdf.core.File.__init__


def _counted_init(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    OPENED[self._h5py.__name__] += 1


h5netcdf.core.File.__init__ = _counted_init


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"h5netcdf files opened: {dict(OPENED)}")
