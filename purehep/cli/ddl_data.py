"""h5dump's text for data values: one string per element (``%g`` floats, quoted and escaped
strings, ``{ ... }`` compounds over several lines, ``[ ... ]`` arrays, ``( ... )`` variable-length
sequences, enum names, ``0x..`` bitfields and opaque bytes, ``DATASET 800 "/path"`` object
references), and the lines h5dump arranges them in: about 80 columns, each line starting with the
``(i,j):`` position of its first element, a new line at the start of each row of the last
dimension. The rule is h5dump 1.10's (tools/lib h5tools_render_element): an element goes on the
current line when the column after it, plus one, stays within 80, where the column after a
``(pos): `` prefix counts the prefix and one more indentation step than is printed.

Formatting is vectorised per datatype (numpy casts for integers, one ``%`` per float) and the
line breaking looks up each line's end in the cumulative widths with ``searchsorted``, so the
Python work is per line, not per element.
"""
import re
from bisect import bisect_right

import numpy as np

from ..format.messages import datatype as T

WIDTH = 80
INDENT = "   "
_KEPT = b"\b\f\n\r\t"
_UNPRINTABLE = re.compile("[^\x20-\x7e\b\f\n\r\t]")


# -- one string per element --------------------------------------------------------------------
def _escape(raw):
    """A C string as h5dump 1.10 prints it by default: printable ASCII, quotes, backslashes
    and the common control characters as they are; other bytes in octal (bytes over 127 as
    libhdf5's signed ``char`` prints them)."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        text = None
    if text is not None and (text.isprintable() or not _UNPRINTABLE.search(text)):
        return text
    parts = []
    for b in raw:
        if 32 <= b < 127 or b in _KEPT:
            parts.append(chr(b))
        else:
            parts.append("\\%03o" % (b if b < 128 else (b - 256) & 0xFFFFFFFF))
    return "".join(parts)


def _fixed_strings(dt, values):
    """Fixed-size strings with their stored padding restored (purehep trims it, h5dump
    prints NUL padding as ``\\000`` and space padding as spaces)."""
    size = dt.size
    raw = np.ascontiguousarray(values).astype(f"S{size}").reshape(-1).view(np.uint8)
    raw = raw.reshape(-1, size)
    if dt.padding == 2:         # space-padded: trailing NULs were spaces
        tail = np.flip(np.cumprod(np.flip(raw == 0, -1), axis=-1), -1).astype(bool)
        raw = np.where(tail, np.uint8(32), raw)
    out = []
    for row in raw:
        b = row.tobytes()
        if dt.padding == 0:
            b = b.split(b"\0", 1)[0]
        out.append(f'"{_escape(b)}"' if b else '""')
    return out


def _vlen_strings(values):
    out = []
    for v in values:
        if v is None:
            out.append("NULL")
            continue
        b = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v)
        out.append(f'"{_escape(b)}"' if b else '""')
    return out


def _floats(values):
    """``%g`` of each value; NaN with the sign bit set prints as glibc prints it."""
    flat = values.reshape(-1)
    if flat.dtype.itemsize > 8:
        flat = flat.astype(np.float64)
    out = ["%g" % x for x in flat.tolist()]
    if flat.size and np.isnan(flat).any():
        for i in np.flatnonzero(np.isnan(flat) & np.signbit(flat)):
            out[i] = "-nan"
    return out


def _hex_bytes(values, size):
    raw = np.ascontiguousarray(values).reshape(-1).view(np.uint8).reshape(-1, size)
    if size == 1:
        return ["0x%02x" % b for b in raw[:, 0].tolist()]
    return [":".join("%02x" % b for b in row) for row in raw.tolist()]


def _bitfields(dt, values):
    native = np.ascontiguousarray(values.reshape(-1).astype(f"<u{dt.size}"
                                                        if dt.size in (1, 2, 4, 8) else "u8"))
    return _hex_bytes(native, dt.size)


_NAME_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                               "\b": "\\b", "\f": "\\f", '"': '\\"', "'": "\\'"})


def _enum(dt, values):
    """Member names (escaped as h5dump escapes names); a value no member has prints as its
    bytes in memory order."""
    names = {v: (n if isinstance(n, str) else n.decode("latin-1")).translate(_NAME_ESCAPES)
             for v, n in zip(dt.enum_values, dt.enum_names)}
    flat = values.reshape(-1)
    out = [names.get(v) for v in flat.tolist()]
    unknown = [i for i, x in enumerate(out) if x is None]
    if unknown:
        raw = _hex_bytes(flat[unknown].astype(f"<{flat.dtype.kind}{dt.size}"), dt.size)
        for i, text in zip(unknown, raw):
            out[i] = text
    return out


def _members(dt, values):
    """(member datatype, member values) pairs of a compound; complex numbers (purehep's
    reading of an ('r', 'i') compound) are split back into their two members."""
    if values.dtype.names is None and values.dtype.kind == "c":
        return [(dt.members[0].type, values.real), (dt.members[1].type, values.imag)]
    return [(m.type, values[m.name]) for m in dt.members]


def _compounds(dt, values, level, refs):
    inner, outer = INDENT * (level + 1), INDENT * level
    cols = [strings(mt, mv, level + 1, refs) for mt, mv in _members(dt, values)]
    if not cols:
        return ["{\n" + outer + "}"] * values.size
    head, sep, tail = "{\n" + inner, ",\n" + inner, "\n" + outer + "}"
    return [head + sep.join(parts) + tail for parts in zip(*cols)]


def _arrays(dt, values, level, refs):
    """``[ a, b, ... ]``; a row of the innermost dimension per line when there are several."""
    n = int(np.prod(dt.dims, dtype=np.int64))
    inner = dt.base.dims if dt.base.cls == T.ARRAY else ()
    flat = strings(dt.base, values.reshape((-1,) + tuple(inner)), level + 1, refs)
    row = dt.dims[-1] if dt.dims else 1
    brk = ",\n" + INDENT * (level + 1)
    out = []
    for start in range(0, len(flat), n):
        items = flat[start:start + n]
        rows = [", ".join(items[r:r + row]) for r in range(0, n, row)]
        out.append("[ " + brk.join(rows) + " ]")
    return out


def _vlens(dt, values, level, refs):
    out = []
    for seq in values.reshape(-1):
        if seq is None:
            out.append("()")
            continue
        seq = np.asarray(seq)
        out.append("(" + ", ".join(strings(dt.base, seq, level + 1, refs)) + ")")
    return out


def strings(dt, values, level, refs):
    """The h5dump text of each element of ``values`` (C order), read as purehep reads the
    format-level datatype ``dt``; ``level`` is h5dump's indentation level of the data (used by
    the lines inside compounds and multi-row arrays); ``refs(reference)`` names a reference."""
    values = np.asarray(values)
    cls = dt.cls
    if cls in (T.FIXED, T.TIME):
        if dt.kind == "bigint" or values.dtype == object:
            return [str(int(v)) for v in values.reshape(-1)]
        return values.reshape(-1).astype(str).tolist()
    if cls == T.FLOAT:
        return _floats(values)
    if cls == T.STRING:
        return _fixed_strings(dt, values)
    if cls == T.VLEN and dt.vlen_string:
        return _vlen_strings(values.reshape(-1))
    if cls == T.VLEN:
        return _vlens(dt, values, level, refs)
    if cls == T.BITFIELD:
        return _bitfields(dt, values)
    if cls == T.OPAQUE:
        return _hex_bytes(values, dt.size)
    if cls == T.ENUM:
        if dt.kind == "bool":
            return np.where(values.reshape(-1), "TRUE", "FALSE").tolist()
        return _enum(dt, values)
    if cls == T.COMPOUND:
        return _compounds(dt, values.reshape(-1), level, refs)
    if cls == T.ARRAY:
        return _arrays(dt, values, level, refs)
    if cls == T.REFERENCE:
        return [refs(r) for r in values.reshape(-1)]
    if cls == T.COMPLEX:
        flat = values.reshape(-1)
        re, im = _floats(flat.real), _floats(flat.imag)
        return [f"{a}{'+' if not b.startswith('-') else ''}{b}i" for a, b in zip(re, im)]
    return ["?"] * values.size


# -- lines ---------------------------------------------------------------------------------------
class Lines:
    """Arranges element strings into h5dump's data lines. Feed the elements in order with
    :meth:`feed` (in blocks of any size); each call returns the lines completed so far, and
    :meth:`finish` the rest. ``positions`` maps a flat element number to its ``(i,j)``
    coordinates; ``row`` is the number of elements per row of the last dimension."""

    def __init__(self, total, row, positions, pad):
        self.total = total
        self.row = max(int(row), 1)
        self.positions = positions
        self.pad = pad
        self.base = len(pad) + len(INDENT)
        self.start = 0           # flat number of the first pending element
        self.pending = []
        self.plane = None        # elements per separately printed plane (no comma after each)

    def feed(self, items):
        self.pending.extend(items)
        return self._lines(final=False)

    def finish(self):
        return self._lines(final=True)

    def _ends(self, i):
        return bool(self.plane) and (self.start + i + 1) % self.plane == 0

    def _join(self, items, k, j):
        if not self.plane:
            return ", ".join(items[k:j])
        return "".join(x + ("" if i == j - 1 else " " if self._ends(i) else ", ")
                       for i, x in zip(range(k, j), items[k:j]))

    def _lines(self, final):
        items = self.pending
        n = len(items)
        if n == 0:
            return []
        lens = np.fromiter(map(len, items), np.int64, n)
        widths = lens + 1                          # with the comma
        if self.start + n == self.total:
            widths[-1] -= 1                        # the last element has no comma
        if self.plane:
            ends = (np.arange(n) + self.start + 1) % self.plane == 0
            widths[ends] = lens[ends]
        cum = np.cumsum(widths + 1).tolist()       # column taken by "<space>item,"
        widths = widths.tolist()
        out, k, pad, start, row, total = [], 0, self.pad, self.start, self.row, self.total
        base, positions, plain = self.base, self.positions, not self.plane
        flat = row >= total and plain and len(positions(start)) == 1    # 1-D: simplest lines
        while k < n:
            g = start + k
            at = positions(g)
            prefix = f"({at[0]}): " if flat else "(" + ",".join(map(str, at)) + "): "
            row_end = (g // row + 1) * row - start                          # exclusive, local
            limit = cum[k] + WIDTH - base - len(prefix) - widths[k]
            j = bisect_right(cum, limit, k + 1, row_end if row_end < n else n)
            if j == n and n < row_end and not final:
                break                      # the line may continue with the next block
            if plain:
                text = ", ".join(items[k:j]) + ("," if start + j < total else "")
            else:
                text = self._join(items, k, j) + (
                    "," if start + j < total and not self._ends(j - 1) else "")
            out.append(pad + prefix + text)
            k = j
        self.start += k
        self.pending = items[k:]
        return out
