"""Columns out: a HEP001 table as a pandas DataFrame or a pyarrow Table, with the dtypes it
was written from (the ``pandas_dtype`` column attribute, :mod:`.convert`), missing values
(§6.4 fill values) as pandas NA / NaN / NaT / None or Arrow nulls, categoricals (§6.6) with
their categories and ``ordered``, and the ``_index`` dataset (§5.3) as the row index.
pandas and pyarrow are imported only here, when asked for."""
import re

import numpy as np

from . import convert
from ..errors import ValidationError
from ._attrs import get_text
from .anndata_layout import RANGE_INDEX, anndata_mask, categories_of


def _logical(ds):
    """The dtype to restore: ``pandas_dtype``, or for an Anndata nullable column the pandas
    dtype Anndata reads it as (a nullable-string-array: StringDtype with NaN as its missing
    value when the group's ``na-value`` is "NaN", as anndata >= 0.13 writes pandas' "str"
    columns, else pd.NA)."""
    own = get_text(ds, convert.LOGICAL_ATTR)
    if own is not None or anndata_mask(ds) is None:
        return own
    if ds.dtype.kind == "O":
        return "str" if get_text(ds.parent, "na-value") == "NaN" else "string"
    return convert.nullable_name(ds.dtype)


def pandas_string_dtype(pd, logical):
    """The pandas StringDtype of a "string" / "str" logical dtype in the storage recorded
    ("string[pyarrow]"), else (older files, Anndata's nullable strings, Arrow large_string)
    in the installed pandas' default storage (pyarrow when installed for "str"; for
    "string" python in pandas 2, pyarrow in pandas 3); pyarrow storage without pyarrow
    installed falls back to the default."""
    storage = logical.partition("[")[2].rstrip("]") or None
    na_value = np.nan if convert.string_base(logical) == "str" else pd.NA
    try:
        return pd.StringDtype(storage, na_value=na_value)
    except ImportError:
        return pd.StringDtype(na_value=na_value)


def arrow_string_type(pa, logical):
    """The Arrow type pyarrow gives str values of a logical dtype: large_string for a pandas
    StringDtype stored in pyarrow (pa.Table.from_pandas), string for object strings and
    python-stored StringDtype."""
    if convert.string_base(logical) is None:
        return pa.string()
    import pandas as pd
    return pa.large_string() if pandas_string_dtype(pd, logical).storage == "pyarrow" \
        else pa.string()


def _index_name(table, fields):
    name = get_text(table.group, "_index")
    if fields is not None or name is None or name not in table.group:
        return None
    if _logical(table._ds(name)) == RANGE_INDEX:
        return None          # labels anndata=True made up for a table without a row index
    return name


def _column_parts(table, name, rows):
    """(kind, values, missing mask, logical, categories, their logical, ordered) of one
    stored column."""
    ds = table._ds(name)
    # native order, as pandas and PyTables give users: a big-endian column (HDF5 keeps the
    # order it was written in) broke pandas' groupby / take / merge and pyarrow
    values = convert.native(table.read([name], rows)[name])
    logical = _logical(ds)
    cat_ds = categories_of(ds)
    if cat_ds is not None:
        cat_logical = _logical(cat_ds)
        categories = _decoded(convert.native(cat_ds[()]))
        missing = table.missing_mask(name, values, rows)
        holder = cat_ds if "ordered" in cat_ds.attrs else ds.parent   # HEP001 / Anndata
        ordered = bool(holder.attrs["ordered"]) if "ordered" in holder.attrs else False
        return "cat", values, missing, logical, categories, cat_logical, ordered
    missing = table.missing_mask(name, values, rows)
    return "plain", values, missing, logical, None, None, False


def _decoded(values):
    """Stored values with variable-length strings as str."""
    if values.dtype.kind == "O":
        return np.array([v.decode("utf-8") if isinstance(v, bytes) else v for v in values.tolist()],
                        dtype=object)
    return values


def to_pandas(table, rows=None, fields=None):
    import pandas as pd
    index_name = _index_name(table, fields)
    names = [n for n in (fields or table.columns) if n != index_name]
    data = {n: _pandas_of(pd, table, n, rows) for n in names}
    index = None
    if index_name is not None:
        index = pd.Index(_pandas_of(pd, table, index_name, rows),
                         name=None if index_name == "_index" else index_name)
    elif rows is not None:
        index = pd.Index(np.asarray(rows, dtype=np.int64))
    return pd.DataFrame(data, index=index, columns=names)


def _pandas_of(pd, table, name, rows):
    """Column ``name`` as pandas values: of the pandas ArrowDtype it was written from (its
    ``arrow_type``), else of its logical dtype."""
    parts = _column_parts(table, name, rows)
    ds = table._ds(name)
    arrow = get_text(ds, convert.ARROW_ATTR)
    if arrow is None:
        return _pandas_column(pd, *parts)
    import pyarrow as pa
    return pd.arrays.ArrowExtensionArray(_arrow_column(pa, *parts).cast(arrow_type(pa, arrow, ds)))


def arrow_type(pa, text, ds=None):
    """The Arrow type pyarrow prints as ``text`` (an ``arrow_type`` attribute of ``ds``): its
    aliases, and the two forms it has none for, a time-zone timestamp and a dictionary."""
    if m := re.fullmatch(r"timestamp\[(\w+), tz=(.+)\]", text):
        return pa.timestamp(m[1], m[2])
    if m := re.fullmatch(r"dictionary<values=(.+), indices=(\w+), ordered=([01])>", text):
        return pa.dictionary(arrow_type(pa, m[2], ds), arrow_type(pa, m[1], ds), m[3] == "1")
    try:
        return pa.type_for_alias(text)
    except ValueError:
        raise ValidationError(f"{convert.ARROW_ATTR} {text!r} of {getattr(ds, 'name', '?')} is "
                              f"not an Arrow type a HEP001 column stores") from None


def _pandas_column(pd, kind, values, missing, logical, categories, cat_logical, ordered):
    if kind == "cat":
        codes = np.where(missing, -1, values).astype(np.int64)
        if convert.is_string_logical(logical):
            out = np.array([None if c < 0 else categories[c] for c in codes.tolist()], dtype=object)
            if logical == "object":
                return out
            return pd.array(out, dtype=pandas_string_dtype(pd, logical))
        # the categories as a column of their own dtype (time zone, Int64, string storage)
        index = pd.Index(_pandas_column(pd, "plain", categories, np.zeros(len(categories), bool),
                                        cat_logical, None, None, False))
        return pd.Categorical.from_codes(codes, categories=index, ordered=ordered)
    if logical is None:
        if values.dtype.kind == "O" or not missing.any():
            return values
        if values.dtype.kind in "iu":
            return pd.array(np.ma.masked_array(values, missing).tolist(),
                            dtype=convert.nullable_name(values.dtype))
        if values.dtype.kind == "S":
            return np.array([None if m else v for v, m in zip(values.tolist(), missing)], dtype=object)
        return values
    if logical == "boolean":
        return pd.arrays.BooleanArray(values == 1, missing)
    if logical.startswith(("Int", "UInt")):
        return pd.arrays.IntegerArray(values, missing)
    if logical.startswith("Float"):
        return pd.arrays.FloatingArray(np.where(missing, 0, values).astype(values.dtype), missing)
    if convert.string_base(logical):
        return pd.array(np.where(missing, None, values), dtype=pandas_string_dtype(pd, logical))
    if logical.startswith("datetime") and "," in logical:
        naive = values.view("datetime64[" + convert.time_unit(logical) + "]")
        tz = logical.split(",", 1)[1].strip().rstrip("]")
        return pd.DatetimeIndex(naive).tz_localize("UTC").tz_convert(tz).array
    if logical.startswith(("datetime", "timedelta")):
        return values.view(logical)
    return values


def to_arrow(table, rows=None, fields=None):
    import pyarrow as pa
    index_name = _index_name(table, fields)
    names = [n for n in (fields or table.columns) if n != index_name]
    arrays = [_arrow_column(pa, *_column_parts(table, n, rows)) for n in names]
    return pa.table(arrays, names=names) if names else pa.table({})


def _arrow_column(pa, kind, values, missing, logical, categories, cat_logical, ordered):
    mask = missing if missing.any() else None
    if kind == "cat":
        codes = np.where(missing, 0, values)
        if convert.is_string_logical(logical):
            return pa.array([None if m else categories[c] for c, m in zip(codes.tolist(), missing)],
                            type=arrow_string_type(pa, logical))
        indices = pa.array(codes.astype(values.dtype), mask=mask)
        if categories.dtype.kind != "O":
            dictionary = _arrow_column(pa, "plain", categories, np.zeros(len(categories), bool),
                                       cat_logical, None, None, False)
        else:                           # object strings: pyarrow's inference (null when empty)
            dictionary = pa.array(categories.tolist(), type=arrow_string_type(pa, cat_logical)
                                  if convert.string_base(cat_logical) else None)
        return pa.DictionaryArray.from_arrays(indices, dictionary, ordered=ordered)
    if logical == "boolean":
        return pa.array(values == 1, mask=mask)
    if logical and logical.startswith(("datetime", "timedelta")):
        unit = convert.time_unit(logical)
        tz = logical.split(",", 1)[1].strip().rstrip("]") if "," in logical else None
        typ = pa.timestamp(unit, tz) if logical.startswith("datetime") else pa.duration(unit)
        return pa.array(np.where(missing, 0, values), type=pa.int64(), mask=mask).cast(typ)
    if values.dtype.kind == "O":
        return pa.array([None if m else v for v, m in zip(values.tolist(), missing)],
                        type=arrow_string_type(pa, logical))
    if values.dtype.kind == "S":
        return pa.array([None if m else v for v, m in zip(values.tolist(), missing)], type=pa.binary())
    if values.dtype.kind == "f" and logical is None:
        return pa.array(values)                     # NaN stays NaN
    return pa.array(values, mask=mask)
