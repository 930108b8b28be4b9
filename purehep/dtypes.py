"""h5py-compatible dtype helpers: the same metadata conventions as h5py, so code written for
h5py (``h5py.check_string_dtype(ds.dtype)`` etc.) works unchanged with purehep dtypes.

Metadata keys: ``vlen`` (str, bytes or a base dtype), ``h5py_encoding`` ('ascii'/'utf-8' on
fixed-length ``S`` dtypes), ``enum`` (name -> int), ``ref`` (reference class), ``h5py_opaque``.
The ``ref`` dtypes carry purehep's Reference classes; h5py itself only writes its own classes.
"""
from collections import namedtuple

import numpy as np

from .reference import Reference, RegionReference

string_info = namedtuple("string_info", ["encoding", "length"])

_ENCODINGS = {"utf-8": "utf-8", "utf8": "utf-8", "ascii": "ascii"}


def _meta(dt):
    return np.dtype(dt).metadata or {}


def string_dtype(encoding="utf-8", length=None):
    """A dtype for HDF5 strings: variable length (``length=None``) or fixed ``length`` bytes."""
    enc = _ENCODINGS.get(str(encoding).lower())
    if enc is None:
        raise ValueError(f"Invalid encoding ({encoding!r}); 'utf-8' or 'ascii' allowed")
    if length is None:
        return np.dtype("O", metadata={"vlen": str if enc == "utf-8" else bytes})
    if not isinstance(length, (int, np.integer)):
        raise TypeError(f"length must be integer or None (got {length!r})")
    return np.dtype(f"|S{int(length)}", metadata={"h5py_encoding": enc})


def vlen_dtype(basetype):
    """A dtype for variable-length sequences of ``basetype``."""
    if basetype not in (str, bytes):
        basetype = np.dtype(basetype)
    return np.dtype("O", metadata={"vlen": basetype})


def enum_dtype(values_dict, basetype=np.uint8):
    """An integer dtype carrying the enumeration ``values_dict`` (name -> value)."""
    dt = np.dtype(basetype)
    if dt.kind not in "iu":
        raise TypeError("Only integer types can be used as enums")
    return np.dtype(dt, metadata={"enum": dict(values_dict)})


def opaque_dtype(np_dtype):
    """``np_dtype`` tagged to be stored as an HDF5 opaque type (tag ``NUMPY:<descr>``)."""
    dt = np.dtype(np_dtype)
    if dt.hasobject:
        raise TypeError("Cannot store numpy object arrays as opaque data")
    if dt.names is not None:
        raise TypeError("Cannot store numpy structured arrays as opaque data")
    if dt.subdtype is not None:
        raise TypeError("Cannot store numpy sub-array dtype as opaque data")
    if dt.itemsize == 0:
        raise TypeError("dtype for opaque data must have explicit size")
    return np.dtype(dt, metadata={"h5py_opaque": True})


ref_dtype = np.dtype("O", metadata={"ref": Reference})
regionref_dtype = np.dtype("O", metadata={"ref": RegionReference})


def check_vlen_dtype(dt):
    """The vlen base (str, bytes or a dtype) if ``dt`` is an HDF5 vlen, else None."""
    return _meta(dt).get("vlen")


def check_string_dtype(dt):
    """string_info(encoding, length) for string dtypes (length None if variable), else None."""
    dt = np.dtype(dt)
    vlen = _meta(dt).get("vlen")
    if vlen is str:
        return string_info("utf-8", None)
    if vlen is bytes:
        return string_info("ascii", None)
    if dt.kind == "S":
        return string_info(_meta(dt).get("h5py_encoding", "ascii"), dt.itemsize)
    return None


def check_enum_dtype(dt):
    """The name -> value dict of an enum dtype, else None."""
    return _meta(dt).get("enum")


def check_opaque_dtype(dt):
    """True if ``dt`` is tagged to be stored as HDF5 opaque data."""
    return bool(_meta(dt).get("h5py_opaque", False))


def check_ref_dtype(dt):
    """The reference class (Reference or RegionReference) of a reference dtype, else None."""
    return _meta(dt).get("ref")


def check_dtype(**kwds):
    """h5py's legacy checker: exactly one of vlen=, enum=, ref=."""
    if len(kwds) != 1:
        raise TypeError("Exactly one keyword may be provided")
    name, dt = next(iter(kwds.items()))
    if name not in ("vlen", "enum", "ref"):
        raise TypeError(f'Unknown special type "{name}"')
    return _meta(dt).get(name)


def special_dtype(**kwds):
    """h5py's legacy constructor: vlen=basetype, enum=(basetype, values), ref=class."""
    if len(kwds) != 1:
        raise TypeError("Exactly one keyword may be provided")
    name, val = next(iter(kwds.items()))
    if name == "vlen":
        return vlen_dtype(val)
    if name == "enum":
        basetype, values = val
        return enum_dtype(values, basetype)
    if name == "ref":
        if val not in (Reference, RegionReference):
            raise ValueError("Ref class must be Reference or RegionReference")
        return ref_dtype if val is Reference else regionref_dtype
    raise TypeError(f'Unknown special type "{name}"')


def complex_compat_dtype(np_dtype):
    """The ('r', 'i') compound dtype HDF5 1.x files use for a numpy complex dtype."""
    dt = np.dtype(np_dtype)
    if dt.kind != "c":
        raise TypeError(f"{dt} is not a complex dtype")
    f = np.dtype(f"{dt.str[0]}f{dt.itemsize // 2}")
    return np.dtype([("r", f), ("i", f)])


def check_complex_dtype(dt, names=("r", "i")):
    """An equivalent numpy complex dtype if ``dt`` represents complex numbers, else None."""
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt
    if dt.names is None or len(dt.names) != 2:
        return None
    if names is not None and tuple(dt.names) != tuple(names):
        return None
    a, b = (dt.fields[n][0] for n in dt.names)
    if a != b or a.kind != "f" or a.itemsize not in (4, 8, 16):
        return None
    if dt.fields[dt.names[0]][1] != 0 or dt.fields[dt.names[1]][1] != a.itemsize:
        return None
    return np.dtype(f"{a.str[0]}c{2 * a.itemsize}")
