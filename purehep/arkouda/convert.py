"""Plain Python data to Arkouda objects, and the check, at ``write``, that every object is one
the current Arkouda server reads (``readAllHdfMsg`` and the readers it calls in
``src/HDF5Msg.chpl``): anything else raises at the call instead of making a file the server
refuses.

Conversions: a list or tuple of strings, a numpy ``U`` array or an object array of strings
becomes a Strings; a list of numbers a numpy array (Python ints beyond 64 bits, or an object
array of ints, a BigInt); bytes, complex, datetime and structured arrays are refused (the
server reads integer and float pdarrays only: ``readPdarrayFromFile``).

What the server reads, per place (the ObjType ``get_info`` finds there):

* a named object: pdarray (BigInt too), Strings, SegArray, Categorical, GroupBy, DataFrame,
  Index/MultiIndex (ObjType 0, ArrayView, is "Unknown object type": written only on request);
* a DataFrame ``Index``: a pdarray or Strings ("Invalid DataFrame Formatting of Index");
  its columns: pdarray (BigInt too), Strings, Categorical, SegArray;
* GroupBy keys: pdarray (BigInt too), Strings, Categorical ("Unsupported GroupBy key type");
* Index levels: pdarray, Strings, Categorical; ``IDX_0`` is opened as a dataset by
  ``get_info``, so the first level cannot be a BigInt (a group);
* SegArray values: a pdarray (BigInt too) or a Strings; Categorical categories: a Strings.
"""
import numpy as np

from .objects import (ArrayView, BigInt, Categorical, DataFrame, GroupBy, Index, SegArray,
                      Strings)

_PDARRAY_KINDS = "iufb"


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def to_values(items, where):
    """A pdarray, BigInt or Strings of a flat Python sequence or numpy array."""
    if isinstance(items, np.ndarray) and items.dtype.kind != "O":
        return _array(items, where)
    items = list(items)
    strs = sum(isinstance(x, str) for x in items)
    if items and strs == len(items):
        return Strings.from_list(items)
    if strs:
        raise TypeError(f"{where}: mixed values (strings and {type(items[0]).__name__}) are "
                        "not an Arkouda array")
    if items and all(_is_int(x) for x in items):
        if all(-2**63 <= int(x) < 2**64 for x in items):
            arr = np.asarray(items)
            if arr.dtype != object:
                return arr
        return BigInt(items)
    arr = np.asarray(items)
    if arr.dtype == object:
        raise TypeError(f"{where}: mixed values {type(items[0]).__name__}, ... are not an "
                        "Arkouda array (numbers, strings or Python ints)")
    return _array(arr, where)


def _array(arr, where):
    kind = arr.dtype.kind
    if kind == "U":
        return Strings.from_list(arr.reshape(-1).tolist())
    if kind == "O":
        return to_values(arr.reshape(-1).tolist(), where)
    if kind == "c":
        raise TypeError(f"{where}: complex arrays are not an Arkouda pdarray type (the server "
                        "reads integer and float data only)")
    if kind == "S":
        raise TypeError(f"{where}: byte-string arrays are not an Arkouda type; decode them to "
                        "str (a Strings) first")
    if kind not in _PDARRAY_KINDS:
        raise TypeError(f"{where}: {arr.dtype} arrays are not an Arkouda pdarray type "
                        "(integers, floats and booleans are)")
    return arr


def coerce(obj, where):
    """``obj`` as an Arkouda object: lists and numpy arrays converted (module docstring)."""
    if isinstance(obj, (list, tuple)):
        return to_values(obj, where)
    if isinstance(obj, np.ndarray):
        return _array(obj, where)
    return obj


def prepare(obj, where, arrayview=False, role="object"):
    """``obj`` converted and checked for its place (``role``): what ``write`` stores."""
    obj = coerce(obj, where)
    if isinstance(obj, np.ndarray):
        if obj.ndim != 1:
            raise ValueError(f"{where}: pdarrays are one-dimensional; flatten {obj.ndim}-d "
                             "data (or store an ArrayView with arrayview=True, which the "
                             "current server does not read)")
        if role == "index" and obj.dtype.kind not in "iuf":
            raise TypeError(f"{where}: a DataFrame index is int64, uint64, float64 or Strings")
        return obj
    allowed = {
        "object": (BigInt, Strings, SegArray, Categorical, GroupBy, DataFrame, Index)
        + ((ArrayView,) if arrayview else ()),
        "index": (Strings,),
        "column": (BigInt, Strings, Categorical, SegArray),
        "key": (BigInt, Strings, Categorical),
        "level": (BigInt, Strings, Categorical),
        "level0": (Strings, Categorical),
        "segvalues": (BigInt, Strings),
        "categories": (Strings,),
    }[role]
    if not isinstance(obj, allowed):
        what = {"object": "an object the current Arkouda server reads"
                + ("" if arrayview else " (ArrayView, ObjType 0, was removed from the "
                   "server: pass arrayview=True to write one anyway)"),
                "index": "a DataFrame index the server reads: a pdarray or Strings",
                "column": "a DataFrame column the server reads: pdarray, BigInt, Strings, "
                          "Categorical or SegArray",
                "key": "a GroupBy key the server reads: pdarray, BigInt, Strings or "
                       "Categorical",
                "level": "an Index level the server reads: pdarray, BigInt, Strings or "
                         "Categorical",
                "level0": "a first Index level the server reads: pdarray, Strings or "
                          "Categorical (it opens IDX_0 as a dataset)",
                "segvalues": "SegArray values the server reads: a pdarray, BigInt or Strings",
                "categories": "Categorical categories: a Strings"}[role]
        raise TypeError(f"{where}: {type(obj).__name__} is not {what}")
    return _prepare_members(obj, where, arrayview)


def _prepare_members(obj, where, arrayview):
    if isinstance(obj, Strings):
        values = np.asarray(obj.values)
        if values.dtype != np.uint8:
            raise TypeError(f"{where}: Strings values are uint8 bytes, not {values.dtype}")
        return Strings(values, _ints(obj.segments, f"{where}/segments"))
    if isinstance(obj, SegArray):
        return SegArray(prepare(obj.values, f"{where}/values", arrayview, "segvalues"),
                        _ints(obj.segments, f"{where}/segments"))
    if isinstance(obj, Categorical):
        opt = [None if x is None else _ints(x, f"{where}/{n}")
               for x, n in ((obj.permutation, "permutation"), (obj.segments, "segments"))]
        return Categorical(_ints(obj.codes, f"{where}/codes"),
                           prepare(obj.categories, f"{where}/categories", arrayview,
                                   "categories"),
                           _ints(obj.na_codes, f"{where}/NA_Codes"), *opt)
    if isinstance(obj, GroupBy):
        return GroupBy(_ints(obj.permutation, f"{where}/permutation"),
                       _ints(obj.segments, f"{where}/segments"),
                       _ints(obj.unique_key_idx, f"{where}/unique_key_idx"),
                       [prepare(k, f"{where}/KEY_{i}", arrayview, "key")
                        for i, k in enumerate(obj.keys)])
    if isinstance(obj, DataFrame):
        columns = {str(k): prepare(v, f"{where}/{k}", arrayview, "column")
                   for k, v in obj.columns.items()}
        if "Index" in columns:
            raise ValueError(f"{where}: a column cannot be named 'Index' (the index member)")
        return DataFrame(columns, prepare(obj.index, f"{where}/Index", arrayview, "index"))
    if isinstance(obj, Index):
        return Index([prepare(v, f"{where}/IDX_{i}", arrayview, "level0" if i == 0 else "level")
                      for i, v in enumerate(obj.levels)])
    return obj


def _ints(values, where):
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(f"{where}: 1-D integers expected, not {arr.dtype} {arr.shape}")
    return arr.astype(np.int64)
