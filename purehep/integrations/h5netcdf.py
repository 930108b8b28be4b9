"""purehep as an h5netcdf backend: ``h5netcdf.File(path, mode, backend="purehep")`` and
``H5NETCDF_READ_BACKEND`` / ``H5NETCDF_WRITE_BACKEND=purehep``, with no libhdf5 anywhere.

Importing this module (``import purehep.h5netcdf``, or ``purehep.h5netcdf.register()``)
plugs purehep into the installed h5netcdf. h5netcdf 1.8 closes its list of backends (the
names ``core._parse_backend`` accepts, the module ``File.__init__`` picks in an if/elif), so
a few of its functions are wrapped — each wrapper hands every other backend to h5netcdf's own
function unchanged:

- ``core._parse_backend`` accepts "purehep", from ``backend=`` or the environment variables;
- ``core._open_h5py`` opens purehep's File when the path comes marked as purehep's
  (``File.__init__`` is wrapped to mark it), and ``File._h5py`` (the module h5netcdf calls
  for dtype helpers, ``h5ds``, ``version`` and the object classes) is the ``purehep``
  package for such files; ``core.h5py`` is bound to None when h5py is not installed (the
  name h5netcdf's default branch evaluates; h5netcdf never calls it for purehep);
- ``core._get_h5dstype_identifier`` / ``_get_h5usertype_identifier`` know purehep's classes
  (h5netcdf recognises the types of h5py, h5pyd and pyfive objects by their module name);
- ``Group._track_order`` reads the creation-order flags with purehep.h5p's constants
  (h5netcdf imports them from h5py.h5p);
- ``Group._create_child_variable`` stores a NETCDF4_CLASSIC one-byte string (NC_CHAR)
  variable null-terminated, as libnetcdf and h5netcdf's h5py path do (h5py's default is
  null-padded);
- ``Attributes.__getitem__`` decodes fixed-length string attributes (of more than one byte)
  with their character set, as h5netcdf does for h5py: it finds their type through h5py's
  low-level ``attrs.get_id``, and for other libraries from the value alone, where a scalar's
  trailing NULs are gone (an ``S5`` attribute holding b"x" reads as an ``S1`` value, which
  h5netcdf leaves undecoded, as bytes) and UTF-8 text is bytes;
- ``Attributes.__setitem__`` takes h5py's ``Empty`` as purehep's, and writes a plain string
  attribute of a NETCDF4_CLASSIC file as a scalar fixed-length null-terminated string, as
  libnetcdf writes an NC_CHAR attribute and as h5netcdf does through h5py's low-level API
  (its generic path writes a variable-length string, an NC_STRING that libnetcdf refuses
  in the classic model).

Where h5py is not installed, xarray's ``H5NetCDFStore.prepare_variable`` (which imports
h5py first thing, for ``h5py.special_dtype(vlen=str)``) is replaced, once xarray has opened
a file through purehep, by a copy of itself in which ``import h5py`` gives the ``purehep``
package: ``to_netcdf(engine="h5netcdf")`` then writes with no h5py.

Only h5netcdf 1.8.x is patched; other versions raise ImportError.
"""
import builtins
import os
import sys
import types

import numpy as np

import h5netcdf
from h5netcdf import attrs as _attrs
from h5netcdf import core

import purehep
from .. import h5p

NAME = "purehep"
SUPPORTED = (1, 8)


def _check_version():
    found = tuple(int(p) for p in h5netcdf.__version__.split(".")[:2])
    if found != SUPPORTED:
        raise ImportError(f"purehep.h5netcdf patches h5netcdf {SUPPORTED[0]}.{SUPPORTED[1]}.x; "
                          f"h5netcdf {h5netcdf.__version__} is installed")


def _chosen(path, mode, backend, kwargs):
    """True if h5netcdf is to use purehep for this file: asked by name, by the environment
    variable of the mode (for local files without an h5py driver, as h5netcdf reads it), or
    given an open purehep File."""
    if backend is not None:
        return backend == NAME
    if isinstance(path, purehep.File):
        return True
    if _foreign(path):
        return False
    remote = isinstance(path, str) and path.startswith(("http", "hdf5:"))
    if remote or kwargs.get("driver") is not None:
        return False
    variable = "H5NETCDF_READ_BACKEND" if mode == "r" else "H5NETCDF_WRITE_BACKEND"
    return os.environ.get(variable) == NAME


def _foreign(path):
    """True for an open File of h5py, h5pyd or pyfive: it stays with its library."""
    return type(path).__module__.startswith(("h5py.", "h5pyd.", "pyfive."))


class _Request:
    """A path h5netcdf is to open with purehep (what ``_open_h5py`` receives)."""

    def __init__(self, path):
        self.path = path


def _open(request, mode, **kwargs):
    """(purehep File, whether it existed before, whether closing the netCDF file closes it),
    as h5netcdf's ``_open_h5py`` answers for h5py."""
    path = request.path
    if isinstance(path, purehep.File):
        return path, mode in ("r", "r+", "a"), False
    if mode != "r":
        kwargs.setdefault("track_order", True)     # netCDF-4 tracks creation order
    existed = os.path.exists(path) and mode != "w" if isinstance(path, (str, os.PathLike)) \
        else mode in ("r", "r+", "a")
    return purehep.File(path, mode, **kwargs), existed, True


class _BackendModule:
    """``File._h5py``: what h5netcdf assigns, except purehep's package for purehep files."""

    key = "_purehep_h5py"

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.key]
        except KeyError:
            raise AttributeError("_h5py") from None

    def __set__(self, obj, value):
        obj.__dict__[self.key] = purehep if obj.__dict__.get("_backend") == NAME else value


def _string_attribute(h5attrs, key, value):
    """A NETCDF4_CLASSIC string attribute as libnetcdf writes NC_CHAR attributes (and
    h5netcdf through h5py's low-level API): scalar, fixed length (the string's bytes, at
    least 1), null-terminated, ASCII or, for other text, UTF-8."""
    if isinstance(value, str):
        encoding = "ascii" if value.isascii() else "utf-8"
        value = value.encode(encoding)
    else:
        encoding = "ascii"
    dtype = np.dtype(f"S{max(len(value), 1)}",
                     metadata={"h5py_encoding": encoding, "strpad": "nullterm"})
    h5attrs.create(key, np.array(value, dtype), dtype=dtype)


def _classic_char(dtype, data):
    """An NC_CHAR variable of the classic model (one-byte strings) as libnetcdf stores it,
    null-terminated ASCII; any other dtype unchanged."""
    try:
        dt = np.dtype(dtype) if dtype is not None else np.asarray(data).dtype
    except TypeError:
        return dtype          # h5netcdf's user types
    if dt.kind == "S" and dt.itemsize == 1 and dt.metadata is None:
        return np.dtype("S1", metadata={"h5py_encoding": "ascii", "strpad": "nullterm"})
    return dtype


def _xarray_without_h5py():
    """Give xarray's ``H5NetCDFStore.prepare_variable`` (when xarray's h5netcdf backend is
    imported, and once) a copy of itself in which ``import h5py`` gives ``purehep``: its
    one use of the module is ``special_dtype(vlen=str)``, which purehep has, but it imports
    h5py before anything else. The copy sees the module's names as they are now (its
    globals are a copy, holding the builtins it imports with)."""
    module = sys.modules.get("xarray.backends.h5netcdf_")
    store = getattr(module, "H5NetCDFStore", None)
    original = getattr(store, "prepare_variable", None)
    if original is None or getattr(original, "_purehep", False):
        return
    names = dict(vars(builtins), __import__=_import_h5py_as_purehep)
    copy = types.FunctionType(original.__code__, dict(original.__globals__, __builtins__=names),
                              original.__name__, original.__defaults__, original.__closure__)
    copy.__qualname__, copy.__doc__, copy.__wrapped__ = (original.__qualname__,
                                                         original.__doc__, original)
    copy.__kwdefaults__, copy._purehep = original.__kwdefaults__, True
    store.prepare_variable = copy


def _import_h5py_as_purehep(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` for ``_xarray_without_h5py``'s copy: h5py is purehep."""
    if name == "h5py" and level == 0:
        return purehep
    return builtins.__import__(name, globals, locals, fromlist, level)


def register():
    """Plug purehep into h5netcdf (idempotent; importing this module does it)."""
    if getattr(core, "_purehep_registered", False):
        return
    _check_version()
    parse, open_h5py = core._parse_backend, core._open_h5py
    dstype, usertype = core._get_h5dstype_identifier, core._get_h5usertype_identifier
    init, track_order = core.File.__init__, core.Group._track_order
    create = core.Group._create_child_variable
    getitem, setitem = _attrs.Attributes.__getitem__, _attrs.Attributes.__setitem__

    def _parse_backend(path, mode, backend, **kwargs):
        if _chosen(path, mode, backend, kwargs):
            if kwargs.get("driver") is not None:
                raise ValueError(f"driver={kwargs['driver']!r} only works with 'h5py' "
                                 f"backend, but given backend={NAME}.")
            return NAME
        if backend is None and _foreign(path):
            backend = type(path).__module__.split(".")[0]
        return parse(path, mode, backend, **kwargs)

    def _open_h5py(path, mode, **kwargs):
        if isinstance(path, _Request):
            return _open(path, mode, **kwargs)
        return open_h5py(path, mode, **kwargs)

    def _get_h5dstype_identifier(h5type):
        if type(h5type).__module__.startswith("purehep."):
            return h5type.id.get_type().get_class()
        return dstype(h5type)

    def _get_h5usertype_identifier(h5type):
        if type(h5type).__module__.startswith("purehep."):
            return h5type.id.get_class()
        return usertype(h5type)

    def __init__(self, path, mode="r", format="NETCDF4", invalid_netcdf=False,
                 phony_dims=None, backend=None, **kwargs):
        if _chosen(path, mode, backend, kwargs) and kwargs.get("driver") is None:
            path, backend = _Request(path), NAME
            if getattr(core, "no_h5py", False):
                _xarray_without_h5py()
        init(self, path, mode, format, invalid_netcdf, phony_dims, backend, **kwargs)

    def _track_order_of(self):
        if self._root._backend != NAME:
            return track_order.fget(self)
        order = self._h5group.id.get_create_plist().get_attr_creation_order()
        return bool(order & h5p.CRT_ORDER_TRACKED) and bool(order & h5p.CRT_ORDER_INDEXED)

    def __setitem__(self, key, value):
        if self._h5py is purehep and _foreign(value) and type(value).__name__ == "Empty":
            value = purehep.Empty(value.dtype)      # h5py's Empty given to a purehep file
        dtype = value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype
        if self._h5py is purehep and self._format == "NETCDF4_CLASSIC" and \
                key not in _attrs._HIDDEN_ATTRS and dtype.kind in "SU" and \
                dtype.metadata is None and not isinstance(value, (list, purehep.Empty)) and \
                np.ndim(value) == 0:
            self._check_dtype(dtype)
            _string_attribute(self._h5attrs, key, value if np.isscalar(value) else value[()])
            return
        setitem(self, key, value)

    def _create_child_variable(self, name, dimensions, dtype, data, *args, **kwargs):
        if self._root._h5py is purehep and self._root._format == "NETCDF4_CLASSIC":
            dtype = _classic_char(dtype, data)
        return create(self, name, dimensions, dtype, data, *args, **kwargs)

    def __getitem__(self, key):
        value = getitem(self, key)
        if self._h5py is not purehep:
            return value
        info = purehep.check_string_dtype(self._h5attrs.get_dtype(key))
        if info is None or (info.length or 0) <= 1:
            return value
        raw = self._h5attrs[key]
        if isinstance(raw, purehep.Empty):
            return value
        text = [b.decode(info.encoding, "surrogateescape") for b in np.ravel(raw)]
        return text[0] if len(text) == 1 else text

    if getattr(core, "no_h5py", False):
        core.h5py = None
    core._parse_backend, core._open_h5py = _parse_backend, _open_h5py
    core._get_h5dstype_identifier = _get_h5dstype_identifier
    core._get_h5usertype_identifier = _get_h5usertype_identifier
    __init__.__doc__, __init__.__wrapped__ = init.__doc__, init
    core.File.__init__ = __init__
    core.File._h5py = _BackendModule()
    _create_child_variable.__wrapped__ = create
    core.Group._create_child_variable = _create_child_variable
    core.Group._track_order = property(_track_order_of, doc=track_order.__doc__)
    __getitem__.__wrapped__, __setitem__.__wrapped__ = getitem, setitem
    _attrs.Attributes.__getitem__, _attrs.Attributes.__setitem__ = __getitem__, __setitem__
    core._purehep_registered = True


register()
