"""Conversions between pandas objects and what pandas' HDFStore stores for them, shared by the
"fixed" and "table" formats: index kinds, fixed-length strings with an encoding and a NaN
representation, time zones, dtype names (read in pandas/io/pytables.py: _convert_index,
_unconvert_index, _convert_string_array, _unconvert_string_array, _dtype_to_kind, _set_tz).

What pandas writes and how it reads it back changed in pandas 3; the installed pandas decides,
through the switches below (each one names a behaviour, not a version, where it is used).
"""
import datetime
import inspect

import numpy as np
import pandas as pd

from ...errors import UnsupportedFeatureError

PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3

#: pandas 3 reads stored datetimes and timedeltas in the unit their ``value_type`` / dtype /
#: kind names ("datetime64[s]", "timedelta64[us]"; a bare "datetime64" or "timedelta64" is
#: nanoseconds) and writes timedelta kinds with their unit. pandas 2 reads every fixed-format
#: datetime array and table datetime column as int64 nanoseconds whatever the stored unit, and
#: writes "timedelta64" without one.
STORED_UNITS = PANDAS_3

#: pandas 3 (GH#9604) stores the missing values of a string column or index as a sentinel
#: chosen not to equal any of its strings ("nan", else "_nan_", "__nan__", ...), recorded per
#: column ("{c}_nan_rep", "index_nan_rep", a fixed index node's "nan_rep"), so that a literal
#: "nan" survives; pandas 2 stores them as the table's ``nan_rep`` ("nan") and reads every
#: "nan" back as missing.
NAN_SENTINELS = PANDAS_3

#: pandas 3 stores a CategoricalIndex (GH#33909: its codes, the categories beside them) and
#: period values (GH#41978: int64 ordinals with a "period[freq]" value_type / dtype) and reads
#: them back; pandas 2 refuses to write them and leaves stored ordinals as integers.
CATEGORICAL_INDEX_AND_PERIODS = PANDAS_3

#: pandas 3.1's HDFStore: put/append's ``dropna`` deprecated (a Pandas4Warning when given;
#: the io.hdf.dropna_table option no longer read), put without ``track_times`` warns
#: (``store[key] =``, to_hdf and the categories' meta tables pass False), writing an empty
#: table and a complib without a complevel warn, the append-to-fixed error says more,
#: overwriting a key keeps the keys nested below it (GH#17267), an iterator's start/stop are
#: slice bounds. Told by put's ``track_times`` default (pandas.api's no_default, not True).
STORE_API_3_1 = inspect.signature(pd.HDFStore.put).parameters["track_times"].default is not True

#: The ``pandas_version`` attribute pandas 2 writes on every stored object (pandas 3 none).
PANDAS_VERSION = None if PANDAS_3 else "0.15.2"


def encode_strings(values, encoding, errors, itemsize=0):
    """Object array of str -> fixed-length bytes (at least 1 and ``itemsize`` long)."""
    flat = [str(v).encode(encoding, errors) for v in np.asarray(values, object).ravel()]
    size = max([1, itemsize] + [len(b) for b in flat])
    return np.array(flat, dtype=f"S{size}").reshape(np.shape(values))


def decode_strings(data, nan_rep, encoding, errors):
    """Fixed-length bytes -> object array of str, ``nan_rep`` read as NaN (None: none is)."""
    flat = np.asarray(data).ravel()
    out = np.empty(len(flat), object)
    for i, b in enumerate(flat):
        s = b.decode(encoding, errors) if isinstance(b, bytes) else str(b)
        out[i] = np.nan if s == nan_rep else s
    return out.reshape(np.shape(data))


def make_nan_rep(values, missing, taken=()):
    """The sentinel pandas 3 stores for the missing values of string ``values`` (GH#9604):
    "nan", wrapped in underscores until it equals none of the present strings nor ``taken``
    (the strings a table column already holds)."""
    present = {v for v in np.asarray(values, object).ravel()[~np.asarray(missing).ravel()]
               if isinstance(v, str)} | set(taken)
    nan_rep = "nan"
    while nan_rep in present:
        nan_rep = f"_{nan_rep}_"
    return nan_rep


def check_nan_rep(name, values, missing, nan_rep):
    """pandas 3 refuses a present string equal to the column's sentinel (it would read back
    as missing)."""
    values, missing = np.asarray(values, object), np.asarray(missing)
    if nan_rep is not None and any(v == nan_rep for v in values[~missing].ravel()
                                   if isinstance(v, str)):
        raise ValueError(f"Cannot store the string {nan_rep!r} in column [{name}]: it "
                         "collides with the sentinel used to encode missing values on disk")


def stored_index_nan_rep(attrs, name="nan_rep"):
    """The sentinel to read a stored string index with: pandas 3 reads the persisted one
    (empty: the index had no missing value, so nothing is substituted; absent: a file from
    before sentinels, which stored "nan"); pandas 2 always reads "nan" as missing."""
    if not NAN_SENTINELS:
        return "nan"
    return attrs.get(name, "nan") or None


def datetimes(i8, value_type, tz=None):
    """Stored int64 datetimes (UTC when ``tz``) as pandas reads them back (_set_tz): an
    M8 array, or a DatetimeIndex in ``tz``; in ``value_type``'s unit with STORED_UNITS,
    otherwise (pandas 2) the integers taken as nanoseconds, whatever the unit stored."""
    unit = "ns"
    if STORED_UNITS and value_type != "datetime64":
        unit = np.datetime_data(value_type)[0]
    values = np.asarray(i8, "i8").view(f"M8[{unit}]")
    return localize(values, tz) if tz is not None else values


def timedeltas(i8, value_type):
    """Stored int64 timedeltas as pandas reads them: "timedelta64" (what pandas 2 writes) as
    nanoseconds; "timedelta64[unit]" (pandas 3) in its unit with STORED_UNITS, and left as
    int64 by pandas 2 (which does not recognise it)."""
    if value_type == "timedelta64":
        return np.asarray(i8, "m8[ns]")
    return np.asarray(i8, value_type) if STORED_UNITS else i8


def periods(i8, value_type):
    """Stored int64 ordinals of a pandas 3 PeriodArray (``value_type`` "period[freq]")."""
    return pd.arrays.PeriodArray(np.asarray(i8, "i8").ravel(), dtype=pd.PeriodDtype(
        value_type[len("period["):-1]))


def dtype_kind(dtype_name):
    """pandas' "kind" of a stored dtype name (_dtype_to_kind)."""
    for prefixes, kind in ((("string", "bytes"), "string"), (("float",), "float"),
                           (("complex",), "complex"), (("int", "uint"), "integer"),
                           (("bool",), "bool"),
                           (("category",), "category"), (("period",), "integer")):
        if dtype_name.startswith(prefixes):
            return kind
    if dtype_name.startswith("datetime64"):
        return dtype_name
    if dtype_name.startswith("timedelta"):      # pandas 2 drops the unit
        return dtype_name if STORED_UNITS else "timedelta64"
    if dtype_name in ("object", "str"):
        return dtype_name
    raise ValueError(f"cannot interpret dtype of [{dtype_name}]")


def stored_tz(tz):
    """The time zone as pandas stores it for datetime values and fixed-format indexes (its
    _get_tz, which is pandas' timezones.get_timezone, used here so that both pandas versions
    are followed): a pytz zone by name, a dateutil zone as "dateutil/" and its file, a UTC or
    fixed-offset zone as the object; a zoneinfo zone as the object with pandas 2 and by its
    key with pandas 3. pandas reads a name back as its default zone type (pytz with pandas 2),
    so the object must be kept where it keeps it. (A table's index keeps its zone object
    itself, see table._index_column.)"""
    from pandas._libs.tslibs.timezones import get_timezone
    return get_timezone(tz)


def localize(utc, tz):
    """UTC datetimes (M8 of any unit) -> DatetimeIndex in ``tz`` (pandas' _set_tz on read)."""
    return pd.DatetimeIndex(np.asarray(utc).ravel()).tz_localize("UTC").tz_convert(tz)


def index_to_stored(index, encoding, errors, nan_rep=None, taken=()):
    """(values, kind, attrs) pandas stores for a non-Multi ``index``: attrs may hold freq, tz
    and index_class (_convert_index), categories and ordered for a CategoricalIndex in a table
    (CATEGORICAL_INDEX_AND_PERIODS: its codes are stored), and for strings with NAN_SENTINELS
    the sentinel of the
    missing values ("" when there are none): ``nan_rep`` when a table already has one, else
    one avoiding ``taken`` (the strings the table holds). An object index with no value
    (empty, or all missing) is of kind "object", its values pickled (pandas' ObjectAtom);
    other non-string objects are refused."""
    attrs = {}
    dtype = index.dtype
    if isinstance(index, pd.CategoricalIndex) and CATEGORICAL_INDEX_AND_PERIODS:
        attrs.update(categories=np.asarray(index.categories).ravel(), ordered=index.ordered)
        return np.asarray(index.codes), dtype_kind(index.codes.dtype.name), attrs
    if isinstance(index, pd.DatetimeIndex):
        attrs.update(index_class="datetime", freq=index.freq)
        if index.tz is not None:
            attrs["tz"] = stored_tz(index.tz)
        return np.asarray(index.asi8), f"datetime64[{index.unit}]", attrs
    if isinstance(index, pd.TimedeltaIndex):
        attrs["freq"] = index.freq
        return np.asarray(index.asi8), dtype_kind(dtype.name), attrs
    if isinstance(index, pd.PeriodIndex):
        attrs.update(index_class="period", freq=index.freq)
        return np.asarray(index.asi8), "integer", attrs
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return np.asarray(index), dtype_kind(dtype.name), attrs
    inferred = pd.api.types.infer_dtype(index, skipna=False)
    if inferred == "string":
        values = np.asarray(index, object)
        if NAN_SENTINELS:
            missing = pd.isna(values)
            if missing.any() and nan_rep is None:
                nan_rep = make_nan_rep(values, missing, taken)
            check_nan_rep("index", values, missing, nan_rep)
            values = np.where(missing, nan_rep, values)
            attrs["nan_rep"] = nan_rep or ""
        return encode_strings(values, encoding, errors), "string", attrs
    if inferred == "floating" and dtype.kind == "f":
        return np.asarray(index), "float", attrs
    if dtype == object and pd.isna(index).all():    # empty or all missing: kind "object",
        return np.asarray(index, object), "object", attrs   # pickled as pandas does
    raise UnsupportedFeatureError(f"purehep.pandas does not write an index of {inferred} "
                                  f"values ({dtype}); pandas would pickle it")


def index_from_stored(data, kind, name, attrs, encoding, errors):
    """The pandas Index of stored ``data`` of ``kind``; ``attrs`` (freq, tz, index_class,
    nan_rep) as the fixed format keeps them on the node (GenericFixed.read_index_node)."""
    freq = attrs.get("freq")
    # pandas 3 ignores a freq of None, which old pandas wrote on every index (GH#33186)
    freq_given = "freq" in attrs and (freq is not None or not PANDAS_3)
    index_class = attrs.get("index_class", "")
    string_dtype = {}
    if kind.startswith("datetime64"):
        values = pd.DatetimeIndex(data if kind == "datetime64" else data.view(kind))
    elif kind == "timedelta64" or (STORED_UNITS and kind.startswith("timedelta64[")):
        values = pd.TimedeltaIndex(data if kind == "timedelta64" else data.view(kind))
    elif kind == "date":
        values = np.asarray([datetime.date.fromordinal(v) for v in data], dtype=object)
    elif kind in ("integer", "float"):
        values = np.asarray(data)
    elif kind == "bool":                # stored as a bitfield, read by PyTables as bool
        values = np.asarray(data).astype(bool)
    elif kind == "string":
        values = decode_strings(data, stored_index_nan_rep(attrs), encoding, errors)
        string_dtype = str_index_dtype()
    elif kind == "object":
        values = np.asarray(data[0])
    else:
        raise ValueError(f"unrecognized index type {kind}")
    if index_class == "datetime":
        index = pd.DatetimeIndex(np.asarray(values, "M8[ns]") if not isinstance(
            values, pd.DatetimeIndex) else values, freq=freq)
        if attrs.get("tz") is not None:
            index = index.tz_localize("UTC").tz_convert(attrs["tz"])
    elif index_class == "period":
        index = pd.PeriodIndex.from_ordinals(np.asarray(values, "i8"), freq=freq)
    elif freq_given:
        index = pd.TimedeltaIndex(values, freq=freq)
    elif kind in ("date", "object"):
        index = pd.Index(values, dtype=object)
    else:
        index = pd.Index(values, **string_dtype)
    index.name = name
    return index


def infers_str():
    """Whether pandas infers its "str" dtype for strings (pandas 3, or future.infer_string:
    pandas' using_string_dtype())."""
    return isinstance(pd.Index(["a"]).dtype, pd.StringDtype)


def str_index_dtype():
    """{"dtype": "str"} when pandas 3 pins a stored string index to its default string dtype
    (with future.infer_string; an all-missing index would otherwise be object), else {}."""
    if NAN_SENTINELS and infers_str():
        return {"dtype": "str"}
    return {}
