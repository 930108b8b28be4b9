"""Query expression nodes (frozen dataclasses) and their canonical text form.

``str(node)`` is query text that :func:`purehep.query.parse` reads back to an equal node.
"""
import math
from dataclasses import dataclass

OPS = ("==", "!=", "<", "<=", ">", ">=")
FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def literal_text(value):
    """Query text of a literal value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def field_text(name):
    """Query text of a field name: bare identifier when possible, else backquoted."""
    from .parser import is_bare_identifier
    return name if is_bare_identifier(name) else "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Field:
    """A field name on the right of a comparison (``x != x``, ``a < b``): compared
    element by element, IEEE-style (so ``x != x`` holds exactly where x is NaN)."""
    name: str

    def __str__(self):
        return field_text(self.name)


@dataclass(frozen=True)
class Compare:
    field: str
    op: str
    value: object

    def __str__(self):
        value = str(self.value) if isinstance(self.value, Field) else literal_text(self.value)
        return f"{field_text(self.field)} {self.op} {value}"


@dataclass(frozen=True)
class IsNull:
    """``field IS NULL``: the field's missing values. What is missing is the caller's: a
    HEP001 table's fill value (§6.4), NaN in a float column without one."""
    field: str

    def __str__(self):
        return f"{field_text(self.field)} IS NULL"


@dataclass(frozen=True)
class Between:
    field: str
    lo: object
    hi: object

    def __str__(self):
        return f"{field_text(self.field)} BETWEEN {literal_text(self.lo)} AND {literal_text(self.hi)}"


@dataclass(frozen=True)
class In:
    field: str
    values: tuple

    def __str__(self):
        return f"{field_text(self.field)} IN ({', '.join(map(literal_text, self.values))})"


@dataclass(frozen=True)
class And:
    items: tuple

    def __str__(self):
        return " AND ".join(_wrap(item, (And, Or)) for item in self.items)


@dataclass(frozen=True)
class Or:
    items: tuple

    def __str__(self):
        return " OR ".join(_wrap(item, (Or,)) for item in self.items)


@dataclass(frozen=True)
class Not:
    item: object

    def __str__(self):
        return "NOT " + _wrap(self.item, (And, Or, Not))


def _wrap(node, loose):
    """Parenthesise ``node`` when it binds more loosely than its context."""
    return f"({node})" if isinstance(node, loose) else str(node)


def fields(expr):
    """The set of field names an expression reads."""
    if isinstance(expr, (And, Or)):
        return frozenset().union(*(fields(item) for item in expr.items))
    if isinstance(expr, Not):
        return fields(expr.item)
    if isinstance(expr, Compare) and isinstance(expr.value, Field):
        return frozenset((expr.field, expr.value.name))
    return frozenset((expr.field,))
