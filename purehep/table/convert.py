"""Column values in: numpy arrays, lists, pandas Series/arrays and pyarrow arrays become the
arrays HEP001 column datasets store (§6.2 datatypes, §6.4 fill values as missing, §6.6
categoricals), exactly or not at all.

Every input is first normalised to a :class:`Values` — a logical kind, a numpy array, a
missing-value mask and the dataframe dtype to restore on the way out — then encoded for
storage. What cannot be stored without loss (decimals, nested and list values, mixed
objects, missing values in a column type without a fill value, values a column type cannot
hold) raises :class:`ValueError` at the call, before anything is written; ``lossy=True``
accepts value casts that lose information (1.7 into an int column, unknown categories become
missing). pandas and pyarrow are imported only when their objects are passed in.
"""
import decimal
import math
from dataclasses import dataclass

import numpy as np

from ..dtypes import string_dtype

# The dataframe dtype a column restores to, when its stored type alone does not say it:
# nullable Int*/UInt*/Float*/boolean, pandas "string" / "str", datetime64/timedelta64 with
# unit (and time zone), "object" strings stored dictionary-encoded. Attribute name:
LOGICAL_ATTR = "pandas_dtype"
# A column written from a pandas ArrowDtype (pd.ArrowDtype: dtype_backend="pyarrow") also
# keeps its Arrow type, as pyarrow prints it ("int8", "timestamp[ms, tz=UTC]",
# "dictionary<values=string, indices=int16, ordered=1>"), which to_pandas restores:
ARROW_ATTR = "arrow_type"
# Logical dtypes of str columns: numpy object, and pandas' StringDtype whose missing value is
# pd.NA ("string") or NaN ("str", pandas 3's default string dtype; also in pandas 2.3), with
# its storage when known ("string[pyarrow]", pandas' own spelling; "str[python]").
STRING_DTYPES = ("string", "str")
STRING_STORAGES = ("python", "pyarrow")
TIME_UNITS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}


@dataclass
class Values:
    """Normalised column values: ``kind`` is num, str, bytes, cat or time."""
    kind: str
    data: np.ndarray
    mask: np.ndarray = None           # True where missing; None: nothing missing
    logical: str = None               # LOGICAL_ATTR value
    categories: "Values" = None       # kind cat: the categories (never missing)
    ordered: bool = False
    arrow: str = None                 # ARROW_ATTR value

    @property
    def has_missing(self):
        return self.mask is not None and bool(self.mask.any())


@dataclass
class Spec:
    """What a new column dataset stores: values, HDF5 dtype, fill value, attributes."""
    values: np.ndarray
    dtype: object
    fill: object
    logical: str = None
    units: str = None
    categories: "Spec" = None
    ordered: bool = False
    arrow: str = None

    def text_attrs(self):
        """The column dataset's text attributes: (name, value) of those it has."""
        return [(k, v) for k, v in ((LOGICAL_ATTR, self.logical), ("units", self.units),
                                    (ARROW_ATTR, self.arrow)) if v]


def _refuse(name, why):
    raise ValueError(f"column {name!r}: {why}")


# --- normalising inputs ---------------------------------------------------------------------

def normalize(values, name=""):
    """Any supported column input as :class:`Values`."""
    module = type(values).__module__ or ""
    if module.startswith("pyarrow"):
        return _from_arrow(values, name)
    if module.startswith("pandas"):
        return _from_pandas(values, name)
    if isinstance(values, np.ma.MaskedArray):
        v = _from_numpy(np.ma.getdata(values), name)
        mask = np.ma.getmaskarray(values)
        if mask.any():
            if v.kind != "num":
                _refuse(name, f"masked {values.dtype} values are not supported")
            v.mask, v.logical = mask, nullable_name(v.data.dtype)
        return v
    if isinstance(values, np.ndarray):
        arr = values
    else:
        values = list(values)
        arr = np.empty(len(values), dtype=object)     # Python values: typed one by one
        arr[:] = values
    if arr.ndim != 1:
        _refuse(name, f"columns are 1-D (HEP001 §6.1), not shape {arr.shape}")
    return _from_numpy(arr, name)


def native(values):
    """``values`` in the machine's byte order (HDF5 and numpy keep any order; pandas and
    pyarrow refuse big-endian buffers, and a view as int64 or datetime64 misreads them)."""
    return values if values.dtype.isnative else values.astype(values.dtype.newbyteorder("="))


def _from_numpy(arr, name):
    kind = arr.dtype.kind
    if kind in "iufb":
        return Values("num", arr)
    if kind == "U":
        return Values("str", arr.astype(object))
    if kind == "S":
        return Values("bytes", arr.astype(object))
    if kind in "Mm":
        arr = native(arr)               # stored as its int64 view, restored as its name
        unit = np.datetime_data(arr.dtype)[0]
        if unit not in TIME_UNITS:
            _refuse(name, f"{arr.dtype} has a unit pandas and Arrow do not share (s/ms/us/ns)")
        return Values("time", arr.view(np.int64), np.isnat(arr) if np.isnat(arr).any() else None,
                      str(arr.dtype))
    if kind == "O":
        return _infer_objects(arr, name)
    _refuse(name, f"numpy dtype {arr.dtype} is not representable")


def string_logical(dtype):
    """The logical name of a pandas StringDtype: "string" when its missing value is pd.NA,
    "str" when NaN (what ``str(dtype)`` says in pandas 2.3 and 3), and its storage in
    brackets: the default storage of "string" is python in pandas 2 and pyarrow in 3, and
    ``StringDtype("python") != StringDtype("pyarrow")``, so an unrecorded storage changed
    the dtype on the way back."""
    base = "str" if isinstance(dtype.na_value, float) else "string"
    return f"{base}[{dtype.storage}]" if dtype.storage in STRING_STORAGES else base


def string_base(logical):
    """"string" or "str" for a StringDtype's logical name (storage given or not), else None."""
    base, _, storage = (logical or "").partition("[")
    known = storage.rstrip("]") in ("",) + STRING_STORAGES
    return base if base in STRING_DTYPES and known else None


def is_string_logical(logical):
    """Whether a logical dtype restores str values: object strings or a StringDtype."""
    return logical == "object" or string_base(logical) is not None


def nullable_name(dtype):
    """pandas' nullable dtype name for a numpy dtype: Int64, UInt8, Float32, boolean."""
    if dtype.kind == "b":
        return "boolean"
    name = dtype.name
    return "UInt" + name[4:] if name.startswith("uint") else name.capitalize()


def _is_missing(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return True
    return type(v).__name__ in ("NAType", "NaTType")


def _infer_objects(arr, name):
    """Python objects: all str, all bytes, all bool, all int or all numbers, with missing
    values (None, NaN, pandas NA) allowed; anything else is refused."""
    items = arr.tolist()
    mask = np.array([_is_missing(v) for v in items], dtype=bool)
    present = [v for v, m in zip(items, mask) if not m]
    types = {type(v) for v in present}
    mask_or_none = mask if mask.any() else None
    if not present:
        return Values("str", np.array([""] * len(items), dtype=object), mask_or_none)
    if types <= {str, np.str_}:
        return Values("str", np.array([v if not m else "" for v, m in zip(items, mask)],
                                      dtype=object), mask_or_none)
    if types <= {bytes, np.bytes_}:
        return Values("bytes", np.array([v if not m else b"" for v, m in zip(items, mask)],
                                        dtype=object), mask_or_none)
    for bad, why in ((decimal.Decimal, "decimals are not representable (no HDF5 decimal type)"),
                     ((list, tuple, dict, set, np.ndarray), "nested or list values are not representable")):
        if any(isinstance(v, bad) for v in present):
            _refuse(name, why)
    if all(isinstance(v, (bool, np.bool_)) for v in present):
        data = np.array([bool(v) if not m else False for v, m in zip(items, mask)])
        return Values("num", data, mask_or_none, "boolean" if mask.any() else None)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in present):
        data = np.array([v if not m else 0 for v, m in zip(items, mask)])
        if data.dtype.kind not in "iu":
            _refuse(name, "integers beyond 64 bits are not representable")
        return Values("num", data, mask_or_none, "Int64" if mask.any() else None)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
           for v in present):
        return Values("num", np.array([float(v) if not m else np.nan for v, m in zip(items, mask)]),
                      mask_or_none)
    _refuse(name, f"mixed or unsupported Python objects ({sorted(t.__name__ for t in types)})")


def _from_pandas(values, name):
    import pandas as pd
    if isinstance(values.dtype, np.dtype):
        return _from_numpy(np.asarray(values), name)
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.array
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = normalize(dtype.categories, f"{name} categories")
        codes = np.asarray(values.codes)
        return Values("cat", codes, codes < 0 if (codes < 0).any() else None,
                      categories=cats, ordered=bool(dtype.ordered))
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa
        v = _from_arrow(pa.array(values), name)
        v.arrow = str(dtype.pyarrow_dtype)
        return v
    if isinstance(dtype, pd.StringDtype):
        mask = np.asarray(values.isna())
        data = np.array([v if not m else "" for v, m in zip(values.tolist(), mask)], dtype=object)
        return Values("str", data, mask if mask.any() else None, string_logical(dtype))
    if isinstance(values, (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)):
        mask = np.asarray(values.isna())
        data = values.to_numpy(dtype=dtype.numpy_dtype, na_value=dtype.numpy_dtype.type(0))
        return Values("num", data, mask if mask.any() else None, str(dtype))
    if isinstance(dtype, pd.DatetimeTZDtype):
        mask = np.asarray(values.isna())
        return Values("time", np.asarray(values.asi8, dtype=np.int64), mask if mask.any() else None,
                      str(dtype))
    _refuse(name, f"pandas dtype {dtype} is not representable in HEP001")


def _from_arrow(values, name):
    import pyarrow as pa
    import pyarrow.types as pt
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    t = values.type
    mask = values.is_null().to_numpy(zero_copy_only=False) if values.null_count else None
    if pt.is_dictionary(t):
        cats = _from_arrow(values.dictionary, f"{name} categories")
        codes = values.indices.fill_null(-1 if pt.is_signed_integer(t.index_type) else 0)
        codes = codes.to_numpy(zero_copy_only=False).astype(t.index_type.to_pandas_dtype())
        return Values("cat", codes, mask, categories=cats, ordered=bool(t.ordered))
    if pt.is_integer(t) or pt.is_floating(t) or pt.is_boolean(t):
        filled = values.fill_null(False if pt.is_boolean(t) else 0)
        data = np.asarray(filled.to_numpy(zero_copy_only=False), dtype=t.to_pandas_dtype())
        return Values("num", data, mask, None if mask is None else nullable_name(data.dtype))
    if pt.is_string(t) or pt.is_large_string(t):
        # large_string is what pyarrow gives pandas' "str" dtype (the default in pandas 3):
        # recorded as "str" it comes back as large_string (arrow_string_type)
        items = values.to_pylist()
        return Values("str", np.array([v if v is not None else "" for v in items], dtype=object),
                      mask, "str" if pt.is_large_string(t) else None)
    if pt.is_binary(t) or pt.is_large_binary(t):
        items = values.to_pylist()
        return Values("bytes", np.array([v if v is not None else b"" for v in items], dtype=object), mask)
    if pt.is_timestamp(t) or pt.is_duration(t):
        data = values.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        if pt.is_timestamp(t):
            logical = f"datetime64[{t.unit}, {t.tz}]" if t.tz else f"datetime64[{t.unit}]"
        else:
            logical = f"timedelta64[{t.unit}]"
        return Values("time", data.astype(np.int64), mask, logical)
    _refuse(name, f"Arrow type {t} is not representable in HEP001 "
                  "(decimal, date, nested and list types are refused)")


# --- encoding for storage -------------------------------------------------------------------

def spec_for(values, name="", *, categories=None, fill=None, lossy=False):
    """The :class:`Spec` of a new column from any supported input. A fill value given for
    values that mark missing values themselves (pandas, Arrow, masked) must not be one of
    them: it would read back as missing (§6.4; plain numpy values equal to it are missing
    values, HDF5's way)."""
    v = normalize(values, name)
    if fill is not None and marks_missing(values) and v.kind in ("num", "bytes"):
        present = v.data if v.mask is None else v.data[~v.mask]
        if any(p == fill for p in present.tolist()):
            _refuse(name, f"the fill value {fill!r} is also a value of the column")
    spec = _spec(v, name, categories, fill, lossy)
    if categories is None:
        spec.arrow = v.arrow
    return spec


def _spec(v, name, categories=None, fill=None, lossy=False):
    if categories is not None:
        v = _with_categories(v, categories, name, lossy)
    if v.kind == "cat":
        return _cat_spec(v, name, fill)
    if v.kind == "str":
        if v.has_missing:         # no fill value exists for variable-length strings: codes
            return _dictionary_spec(v, name)
        return Spec(_utf8(v.data), string_dtype(), None, v.logical)
    if v.kind == "bytes":
        data = _bytes(v.data, name)
        return Spec(*_with_fill(data, v.mask, fill, name), v.logical)
    if v.kind == "time":
        unit = time_unit(v.logical)
        units = f"{TIME_UNITS[unit]} since 1970-01-01 00:00:00 UTC" \
            if v.logical.startswith("datetime") else TIME_UNITS[unit]
        data = v.data.copy()
        nat = np.iinfo(np.int64).min
        if v.mask is not None:
            data[v.mask] = nat
        return Spec(data, np.dtype(np.int64), nat, v.logical, units)
    data = v.data
    if data.dtype.kind == "b" and (v.has_missing or v.logical == "boolean"):
        # int8 with fill -1 even with nothing missing yet, as Int* columns get a fill value:
        # stored as bool, a missing value appended later had no value to be
        return Spec(_int8_booleans(v, name), np.dtype(np.int8), -1, "boolean")
    if data.dtype.kind == "f" and v.has_missing and np.isnan(data[~v.mask]).any() and not lossy:
        _refuse(name, "holds both missing values and NaN; stored with the fill value NaN "
                      "(HEP001 §6.4) they would read back alike (lossy=True accepts)")
    return Spec(*_with_fill(data, v.mask, fill, name), v.logical)


def time_unit(logical):
    """The unit of a "datetime64[unit(, tz)]" / "timedelta64[unit]" logical dtype."""
    return logical.split("[", 1)[1].split(",")[0].rstrip("]")


def _utf8(data):
    return np.array([s.encode("utf-8") for s in data.tolist()], dtype=object)


def _bytes(data, name):
    items = [bytes(b) for b in data.tolist()]
    if any(b.endswith(b"\0") for b in items):
        _refuse(name, "byte strings ending in NUL are not representable in a fixed-length "
                      "HDF5 string (its padding)")
    width = max([len(b) for b in items] + [1])
    return np.array(items, dtype=f"S{width}")


def _with_fill(data, mask, fill, name):
    """(stored values, dtype, fill): missing rows get the fill value, which is chosen
    outside the values present (§6.4) unless the caller gave one."""
    present = data if mask is None else data[~mask]
    if fill is None:
        fill = free_fill(data.dtype, present, name)
    elif mask is not None and mask.any() and np.isin(fill, present).any():
        _refuse(name, f"the fill value {fill!r} is also a value of the column")
    data = data.copy()
    if mask is not None and fill is not None:
        data[mask] = fill
    return data, data.dtype, fill


def free_fill(dtype, present, name=""):
    """A fill value no element of ``present`` equals: NaN for floats, the integer extreme
    opposite zero (or the nearest free value to it), b'' (or a free short byte string) for
    fixed strings; None (HDF5's default) for bool."""
    kind = dtype.kind
    if kind == "f":
        return dtype.type(np.nan)
    if kind == "b":
        return None
    if kind in "iu":
        info = np.iinfo(dtype)
        used = np.unique(present)
        if kind == "u":
            used = used[::-1]
        start, step = (info.min, 1) if kind == "i" else (info.max, -1)
        candidate = start
        for u in used.tolist():
            if u != candidate:
                break
            candidate += step
        if not info.min <= candidate <= info.max:
            _refuse(name, f"every {dtype} value is used: none is free to mark missing values")
        return dtype.type(candidate)
    if kind == "S":
        used = set(np.asarray(present).tolist())
        for candidate in [b""] + [bytes([i]) for i in range(1, 256)]:
            if candidate not in used and len(candidate) <= dtype.itemsize:
                return candidate
        _refuse(name, "no short byte string is free to mark missing values")
    return None


def code_dtype(n_categories):
    """The smallest signed integer type holding every code and the missing code -1."""
    return np.min_scalar_type(-max(n_categories, 1) - 1)


def _cat_spec(v, name, fill):
    cats = v.categories
    if cats.has_missing:
        _refuse(name, "categories cannot be missing")
    if cats.kind == "cat":
        _refuse(name, "categories of categories are not representable")
    codes = v.data
    if codes.dtype.kind not in "iu":
        codes = codes.astype(code_dtype(len(cats.data)))
    if fill is None:
        fill = codes.dtype.type(-1) if codes.dtype.kind == "i" else np.iinfo(codes.dtype).max
    codes = codes.copy()
    if v.mask is not None:
        codes[v.mask] = fill
    return Spec(codes, codes.dtype, fill, v.logical,
                categories=_spec(cats, f"{name} categories"),
                ordered=v.ordered)


def _dictionary_spec(v, name):
    """Strings with missing values: dictionary-encoded (a categorical column, §6.6, whose
    missing code is the fill value), restored as strings by the logical dtype."""
    present = v.data[~v.mask]
    cats = np.array(sorted(set(present.tolist())), dtype=object)
    dtype = code_dtype(len(cats))
    codes = np.full(len(v.data), -1, dtype=dtype)
    codes[~v.mask] = np.searchsorted(cats, present) if len(cats) else []
    return Spec(codes, dtype, dtype.type(-1), v.logical or "object",
                categories=Spec(_utf8(cats), string_dtype(), None))


def _with_categories(v, categories, name, lossy):
    """Values given with explicit categories: looked up by value; integer values with
    non-integer categories are codes (-1 = missing). Unknown values raise unless ``lossy``."""
    cats = normalize(categories, f"{name} categories")
    if v.kind == "cat":
        _refuse(name, "is already categorical; categories= is for plain values")
    if v.kind == "num" and v.data.dtype.kind in "iu" and cats.kind != "num":
        codes = v.data.astype(np.int64)
        bad = ((codes < -1) | (codes >= len(cats.data))) & (True if v.mask is None else ~v.mask)
        if bad.any():
            _refuse(name, f"codes {sorted(set(codes[bad].tolist()))[:5]} are not in "
                          f"-1..{len(cats.data) - 1}")
        mask = codes < 0 if v.mask is None else (codes < 0) | v.mask
        return Values("cat", codes.astype(code_dtype(len(cats.data))), mask, categories=cats)
    lookup = {c: i for i, c in enumerate(cats.data.tolist())}
    items = v.data.tolist()
    missing = np.zeros(len(items), bool) if v.mask is None else v.mask.copy()
    codes = np.full(len(items), -1, dtype=np.int64)
    for i, item in enumerate(items):
        if not missing[i]:
            code = lookup.get(item)
            if code is None:
                if not lossy:
                    _refuse(name, f"value {item!r} is not one of the categories "
                                  "(lossy=True stores it as missing)")
                missing[i] = True
            else:
                codes[i] = code
    return Values("cat", codes.astype(code_dtype(len(cats.data))), missing, categories=cats)


# --- appending to an existing column -------------------------------------------------------

def cast_to(ds, values, name, *, categories=None, categories_logical=None, lossy=False):
    """``values`` as an array of the existing column ``ds``'s stored type (for appends and
    writes), exactly; missing values become the fill value. ``categories``: the column's
    category values when it is categorical (new ones raise unless ``lossy``), of the
    logical dtype ``categories_logical``."""
    logical = _logical(ds)
    # no fill value for variable-length strings and bool (HDF5's default False is a value)
    fill = None if ds.dtype.kind in "Ob" else ds.fillvalue
    strict = marks_missing(values) and not lossy
    v = normalize(values, name)
    if not len(v.data):
        return np.zeros(0, dtype=ds.dtype)
    if v.kind == "str" and v.logical is None and v.mask is not None and v.mask.all():
        v = _missing_for(ds, logical, categories_logical, len(v.data))
    if categories is not None:
        if v.kind == "cat":
            v = _decoded(v)
        if is_string_logical(logical) and v.kind == "str":
            return v                      # dictionary-encoded strings: the caller extends
        v = _with_categories(_as_categories(v, categories_logical, name, lossy), categories,
                             name, lossy)
        out = v.data.astype(ds.dtype)
        if v.mask is not None:
            out[v.mask] = fill
        return out
    if logical == "boolean":
        return _cast_boolean(ds, v, name)
    if logical and logical.startswith(("datetime", "timedelta")):
        return _cast_time(v, logical, name, lossy)
    if ds.dtype.kind == "O":
        if v.kind != "str" or v.has_missing:
            _refuse(name, "a variable-length string column holds str values, none missing "
                          "(it has no fill value, HEP001 §6.4)")
        return _utf8(v.data)
    if ds.dtype.kind == "S":
        if v.kind != "bytes":
            _refuse(name, f"a bytes column takes bytes, not {v.kind} values")
        data = _bytes(v.data, name)
        if data.dtype.itemsize > ds.dtype.itemsize and not lossy:
            _refuse(name, f"values longer than the column's {ds.dtype.itemsize} bytes")
        return _fill_missing(data.astype(ds.dtype), v.mask, fill, name, strict)
    if v.kind != "num":
        _refuse(name, f"a {ds.dtype} column takes numbers, not {v.kind} values")
    return _fill_missing(_cast_number(v.data, ds.dtype, name, lossy, v.mask), v.mask, fill, name,
                         strict)


def _missing_for(ds, logical, categories_logical, n):
    """Untyped missing values (None, NaN: Python objects with nothing else) as missing
    values of the column's kind (``t["b"][1] = None`` on a nullable boolean column was
    refused as str values); columns of strings keep them as strings."""
    mask = np.ones(n, bool)
    times = [t for t in (logical, categories_logical)
             if (t or "").startswith(("datetime", "timedelta"))]
    if times:
        return Values("time", np.zeros(n, np.int64), mask, times[0])
    if logical == "boolean":
        return Values("num", np.zeros(n, bool), mask, "boolean")
    if ds.dtype.kind in "iufb":       # numbers, or a categorical's codes (all missing)
        return Values("num", np.zeros(n, ds.dtype), mask)
    if ds.dtype.kind == "S":
        return Values("bytes", np.array([b""] * n, dtype=object), mask)
    return Values("str", np.array([""] * n, dtype=object), mask)


def _as_categories(v, logical, name, lossy):
    """Times to look up among time categories, in the categories' unit (their int64 counts
    were compared: 5 ms matched the category 5 ns); times and other categories do not mix."""
    timed = (logical or "").startswith(("datetime", "timedelta"))
    if (v.kind == "time") != timed:
        _refuse(name, f"{v.logical or v.kind} values are not {logical or 'non-time'} categories")
    if not timed:
        return v
    return Values("time", _cast_time(v, logical, name, lossy), v.mask, logical)


def _decoded(v):
    """Categorical values (pandas Categorical, Arrow dictionary) as the category values
    their codes name, missing where they are missing (a null's index in an Arrow dictionary
    array is arbitrary: numpy's conversion gave it a category)."""
    cats = v.categories
    missing = np.zeros(len(v.data), bool) if v.mask is None else v.mask
    if len(cats.data):
        data = cats.data[np.where(missing, 0, v.data)]
    else:
        data = np.zeros(len(v.data), dtype=cats.data.dtype)
    return Values(cats.kind, data, missing if missing.any() else None, cats.logical)


def marks_missing(values):
    """Whether an input has a missing value of its own (pandas, Arrow, numpy masked arrays):
    then a value equal to the column's fill value is a value, not a missing one. Plain
    numpy arrays and lists are stored as given (a value equal to the fill value is missing,
    HEP001 §6.4: how HDF5 users mark missing values)."""
    module = type(values).__module__ or ""
    return module.startswith(("pandas", "pyarrow")) or isinstance(values, np.ma.MaskedArray)


def _fill_missing(data, mask, fill, name, strict):
    """Missing rows get the fill value. With ``strict`` (values that mark missing values
    themselves, not ``lossy``) a value equal to the fill value is refused: it would read
    back as missing (§6.4; a default fill value is chosen at creation among the values the
    column did not hold then, an append may hold it)."""
    present = data if mask is None else data[~mask]
    if fill is not None and strict and np.any(present == fill):
        _refuse(name, f"the value {np.asarray(fill).tolist()!r} is the column's fill value: "
                      "it would read back as missing (HEP001 §6.4; lossy=True stores it as "
                      "missing)")
    if mask is not None and mask.any():
        if fill is None:
            _refuse(name, "the column has no fill value to mark missing values")
        data = data.copy()
        data[mask] = fill
    return data


def _cast_number(data, dtype, name, lossy, mask=None):
    if data.dtype == dtype:
        return data
    if mask is not None:
        data = np.where(mask, data.dtype.type(0), data)
    if data.dtype.kind == "b" and dtype.kind != "b" or dtype.kind == "b" and data.dtype.kind != "b":
        if not lossy:
            _refuse(name, f"{data.dtype} values into a {dtype} column")
    with np.errstate(invalid="ignore", over="ignore"):
        out = data.astype(dtype)
        same = out.astype(data.dtype) == data
        if data.dtype.kind == "f" and dtype.kind == "f":
            same = same | np.isnan(data) | np.isinf(data)   # float rounding is not a loss
            same |= np.isclose(out.astype(np.float64), data.astype(np.float64), rtol=1e-6)
    if not lossy and not np.all(same):
        bad = data[~same][:3].tolist()
        _refuse(name, f"{bad} cannot be stored as {dtype} without loss (lossy=True casts)")
    return out


def _int8_booleans(v, name):
    """Nullable booleans as stored: int8 0/1, -1 (the fill value) where missing."""
    if v.kind != "num" or v.data.dtype.kind != "b":
        _refuse(name, "a nullable boolean column takes True, False or missing values")
    return np.where(v.mask if v.mask is not None else False, -1, v.data.astype(np.int8)).astype(np.int8)


def _cast_boolean(ds, v, name):
    """Values for a nullable boolean column: int8 0/1/-1, or bool for one stored as bool
    (purehep wrote those when nothing was missing), which has no value for missing ones."""
    data = _int8_booleans(v, name)
    if ds.dtype.kind != "b":
        return data
    if v.has_missing:
        _refuse(name, "this boolean column is stored as bool: it has no fill value to mark "
                      "missing values (HEP001 §6.4)")
    return data.astype(bool)


def _cast_time(v, logical, name, lossy):
    """Times into a datetime64/timedelta64 column, in its unit as pandas' concat converts
    them (before, the int64 count was stored as it was: with lossy=True 1 ms became 1 ns):
    a coarser unit exactly, a finer one truncated as numpy does with ``lossy`` only, none
    beyond the range of the column's unit. Datetimes and timedeltas, time-zone aware and
    naive values do not mix (aware ones are instants: any zone is converted)."""
    kind = logical.split("[")[0]
    if v.kind != "time" or v.logical.split("[")[0] != kind:
        _refuse(name, f"a {logical} column takes {kind} values")
    if ("," in v.logical) != ("," in logical):
        _refuse(name, f"{v.logical} values into a {logical} column (time-zone aware and naive "
                      "values do not mix)")
    data = v.data.copy()
    if v.mask is not None:
        data[v.mask] = np.iinfo(np.int64).min
    src, dst = time_unit(v.logical), time_unit(logical)
    given = data.view(f"{kind}[{src}]")
    try:                       # numpy >= 2.5 raises on overflow, older ones wrap
        with np.errstate(over="ignore"):
            out = given.astype(f"{kind}[{dst}]")
    except OverflowError:
        _refuse(name, f"{v.logical} values out of the {logical} column unit's range")
    changed = (out.astype(given.dtype) != given) & ~np.isnat(given)
    finer = list(TIME_UNITS).index(dst) > list(TIME_UNITS).index(src)
    if changed.any() and (finer or not lossy):
        why = "out of the column unit's range" if finer else \
            "not whole column units (lossy=True truncates)"
        _refuse(name, f"{given[changed][:3].astype(str).tolist()} into a {logical} column: {why}")
    return out.view(np.int64)


def _logical(ds):
    value = ds.attrs[LOGICAL_ATTR] if LOGICAL_ATTR in ds.attrs else None
    if isinstance(value, np.ndarray):
        value = value[()]
    return value.decode("utf-8") if isinstance(value, bytes) else value
