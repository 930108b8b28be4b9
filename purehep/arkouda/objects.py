"""Arkouda's objects as purehep holds them: dataclasses of numpy arrays (and of each other),
split over and joined from locales, and built from plain Python data.

Values: a pdarray is a 1-D numpy array (int, uint, float or bool); a BigInt pdarray is a
``BigInt`` (an object array of Python ints and the ``max_bits`` Arkouda keeps with it); the
group objects below hold those and each other.
"""
from dataclasses import dataclass, field, fields

import numpy as np

from .schema import (ARRAYVIEW, CATEGORICAL, DATAFRAME, GROUPBY, INDEX, MULTIINDEX, SEGARRAY,
                     STRINGS)


# ---------------------------------------------------------------- distribution helpers

def bounds(n, parts):
    """Chapel Block distribution of ``n`` elements over ``parts`` locales: (lo, hi) pairs."""
    cuts = [-(-n * i // parts) for i in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def _slice(value, lo, hi):
    """Elements ``lo:hi`` of an array or a segmented object."""
    return value[lo:hi] if isinstance(value, np.ndarray) else value._slice(lo, hi)


def split(value, parts):
    """``value`` cut into one piece per locale (None, lists and dicts member by member)."""
    if value is None:
        return [None] * parts
    if isinstance(value, (list, dict)):
        keys = range(len(value)) if isinstance(value, list) else value.keys()
        cols = {k: split(value[k], parts) for k in keys}
        rows = [{k: c[i] for k, c in cols.items()} for i in range(parts)]
        return [list(r.values()) for r in rows] if isinstance(value, list) else rows
    if isinstance(value, np.ndarray):
        return [value[lo:hi] for lo, hi in bounds(len(value), parts)]
    return value._split(parts)


def concat(parts):
    """The inverse of ``split``: the locales' pieces joined."""
    first = parts[0]
    if first is None:
        return None
    if isinstance(first, list):
        return [concat(list(col)) for col in zip(*parts)]
    if isinstance(first, dict):
        return {k: concat([p[k] for p in parts]) for k in first}
    if isinstance(first, np.ndarray):
        return np.concatenate(parts)
    return type(first)._concat(parts)


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and bool(np.all(a == b)))
    if isinstance(a, (list, dict)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if isinstance(a, dict):
            return list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
        return all(_equal(x, y) for x, y in zip(a, b))
    return a == b


# ---------------------------------------------------------------- schema objects

class _Schema:
    """Component-wise behaviour shared by the schema objects (dataclasses)."""

    def __eq__(self, other):
        return type(self) is type(other) and all(
            _equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    def _split(self, parts):
        cols = {f.name: split(getattr(self, f.name), parts) for f in fields(self)}
        return [type(self)(**{k: c[i] for k, c in cols.items()}) for i in range(parts)]

    @classmethod
    def _concat(cls, parts):
        return cls(**{f.name: concat([getattr(p, f.name) for p in parts]) for f in fields(cls)})

    def _is_bool(self):
        return False

    def _counts(self):
        return {}


@dataclass(eq=False)
class BigInt(_Schema):
    """A BigInt pdarray: Python ints (an object array) and Arkouda's ``max_bits`` (-1 when
    unbounded; else values are kept modulo 2**max_bits). Stored as a group of uint64 limbs
    ``Limb_<i>``, least significant first (``bigintToUint``)."""
    values: np.ndarray
    max_bits: int = -1

    def __post_init__(self):
        values = np.empty(len(self.values), object)
        values[:] = [int(v) for v in self.values]
        if self.max_bits is None or int(self.max_bits) < 0:
            self.max_bits = -1
            if any(v < 0 for v in values):
                raise ValueError("negative BigInt values need max_bits: the server stores "
                                 "unsigned limbs and wraps modulo 2**max_bits")
        else:
            self.max_bits = int(self.max_bits)
            mask = (1 << self.max_bits) - 1
            values[:] = [v & mask for v in values]
        self.values = values

    def __len__(self):
        return len(self.values)

    def num_limbs(self):
        """bigintToUint's count: limbs until every value is shifted to zero, at least one."""
        top = max((v.bit_length() for v in self.values), default=0)
        return max(1, -(-top // 64))

    def limbs(self, count=None):
        """The uint64 limb arrays, least significant first."""
        count = self.num_limbs() if count is None else count
        low = (1 << 64) - 1
        return [np.array([(v >> (64 * i)) & low for v in self.values], np.uint64)
                for i in range(count)]

    @classmethod
    def from_limbs(cls, limbs, max_bits=-1):
        """readBigIntPdarrayFromFile: sum of limb_i << 64 i, masked by max_bits when given."""
        n = len(limbs[0]) if limbs else 0
        values = [0] * n
        for i, limb in enumerate(limbs):
            for k, v in enumerate(limb.tolist()):
                values[k] += int(v) << (64 * i)
        return cls(values, max_bits)

    def tolist(self):
        return list(self.values)

    def _slice(self, lo, hi):
        return BigInt(self.values[lo:hi], self.max_bits)

    def _split(self, parts):
        return [self._slice(lo, hi) for lo, hi in bounds(len(self), parts)]

    @classmethod
    def _concat(cls, parts):
        return cls(np.concatenate([p.values for p in parts]), parts[0].max_bits)


@dataclass(eq=False)
class ArrayView(_Schema):
    """An n-d array stored flattened with ``Rank`` and ``Shape`` (ObjType 0). Read from older
    files; the current server no longer reads it (ArrayView was removed, arkouda #3752), so
    ``write`` stores one only when asked (``arrayview=True``)."""
    values: np.ndarray
    shape: tuple = None

    def __post_init__(self):
        values = np.asarray(self.values)
        if self.shape is None:
            self.shape = values.shape
        self.shape = tuple(int(s) for s in self.shape)
        self.values = values.reshape(-1)

    def to_ndarray(self):
        return self.values.reshape(self.shape)

    def _objtype(self):
        return ARRAYVIEW

    def _split(self, parts):
        return [ArrayView(p, self.shape) for p in split(self.values, parts)]

    @classmethod
    def _concat(cls, parts):
        return cls(concat([p.values for p in parts]), parts[0].shape)


@dataclass(eq=False)
class _Segmented(_Schema):
    """``values`` cut into elements by ``segments`` (int64 start offsets)."""
    values: object
    segments: np.ndarray

    def __len__(self):
        return len(self.segments)

    def _members(self):
        return [("values", self.values), ("segments", self.segments)]

    def _slice(self, lo, hi):
        start, stop = (self._offset(i) for i in (lo, hi))
        return type(self)(_slice(self.values, start, stop), self.segments[lo:hi] - start)

    def _offset(self, i):
        return int(self.segments[i]) if i < len(self.segments) else len(self.values)

    def _split(self, parts):
        return [self._slice(lo, hi) for lo, hi in bounds(len(self), parts)]

    @classmethod
    def _build(cls, members):
        if "segments" in members:
            return cls(members["values"], members["segments"])
        return Strings.from_values(members["values"])     # schema: Strings offsets optional

    @classmethod
    def _concat(cls, parts):
        starts = np.cumsum([0] + [len(p.values) for p in parts[:-1]])
        segments = [p.segments + s for p, s in zip(parts, starts)]
        return cls(concat([p.values for p in parts]), np.concatenate(segments).astype(np.int64))


class Strings(_Segmented):
    """Strings (ObjType 2): uint8 ``values`` (each string null-terminated), int64 ``segments``."""

    @classmethod
    def from_list(cls, strings):
        encoded = [str(s).encode("utf-8") + b"\0" for s in strings]
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        segments = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        return cls(np.frombuffer(b"".join(encoded), np.uint8).copy(), segments[:len(encoded)])

    @classmethod
    def from_values(cls, values):
        """Segments recomputed from the null terminators (the schema's optional offsets)."""
        ends = np.flatnonzero(values == 0)
        return cls(values, np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)[:len(ends)])

    def tolist(self):
        raw = self.values.tobytes()
        stops = list(self.segments[1:]) + [len(raw)]
        return [raw[a:b].split(b"\0", 1)[0].decode("utf-8") for a, b in zip(self.segments, stops)]

    def _objtype(self):
        return STRINGS


class SegArray(_Segmented):
    """SegArray (ObjType 3): numeric/bool ``values``, a BigInt or a Strings, and int64
    ``segments``."""

    @classmethod
    def from_lists(cls, rows):
        """A SegArray of Python sequences: numbers (one numpy dtype for all; Python ints
        beyond 64 bits make a BigInt) or strings (a Strings of values)."""
        from .convert import to_values
        rows = [list(r) for r in rows]
        lengths = np.fromiter(map(len, rows), np.int64, len(rows))
        segments = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)[:len(rows)]
        flat = [x for r in rows for x in r]
        return cls(to_values(flat, "SegArray values"), segments)

    def tolist(self):
        values = self.values.tolist()
        stops = list(self.segments[1:]) + [len(values)]
        return [values[a:b] for a, b in zip(self.segments, stops)]

    def _objtype(self):
        return SEGARRAY

    def _is_bool(self):
        return isinstance(self.values, np.ndarray) and self.values.dtype == np.bool_


@dataclass(eq=False)
class Categorical(_Schema):
    """Categorical (ObjType 4): int64 codes into Strings categories, NA codes, and the
    optional permutation and segments."""
    codes: np.ndarray
    categories: Strings
    na_codes: np.ndarray
    permutation: np.ndarray = None
    segments: np.ndarray = None

    @classmethod
    def from_list(cls, values, na_value="N/A"):
        """A Categorical of strings, as Arkouda builds one from a Strings: the distinct values
        as categories (here in sorted order), codes into them, the grouping permutation and
        segments, and ``na_value`` appended to the categories when absent (its index is the
        NA code)."""
        values = [str(v) for v in values]
        cats, codes = np.unique(np.array(values, dtype=object), return_inverse=True) \
            if values else (np.zeros(0, object), np.zeros(0, np.int64))
        cats = [str(c) for c in cats]
        codes = np.asarray(codes, np.int64).reshape(-1)
        permutation = np.argsort(codes, kind="stable").astype(np.int64)
        counts = np.bincount(codes, minlength=len(cats)).astype(np.int64)
        segments = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)[:len(cats)]
        if na_value in cats:
            na = cats.index(na_value)
        else:
            cats.append(na_value)
            na = len(cats) - 1
        if not values:
            return cls(codes, Strings.from_list(cats), np.array([na], np.int64))
        return cls(codes, Strings.from_list(cats), np.array([na], np.int64), permutation,
                   segments)

    def tolist(self):
        return [self.categories.tolist()[c] for c in self.codes]

    def _members(self):
        members = [("codes", self.codes), ("categories", self.categories),
                   ("NA_Codes", self.na_codes)]
        if self.permutation is not None and self.segments is not None:
            members += [("permutation", self.permutation), ("segments", self.segments)]
        return members

    def _objtype(self):
        return CATEGORICAL

    @classmethod
    def _build(cls, members):
        return cls(members["codes"], members["categories"], members.get("NA_Codes"),
                   members.get("permutation"), members.get("segments"))


@dataclass(eq=False)
class GroupBy(_Schema):
    """GroupBy (ObjType 5): permutation, segments, unique_key_idx and its keys."""
    permutation: np.ndarray
    segments: np.ndarray
    unique_key_idx: np.ndarray
    keys: list = field(default_factory=list)

    def _members(self):
        return [("segments", self.segments), ("permutation", self.permutation),
                ("unique_key_idx", self.unique_key_idx)] + numbered("KEY", self.keys)

    def _objtype(self):
        return GROUPBY

    def _counts(self):
        return {"NumKeys": len(self.keys)}

    @classmethod
    def _build(cls, members):
        return cls(members["permutation"], members["segments"], members["unique_key_idx"],
                   numbered_members("KEY", members))


@dataclass(eq=False)
class DataFrame(_Schema):
    """DataFrame (ObjType 6): an ``Index`` member and one member per column."""
    columns: dict
    index: object

    def _members(self):
        return [("Index", self.index)] + list(self.columns.items())

    def _objtype(self):
        return DATAFRAME

    def _counts(self):
        return {"NumCols": len(self.columns)}

    @classmethod
    def _build(cls, members):
        return cls({k: v for k, v in members.items() if k != "Index"}, members["Index"])


@dataclass(eq=False)
class Index(_Schema):
    """Index (ObjType 12) or MultiIndex (13, more than one level): ``IDX_<i>`` members."""
    levels: list

    def _members(self):
        return numbered("IDX", self.levels)

    def _objtype(self):
        return INDEX if len(self.levels) == 1 else MULTIINDEX

    def _counts(self):
        return {"NumIdx": len(self.levels)}

    @classmethod
    def _build(cls, members):
        return cls(numbered_members("IDX", members))


def numbered(prefix, items):
    return [(f"{prefix}_{i}", item) for i, item in enumerate(items)]


def numbered_members(prefix, members):
    count = sum(1 for k in members if k.startswith(prefix + "_"))
    return [members[f"{prefix}_{i}"] for i in range(count)]
