"""Vectorised evaluation of query expressions over 1-D numpy columns."""
import functools
import operator

import numpy as np

from .expr import And, Between, Compare, Field, IsNull, Not, Or

_UFUNCS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}


def coerce(column, value):
    """The literal as the column's kind of scalar: bytes for byte-string columns (without
    trailing NULs for fixed-length ones: numpy's fixed-length strings hold none and compare
    as if a literal had none, so the indexes must look for it so too), str for unicode
    ones; numbers for numeric columns (a string there is a ValueError)."""
    kind = column.dtype.kind
    if kind == "S" or (kind == "O" and len(column) and isinstance(column[0], bytes)):
        value = value.encode("utf-8") if isinstance(value, str) else value
        return value.rstrip(b"\0") if kind == "S" and isinstance(value, bytes) else value
    if kind in "U" or kind == "O":
        return value.decode("utf-8") if isinstance(value, bytes) else value
    if isinstance(value, (str, bytes)):
        raise ValueError(f"cannot compare a {column.dtype} column with the string {value!r}")
    return value


def compare(column, op, value):
    """Elementwise ``column OP value`` as a bool array (IEEE: NaN is false except for !=)."""
    result = _UFUNCS[op](column, coerce(column, value))
    return np.asarray(result, dtype=bool)


def nan_missing(values):
    """The default meaning of IS NULL: NaN in float columns, None in object columns."""
    values = np.asarray(values)
    if values.dtype.kind in "fc":
        return np.isnan(values)
    if values.dtype.kind == "O":
        return np.array([v is None for v in values.tolist()], dtype=bool)
    return np.zeros(len(values), dtype=bool)


def _leaf(expr, column, columns, missing):
    if isinstance(expr, IsNull):
        return np.asarray(missing.get(expr.field, nan_missing)(column), dtype=bool)
    if isinstance(expr, Compare):
        if isinstance(expr.value, Field):
            other = _column(columns, expr.value.name)
            return np.asarray(_UFUNCS[expr.op](column, other), dtype=bool)
        return compare(column, expr.op, expr.value)
    if isinstance(expr, Between):
        return compare(column, ">=", expr.lo) & compare(column, "<=", expr.hi)
    masks = [compare(column, "==", v) for v in expr.values]
    return functools.reduce(np.logical_or, masks, np.zeros(len(column), dtype=bool))


def _column(columns, name):
    if name not in columns:
        raise KeyError(f"query names unknown field {name!r}")
    return np.asarray(columns[name])


def evaluate(expr, columns, missing=None):
    """Bool mask of rows where ``expr`` holds; ``columns`` maps field name -> 1-D array;
    ``missing`` maps field name -> function(values) -> bool mask of missing values, for
    IS NULL (default :func:`nan_missing`)."""
    missing = missing or {}
    if isinstance(expr, And):
        return functools.reduce(np.logical_and, (evaluate(e, columns, missing) for e in expr.items))
    if isinstance(expr, Or):
        return functools.reduce(np.logical_or, (evaluate(e, columns, missing) for e in expr.items))
    if isinstance(expr, Not):
        return ~evaluate(expr.item, columns, missing)
    return _leaf(expr, _column(columns, expr.field), columns, missing)
