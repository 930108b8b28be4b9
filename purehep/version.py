"""h5py's ``version`` module for purehep: purehep's own version and the HDF5 release whose
library behaviour purehep follows and is tested against (``hdf5_version``, h5py 3.16's
bundled libhdf5). No libhdf5 is loaded: the number says which behaviour to expect, and is
what integrations that record the HDF5 version (h5netcdf's _NCProperties) write.
"""
version = "0.1.0"

hdf5_version = "2.0.0"
version_tuple = tuple(int(p) for p in version.split(".")[:3])
hdf5_version_tuple = tuple(int(p) for p in hdf5_version.split("."))

__all__ = ["version", "version_tuple", "hdf5_version", "hdf5_version_tuple"]
