"""pandas' "table" format (pandas_type "frame_table" / "series_table"): one PyTables Table
(compound rows) plus attributes describing how its columns map back to the frame.

The group's attributes: ``table_type`` (appendable_frame, appendable_series,
appendable_multiframe, appendable_multiseries), ``index_cols`` [(0, "index")],
``values_cols`` (the Table's value column names), ``non_index_axes`` [(1, column labels)],
``data_columns``, ``nan_rep`` (the string stored for missing strings; with pandas 3 only a
``nan_rep`` the caller gave, the markers ``data_col_nan_rep`` / ``mi_level_nan_rep`` saying
which columns have their own sentinel instead, see convert.NAN_SENTINELS), ``encoding``,
``errors``, ``levels`` (1, or the MultiIndex level names, stored as data columns), ``info``
(per column: index_name, freq, tz, ordered; and the columns' names/type). The Table's own
attributes: ``index_kind``; per value column ``{c}_kind`` (its frame columns), ``{c}_dtype``
and ``{c}_meta`` ("category", a string dtype, or None), ``{c}_nan_rep`` / ``index_nan_rep``
(pandas 3 sentinels). A values block (``values_block_N``)
holds several frame columns of one dtype as an array member; a data column is a scalar member
named after its frame column. Strings are fixed-length bytes in ``encoding``; datetimes,
timedeltas and zoned datetimes int64 in their unit (UTC); bools 8-bit bitfields; categoricals
their codes, the categories a series table at ``meta/{c}/meta``.
"""
import re

import numpy as np
import pandas as pd

from ...errors import UnsupportedFeatureError, ValidationError, warn
from . import pytables as pt
from . import where as where_mod
from .convert import (CATEGORICAL_INDEX_AND_PERIODS, NAN_SENTINELS, PANDAS_3, PANDAS_VERSION,
                      STORE_API_3_1, check_nan_rep, datetimes,
                      decode_strings, dtype_kind, encode_strings, index_to_stored, make_nan_rep,
                      periods, stored_index_nan_rep, stored_tz, str_index_dtype)


class _Layout:
    """The attributes of a stored table (module docstring), read once."""

    def __init__(self, group):
        self.group, self.table = group, group["table"]
        if "index_cols" not in group.attrs:
            raise pt.PandasFormatError(f"{group.name}/table is a PyTables table pandas did not "
                                       "write (no index_cols); purehep reads pandas' own")
        get = lambda name, default=None: pt.attr(group, name, default)   # noqa: E731
        self.table_type = get("table_type")
        self.index_cols = get("index_cols")
        self.values_cols = get("values_cols")
        self.non_index_axes = get("non_index_axes") or []
        self.data_columns = get("data_columns") or []
        self.info = get("info") or {}
        self.nan_rep = get("nan_rep")
        self.encoding = get("encoding") or "UTF-8"
        self.errors = get("errors", "strict")
        self.levels = get("levels") or []
        self.col_nan_reps = NAN_SENTINELS and bool(get("data_col_nan_rep", False))
        self.level_nan_reps = NAN_SENTINELS and bool(get("mi_level_nan_rep", False))
        self.tattr = lambda name, default=None: pt.attr(self.table, name, default)
        self._meta = {}

    def uses_col_nan_rep(self, cname):
        """Whether the value column ``cname`` has its own sentinel (NAN_SENTINELS): every
        string column of a table written without a ``nan_rep`` (marked data_col_nan_rep), and
        the MultiIndex levels whatever the ``nan_rep`` (marked mi_level_nan_rep)."""
        levels = self.levels if isinstance(self.levels, list) else []
        return self.col_nan_reps or (self.level_nan_reps and cname in levels)

    def nan_rep_of(self, cname):
        """The string read as missing in value column ``cname``: its own sentinel (None: it
        had no missing value, nothing is substituted), else the table's ``nan_rep``."""
        if self.uses_col_nan_rep(cname):
            return self.tattr(f"{cname}_nan_rep")
        return "nan" if self.nan_rep is None else self.nan_rep

    def categories(self, cname):
        """The categories of a categorical column (its meta series table), or None."""
        if cname not in self._meta:
            path = f"meta/{cname}/meta"
            self._meta[cname] = read(self.group[path]) if path in self.group else None
        return self._meta[cname]

    def queryable(self, name):
        """(kind, meta, categories, encoding, ordered) of the index or a data column, else
        None."""
        if name in [c for _, c in self.index_cols]:
            kind = self.tattr(f"{name}_kind")
        elif name in self.data_columns and name in self.values_cols:
            kind = dtype_kind(self.tattr(f"{name}_dtype"))
        else:
            return None
        meta = self.tattr(f"{name}_meta")      # a categorical index has one too (pandas 3)
        cats = self.categories(name) if meta == "category" else None
        return (kind, meta, None if cats is None else np.asarray(cats), self.encoding,
                self.info.get(name, {}).get("ordered"))


def _convert_index(layout, cname, values):
    """The Index of the stored index column (pandas' IndexCol.convert). pandas 3 reads
    timedelta kinds as a TimedeltaIndex (pandas 2 leaves the integers, a PeriodIndex with a
    freq) and a categorical index's codes (``{c}_meta`` "category") as a CategoricalIndex."""
    kind = layout.tattr(f"{cname}_kind")
    info = layout.info.get(cname, {})
    name, freq, tz = info.get("index_name"), info.get("freq"), info.get("tz")
    kwargs = {"name": name}
    if CATEGORICAL_INDEX_AND_PERIODS and (layout.tattr(f"{cname}_meta") == "category"
                     or f"meta/{cname}/meta" in layout.group):
        return pd.CategoricalIndex(_categorical(layout, cname, values,
                                                bool(info.get("ordered"))), name=name)
    if kind == "datetime64":
        values = np.asarray(values, "M8[ns]")
    elif kind.startswith("datetime64"):
        values = np.asarray(values, dtype=kind)
    elif PANDAS_3 and kind.startswith("timedelta64"):
        values = np.asarray(values, "m8[ns]" if kind == "timedelta64" else kind)
    elif kind == "bool":                # a bitfield column, read by PyTables as bool
        values = np.asarray(values).astype(bool)
    elif kind == "string":
        nan_rep = {"nan_rep": layout.tattr(f"{cname}_nan_rep")} \
            if f"{cname}_nan_rep" in layout.table.attrs else {}
        values = decode_strings(values, stored_index_nan_rep(nan_rep), layout.encoding,
                                layout.errors)
        kwargs.update(str_index_dtype())
    if freq is not None:
        kwargs["freq"] = freq
    if values.dtype.kind == "M":
        factory = pd.DatetimeIndex
    elif values.dtype.kind == "m":
        factory = pd.TimedeltaIndex
    elif values.dtype == np.int64 and freq is not None:
        def factory(x, **kw):
            return pd.PeriodIndex.from_ordinals(x, freq=kw.get("freq")).rename(kw["name"])
    else:
        factory = pd.Index
    try:
        index = factory(values, **kwargs)
    except ValueError:
        kwargs.pop("freq", None)
        index = factory(values, **kwargs)
    if tz is not None:
        index = pd.DatetimeIndex(index, name=index.name).tz_localize("UTC").tz_convert(tz)
    return index


def _convert_values(layout, cname, values):
    """The column values of one stored value column (pandas' DataCol.convert)."""
    dtype = layout.tattr(f"{cname}_dtype")
    kind = dtype_kind(dtype)
    meta = layout.tattr(f"{cname}_meta")
    info = layout.info.get(cname, {})
    if dtype.startswith("datetime64"):
        return datetimes(values, dtype, info.get("tz"))
    if dtype == "timedelta64":
        return np.asarray(values, "m8[ns]")
    if CATEGORICAL_INDEX_AND_PERIODS and dtype.startswith("period"):
        return periods(values, dtype)
    if meta == "category":
        return _categorical(layout, cname, values, info.get("ordered"))
    try:
        converted = values.astype(dtype, copy=False)
    except TypeError:
        converted = values.astype("O", copy=False)
    if kind == "string":
        converted = decode_strings(converted, layout.nan_rep_of(cname), layout.encoding,
                                   layout.errors)
    return converted


def _categorical(layout, cname, codes, ordered):
    """The Categorical of stored ``codes`` and the column's meta categories. A category read
    back as missing (it was the ``nan_rep`` string) is dropped: pandas 3 makes its codes -1;
    pandas 2 shifts every code above a missing category down by one, whatever it was."""
    categories = layout.categories(cname)
    codes = np.array(codes).ravel()
    if categories is None:
        categories = pd.Index([], dtype=np.float64)
    else:
        missing = np.asarray(pd.isna(categories))
        if missing.any():
            categories = categories[~missing]
            if PANDAS_3:
                remap = np.where(missing, -1, np.cumsum(~missing) - 1).astype(codes.dtype)
                codes = np.where(codes < 0, codes, remap[codes])
            else:
                codes[codes != -1] -= missing.astype(int).cumsum()
    return pd.Categorical.from_codes(codes, categories=categories, ordered=ordered,
                                     validate=False)


def row_range(nrows, start, stop):
    """(first, end) of rows ``start:stop`` of ``nrows``, negative counting from the end and
    clamped, as PyTables' Selection and remove_rows take them."""
    r = range(nrows)[slice(start, stop)]
    return r.start, max(r.start, r.stop)


def _matches(layout, where, start, stop):
    """(the row numbers ``start:stop`` match ``where``, rows read) of the table."""
    first, end = row_range(layout.table.shape[0], start, stop)
    rows = pt.read(layout.table, first, end)
    if where is None:
        return np.arange(first, end), rows
    tree = where_mod.parse(where)
    mask = where_mod.evaluate(tree, lambda name: rows[name], layout.queryable)
    mask = np.asarray(mask, bool).reshape(len(rows))
    return np.flatnonzero(mask) + first, rows[mask]


def coordinates(group, where=None, start=None, stop=None):
    """The row numbers of the table ``start:stop`` matching ``where`` (pandas'
    read_coordinates / select_as_coordinates)."""
    return _matches(_Layout(group), where, start, stop)[0]


def _select_rows(layout, where, start, stop, rows=None):
    """The stored rows ``start:stop`` matching ``where``, or those numbered ``rows``."""
    if rows is None:
        return _matches(layout, where, start, stop)[1]
    rows = np.asarray(rows, np.int64)
    if not len(rows):
        return pt.read(layout.table, 0, 0)
    first = int(rows.min())
    return pt.read(layout.table, first, int(rows.max()) + 1)[rows - first]


def _frame_of(layout, rows):
    index = None
    for _, cname in layout.index_cols:
        index = _convert_index(layout, cname, rows[cname])
    axis_info = layout.info.get(layout.non_index_axes[0][0], {}) if layout.non_index_axes \
        else {}
    frames = []
    for cname in layout.values_cols:
        labels = layout.tattr(f"{cname}_kind")
        values = _convert_values(layout, cname, rows[cname])
        cols = pd.MultiIndex.from_tuples(labels) if axis_info.get("type") == "MultiIndex" \
            else pd.Index(labels)
        if axis_info.get("names") is not None:
            cols = cols.set_names(axis_info["names"])
        index_ = pd.Index(index, name=getattr(index, "name", None))
        if isinstance(values, np.ndarray):
            values = values.reshape(-1, 1) if values.ndim == 1 else values
            df = pd.DataFrame(values, columns=cols, index=index_, copy=False)
        else:                            # zoned datetimes (an Index) or a Categorical
            df = pd.DataFrame({0: values}, index=index_)
            df.columns = cols
        for column in cols:
            if layout.tattr(f"{column}_meta") in ("str", "string"):
                df[column] = df[column].astype(layout.tattr(f"{column}_meta"))
        frames.append(df)
    return frames[0] if len(frames) == 1 else pd.concat(frames, axis=1)


def _reindex_columns(df, labels, columns):
    """pandas' _reindex_axis on the columns: stored order, limited to ``columns``."""
    ax, labels = df.columns, pd.Index(labels)
    other = None if columns is None else pd.Index(columns)
    if (other is None or labels.equals(other)) and labels.equals(ax):
        return df
    labels = pd.Index(labels.unique())
    if other is not None:
        labels = pd.Index(other.unique()).intersection(labels, sort=False)
    return df if labels.equals(ax) else df.loc[:, labels]


def read(group, where=None, start=None, stop=None, columns=None, rows=None):
    """The DataFrame or Series of a table-format group (optionally rows ``start:stop``
    matching ``where``, or the rows numbered ``rows``, with only ``columns``)."""
    layout = _Layout(group)
    multi = isinstance(layout.levels, list)
    if columns is not None:
        columns = list(columns)
        if multi:
            for name in layout.levels:
                if name not in columns:
                    columns.insert(0, name)
    df = _frame_of(layout, _select_rows(layout, where, start, stop, rows))
    for _axis, labels in layout.non_index_axes:
        df = _reindex_columns(df, labels, columns)
    if layout.table_type in ("appendable_series", "appendable_multiseries"):
        if multi:
            df = df.set_index(layout.levels)
        s = df.iloc[:, 0]
        if s.name == "values":
            s.name = None
        return s
    if layout.table_type == "appendable_multiframe":
        df = df.set_index(layout.levels)
        df.index = df.index.set_names([None if re.search(r"^level_\d+$", n) else n
                                       for n in df.index.names])
    return df


# -- writing -----------------------------------------------------------------------------------

class _Column:
    """One stored value column: its Table member, frame labels, stored data and attributes."""

    def __init__(self, cname, labels, data, dtype_name, meta=None, info=None, categories=None,
                 nan_rep=None):
        self.cname, self.labels, self.data = cname, labels, data
        self.dtype_name, self.meta, self.info = dtype_name, meta, info or {}
        self.categories, self.nan_rep = categories, nan_rep


class _NanRep:
    """How a string column stores its missing values: as the table's ``shared`` nan_rep, or
    (``own``, NAN_SENTINELS) as its own sentinel: ``stored``, the one an appended-to column
    already has, else one made for the values that avoids ``taken()``, the strings the column
    holds (pandas 3's _make_data_col_nan_rep)."""

    def __init__(self, shared, own=False, stored=None, taken=tuple):
        self.shared, self.own, self.stored, self.taken = shared, own, stored, taken

    def choose(self, name, values, missing):
        """(string stored for the missing values, the column's own sentinel or None)."""
        if not self.own:
            return self.shared, None
        nan_rep = self.stored
        if missing.any() and nan_rep is None:
            nan_rep = make_nan_rep(values, missing, self.taken())
        check_nan_rep(name, values, missing, nan_rep)
        return (self.shared if nan_rep is None else nan_rep), nan_rep


def _string_data(name, values, nan_rep, encoding, errors, min_itemsize, existing=0):
    """(fixed-length bytes, the column's own sentinel or None) of object values (str or
    missing); the missing stored as ``nan_rep`` (a _NanRep) decides."""
    values = np.asarray(values, object)
    missing = pd.isna(values)
    data = values.copy()
    data[missing], own = nan_rep.choose(name, values, missing)
    for v in data.ravel():
        if not isinstance(v, str):
            raise TypeError(f"Cannot serialize the column [{name}] because its data contents "
                            f"are not [string] but [{type(v).__name__}] object dtype")
    if isinstance(min_itemsize, dict):
        min_itemsize = int(min_itemsize.get(name) or min_itemsize.get("values") or 0)
    out = encode_strings(data, encoding, errors, max(min_itemsize or 0, existing))
    if existing and out.dtype.itemsize > existing:
        raise ValueError(f"Trying to store a string with len [{out.dtype.itemsize}] in "
                         f"[{name}] column but this column has a limit of [{existing}]!")
    return out, own


def _column(cname, frame, nan_rep, encoding, errors, min_itemsize, existing=None):
    """The _Column of ``frame``'s columns (all of one dtype) stored as ``cname``; strings'
    missing values stored as ``nan_rep`` (a _NanRep) says. ``two_d``: the values are held in
    a 2-D block (numpy, zoned datetimes, periods), the ones pandas' write_data tests for
    ``dropna`` (a categorical's or string dtype's 1-D block gives it no row mask)."""
    col = _make_column(cname, frame, nan_rep, encoding, errors, min_itemsize, existing)
    col.two_d = not isinstance(frame.dtypes.iloc[0], (pd.CategoricalDtype, pd.StringDtype))
    return col


def _make_column(cname, frame, nan_rep, encoding, errors, min_itemsize, existing):
    labels = list(frame.columns)
    dtype = frame.dtypes.iloc[0]
    first = frame.iloc[:, 0]
    size = existing.itemsize if existing is not None and existing.kind == "S" else 0
    if isinstance(dtype, pd.CategoricalDtype):
        return _Column(cname, labels, np.asarray(first.cat.codes), first.cat.codes.dtype.name,
                       "category", {"ordered": dtype.ordered},
                       np.asarray(dtype.categories).ravel())
    if isinstance(dtype, pd.DatetimeTZDtype):
        return _Column(cname, labels, np.asarray(first.array.asi8), f"datetime64[{dtype.unit}]",
                       info={"tz": stored_tz(dtype.tz)})
    if isinstance(dtype, pd.PeriodDtype) and CATEGORICAL_INDEX_AND_PERIODS:
        return _Column(cname, labels, np.asarray(first.array.asi8), str(dtype))
    if isinstance(dtype, pd.StringDtype):
        data, own = _string_data(cname, frame.to_numpy(object), nan_rep, encoding, errors,
                                 min_itemsize, size)
        return _Column(cname, labels, data, data.dtype.name, str(dtype), nan_rep=own)
    values = frame.to_numpy()
    if dtype.kind == "O":
        values, own = _string_data(cname, values, nan_rep, encoding, errors, min_itemsize,
                                   size)
        return _Column(cname, labels, values, values.dtype.name, nan_rep=own)
    if dtype.kind in "mM":
        return _Column(cname, labels, values.view("i8"), dtype.name)
    if dtype.kind not in "iufcb":
        raise UnsupportedFeatureError(f"purehep.pandas does not write {dtype} columns")
    return _Column(cname, labels, values, values.dtype.name)


def _groups_by_dtype(frame, names):
    """Runs of ``names`` sharing a consolidatable dtype (extension dtypes alone)."""
    groups = {}
    for name in names:
        dtype = frame[name].dtype
        key = dtype.name if isinstance(dtype, np.dtype) else ("ext", name)
        groups.setdefault(key, []).append(name)
    return list(groups.values())


def _prepare(obj):
    """(frame, pandas_type, table_type, levels, forced data columns) of a Series or frame."""
    if isinstance(obj, pd.Series):
        name = obj.name or "values"         # pandas' AppendableSeriesTable: 0 and "" too
        multi = obj.index.nlevels > 1
        frame = obj.to_frame(name)
        kind, ttype = "series_table", "appendable_multiseries" if multi else "appendable_series"
    else:
        frame, multi = obj, obj.index.nlevels > 1
        kind, ttype = "frame_table", "appendable_multiframe" if multi else "appendable_frame"
    levels = 1
    if multi:
        levels = [n if n is not None else f"level_{i}" for i, n in enumerate(frame.index.names)]
        frame = frame.reset_index()
    forced = list(frame.columns) if isinstance(obj, pd.Series) else []
    return frame, kind, ttype, levels, forced


def _layout_columns(frame, data_columns, min_itemsize, levels):
    """The data columns pandas makes of ``data_columns``, ``min_itemsize`` keys and
    MultiIndex ``levels``, in pandas' order (AppendableMultiFrameTable.write,
    validate_data_columns): the given ones (True: the frame's columns before its MultiIndex
    became the ``levels`` columns), each level not among them inserted in front, then the
    ``min_itemsize`` keys."""
    labels = list(frame.columns)
    levels_ = levels if isinstance(levels, list) else []
    if data_columns is True:
        data_columns = [c for c in labels if c not in levels_]
    data_columns = list(data_columns or [])
    for n in levels_:
        if n not in data_columns:
            data_columns.insert(0, n)
    if isinstance(min_itemsize, dict):
        data_columns += [k for k in min_itemsize if k != "values" and k not in data_columns]
    return [c for c in data_columns if c in labels]


def _new_columns(frame, data_columns, nan_rep, levels, encoding, errors, min_itemsize):
    """The _Columns of a new table. With NAN_SENTINELS a string column has its own sentinel
    when no ``nan_rep`` was given, and a MultiIndex level always; otherwise missing strings
    are stored as ``nan_rep`` ("nan" by default). Beside data columns, the values blocks are
    made of the other columns as pandas' _get_blocks_and_items takes them: Index.difference,
    so sorted when they sort."""
    levels = levels if isinstance(levels, list) else []

    def rep(name):
        return _NanRep("nan" if nan_rep is None else nan_rep,
                       own=NAN_SENTINELS and (nan_rep is None or name in levels))
    rest = list(frame.columns)
    if data_columns:
        rest = list(pd.Index(rest).difference(pd.Index(data_columns)))
    cols = [_column(f"values_block_{i}", frame[names], rep(None), encoding, errors,
                    min_itemsize) for i, names in enumerate(_groups_by_dtype(frame, rest))]
    for c in data_columns:
        if not isinstance(c, str):
            raise ValueError("cannot have non-object label DataIndexableCol")
        cols.append(_column(c, frame[[c]], rep(c), encoding, errors, min_itemsize))
    return cols


def _index_column(index, encoding, errors, min_itemsize, existing=0, nan_rep=None, taken=()):
    """(stored values, kind, info entry, attrs) of the table's index column; ``nan_rep`` and
    ``taken`` as for index_to_stored."""
    values, kind, attrs = index_to_stored(index, encoding, errors, nan_rep, taken)
    if kind == "object":
        raise TypeError("an index of pickled objects cannot be a table column (pandas: "
                        "'Passing an incorrect value to a table column')")
    if kind == "string":
        floor = min_itemsize.get("index") if isinstance(min_itemsize, dict) else min_itemsize
        want = max(existing, int(floor or 0))
        if existing and values.dtype.itemsize > existing:
            raise ValueError(f"Trying to store a string with len [{values.dtype.itemsize}] in "
                             f"[index] column but this column has a limit of [{existing}]!")
        values = values.astype(f"S{max(want, values.dtype.itemsize)}")
    info = {"freq": attrs["freq"]} if attrs.get("freq") is not None else {}
    if attrs.get("tz") is not None:     # pandas' IndexCol keeps the zone object (no _get_tz)
        info["tz"] = index.tz
    if index.name is not None:
        info["index_name"] = index.name
    if "ordered" in attrs:
        info["ordered"] = attrs["ordered"]
    return values, kind, info, attrs


def _rows(index_values, columns, data_columns, dropna=False):
    """(Table fields, rows): a values block holds its columns as an array member, a data
    column is scalar, except a complex one, which pandas' _get_atom gives a shape (1,).
    ``dropna``: without the rows missing in every value column of numpy values (pandas'
    write_data, which tests the stored values: a float or complex NaN counts, a NaT's
    integer and a string's ``nan_rep`` do not; categorical and string-dtype columns are not
    tested)."""
    fields = [("index", index_values.dtype, None)]
    for col in columns:
        scalar = col.cname in data_columns and col.data.dtype.kind != "c"
        shape = None if scalar else (col.data.shape[1] if col.data.ndim > 1 else 1,)
        fields.append((col.cname, col.data.dtype, shape))
    rows = np.empty(len(index_values), pt.table_dtype(fields))
    rows["index"] = index_values
    for col in columns:
        data = col.data.view("u1") if col.data.dtype.kind == "b" else col.data
        rows[col.cname] = data.reshape(rows[col.cname].shape)
    masks = [np.asarray(pd.isna(col.data)).reshape(len(rows), -1).all(axis=1)
             for col in columns if col.two_d] if dropna else []
    if masks:
        rows = rows[~np.logical_and.reduce(masks)]
    return fields, rows


def write(group, obj, encoding="UTF-8", errors="strict", filters=None, data_columns=None,
          min_itemsize=None, nan_rep=None, expectedrows=None, chunksize=None, dropna=False,
          track_times=True, meta_filters=None):
    """Store (or, when ``group`` already holds a table, append) ``obj`` as pandas'
    put/append(format="table"): a new table chunked for ``expectedrows`` (pandas' default:
    its rows, at least 10000), the rows written ``chunksize`` at a time, without the rows
    missing in every value column with ``dropna``. The categories' meta tables are written
    with ``meta_filters``, the store's (pandas puts them through the store, so a complib
    given for the table is not theirs)."""
    frame, kind, ttype, levels, forced = _prepare(obj)
    if "table" in group:
        return _append(group, frame, min_itemsize, chunksize, dropna)
    if not NAN_SENTINELS and nan_rep is None:
        nan_rep = "nan"
    dcs = _layout_columns(frame, forced or data_columns, min_itemsize, levels)
    columns = _new_columns(frame, dcs, nan_rep, levels, encoding, errors, min_itemsize)
    index_values, index_kind, index_info, index_attrs = _index_column(
        frame.index, encoding, errors, min_itemsize)
    fields, rows = _rows(index_values, columns, dcs, dropna)
    info = {1: {"names": list(frame.columns.names), "type": type(frame.columns).__name__},
            "index": index_info}
    info.update({c.cname: c.info for c in columns})
    attrs = [("pandas_type", kind), ("pandas_version", PANDAS_VERSION), ("table_type", ttype),
             ("index_cols", [(0, "index")]), ("values_cols", [c.cname for c in columns]),
             ("non_index_axes", [(1, list(frame.columns))]), ("data_columns", dcs),
             ("nan_rep", nan_rep), ("encoding", encoding), ("errors", errors),
             ("levels", levels)]
    if NAN_SENTINELS:
        attrs += [("mi_level_nan_rep", isinstance(levels, list)),
                  ("data_col_nan_rep", nan_rep is None)]
    for name, value in attrs + [("info", info)]:
        if name != "pandas_version" or value is not None:
            pt.set_attr(group, name, value)
    if expectedrows is None:
        expectedrows = max(len(frame), 10000)
    table = pt.create_table(group, "table", fields, filters, expectedrows, track_times)
    pt.set_attr(table, "index_kind", index_kind)
    if "nan_rep" in index_attrs:
        pt.set_attr(table, "index_nan_rep", index_attrs["nan_rep"])
    if "categories" in index_attrs:
        pt.set_attr(table, "index_meta", "category")
        _write_categories(group, "index", index_attrs["categories"], encoding, errors,
                          meta_filters, nan_rep)
    for col in columns:
        pt.set_attr(table, f"{col.cname}_kind", col.labels)
        pt.set_attr(table, f"{col.cname}_meta", col.meta)
        pt.set_attr(table, f"{col.cname}_dtype", col.dtype_name)
        if col.nan_rep is not None:
            pt.set_attr(table, f"{col.cname}_nan_rep", col.nan_rep)
        if col.meta == "category":
            _write_categories(group, col.cname, col.categories, encoding, errors,
                              meta_filters, nan_rep)
    pt.append_rows(table, rows, chunksize)


def _write_categories(group, cname, categories, encoding, errors, filters, nan_rep):
    """The categories of column (or, pandas 3, index) ``cname`` as the series table
    ``meta/{cname}/meta`` (pandas' write_metadata: a put, with track_times=False in pandas
    3.1), when there are any."""
    if not len(categories):
        return
    root = group["meta"] if "meta" in group else pt.create_group(group, "meta")
    meta = pt.create_group(pt.create_group(root, cname), "meta")
    write(meta, pd.Series(categories), encoding, errors, filters, nan_rep=nan_rep,
          track_times=not STORE_API_3_1)


def _append(group, frame, min_itemsize, chunksize, dropna):
    """Add ``frame``'s rows to the stored table, in its layout (pandas' append checks)."""
    layout = _Layout(group)
    labels = layout.non_index_axes[0][1]
    if sorted(map(str, frame.columns)) != sorted(map(str, labels)):
        raise ValueError("appended items do not match existing items in table!")
    frame = frame[labels]
    table = layout.table
    columns = []
    for cname in layout.values_cols:
        existing = table.dtype[cname].base
        rep = _NanRep(layout.nan_rep, layout.uses_col_nan_rep(cname),
                      layout.tattr(f"{cname}_nan_rep"),
                      lambda c=cname: _stored_strings(layout, c))
        col = _column(cname, frame[layout.tattr(f"{cname}_kind")], rep,
                      layout.encoding, layout.errors, min_itemsize, existing)
        if col.dtype_name != layout.tattr(f"{cname}_dtype") and existing.kind != "S":
            raise ValueError("appended items dtype do not match existing items dtype in "
                             "table!")
        if col.meta == "category":
            _check_categories(layout, cname, col.categories)
        columns.append(col)
    existing_index = table.dtype["index"]
    index_nan_rep = _appended_index_nan_rep(layout)
    index_values, index_kind, index_info, index_attrs = _index_column(
        frame.index, layout.encoding, layout.errors, min_itemsize,
        existing_index.itemsize if existing_index.kind == "S" else 0, index_nan_rep,
        _stored_strings(layout, "index") if index_nan_rep is None and layout.tattr(
            "index_kind") == "string" else ())
    if index_kind != layout.tattr("index_kind"):
        raise TypeError(f"incompatible kind in col [{layout.tattr('index_kind')} - "
                        f"{index_kind}]")
    if "categories" in index_attrs:
        _check_categories(layout, "index", index_attrs["categories"])
    info = dict(layout.info)
    old = info.get("index", {})
    for key in ("freq", "index_name"):
        if key in old and old[key] != index_info.get(key):
            from pandas.errors import AttributeConflictWarning
            warn(f"the [{key}] attribute of the existing index is [{old[key]}] which conflicts "
                 f"with the new [{index_info.get(key)}], resetting the attribute to None",
                 AttributeConflictWarning)    # (pandas' class and words)
            old = dict(old)
            old[key] = None
    info["index"] = old
    pt.set_attr(group, "info", info)
    if "nan_rep" in index_attrs:
        pt.set_attr(table, "index_nan_rep", index_attrs["nan_rep"])
    for col in columns:
        if col.nan_rep is not None:
            pt.set_attr(table, f"{col.cname}_nan_rep", col.nan_rep)
    _, rows = _rows(index_values, columns, layout.data_columns, dropna)
    pt.append_rows(table, rows, chunksize)


def _check_categories(layout, cname, categories):
    """pandas' validate_metadata: appended categoricals keep the stored categories."""
    stored = layout.categories(cname)
    if stored is not None and not np.array_equal(categories, np.asarray(stored)):
        raise ValueError("cannot append a categorical with different categories to the "
                         "existing")


def _stored_strings(layout, cname):
    """The strings the table's column ``cname`` holds (a new sentinel must avoid them)."""
    stored = pt.read(layout.table)[cname]
    return set(decode_strings(stored, None, layout.encoding, layout.errors).ravel())


def _appended_index_nan_rep(layout):
    """The sentinel an append keeps for a string index (NAN_SENTINELS): the stored one; for a
    table from before sentinels, "nan" only if the index holds a "nan" (else there is none to
    keep, as pandas 3 decides)."""
    if not NAN_SENTINELS or layout.tattr("index_kind") != "string":
        return None
    if "index_nan_rep" in layout.table.attrs:
        return layout.tattr("index_nan_rep") or None
    return "nan" if (pt.read(layout.table)["index"] == b"nan").any() else None


# -- single columns and deleting rows -----------------------------------------------------------

def read_column(group, column, start=None, stop=None):
    """The Series of the index or of one data column, rows ``start:stop`` (pandas'
    read_column: named ``column``, of the dtype its ``{column}_meta`` names); a values block's
    column raises ValueError, any other name KeyError, with pandas' words."""
    layout = _Layout(group)
    if column in [c for _, c in layout.index_cols]:
        values = _convert_index(layout, column, pt.read(layout.table, start, stop)[column])
    elif column in layout.values_cols:
        if column not in layout.data_columns:
            raise ValueError(f"column [{column}] can not be extracted individually; it is "
                             "not data indexable")
        values = _convert_values(layout, column, pt.read(layout.table, start, stop)[column])
        if isinstance(values, np.ndarray) and values.ndim > 1:
            values = values.reshape(len(values))
    else:
        raise KeyError(f"column [{column}] not found in the table")
    return pd.Series(values, name=column, copy=False, dtype=layout.tattr(f"{column}_meta"))


def delete(group, where=None, start=None, stop=None):
    """Remove the rows ``start:stop`` matching ``where`` (all of them without one) from the
    table, as pandas' AppendableTable.delete through PyTables' remove_rows; the number
    removed. Without ``where``, a ``stop`` before ``start`` (once both are counted from the
    start and clamped) raises ValidationError, where PyTables fails in libhdf5."""
    layout = _Layout(group)
    if where is None or (isinstance(where, (list, tuple)) and not where):
        r = range(layout.table.shape[0])[slice(start, stop)]
        if r.stop < r.start:
            raise ValidationError(f"{group.name}/table: cannot remove rows {start}:{stop} "
                                  f"(row {r.stop} is before row {r.start})")
        rows = np.arange(r.start, r.stop)
    else:
        rows = _matches(layout, where, start, stop)[0]
    return pt.remove_rows(layout.table, rows)
