"""Tokenizer and recursive-descent parser of the query-string language.

Grammar (keywords case-insensitive)::

    expr      := and_expr (("OR" | "||") and_expr)*
    and_expr  := not_expr (("AND" | "&&") not_expr)*
    not_expr  := ("NOT" | "!") not_expr | "(" expr ")" | predicate
    predicate := field OP (literal | field) | literal OP field
               | field ["NOT"] "BETWEEN" literal "AND" literal
               | field ["NOT"] "IN" "(" literal ("," literal)* ")"
               | field "IS" ["NOT"] "NULL"
    OP        := "=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">="

The 2005 indexing RFC's example ``(A>3 AND A<7) AND B=10`` is a sentence of it.

NaN: comparisons are IEEE's. A ``nan`` literal equals nothing (``x = nan`` never holds,
``x != nan`` always does), and ``x != x`` holds exactly where x is NaN. ``x IS NULL`` selects
missing values, as the caller defines them (purehep.table: the column's fill value).
"""
import math
import re

from .expr import FLIPPED, And, Between, Compare, Field, In, IsNull, Not, Or

KEYWORDS = {"and", "or", "not", "between", "in", "true", "false", "nan", "inf", "infinity",
            "is", "null"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_OP = re.compile(r"==|!=|<>|<=|>=|&&|\|\||[=<>!(),+-]")
_OP_NAMES = {"=": "==", "<>": "!="}


class QuerySyntaxError(ValueError):
    """A query string that does not parse; ``position`` is the 0-based character offset."""

    def __init__(self, message, text, position):
        super().__init__(f"{message} at position {position} in {text!r}")
        self.position = position


def is_bare_identifier(name):
    """True when ``name`` can be written without backquotes."""
    return bool(_IDENT.fullmatch(name)) and name.lower() not in KEYWORDS


def _quoted(text, pos, quote):
    """Scan a quoted run starting at ``pos``; doubled quotes and backslashes escape."""
    out, i = [], pos + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "`" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        elif ch == quote and text.startswith(quote * 2, i):
            out.append(quote)
            i += 2
        elif ch == quote:
            return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    raise QuerySyntaxError("unterminated quoted text", text, pos)


def tokenize(text):
    """List of (kind, value, position); kinds: num, str, ident, field, kw, op, end."""
    tokens, pos = [], 0
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pos += 1
        elif ch in "'\"`":
            value, end = _quoted(text, pos, ch)
            tokens.append(("field" if ch == "`" else "str", value, pos))
            pos = end
        elif m := _NUMBER.match(text, pos):
            num = m.group()
            tokens.append(("num", int(num) if num.isdigit() else float(num), pos))
            pos = m.end()
        elif m := _IDENT.match(text, pos):
            word = m.group()
            kind = "kw" if word.lower() in KEYWORDS else "ident"
            tokens.append((kind, word.lower() if kind == "kw" else word, pos))
            pos = m.end()
        elif m := _OP.match(text, pos):
            tokens.append(("op", m.group(), pos))
            pos = m.end()
        else:
            raise QuerySyntaxError(f"unexpected character {ch!r}", text, pos)
    tokens.append(("end", None, len(text)))
    return tokens


class _Parser:
    def __init__(self, text):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self, offset=0):
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def error(self, message, token=None):
        token = token or self.peek()
        found = "end of query" if token[0] == "end" else repr(self.text[token[2]:].split()[0])
        raise QuerySyntaxError(f"{message}, found {found}", self.text, token[2])

    def accept(self, *values):
        kind, value, _ = self.peek()
        if kind in ("kw", "op") and value in values:
            self.i += 1
            return True
        return False

    def expect(self, *values):
        if not self.accept(*values):
            self.error(f"expected {' or '.join(map(repr, values))}")

    def parse(self):
        node = self.or_expr()
        if self.peek()[0] != "end":
            self.error("expected AND, OR or end of query")
        return node

    def or_expr(self):
        items = [self.and_expr()]
        while self.accept("or", "||"):
            items.append(self.and_expr())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_expr(self):
        items = [self.not_expr()]
        while self.accept("and", "&&"):
            items.append(self.not_expr())
        return items[0] if len(items) == 1 else And(tuple(items))

    def not_expr(self):
        if self.accept("not", "!"):
            return Not(self.not_expr())
        if self.accept("("):
            node = self.or_expr()
            self.expect(")")
            return node
        return self.predicate()

    def predicate(self):
        kind = self.peek()[0]
        if kind in ("ident", "field"):
            return self.field_predicate(self.tokens[self.i][1])
        value = self.literal()
        op = self.operator()
        return Compare(self.field(), FLIPPED[op], value)

    def field(self):
        kind, value, _ = self.peek()
        if kind not in ("ident", "field"):
            self.error("expected a field name")
        self.i += 1
        return value

    def operator(self):
        kind, value, _ = self.peek()
        if kind != "op" or value not in FLIPPED and value not in _OP_NAMES:
            self.error("expected a comparison operator")
        self.i += 1
        return _OP_NAMES.get(value, value)

    def field_predicate(self, name):
        self.i += 1
        if self.accept("is"):
            negate = self.accept("not")
            self.expect("null")
            return Not(IsNull(name)) if negate else IsNull(name)
        negate = self.accept("not")
        if self.accept("between"):
            lo = self.literal()
            self.expect("and")
            node = Between(name, lo, self.literal())
        elif self.accept("in"):
            node = In(name, self.literal_list())
        elif negate:
            self.error("expected BETWEEN or IN after NOT")
        else:
            op = self.operator()
            if self.peek()[0] in ("ident", "field"):
                return Compare(name, op, Field(self.field()))
            return Compare(name, op, self.literal())
        return Not(node) if negate else node

    def literal_list(self):
        self.expect("(")
        values = [self.literal()]
        while self.accept(","):
            values.append(self.literal())
        self.expect(")")
        return tuple(values)

    def literal(self):
        signed = self.peek()[:2] in (("op", "-"), ("op", "+"))
        sign = -1 if self.accept("-") else 1
        self.accept("+")
        kind, value, _ = self.peek()
        if kind == "num":
            self.i += 1
            return sign * value
        if kind == "kw" and value in ("nan", "inf", "infinity"):
            self.i += 1
            return math.nan if value == "nan" else sign * math.inf
        if kind == "str" and not signed:
            self.i += 1
            return value
        if kind == "kw" and value in ("true", "false") and not signed:
            self.i += 1
            return value == "true"
        self.error("expected a literal")


def parse(text):
    """Parse query text into an expression tree; raises :class:`QuerySyntaxError`."""
    return _Parser(text).parse()
