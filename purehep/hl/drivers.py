"""h5py's file driver registry: ``register_driver``, ``unregister_driver`` and
``registered_drivers`` (h5py._hl.files), over the drivers purehep has.

The drivers purehep has are built in: sec2 and stdio (a file on disk, read and written the
same way), core (in memory) and fileobj (a Python file object). A driver registered by name
is a function ``set_fapl(plist, **kwds)`` that configures a file access property list
(purehep.h5p.PropFAID) as h5py's configure libhdf5's: ``File(name, driver=that_name,
**kwds)`` calls it with File's driver keywords, and the file opens with what it set (its file
driver, core with or without a backing store, sec2 or stdio, and the settings purehep.h5f maps
onto File's keywords). h5py's drivers purehep lacks (family, mpio, split, ros3, direct) raise
UnsupportedFeatureError; other names h5py's ValueError.
"""
from ..errors import UnsupportedFeatureError

NOT_PROVIDED = ("family", "mpio", "split", "ros3", "direct")
_drivers = dict.fromkeys(("core", "fileobj", "sec2", "stdio"))    # name -> set_fapl (None:
#                                                                    built in)


def register_driver(name, set_fapl):
    """Register ``set_fapl(plist, **kwds)`` as the driver ``name`` (h5py's)."""
    _drivers[name] = set_fapl


def unregister_driver(name):
    """Forget the driver ``name`` (KeyError if there is none, as h5py)."""
    del _drivers[name]


def registered_drivers():
    """The names of the drivers File takes (h5py's registered_drivers)."""
    return frozenset(_drivers)


def check_driver(driver):
    """h5py's errors for a driver name File cannot take."""
    if driver is None or _drivers.get(driver, 0) is None:
        return
    if driver in NOT_PROVIDED:
        raise UnsupportedFeatureError(f"the {driver!r} file driver")
    if driver not in _drivers:
        raise ValueError(f"Unknown driver type {driver!r}")


def is_registered(driver):
    """Whether ``driver`` names a driver registered by a function."""
    return driver is not None and _drivers.get(driver) is not None


def driver_options(driver, kwds):
    """File's keywords for the driver ``driver`` given driver keywords ``kwds``: those its
    registered function sets on a file access list (with ``driver`` the file driver it
    chose); TypeError for driver keywords given to a built-in driver (File has keywords of
    its own for theirs), as h5py's set_fapl_* functions refuse them."""
    check_driver(driver)
    if not is_registered(driver):
        if kwds:
            raise TypeError(f"File() got an unexpected keyword argument "
                            f"{next(iter(kwds))!r} (driver {driver!r} takes none)")
        return {}
    from ..h5f import _access_args
    from ..h5p import PropFAID
    plist = PropFAID()
    _drivers[driver](plist, **kwds)
    options = _access_args(plist)
    options.setdefault("driver", plist._driver)
    return options
