"""xarray's ``engine="purehep"``: netCDF-4 (and h5netcdf-readable HDF5) files read by h5netcdf
with purehep as its HDF5 library — xarray with no libhdf5 (see purehep.integrations.h5netcdf).

Registered as the xarray backend entry point "purehep" (pyproject.toml); the class can also be
passed itself: ``xr.open_dataset(path, engine=PurehepBackendEntrypoint)``. It is xarray's
h5netcdf backend with ``backend="purehep"`` handed to ``h5netcdf.File``; every option of
``engine="h5netcdf"`` but the h5py ``driver`` applies. Writing goes through
``to_netcdf(engine="h5netcdf")`` with ``H5NETCDF_WRITE_BACKEND=purehep`` in the environment.
"""
from xarray.backends.h5netcdf_ import H5netcdfBackendEntrypoint

from . import h5netcdf as _backend


def _purehep_kwds(driver, driver_kwds):
    if driver is not None:
        raise ValueError(f"driver={driver!r} is an h5py option; engine='purehep' has none")
    return {**(driver_kwds or {}), "backend": _backend.NAME}


class PurehepBackendEntrypoint(H5netcdfBackendEntrypoint):
    """Open netCDF-4 and HDF5 files through h5netcdf with purehep, in xarray."""

    description = "Open netCDF-4 and HDF5 files with h5netcdf on purehep (no libhdf5) in Xarray"
    url = ""

    def open_dataset(self, filename_or_obj, *, driver=None, driver_kwds=None, **kwargs):
        return super().open_dataset(filename_or_obj,
                                    driver_kwds=_purehep_kwds(driver, driver_kwds), **kwargs)

    def open_datatree(self, filename_or_obj, *, driver=None, driver_kwds=None, **kwargs):
        return super().open_datatree(filename_or_obj,
                                     driver_kwds=_purehep_kwds(driver, driver_kwds), **kwargs)

    def open_groups_as_dict(self, filename_or_obj, *, driver=None, driver_kwds=None, **kwargs):
        return super().open_groups_as_dict(
            filename_or_obj, driver_kwds=_purehep_kwds(driver, driver_kwds), **kwargs)
