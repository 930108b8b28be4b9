"""purehep: HDF5 in pure Python — the file format itself, read (and soon written) with numpy.

The public face mirrors h5py: ``purehep.File``, ``Group``, ``Dataset``, ``Datatype``,
``AttributeManager``, the link classes and the dtype helpers.
"""
from .errors import (PurehepError, FormatError, ChecksumError, TruncatedError,
                     UnsupportedFeatureError, ValidationError, PurehepWarning, AllocationError,
                     LinkTraversalError, DimensionScaleError)
from .hl.files import File
from .hl.group import Group
from .hl.dataset import Dataset
from .hl.datatype import Datatype
from .hl.attrs import AttributeManager
from .hl.base import Empty, HardLink, SoftLink, ExternalLink, is_hdf5
from .hl.vds import VirtualLayout, VirtualSource
from .hl.drivers import register_driver, unregister_driver, registered_drivers
from .selections import MultiBlockSlice

from .version import version as __version__

__all__ = ["File", "Group", "Dataset", "Datatype", "AttributeManager", "Empty", "HardLink",
           "SoftLink", "ExternalLink", "is_hdf5", "MultiBlockSlice", "VirtualLayout",
           "VirtualSource", "register_driver", "unregister_driver", "registered_drivers",
           "PurehepError", "FormatError", "ChecksumError",
           "TruncatedError", "UnsupportedFeatureError", "ValidationError", "PurehepWarning",
           "AllocationError", "LinkTraversalError", "DimensionScaleError",
           "__version__"]


def __getattr__(name):
    # the dtype helpers and references load on first use (they are not needed to open a file)
    from importlib import import_module
    if name in ("h5", "h5a", "h5d", "h5ds", "h5f", "h5g", "h5i", "h5l", "h5o", "h5p", "h5r",
                "h5s", "h5t", "h5z",
                "h5py_warnings",                # h5py's low-level modules, as far as
                "dask"):                        # purehep has them; the dask bridge
        return import_module(f"{__name__}.{name}")
    if name == "UNLIMITED":                     # h5py.UNLIMITED: H5S_UNLIMITED
        return import_module(f"{__name__}.h5s").UNLIMITED
    for module in ("dtypes", "reference", "h5"):
        mod = import_module(f"{__name__}.{module}")
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module 'purehep' has no attribute {name!r}")
