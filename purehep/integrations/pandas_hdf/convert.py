"""Conversions between pandas objects and what pandas' HDFStore stores for them, shared by the
"fixed" and "table" formats: index kinds, fixed-length strings with an encoding and a NaN
representation, time zones, dtype names (read in pandas/io/pytables.py: _convert_index,
_unconvert_index, _convert_string_array, _unconvert_string_array, _dtype_to_kind, _set_tz).
"""
import datetime

import numpy as np
import pandas as pd

from ...errors import UnsupportedFeatureError


def encode_strings(values, encoding, errors, itemsize=0):
    """Object array of str -> fixed-length bytes (at least 1 and ``itemsize`` long)."""
    flat = [str(v).encode(encoding, errors) for v in np.asarray(values, object).ravel()]
    size = max([1, itemsize] + [len(b) for b in flat])
    return np.array(flat, dtype=f"S{size}").reshape(np.shape(values))


def decode_strings(data, nan_rep, encoding, errors):
    """Fixed-length bytes -> object array of str, ``nan_rep`` (default "nan") read as NaN."""
    nan_rep = "nan" if nan_rep is None else nan_rep
    flat = np.asarray(data).ravel()
    out = np.empty(len(flat), object)
    for i, b in enumerate(flat):
        s = b.decode(encoding, errors) if isinstance(b, bytes) else str(b)
        out[i] = np.nan if s == nan_rep else s
    return out.reshape(np.shape(data))


def dtype_kind(dtype_name):
    """pandas' "kind" of a stored dtype name (_dtype_to_kind)."""
    for prefixes, kind in ((("string", "bytes"), "string"), (("float",), "float"),
                           (("complex",), "complex"), (("int", "uint"), "integer"),
                           (("timedelta",), "timedelta64"), (("bool",), "bool"),
                           (("category",), "category"), (("period",), "integer")):
        if dtype_name.startswith(prefixes):
            return kind
    if dtype_name.startswith("datetime64"):
        return dtype_name
    if dtype_name in ("object", "str"):
        return dtype_name
    raise ValueError(f"cannot interpret dtype of [{dtype_name}]")


def stored_tz(tz):
    """The time zone as pandas stores it: a zone name, or a fixed-offset datetime.timezone."""
    if isinstance(tz, datetime.timezone):
        return tz
    if getattr(tz, "zone", None) == "UTC" or getattr(tz, "key", None) == "UTC":
        return datetime.timezone.utc
    for attr in ("zone", "key"):                   # pytz, zoneinfo
        if isinstance(getattr(tz, attr, None), str):
            return getattr(tz, attr)
    raise UnsupportedFeatureError(f"purehep.pandas cannot store the time zone {tz!r}")


def localize(i8, tz):
    """int64 UTC nanoseconds -> DatetimeIndex in ``tz`` (pandas' _set_tz on read)."""
    return pd.DatetimeIndex(np.asarray(i8).ravel().view("M8[ns]")).tz_localize("UTC") \
        .tz_convert(tz)


def index_to_stored(index, encoding, errors):
    """(values, kind, attrs) pandas stores for a non-Multi ``index``: attrs may hold freq, tz
    and index_class (_convert_index)."""
    attrs = {}
    dtype = index.dtype
    if isinstance(index, pd.DatetimeIndex):
        attrs.update(index_class="datetime", freq=index.freq)
        if index.tz is not None:
            attrs["tz"] = stored_tz(index.tz)
        return np.asarray(index.asi8), f"datetime64[{index.unit}]", attrs
    if isinstance(index, pd.TimedeltaIndex):
        attrs["freq"] = index.freq
        return np.asarray(index.asi8), "timedelta64", attrs
    if isinstance(index, pd.PeriodIndex):
        attrs.update(index_class="period", freq=index.freq)
        return np.asarray(index.asi8), "integer", attrs
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return np.asarray(index), dtype_kind(dtype.name), attrs
    inferred = pd.api.types.infer_dtype(index, skipna=False)
    if inferred == "string":
        return encode_strings(np.asarray(index, object), encoding, errors), "string", attrs
    if inferred == "floating" and dtype.kind == "f":
        return np.asarray(index), "float", attrs
    raise UnsupportedFeatureError(f"purehep.pandas does not write an index of {inferred} "
                                  f"values ({dtype}); pandas would pickle it")


def index_from_stored(data, kind, name, attrs, encoding, errors, nan_rep=None):
    """The pandas Index of stored ``data`` of ``kind``; ``attrs`` (freq, tz, index_class) as
    the fixed format keeps them on the node (GenericFixed.read_index_node)."""
    freq_given = "freq" in attrs
    freq = attrs.get("freq")
    index_class = attrs.get("index_class", "")
    if kind.startswith("datetime64"):
        values = pd.DatetimeIndex(data if kind == "datetime64" else data.view(kind))
    elif kind == "timedelta64":
        values = pd.TimedeltaIndex(data)
    elif kind == "date":
        values = np.asarray([datetime.date.fromordinal(v) for v in data], dtype=object)
    elif kind in ("integer", "float", "bool"):
        values = np.asarray(data)
    elif kind == "string":
        values = decode_strings(data, nan_rep, encoding, errors)
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
        index = pd.Index(values)
    index.name = name
    return index
