"""``where=`` conditions of pandas' table format, evaluated with numpy on the stored columns.

Supported (the forms pandas turns into a PyTables condition on the table):
comparisons ``name op literal`` with op one of == != < <= > >=, on the index ("index") and
the data columns; ``name == [v1, …]`` and ``name != [v1, …]`` with up to 31 items (both
ORed over the items as pandas 2 builds them, so that ``!=`` with two distinct values keeps
every non-missing row; pandas 3 ANDs the ``!=`` items; pandas filters longer lists after
reading, which is not done); conditions
combined with ``&``/``and``, ``|``/``or`` and parentheses; a list of condition strings (ANDed).
Literals: numbers, quoted strings, True/False, ``Timestamp(...)`` of a number or a string.
Each literal is converted for the column's kind
as the installed pandas does (pandas/core/computation/pytables.py, ``BinOp.convert_value`` and
``generate``): datetimes through ``Timestamp`` (UTC), timedeltas through ``Timedelta``
(numbers are seconds), in nanoseconds with pandas 2 and in the column's unit with pandas 3
(which also leaves NaT out of ``<``/``<=``); strings encoded; for integer columns pandas 2
rounds a literal half-to-even, pandas 3 floors it and turns a comparison with a fractional
one into its exact integer form (``B > 1.5`` is ``B > 1``, ``B == 1.5`` nothing);
categoricals as the position of the value in the categories (pandas 2: searchsorted, -1 when
absent; pandas 3: the equal one, -2 when absent, and ``<``/``>`` refused on an unordered
one). Anything else (names from the
calling scope, ``columns=`` filters, ``~``, other functions, arithmetic) raises
``UnsupportedWhereError`` rather than guessing.
"""
import ast
import decimal
import operator
import re

import numpy as np

from ...errors import UnsupportedFeatureError
from .convert import PANDAS_3, STORED_UNITS

_INAT = np.iinfo(np.int64).min         # NaT as stored

_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}
_TOKEN = re.compile(r"""\s*(?:
    (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<op>==|!=|<=|>=|<|>|&|\||\(|\)|\[|\]|,)
  | (?P<name>[^\W\d]\w*)
  | (?P<bad>\S)
)""", re.VERBOSE)


_CALLS = ("Timestamp",)


class UnsupportedWhereError(UnsupportedFeatureError, ValueError):
    """A ``where`` condition purehep does not evaluate (see the module docstring)."""


def _tokens(text):
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "bad":
            raise UnsupportedWhereError(f"unsupported character {value!r} in where {text!r}")
        if kind == "num" and value[0] in "+-" and out and out[-1][0] in ("num", "str", "name") \
                and out[-1][1] not in ("and", "or"):
            raise UnsupportedWhereError(f"arithmetic is not supported in where {text!r}")
        if kind == "name" and value in ("and", "or"):
            kind, value = "op", "&" if value == "and" else "|"
        out.append((kind, value))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent over the tokens: or_expr := and_expr ('|' and_expr)*, and_expr :=
    atom ('&' atom)*, atom := '(' or_expr ')' | operand op operand."""

    def __init__(self, text):
        self.text, self.toks, self.i = text, _tokens(text), 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise UnsupportedWhereError(f"cannot parse where {self.text!r} (expected "
                                        f"{value or 'more'} at token {self.i})")
        self.i += 1
        return tok

    def parse(self):
        tree = self.or_expr()
        if self.peek()[0] is not None:
            raise UnsupportedWhereError(f"cannot parse where {self.text!r} after token {self.i}")
        return tree

    def or_expr(self):
        node = self.and_expr()
        while self.peek() == ("op", "|"):
            self.take()
            node = ("|", node, self.and_expr())
        return node

    def and_expr(self):
        node = self.atom()
        while self.peek() == ("op", "&"):
            self.take()
            node = ("&", node, self.atom())
        return node

    def atom(self):
        if self.peek() == ("op", "("):
            self.take()
            node = self.or_expr()
            self.take(")")
            return node
        left = self.operand()
        op = self.take()
        if op[0] != "op" or op[1] not in _OPS:
            raise UnsupportedWhereError(f"expected a comparison in where {self.text!r}")
        right = self.operand()
        if left[0] == "name" and right[0] != "name":
            return ("cmp", left[1], op[1], right[1])
        raise UnsupportedWhereError(f"each comparison in where {self.text!r} must be a column "
                                    "name, an operator and a literal, in that order")

    def call(self, name):
        """``Timestamp(literal)``: pandas evaluates the call in Python (its expression scope
        holds the name) and compares with the result."""
        self.take("(")
        kind, arg = self.operand()
        self.take(")")
        if kind != "lit" or isinstance(arg, (list, bool)):
            raise UnsupportedWhereError(f"{name}() of a number or a string only, in "
                                        f"{self.text!r}")
        import pandas as pd
        return getattr(pd, name)(arg)

    def operand(self):
        kind, value = self.take()
        if kind == "num":
            return ("lit", float(value) if re.search(r"[.eE]", value) else int(value))
        if kind == "str":
            return ("lit", ast.literal_eval(value))     # Python's string literal, as pandas
        if kind == "name":
            if value in ("True", "False"):
                return ("lit", value == "True")
            if value in _CALLS and self.peek() == ("op", "("):
                return ("lit", self.call(value))
            return ("name", value)
        if (kind, value) == ("op", "["):
            items = []
            while self.peek() != ("op", "]"):
                item = self.operand()
                if item[0] != "lit" or isinstance(item[1], list):
                    raise UnsupportedWhereError(f"list items must be literals in {self.text!r}")
                items.append(item[1])
                if self.peek() == ("op", ","):
                    self.take()
            self.take("]")
            return ("lit", items)
        raise UnsupportedWhereError(f"unexpected {value!r} in where {self.text!r}")


def parse(where):
    """The condition tree of a where string, or of a list of them (ANDed)."""
    if isinstance(where, (list, tuple)):
        if not where or not all(isinstance(w, str) for w in where):
            raise UnsupportedWhereError("where must be a string or a list of strings")
        where = " & ".join(f"({w})" for w in where)
    if not isinstance(where, str):
        raise UnsupportedWhereError(f"where of type {type(where).__name__} is not supported "
                                    "(a condition string, or a list of them)")
    return _Parser(where).parse()


def _unit(kind):
    """The unit literals are converted to for a datetime/timedelta column of ``kind``."""
    return kind.split("[")[-1][:-1] if STORED_UNITS and "[" in kind else "ns"


def convert_value(value, kind, meta, categories, encoding, ordered=None, op="=="):
    """(stored-side value, truncated) of a literal for a column of ``kind`` (module
    docstring); ``truncated`` when pandas 3 floored a fractional literal for an integer
    column."""
    import pandas as pd
    if kind == "datetime" or kind.startswith("datetime64"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        ts = pd.Timestamp(value).as_unit(_unit(kind))
        if ts.tz is not None:
            ts = ts.tz_convert("UTC")
        return ts._value, False
    if kind == "timedelta" or kind.startswith("timedelta64"):
        td = pd.Timedelta(value) if isinstance(value, str) else pd.Timedelta(value, unit="s")
        return int(td.as_unit(_unit(kind))._value), False
    if meta == "category":
        cats = np.asarray(categories)
        if PANDAS_3:
            if ordered is not None and not ordered and op in ("<", "<=", ">", ">="):
                raise TypeError("Unordered Categoricals can only compare equality or not")
            return (int(np.flatnonzero(cats == value)[0]) if value in cats else -2), False
        return (-1 if value not in cats else int(cats.searchsorted(value, side="left"))), False
    if kind == "integer":
        try:
            exact = decimal.Decimal(value)
            rounding = decimal.ROUND_FLOOR if PANDAS_3 else decimal.ROUND_HALF_EVEN
            integral = exact.to_integral_exact(rounding)
        except decimal.InvalidOperation:
            float(value)            # the ValueError pandas raises for a non-number
            raise
        return int(integral), PANDAS_3 and integral != exact
    if kind == "float":
        return float(value), False
    if kind == "bool":
        if isinstance(value, str):
            return value.strip().lower() not in ("false", "f", "no", "n", "none", "0", "[]",
                                                 "{}", ""), False
        return bool(value), False
    if isinstance(value, str):
        return value.encode(encoding), False
    raise TypeError(f"Cannot compare {value} of type {type(value)} to {kind} column")


def _compare(data, op, value, info):
    """The row mask of ``data op value`` as pandas' condition for it selects."""
    converted, truncated = convert_value(value, *info, op=op)
    if truncated:               # v floored from a fractional literal: x < literal is x <= v
        if op in ("==", "!="):
            return np.full(data.shape, op == "!=")
        return data <= converted if op in ("<", "<=") else data > converted
    mask = _OPS[op](data, converted)
    if PANDAS_3 and op in ("<", "<=") and info[0].startswith(("datetime", "timedelta")):
        mask &= data != _INAT
    return mask


def evaluate(tree, columns, describe):
    """The boolean row mask of ``tree``: ``columns(name)`` gives a stored column (numpy),
    ``describe(name)`` its (kind, meta, categories, encoding, ordered), or None for a name
    that is not queryable (UnsupportedWhereError)."""
    if tree[0] in ("&", "|"):
        left = evaluate(tree[1], columns, describe)
        right = evaluate(tree[2], columns, describe)
        return (left & right) if tree[0] == "&" else (left | right)
    _, name, op, value = tree
    info = describe(name)
    if info is None:
        raise UnsupportedWhereError(f"{name!r} is not the index or a data column; purehep "
                                    "evaluates where conditions on those only (no names from "
                                    "the calling scope, no 'columns' filters)")
    data = columns(name)
    if isinstance(value, list):
        if op not in ("==", "!="):
            raise UnsupportedWhereError(f"a list compares with == or != only, not {op}")
        if not 0 < len(value) <= 31:
            raise UnsupportedWhereError(f"a list of {len(value)} values in the condition on "
                                        f"{name!r} (1 to 31 are evaluated)")
        join = np.logical_and if PANDAS_3 and op == "!=" else np.logical_or
        return join.reduce([_compare(data, op, v, info) for v in value])
    return _compare(data, op, value, info)
