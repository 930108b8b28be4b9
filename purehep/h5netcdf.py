"""``import purehep.h5netcdf`` (the README's spelling) plugs purehep into h5netcdf: this name
is purehep.integrations.h5netcdf itself (one module object, registered once)."""
import sys
from importlib import import_module

sys.modules[__name__] = import_module(".integrations.h5netcdf", __package__)
