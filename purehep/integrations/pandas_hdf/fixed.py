"""pandas' "fixed" format (pandas_type "frame" / "series"): one PyTables array per index and
per block of same-typed columns, written once and read whole (or by row range).

A frame group holds ``axis0`` (the columns), ``axis1`` (the index) and ``block{i}_items`` /
``block{i}_values`` (values stored transposed: rows x columns); a series holds ``index`` and
``values``. Each index is "regular" (one array with kind/name/freq/tz/index_class attributes)
or "multi" (``{key}_level{i}`` arrays and ``{key}_label{i}`` codes). Value arrays carry
``value_type`` for datetimes/timedeltas, ``tz`` for zoned datetimes, ``shape`` for empty ones;
object (string) blocks are a VLArray holding the pickled numpy array (see ``pickles``).
"""
import numpy as np
import pandas as pd

from ...errors import UnsupportedFeatureError
from . import pytables as pt
from .convert import (CATEGORICAL_INDEX_AND_PERIODS, PANDAS_3, PANDAS_VERSION, datetimes,
                      dtype_kind, index_from_stored, index_to_stored, infers_str, periods,
                      stored_tz, timedeltas)
from .pickles import loads


# -- reading -----------------------------------------------------------------------------------

def _read_array(group, key, start=None, stop=None):
    """The values of array node ``key`` as pandas' GenericFixed.read_array gives them."""
    node = group[key]
    transposed = pt.attr(node, "transposed", False)
    if pt.attr(node, "CLASS") == "VLARRAY":
        ret = loads(node[0].tobytes())[start:stop]
        value_type = pt.attr(node, "value_type")
        if value_type is not None:
            ret = pd.array(ret, dtype=value_type)
    else:
        value_type = pt.attr(node, "value_type")
        shape = pt.attr(node, "shape")
        if shape is not None:
            ret = np.empty(shape, dtype=value_type)
        else:
            ret = pt.read(node, start, stop)
            if pt.is_bitfield(node):
                ret = ret.astype(bool)
        if value_type and value_type.startswith("datetime64"):
            ret = datetimes(ret, value_type, pt.attr(node, "tz"))
        elif value_type and value_type.startswith("timedelta64"):
            ret = timedeltas(ret, value_type)
        elif CATEGORICAL_INDEX_AND_PERIODS and value_type and value_type.startswith("period"):
            ret = periods(ret, value_type)          # pandas 2 leaves the ordinals
    return ret.T if transposed else ret


def _read_index_node(node, encoding, errors, start=None, stop=None):
    """The Index stored in one array node (pandas' read_index_node); pandas 3 stores a
    CategoricalIndex as its codes (kind "category", ``ordered``) and the categories as the
    index ``{key}_categories`` beside it (pandas 2 refuses to read it)."""
    if pt.attr(node, "CLASS") == "VLARRAY":
        data = [loads(node[0].tobytes())][start:stop]
    else:
        data = pt.read(node, start, stop)
    shape = pt.attr(node, "shape")
    if shape is not None and np.prod(shape) == 0:   # an empty index: a dummy element stored
        data = np.empty(shape, dtype=pt.attr(node, "value_type"))
    name = pt.attr(node, "name")
    if CATEGORICAL_INDEX_AND_PERIODS and pt.attr(node, "kind") == "category":
        group, key = node.parent, node.name.rsplit("/", 1)[1]
        categories = _read_index(group, f"{key}_categories", encoding, errors)
        return pd.CategoricalIndex(pd.Categorical.from_codes(
            data, categories=categories, ordered=bool(pt.attr(node, "ordered", False)),
            validate=False), name=name)
    attrs = {k: pt.attr(node, k) for k in ("freq", "tz", "index_class", "nan_rep")
             if k in node.attrs}
    return index_from_stored(data, pt.attr(node, "kind"), name, attrs, encoding, errors)


def _read_index(group, key, encoding, errors, start=None, stop=None):
    """The regular or Multi index ``key`` (rows ``start:stop``; pandas 2 slices a
    MultiIndex's levels by the same range, pandas 3 only its codes, and so does this)."""
    variety = pt.attr(group, f"{key}_variety")
    if variety == "regular":
        return _read_index_node(group[key], encoding, errors, start, stop)
    if variety != "multi":
        raise TypeError(f"unrecognized index variety: {variety}")
    levels, codes, names = [], [], []
    for i in range(pt.attr(group, f"{key}_nlevels")):
        level = _read_index_node(group[f"{key}_level{i}"], encoding, errors,
                                 *((None, None) if PANDAS_3 else (start, stop)))
        levels.append(level)
        names.append(level.name)
        codes.append(_read_array(group, f"{key}_label{i}", start, stop))
    return pd.MultiIndex(levels=levels, codes=codes, names=names, verify_integrity=True)


def read(group, kind, start=None, stop=None):
    """The Series ("series") or DataFrame ("frame") stored in ``group``."""
    encoding = pt.attr(group, "encoding") or "UTF-8"
    errors = pt.attr(group, "errors", "strict")
    if kind == "series":
        index = _read_index(group, "index", encoding, errors, start, stop)
        values = _read_array(group, "values", start, stop)
        return pd.Series(values, index=index, name=pt.attr(group, "name"), copy=False)
    columns = _read_index(group, "axis0", encoding, errors)
    index = _read_index(group, "axis1", encoding, errors, start, stop)
    frames = []
    for i in range(pt.attr(group, "nblocks")):
        items = _read_index(group, f"block{i}_items", encoding, errors)
        values = _read_array(group, f"block{i}_values", start, stop)
        frames.append(_block_frame(values, columns[columns.get_indexer(items)], index))
    if not frames:
        return pd.DataFrame(columns=columns, index=index)
    return pd.concat(frames, axis=1).reindex(columns=columns)


def _block_frame(values, columns, index):
    """The frame of one stored block (FrameFixed.read). With pandas' "str" inference a block
    of strings and missing values (is_string_array with skipna, so also one of missing values
    only) becomes "str" as a whole; DataFrame's own inference would leave an all-missing column
    object."""
    from pandas._libs.lib import is_string_array
    df = pd.DataFrame(values.T, columns=columns, index=index, copy=False)
    if infers_str() and isinstance(values, np.ndarray) and is_string_array(values, skipna=True):
        df = df.astype(pd.StringDtype(na_value=np.nan))
    return df


# -- writing -----------------------------------------------------------------------------------

def _write_array(group, key, value, filters, as_column=False):
    """Store ``value`` (numpy, or a zoned DatetimeArray, PeriodArray, Categorical or
    StringArray) as pandas' write_array does: the transpose of non-empty values; string arrays
    pickled with their ``value_type``; categoricals refused, as pandas; datetimes, timedeltas
    and (CATEGORICAL_INDEX_AND_PERIODS) periods as int64 with ``value_type`` (never
    compressed: PyTables has no atom for them); ``as_column`` stores a 1-D value as (n, 1).
    Pickled (object and string) arrays are compressed by pandas 3, which gives their VLArray
    the store's filters (GH#64180), not by pandas 2."""
    extra = {}
    vlarray_filters = filters if PANDAS_3 else None
    if isinstance(value.dtype, pd.CategoricalDtype):
        raise NotImplementedError('Cannot store a category dtype in a HDF5 dataset that uses '
                                  'format="fixed". Use format="table".')
    if isinstance(value.dtype, pd.StringDtype):         # pickled as objects, dtype noted
        node = pt.create_object_vlarray(group, key, value.to_numpy(), vlarray_filters)
        pt.set_attr(node, "value_type", str(value.dtype))
        pt.set_attr(node, "transposed", len(value) > 0)
        return node
    if isinstance(value.dtype, pd.DatetimeTZDtype):
        extra = {"tz": stored_tz(value.dtype.tz), "value_type": f"datetime64[{value.unit}]"}
        value = np.asarray(value.asi8)
    elif isinstance(value.dtype, pd.PeriodDtype) and CATEGORICAL_INDEX_AND_PERIODS:
        extra = {"value_type": str(value.dtype)}
        value = np.asarray(value.asi8)
    value = np.asarray(value)
    if as_column:
        value = value.reshape(1, -1)
    empty = value.size == 0
    if not empty:
        value = value.T
    kind = value.dtype.kind
    if kind in "mM" and not extra:
        extra = {"value_type": str(value.dtype) if kind == "M" else dtype_kind(value.dtype.name)}
        value = value.view("i8")
    if extra:
        node = pt.create_array(group, key, value)
    elif kind == "O":
        node = pt.create_object_vlarray(group, key, value, vlarray_filters)
    elif empty:
        node = pt.create_array(group, key, np.empty((1,) * value.ndim))
        extra = {"value_type": str(value.dtype), "shape": tuple(value.shape)}
    elif kind in "iufcbS":
        node = pt.create_array(group, key, value, filters)
    else:
        raise UnsupportedFeatureError(f"purehep.pandas does not write {value.dtype} values "
                                      "in the fixed format")
    for name, v in extra.items():
        pt.set_attr(node, name, v)
    pt.set_attr(node, "transposed", not empty)
    return node


def _write_index_node(group, key, index, encoding, errors, filters, level=False):
    """One index node (write_index); a MultiIndex ``level`` gets only its kind, name and
    sentinel, as pandas' write_multi_index writes it (no index_class, freq nor tz)."""
    values, kind, attrs = index_to_stored(index, encoding, errors)
    node = _write_array(group, key, values, filters)
    pt.set_attr(node, "kind", kind)
    pt.set_attr(node, "name", index.name)
    for name in ("nan_rep",) if level else ("nan_rep", "index_class", "freq", "tz"):
        if name in attrs:
            pt.set_attr(node, name, attrs[name])
    return node


def _write_categorical_index(group, key, index, encoding, errors, filters):
    """pandas 3's write_index of a CategoricalIndex (GH#33909): the codes at ``key`` (kind
    "category", name, ordered), the categories as the regular index ``{key}_categories``."""
    pt.set_attr(group, f"{key}_variety", "regular")
    node = _write_array(group, key, np.asarray(index.codes), filters)
    _write_index(group, f"{key}_categories", pd.Index(index.categories), encoding, errors,
                 filters)
    pt.set_attr(node, "kind", "category")
    pt.set_attr(node, "name", index.name)
    pt.set_attr(node, "ordered", bool(index.ordered))


def _write_index(group, key, index, encoding, errors, filters):
    if isinstance(index, pd.CategoricalIndex) and CATEGORICAL_INDEX_AND_PERIODS:
        _write_categorical_index(group, key, index, encoding, errors, filters)
        return
    if not isinstance(index, pd.MultiIndex):
        pt.set_attr(group, f"{key}_variety", "regular")
        _write_index_node(group, key, index, encoding, errors, filters)
        return
    pt.set_attr(group, f"{key}_variety", "multi")
    pt.set_attr(group, f"{key}_nlevels", index.nlevels)
    for i, (level, codes, name) in enumerate(zip(index.levels, index.codes, index.names)):
        node = _write_index_node(group, f"{key}_level{i}", level, encoding, errors, filters,
                                 level=True)
        pt.set_attr(node, f"{key}_name{name}", name)
        _write_array(group, f"{key}_label{i}", np.asarray(codes), filters)


def _blocks(df):
    """[(column positions, values)]: numpy columns of one dtype together as a columns x rows
    array (dtypes in first-appearance order), each extension column (zoned datetimes, strings,
    categoricals) alone as its array, as pandas' consolidated blocks are."""
    groups = {}
    for pos, dtype in enumerate(df.dtypes):
        key = dtype.str if isinstance(dtype, np.dtype) else pos
        groups.setdefault(key, []).append(pos)
    out = []
    for positions in groups.values():
        cols = [df.iloc[:, p] for p in positions]
        if isinstance(cols[0].dtype, np.dtype):
            out.append((positions, np.array([c.to_numpy() for c in cols], cols[0].dtype)
                        .reshape(len(cols), len(df))))
        else:
            out.append((positions, cols[0].array))
    return out


def write(group, obj, encoding, errors, filters):
    """Store the Series or DataFrame ``obj`` in the empty group as pandas' put(format="fixed")."""
    pt.set_attr(group, "pandas_type", "series" if isinstance(obj, pd.Series) else "frame")
    if PANDAS_VERSION:
        pt.set_attr(group, "pandas_version", PANDAS_VERSION)
    pt.set_attr(group, "encoding", encoding)
    pt.set_attr(group, "errors", errors)
    if isinstance(obj, pd.Series):
        _write_index(group, "index", obj.index, encoding, errors, filters)
        _write_array(group, "values", obj.to_numpy() if isinstance(obj.dtype, np.dtype)
                     else obj.array, filters)
        pt.set_attr(group, "name", obj.name)
        return
    if not obj.columns.is_unique:
        raise ValueError("Columns index has to be unique for fixed format")
    pt.set_attr(group, "ndim", 2)
    _write_index(group, "axis0", obj.columns, encoding, errors, filters)
    _write_index(group, "axis1", obj.index, encoding, errors, filters)
    blocks = _blocks(obj)
    pt.set_attr(group, "nblocks", len(blocks))
    for i, (positions, values) in enumerate(blocks):
        _write_array(group, f"block{i}_values", values, filters,
                     as_column=isinstance(values.dtype, (pd.DatetimeTZDtype, pd.PeriodDtype)))
        _write_index(group, f"block{i}_items", obj.columns[positions], encoding, errors,
                     filters)
