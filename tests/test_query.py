"""purehep.query: parser round trips, precedence, error positions, evaluation vs numpy."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from purehep.query import (And, Between, Compare, In, Not, Or, QuerySyntaxError, evaluate,
                           fields, parse)


@pytest.mark.parametrize("text, expected", [
    ("(A>3 AND A<7) AND B=10",
     And((And((Compare("A", ">", 3), Compare("A", "<", 7))), Compare("B", "==", 10)))),
    ("3 < a", Compare("a", ">", 3)),
    ("-2.5e3 >= a", Compare("a", "<=", -2500.0)),
    ("a <> 1", Compare("a", "!=", 1)),
    ("a == 1", Compare("a", "==", 1)),
    ("x between -1 and inf", Between("x", -1, math.inf)),
    ("x BETWEEN 1 AND 2 AND y = 3", And((Between("x", 1, 2), Compare("y", "==", 3)))),
    ("c in (1, 2.5, 'x', true)", In("c", (1, 2.5, "x", True))),
    ("c NOT IN (1)", Not(In("c", (1,)))),
    ("`my col` = \"a\"\"b\"", Compare("my col", "==", 'a"b')),
    ("s = 'a\\'b'", Compare("s", "==", "a'b")),
    ("f = false", Compare("f", "==", False)),
    ("a > -inf", Compare("a", ">", -math.inf)),
    ("a = 1 && b = 2 || !c = 3",
     Or((And((Compare("a", "==", 1), Compare("b", "==", 2))), Not(Compare("c", "==", 3))))),
])
def test_parse(text, expected):
    assert parse(text) == expected
    assert parse(str(expected)) == expected


def test_nan_literal():
    """NaN parses, and its text parses back to NaN (compared by text: a node holding NaN is
    not equal to itself from Python 3.13 on, whose dataclasses compare field by field)."""
    node = parse("a != NaN")
    assert node.op == "!=" and math.isnan(node.value)
    again = parse(str(node))
    assert str(again) == str(node) and again.field == "a" and math.isnan(again.value)


def test_precedence_not_and_or():
    a, b, c = (Compare(n, "==", 1) for n in "abc")
    assert parse("NOT a = 1 AND b = 1 OR c = 1") == Or((And((Not(a), b)), c))
    assert parse("a = 1 OR b = 1 AND NOT c = 1") == Or((a, And((b, Not(c)))))
    assert parse("NOT (a = 1 OR b = 1)") == Not(Or((a, b)))
    assert parse("not not a = 1") == Not(Not(a))


@pytest.mark.parametrize("text, position", [
    ("a >", 3), ("a = = 3", 4), ("(a = 1", 6), ("a in ()", 6), ("", 0),
    ("a = 1 b = 2", 6), ("a = 'x", 4), ("a # 3", 2), ("a between 1 or 2", 12),
    ("a = 1 AND", 9), ("= 3", 0), ("a = -'x'", 5),
])
def test_syntax_errors_name_position(text, position):
    with pytest.raises(QuerySyntaxError) as info:
        parse(text)
    assert info.value.position == position
    assert f"position {position}" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_fields():
    assert fields(parse("a = 1 AND (b < 2 OR NOT `c d` IN (1))")) == {"a", "b", "c d"}


def test_rfc_example():
    cols = {"A": np.arange(10), "B": np.array([10] * 5 + [1] * 5)}
    assert np.flatnonzero(evaluate(parse("(A>3 AND A<7) AND B=10"), cols)).tolist() == [4]


def test_nan_and_strings():
    x = np.array([1.0, np.nan, 3.0])
    assert evaluate(parse("x < 5"), {"x": x}).tolist() == [True, False, True]
    assert evaluate(parse("x != 1"), {"x": x}).tolist() == [False, True, True]
    assert evaluate(parse("x = nan"), {"x": x}).tolist() == [False] * 3
    assert evaluate(parse("x in (nan, 3)"), {"x": x}).tolist() == [False, False, True]
    for s in (np.array([b"ab", b"b", b""]), np.array(["ab", "b", ""]),
              np.array([b"ab", b"b", b""], dtype=object), np.array(["ab", "b", ""], dtype=object)):
        assert evaluate(parse("s = 'b'"), {"s": s}).tolist() == [False, True, False]
        assert evaluate(parse("s < 'b'"), {"s": s}).tolist() == [True, False, True]
    with pytest.raises(ValueError):
        evaluate(parse("x = 'a'"), {"x": x})
    with pytest.raises(KeyError):
        evaluate(parse("y = 1"), {"x": x})


def test_unsigned_against_negative():
    u = np.array([0, 5, 2**64 - 1], dtype=np.uint64)
    assert evaluate(parse("u > -1"), {"u": u}).all()
    assert evaluate(parse("u >= 18446744073709551615"), {"u": u}).tolist() == [False, False, True]


COLS = {"i": np.arange(-50, 50, dtype=np.int32),
        "f": np.where(np.arange(100) % 7 == 0, np.nan, np.linspace(-5, 5, 100)),
        "s": np.array([b"abc"[k % 3:k % 3 + 1] for k in range(100)])}
_ops = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
_num = st.one_of(st.integers(-60, 60), st.floats(-6, 6), st.just(math.nan))
_leaf = st.one_of(
    st.builds(lambda o, v: (f"i {o} {v!s}", ("i", o, v)), _ops, st.integers(-60, 60)),
    st.builds(lambda o, v: (f"{_lit(v)} {o} f", ("f", o, v, True)), _ops, _num),
    st.builds(lambda o, v: (f"s {o} '{v}'", ("s", o, v.encode())), _ops, st.sampled_from("abcd")),
    st.builds(lambda lo, hi: (f"f BETWEEN {_lit(lo)} AND {_lit(hi)}", ("between", lo, hi)), _num, _num),
    st.builds(lambda vs: (f"i IN ({', '.join(map(str, vs))})", ("in", vs)),
              st.lists(st.integers(-60, 60), min_size=1, max_size=4)),
)
_NP = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
       ">": np.greater, ">=": np.greater_equal}
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _lit(v):
    return "nan" if isinstance(v, float) and math.isnan(v) else repr(v)


def _reference(leaf):
    if leaf[0] == "between":
        return (COLS["f"] >= leaf[1]) & (COLS["f"] <= leaf[2])
    if leaf[0] == "in":
        return np.isin(COLS["i"], leaf[1])
    op = _FLIP[leaf[1]] if len(leaf) == 4 else leaf[1]
    return _NP[op](COLS[leaf[0]], leaf[2])


_tree = st.recursive(
    _leaf.map(lambda p: (p[0], _reference(p[1]))),
    lambda sub: st.one_of(
        st.builds(lambda a, b: (f"({a[0]}) AND ({b[0]})", a[1] & b[1]), sub, sub),
        st.builds(lambda a, b: (f"({a[0]}) OR ({b[0]})", a[1] | b[1]), sub, sub),
        st.builds(lambda a: (f"NOT ({a[0]})", ~a[1]), sub)),
    max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(_tree)
def test_evaluate_matches_numpy(case):
    text, expected = case
    expr = parse(text)
    assert np.array_equal(evaluate(expr, COLS), expected)
    assert np.array_equal(evaluate(parse(str(expr)), COLS), expected)
