"""Vectorised evaluation of query expressions over 1-D numpy columns."""
import functools
import operator

import numpy as np

from .expr import And, Between, Compare, In, Not, Or

_UFUNCS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}


def coerce(column, value):
    """The literal as the column's kind of scalar: bytes for byte-string columns, str for
    unicode ones; numbers for numeric columns (a string there is a ValueError)."""
    kind = column.dtype.kind
    if kind == "S" or (kind == "O" and len(column) and isinstance(column[0], bytes)):
        return value.encode("utf-8") if isinstance(value, str) else value
    if kind in "U" or kind == "O":
        return value.decode("utf-8") if isinstance(value, bytes) else value
    if isinstance(value, (str, bytes)):
        raise ValueError(f"cannot compare a {column.dtype} column with the string {value!r}")
    return value


def compare(column, op, value):
    """Elementwise ``column OP value`` as a bool array (NaN is false except for !=)."""
    result = _UFUNCS[op](column, coerce(column, value))
    return np.asarray(result, dtype=bool)


def _leaf(expr, column):
    if isinstance(expr, Compare):
        return compare(column, expr.op, expr.value)
    if isinstance(expr, Between):
        return compare(column, ">=", expr.lo) & compare(column, "<=", expr.hi)
    masks = [compare(column, "==", v) for v in expr.values]
    return functools.reduce(np.logical_or, masks, np.zeros(len(column), dtype=bool))


def evaluate(expr, columns):
    """Bool mask of rows where ``expr`` holds; ``columns`` maps field name -> 1-D array."""
    if isinstance(expr, And):
        return functools.reduce(np.logical_and, (evaluate(e, columns) for e in expr.items))
    if isinstance(expr, Or):
        return functools.reduce(np.logical_or, (evaluate(e, columns) for e in expr.items))
    if isinstance(expr, Not):
        return ~evaluate(expr.item, columns)
    if expr.field not in columns:
        raise KeyError(f"query names unknown field {expr.field!r}")
    return _leaf(expr, np.asarray(columns[expr.field]))
