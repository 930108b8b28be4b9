"""Arkouda's HDF5 schema: objects, single files and distributed (one file per locale) sets.

Sources: the schema document (Arkouda ``pydoc/file_io/HDF5.md``, seed
``arkouda-hdf5-schema.txt``) and, where it is silent or loose, what the Arkouda server writes
(``src/HDF5Msg.chpl``, ``src/ServerConfig.chpl``, ``src/FileIO.chpl`` of Bears-R-Us/arkouda).

Attributes (``writeArkoudaMetaData`` and its siblings), all with a scalar dataspace:

* ``ObjType``: Chapel ``int`` = 64-bit little-endian signed integer; values from the
  ``ServerConfig.ObjType`` enum: ARRAYVIEW 0, PDARRAY 1, STRINGS 2, SEGARRAY 3,
  CATEGORICAL 4, GROUPBY 5, DATAFRAME 6, INDEX 12, MULTIINDEX 13.
* ``isBool``: int64 ``1``, written only when the data are boolean (the server tests
  ``dtype == H5T_NATIVE_HBOOL``); boolean data are stored as ``H5T_NATIVE_HBOOL``, which
  libhdf5 (H5T.c) makes a native unsigned integer of ``sizeof(bool)``: uint8. A SegArray group of boolean values carries it too (its dtype is passed on).
* ``file_version``: ``real(32)`` = float32 ``2.0``.
* ``arkouda_version``: ``H5T_C_S1`` copy = fixed-length ASCII string of strlen + 1 bytes,
  null-terminated (``H5T_STR_NULLTERM``).
* ArrayView datasets add ``Rank`` (int64 scalar) and ``Shape`` (int64, 1-D of length Rank).
* GroupBy, DataFrame and Index groups add ``NumKeys``, ``NumCols``, ``NumIdx`` (int64) and
  carry no ``isBool``.
* The root of each file gets ``File_Format`` (int64): 0 single file, 1 one file per locale,
  written when the file is created (``prepFiles``).

Layouts (member names are the server's constants): Strings and SegArray groups hold
``values`` and ``segments`` (int64 start offsets; Strings values are the UTF-8 bytes of every
string followed by a null byte, uint8); Categorical groups hold ``codes``, ``categories`` (a
Strings group), ``NA_Codes`` and, when the Categorical has them, ``permutation`` and
``segments``; GroupBy groups hold ``segments``, ``permutation``, ``unique_key_idx`` and
``KEY_<i>``; DataFrame groups hold ``Index`` and one member per column; Index groups hold
``IDX_<i>``. All datasets are one-dimensional (ArrayView data are flattened).

Distributed files are named ``<prefix>_LOCALE<i:04d><extension>`` (``generateFilename``).
Every array is block-distributed on its own (Chapel's Block distribution, ``_computeBlock``:
locale ``i`` of ``L`` holds ``[ceil(n*i/L), ceil(n*(i+1)/L))``), so each component of a Categorical, GroupBy,
DataFrame or Index is split independently, and empty parts are empty datasets. Strings and
SegArrays are split by their segments: each file holds whole elements, with its segments
rebased to start at 0 (``writeSegmentedDistDset``: ``localSegs - startValIdx``); reading
concatenates the parts and adds back the running length of the values.

Choices where the server is irregular: every member dataset and group gets the full metadata
the schema document lists (the server omits it on single-file Categorical members and Index
``IDX_<i>`` datasets, and writes only ``ObjType`` on empty distributed Strings parts).
Reading needs only what the schema requires: missing optional attributes are fine, a missing
``ObjType`` is inferred from the members (the schema's legacy rule: a group whose ``values``
are uint8 is a Strings), and Strings without ``segments`` are split at their null bytes.
DataFrame columns are read back in the file's member order (by name). As in Arkouda, a
truncating distributed write replaces only the files of its own locales; reading a prefix
globs every ``<prefix>_LOCALE*`` file.
"""
import glob as _glob
import os
from dataclasses import dataclass, field, fields

import numpy as np

from . import __version__
from .hl.files import File

ARRAYVIEW, PDARRAY, STRINGS, SEGARRAY, CATEGORICAL, GROUPBY, DATAFRAME = range(7)
INDEX, MULTIINDEX = 12, 13
SINGLE_FILE, MULTI_FILE = 0, 1
FILE_VERSION = np.float32(2.0)
ARKOUDA_VERSION = f"purehep {__version__}"

__all__ = ["ArrayView", "Strings", "SegArray", "Categorical", "GroupBy", "DataFrame", "Index",
           "write", "read", "locale_filenames"]


# ---------------------------------------------------------------- distribution helpers

def _bounds(n, parts):
    """Chapel Block distribution of ``n`` elements over ``parts`` locales: (lo, hi) pairs."""
    cuts = [-(-n * i // parts) for i in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def _slice(value, lo, hi):
    """Elements ``lo:hi`` of an array or a segmented object."""
    return value[lo:hi] if isinstance(value, np.ndarray) else value._slice(lo, hi)


def _split(value, parts):
    """``value`` cut into one piece per locale (None, lists and dicts member by member)."""
    if value is None:
        return [None] * parts
    if isinstance(value, (list, dict)):
        keys = range(len(value)) if isinstance(value, list) else value.keys()
        cols = {k: _split(value[k], parts) for k in keys}
        rows = [{k: c[i] for k, c in cols.items()} for i in range(parts)]
        return [list(r.values()) for r in rows] if isinstance(value, list) else rows
    if isinstance(value, np.ndarray):
        return [value[lo:hi] for lo, hi in _bounds(len(value), parts)]
    return value._split(parts)


def _concat(parts):
    """The inverse of ``_split``: the locales' pieces joined."""
    first = parts[0]
    if first is None:
        return None
    if isinstance(first, list):
        return [_concat(list(col)) for col in zip(*parts)]
    if isinstance(first, dict):
        return {k: _concat([p[k] for p in parts]) for k in first}
    if isinstance(first, np.ndarray):
        return np.concatenate(parts)
    return type(first)._concat(parts)


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and np.array_equal(a, b))
    if isinstance(a, (list, dict)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if isinstance(a, dict):
            return list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
        return all(_equal(x, y) for x, y in zip(a, b))
    return a == b


# ---------------------------------------------------------------- schema objects

class _Schema:
    """Component-wise behaviour shared by the schema objects (dataclasses)."""

    def __eq__(self, other):
        return type(self) is type(other) and all(
            _equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    def _split(self, parts):
        cols = {f.name: _split(getattr(self, f.name), parts) for f in fields(self)}
        return [type(self)(**{k: c[i] for k, c in cols.items()}) for i in range(parts)]

    @classmethod
    def _concat(cls, parts):
        return cls(**{f.name: _concat([getattr(p, f.name) for p in parts]) for f in fields(cls)})

    def _write(self, parent, name):
        """A group of members plus its metadata (schema: every object but pdarray/ArrayView)."""
        group = parent.create_group(name)
        for key, member in self._members():
            _write_object(group, key, member)
        _metadata(group, self._objtype(), self._is_bool(), self._counts())

    def _is_bool(self):
        return False

    def _counts(self):
        return {}


@dataclass(eq=False)
class ArrayView(_Schema):
    """An n-d array stored flattened with ``Rank`` and ``Shape`` (ObjType 0)."""
    values: np.ndarray
    shape: tuple = None

    def __post_init__(self):
        values = np.asarray(self.values)
        if self.shape is None:
            self.shape = values.shape
        self.shape = tuple(int(s) for s in self.shape)
        self.values = values.reshape(-1)

    def to_ndarray(self):
        return self.values.reshape(self.shape)

    def _split(self, parts):
        return [ArrayView(p, self.shape) for p in _split(self.values, parts)]

    @classmethod
    def _concat(cls, parts):
        return cls(_concat([p.values for p in parts]), parts[0].shape)

    def _write(self, parent, name):
        ds = _dataset(parent, name, self.values, ARRAYVIEW)
        ds.attrs.create("Rank", np.int64(len(self.shape)), dtype="<i8")
        ds.attrs.create("Shape", np.asarray(self.shape, dtype="<i8"), dtype="<i8")


@dataclass(eq=False)
class _Segmented(_Schema):
    """``values`` cut into elements by ``segments`` (int64 start offsets)."""
    values: object
    segments: np.ndarray

    def __len__(self):
        return len(self.segments)

    def _members(self):
        return [("values", self.values), ("segments", self.segments)]

    def _slice(self, lo, hi):
        start, stop = (self._offset(i) for i in (lo, hi))
        return type(self)(_slice(self.values, start, stop), self.segments[lo:hi] - start)

    def _offset(self, i):
        return int(self.segments[i]) if i < len(self.segments) else len(self.values)

    def _split(self, parts):
        return [self._slice(lo, hi) for lo, hi in _bounds(len(self), parts)]

    @classmethod
    def _build(cls, members):
        if "segments" in members:
            return cls(members["values"], members["segments"])
        return Strings.from_values(members["values"])     # schema: Strings offsets optional

    @classmethod
    def _concat(cls, parts):
        starts = np.cumsum([0] + [len(p.values) for p in parts[:-1]])
        segments = [p.segments + s for p, s in zip(parts, starts)]
        return cls(_concat([p.values for p in parts]), np.concatenate(segments).astype(np.int64))


class Strings(_Segmented):
    """Strings (ObjType 2): uint8 ``values`` (each string null-terminated), int64 ``segments``."""

    @classmethod
    def from_list(cls, strings):
        encoded = [s.encode("utf-8") + b"\0" for s in strings]
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        segments = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        return cls(np.frombuffer(b"".join(encoded), np.uint8).copy(), segments[:len(encoded)])

    @classmethod
    def from_values(cls, values):
        """Segments recomputed from the null terminators (the schema's optional offsets)."""
        ends = np.flatnonzero(values == 0)
        return cls(values, np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)[:len(ends)])

    def tolist(self):
        raw = self.values.tobytes()
        stops = list(self.segments[1:]) + [len(raw)]
        return [raw[a:b].split(b"\0", 1)[0].decode("utf-8") for a, b in zip(self.segments, stops)]

    def _objtype(self):
        return STRINGS


class SegArray(_Segmented):
    """SegArray (ObjType 3): numeric/bool ``values`` (or a Strings) and int64 ``segments``."""

    def _objtype(self):
        return SEGARRAY

    def _is_bool(self):
        return _is_bool(self.values)


@dataclass(eq=False)
class Categorical(_Schema):
    """Categorical (ObjType 4): int64 codes into Strings categories, NA codes, and the
    optional permutation and segments."""
    codes: np.ndarray
    categories: Strings
    na_codes: np.ndarray
    permutation: np.ndarray = None
    segments: np.ndarray = None

    def tolist(self):
        return [self.categories.tolist()[c] for c in self.codes]

    def _members(self):
        members = [("codes", self.codes), ("categories", self.categories),
                   ("NA_Codes", self.na_codes)]
        if self.permutation is not None and self.segments is not None:
            members += [("permutation", self.permutation), ("segments", self.segments)]
        return members

    def _objtype(self):
        return CATEGORICAL

    @classmethod
    def _build(cls, members):
        return cls(members["codes"], members["categories"], members.get("NA_Codes"),
                   members.get("permutation"), members.get("segments"))


@dataclass(eq=False)
class GroupBy(_Schema):
    """GroupBy (ObjType 5): permutation, segments, unique_key_idx and its keys."""
    permutation: np.ndarray
    segments: np.ndarray
    unique_key_idx: np.ndarray
    keys: list = field(default_factory=list)

    def _members(self):
        return [("segments", self.segments), ("permutation", self.permutation),
                ("unique_key_idx", self.unique_key_idx)] + _numbered("KEY", self.keys)

    def _objtype(self):
        return GROUPBY

    def _counts(self):
        return {"NumKeys": len(self.keys)}

    @classmethod
    def _build(cls, members):
        return cls(members["permutation"], members["segments"], members["unique_key_idx"],
                   _numbered_members("KEY", members))


@dataclass(eq=False)
class DataFrame(_Schema):
    """DataFrame (ObjType 6): an ``Index`` member and one member per column."""
    columns: dict
    index: object

    def _members(self):
        return [("Index", self.index)] + list(self.columns.items())

    def _objtype(self):
        return DATAFRAME

    def _counts(self):
        return {"NumCols": len(self.columns)}

    @classmethod
    def _build(cls, members):
        return cls({k: v for k, v in members.items() if k != "Index"}, members["Index"])


@dataclass(eq=False)
class Index(_Schema):
    """Index (ObjType 12) or MultiIndex (13, more than one level): ``IDX_<i>`` members."""
    levels: list

    def _members(self):
        return _numbered("IDX", self.levels)

    def _objtype(self):
        return INDEX if len(self.levels) == 1 else MULTIINDEX

    def _counts(self):
        return {"NumIdx": len(self.levels)}

    @classmethod
    def _build(cls, members):
        return cls(_numbered_members("IDX", members))


def _numbered(prefix, items):
    return [(f"{prefix}_{i}", item) for i, item in enumerate(items)]


def _numbered_members(prefix, members):
    count = sum(1 for k in members if k.startswith(prefix + "_"))
    return [members[f"{prefix}_{i}"] for i in range(count)]


def _is_bool(values):
    return isinstance(values, np.ndarray) and values.dtype == np.bool_


# ---------------------------------------------------------------- writing

def _metadata(obj, objtype, is_bool=False, counts=None):
    """writeArkoudaMetaData (+ the NumKeys/NumCols/NumIdx counts): scalar attributes."""
    attrs = obj.attrs
    attrs.create("ObjType", np.int64(objtype), dtype="<i8")
    if is_bool:
        attrs.create("isBool", np.int64(1), dtype="<i8")
    for name, count in (counts or {}).items():
        attrs.create(name, np.int64(count), dtype="<i8")
    attrs.create("file_version", FILE_VERSION, dtype="<f4")
    text = ARKOUDA_VERSION.encode("ascii")
    attrs.create("arkouda_version", np.bytes_(text), dtype=np.dtype(
        f"S{len(text) + 1}", metadata={"h5py_encoding": "ascii", "strpad": "nullterm"}))


def _dataset(parent, name, values, objtype=PDARRAY):
    """A 1-D dataset with its metadata; booleans stored as H5T_NATIVE_HBOOL (uint8)."""
    values = np.asarray(values)
    is_bool = values.dtype == np.bool_
    ds = parent.create_dataset(name, data=values.astype(np.uint8) if is_bool else values)
    _metadata(ds, objtype, is_bool)
    return ds


def _write_object(parent, name, obj):
    if isinstance(obj, np.ndarray):
        if obj.ndim != 1:
            raise ValueError(f"{name}: pdarrays are one-dimensional; wrap {obj.ndim}-d data "
                             "in ArrayView")
        _dataset(parent, name, obj)
    else:
        obj._write(parent, name)


def locale_filenames(path, locales):
    """``<prefix>_LOCALE<i:04d><extension>`` for each locale (FileIO.generateFilename)."""
    prefix, extension = os.path.splitext(path)
    return [f"{prefix}_LOCALE{i:04d}{extension}" for i in range(locales)]


def _open_for_writing(path, mode, file_format):
    """Truncate: a new file; append: the existing file, or a new one (prepFiles)."""
    if mode == "append" and os.path.exists(path):
        return File(path, "a")
    f = File(path, "w")
    f.attrs.create("File_Format", np.int64(file_format), dtype="<i8")
    return f


def _write_file(path, objects, mode, file_format):
    with _open_for_writing(path, mode, file_format) as f:
        for name in objects:
            if name in f:
                raise ValueError(f"an object named {name!r} already exists in {path}")
        for name, obj in objects.items():
            _write_object(f, name, obj)


def write(path, objects, mode="truncate", file_type="single", locales=1):
    """Write ``{name: object}`` to ``path`` (single) or to one file per locale (distribute).

    Objects: 1-D numpy arrays (pdarray), ArrayView, Strings, SegArray, Categorical, GroupBy,
    DataFrame, Index. Returns the list of files written."""
    if mode not in ("truncate", "append"):
        raise ValueError(f"mode must be 'truncate' or 'append', not {mode!r}")
    if file_type == "single":
        _write_file(path, objects, mode, SINGLE_FILE)
        return [path]
    if file_type != "distribute":
        raise ValueError(f"file_type must be 'single' or 'distribute', not {file_type!r}")
    paths = locale_filenames(path, locales)
    if mode == "append":
        _check_append(path, paths)
    pieces = {name: _split(obj, locales) for name, obj in objects.items()}
    for i, part in enumerate(paths):
        _write_file(part, {name: p[i] for name, p in pieces.items()}, mode, MULTI_FILE)
    return paths


def _check_append(path, paths):
    """prepFiles: appending needs as many existing locale files as locales, or none."""
    existing = _glob.glob(_locale_pattern(path))
    if existing and len(existing) != len(paths):
        raise ValueError(f"cannot append {len(paths)} locale files to {len(existing)} "
                         f"existing ones matching {_locale_pattern(path)}")


# ---------------------------------------------------------------- reading

_READERS = {STRINGS: Strings, SEGARRAY: SegArray, CATEGORICAL: Categorical, GROUPBY: GroupBy,
            DATAFRAME: DataFrame, INDEX: Index, MULTIINDEX: Index}


def _read_dataset(ds):
    values = ds[()]
    if int(ds.attrs.get("isBool", 0)):
        values = values.astype(np.bool_)
    objtype = ds.attrs.get("ObjType")
    if objtype == ARRAYVIEW or (objtype is None and "Shape" in ds.attrs):
        return ArrayView(values, tuple(ds.attrs["Shape"]))
    return values


def _group_type(group):
    """ObjType, or the type the members imply (the schema's legacy inference)."""
    if "ObjType" in group.attrs:
        return int(group.attrs["ObjType"])
    for member, objtype in (("unique_key_idx", GROUPBY), ("codes", CATEGORICAL),
                            ("IDX_0", INDEX), ("Index", DATAFRAME)):
        if member in group:
            return objtype
    if "values" in group:
        values = group["values"]
        is_strings = hasattr(values, "dtype") and values.dtype == np.uint8
        return STRINGS if is_strings and "isBool" not in values.attrs else SEGARRAY
    raise ValueError(f"{group.name}: not an Arkouda object (no ObjType, no known members)")


def _read_node(node):
    if not hasattr(node, "keys"):
        return _read_dataset(node)
    cls = _READERS[_group_type(node)]
    members = {k: _read_node(node[k]) for k in node}
    return cls._build(members)


def _locale_pattern(path):
    prefix, extension = os.path.splitext(path)
    return f"{prefix}_LOCALE*{extension}"


def _resolve(path):
    """The files of ``path``: a glob pattern, one file, or the locale files of a prefix."""
    if _glob.has_magic(path):
        found = sorted(_glob.glob(path))
    elif os.path.exists(path):
        found = [path]
    else:
        found = sorted(_glob.glob(_locale_pattern(path)))
    if not found:
        raise FileNotFoundError(f"no Arkouda HDF5 file matches {path!r}")
    return found


def read(path, names=None):
    """``{name: object}`` read from one file or a distributed set (parts concatenated)."""
    files = [File(p, "r") for p in _resolve(path)]
    try:
        wanted = list(files[0].keys()) if names is None else list(names)
        return {name: _concat([_read_node(f[name]) for f in files]) for name in wanted}
    finally:
        for f in files:
            f.close()
