"""The pickles inside pandas' HDF5 files, read without running arbitrary code.

PyTables stores every attribute value HDF5 has no type for (None, lists, tuples, dicts, pandas
offsets, time zones) as a protocol-0 pickle in a string attribute, and pandas' "fixed" format
stores object columns as one pickled numpy array in a VLArray row. ``loads`` unpickles with an
allow-list: builtin containers and scalars (the pickle opcodes themselves), numpy arrays, dtypes
and scalars, ``datetime.timezone``/``timedelta`` (fixed-offset time zones), ``pytz._p`` and
``pytz._UTC`` (a pytz zone looked up by name, and pytz's UTC, as pandas 2 keeps a table index's
zone), ``ZoneInfo._unpickle`` (the same for a zoneinfo zone, pandas 3's default), dateutil's
``tzutc``, ``tzoffset`` and zone files (rebuilt from the pickled data by
``_tzfile._unpickle``, with ``_codecs.encode`` for its bytes), ``pd.NA`` (missing values of
``string`` columns; pandas 3 pickles it as ``pandas.NA``) and pandas' date offsets
(``pandas._libs.tslibs.offsets`` classes, for ``freq``). Any other global in a pickle raises
``UnsafePickleError`` before it is imported or called.

Protocol 0 (PyTables' attributes) has no opcode for a class's attribute, so a ZoneInfo pickles
as ``getattr(zoneinfo.ZoneInfo, "_unpickle")(key, 1)``: ``getattr`` resolves to a stand-in that
gives that one attribute and refuses any other (protocol 4 names "ZoneInfo._unpickle"
itself). ``dumps_attr`` writes PyTables' protocol-0 attribute pickles of such values.
"""
import io
import pickle

from ...errors import PurehepError

_NUMPY_CORE = ("numpy._core.multiarray", "numpy.core.multiarray")
_ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"), ("datetime", "timezone"),
            ("datetime", "timedelta"), ("pytz", "_p"), ("pytz", "_UTC"),
            ("pandas._libs.missing", "NA"),
            ("pandas", "NA"), ("zoneinfo", "ZoneInfo._unpickle")}
_GETATTR = (("__builtin__", "getattr"), ("builtins", "getattr"))
_ATTRIBUTES = {("zoneinfo", "ZoneInfo", "_unpickle")}      # (module, class, attribute)
_ALLOWED |= {(m, n) for m in _NUMPY_CORE for n in ("_reconstruct", "scalar")}
_ALLOWED |= {("dateutil.tz.tz", "tzutc"), ("dateutil.tz.tz", "tzoffset"), ("_codecs", "encode")}
_OFFSETS = "pandas._libs.tslibs.offsets"
_TZFILE = "dateutil.tz._tzfile"


class UnsafePickleError(PurehepError, pickle.UnpicklingError):
    """A pickle in a pandas HDF5 file refers to a class or function outside the allow-list."""


class _RestrictedUnpickler(pickle.Unpickler):
    """Resolves only the allowed globals (module docstring); refuses the rest by name."""

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        if (module, name) in (("zoneinfo", "ZoneInfo"), (_TZFILE, "tzfile")):
            return _Named(module, name)
        if (module, name) == (_TZFILE, "_unpickle"):
            return _dateutil_tzfile
        if (module, name) in _GETATTR:
            return _allowed_getattr
        if module == _OFFSETS:
            from pandas.tseries.offsets import BaseOffset
            cls = super().find_class(module, name)
            if isinstance(cls, type) and issubclass(cls, BaseOffset):
                return cls
        raise UnsafePickleError(f"refusing to unpickle {module}.{name}: purehep.pandas only "
                                "unpickles numpy arrays, builtin values, time zones and "
                                "pandas date offsets")


class _Named:
    """A class a pickle names only to take an attribute of (``_allowed_getattr``); calling
    it, or anything but that, is refused."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args, **kwargs):
        raise UnsafePickleError(f"refusing to call {self.module}.{self.name} in a pickle")


def _allowed_getattr(obj, attribute):
    """``getattr`` as a pickle may call it: only for the attributes in ``_ATTRIBUTES``."""
    if isinstance(obj, _Named) and (obj.module, obj.name, attribute) in _ATTRIBUTES:
        import importlib
        return getattr(getattr(importlib.import_module(obj.module), obj.name), attribute)
    raise UnsafePickleError(f"refusing to unpickle getattr({getattr(obj, 'name', obj)!r}, "
                            f"{attribute!r}): purehep.pandas only takes "
                            "ZoneInfo._unpickle this way")


def _dateutil_tzfile(cls, key, filename, data):
    """dateutil's ``_tzfile._unpickle``, as a pickled dateutil zone file calls it (pandas 3
    pickles a table index's dateutil zone): the zone is rebuilt from the transition ``data``
    in the pickle, its file is not opened; any other class is refused."""
    if not (isinstance(cls, _Named) and (cls.module, cls.name) == (_TZFILE, "tzfile")):
        raise UnsafePickleError(f"refusing to unpickle {_TZFILE}._unpickle of {cls!r}")
    from dateutil.tz import _tzfile
    return _tzfile._unpickle(_tzfile.tzfile, key, filename, data)


def loads(data):
    """Unpickle ``data`` (bytes) with the allow-list; UnsafePickleError for anything else."""
    return _RestrictedUnpickler(io.BytesIO(bytes(data))).load()


def dumps_attr(value):
    """PyTables' pickle of an attribute value HDF5 cannot hold natively (protocol 0)."""
    return pickle.dumps(value, 0)


def dumps_object_array(values):
    """The VLArray row of a pandas fixed-format object block: the numpy object array pickled
    (PyTables' ObjectAtom uses the highest protocol). Only str and missing (None, NaN, pd.NA)
    elements are written, which ``loads`` reads back; anything else is refused (TypeError)."""
    for v in values.ravel():
        if not (v is None or isinstance(v, str) or (isinstance(v, float) and v != v)
                or type(v).__name__ == "NAType"):
            raise TypeError(f"purehep.pandas writes object columns of str (or missing values) "
                            f"only, not {type(v).__name__}; use format='table' or convert")
    return pickle.dumps(values, pickle.HIGHEST_PROTOCOL)
