"""Search-index maintenance after an append (HEP001 §9: a mutation MUST update or delete the
affected indexes). Each updater brings an index from ``old_n`` rows to its column's current
length, in place, with exactly the contents a rebuild would give.
"""
import numpy as np

from . import indexes as ix
from ._attrs import get_refs, set_u64


def update_index(group, index, old_n, fill):
    """Update ``index`` for the rows appended after ``old_n``; False when its datasets cannot
    grow in place or a SORTED_ROWS permutation is out of range (the caller rebuilds it). A
    BITMAP that would exceed its ``max_values`` raises :class:`.indexes.TooManyValues`
    before changing anything (the caller drops it)."""
    if len(index.column) == old_n:
        return True
    if index.kind == "BITMAP":
        values = get_refs(index.ds, "_values")
        if not (ix.extendible(index.ds, grow_all=True) and values and values[0] is not None
                and ix.extendible(values[0])):
            return False
        _update_bitmap(group, index, values[0], old_n, fill)
        return True
    if not ix.extendible(index.ds):
        return False
    if index.kind == "SORTED_ROWS":
        return _update_sorted(index, old_n, fill)
    _update_chunks(index, old_n, fill)
    return True


def _update_chunks(index, old_n, fill):
    """CHUNK_MINMAX / CHUNK_BLOOM (§8.4, §8.7): rebuild the rows of the last old chunk and of
    the new chunks; the others keep theirs."""
    length = ix.chunk_length(index.column)
    first = old_n // length
    rows, _ = ix.BUILDERS[index.kind](index.column[first * length:], fill, length,
                                      **ix.rebuild_options(index))
    index.ds.resize(first + len(rows), axis=0)
    index.ds[first:] = rows


def _split(perm, attrs):
    """(body, fill tail, NaN tail) of a SORTED_ROWS permutation (§8.5); None when the tail
    lengths are missing or do not fit in it."""
    if "nan_tail_length" not in attrs or "fill_tail_length" not in attrs:
        return None
    nan, filled = int(attrs["nan_tail_length"]), int(attrs["fill_tail_length"])
    body = len(perm) - nan - filled
    if min(nan, filled, body) < 0:
        return None
    return perm[:body], perm[body:body + filled], perm[body + filled:]


def _update_sorted(index, old_n, fill):
    """SORTED_ROWS (§8.5): sort the appended rows and merge them into the body (after equal
    old values: their rows are larger), append them to the fill and NaN tails; only the
    positions from the first change on are rewritten.

    The merge indexes the column with the stored permutation, which another writer may have
    damaged while leaving its shape current: a row number outside the old rows or tail
    lengths that do not fit give False (the caller rebuilds the index, as for one that
    cannot grow) instead of an IndexError or a merge of garbage. Only this range is checked,
    in one pass over what is read anyway; a permutation still wrong within it stays as wrong
    as it was (queries in "verify" mode reject it)."""
    ds, values = index.ds, index.column[()]
    old = ds[()].astype(np.int64)       # a uint64 row >= 2**63 turns negative: out of range
    parts = _split(old, ds.attrs)
    if parts is None or (len(old) and not 0 <= old.min() <= old.max() < old_n):
        return False
    new, attrs = ix.build_sorted(values[old_n:], fill, 0)
    body, fills, nans = parts
    new_body, new_fills, new_nans = _split(new.astype(np.int64) + old_n, attrs)
    at = np.searchsorted(values[body], values[new_body], side="right")
    perm = np.concatenate([np.insert(body, at, new_body), fills, new_fills, nans, new_nans])
    changed = np.flatnonzero(old != perm[:old_n])
    first = int(changed[0]) if len(changed) else old_n
    ds.resize(len(perm), axis=0)
    ds[first:] = perm[first:].astype(ds.dtype)
    for name in ("nan_tail_length", "fill_tail_length"):
        set_u64(ds, name, int(ds.attrs[name]) + attrs[name])
    return True


def _update_bitmap(group, index, values_ds, old_n, fill):
    """BITMAP (§8.6): new values get rows (kept in value order, so later rows move down),
    every row is rewritten from the byte holding row ``old_n`` on."""
    ds, column = index.ds, index.column
    head = old_n // 8
    tail = column[head * 8:]
    old_values = values_ds[()]
    values = np.union1d(old_values, tail[~ix.nan_mask(tail)]).astype(old_values.dtype)
    if len(values) > ix.rebuild_options(index)["max_values"]:
        raise ix.TooManyValues(f"{ds.name}: {len(values)} values exceed its max_values")
    moved = np.searchsorted(values, old_values)
    shifted = np.flatnonzero(moved != np.arange(len(old_values)))
    ds.resize((len(values), (len(column) + 7) // 8))
    if head:
        _move_rows(ds, moved, shifted, np.setdiff1d(np.arange(len(values)), moved), head)
    ds[:, head:] = ix.bitmap_rows(tail, values)
    first = int(shifted[0]) if len(shifted) else len(old_values)
    values_ds.resize((len(values),))
    values_ds[first:] = values[first:]


def _move_rows(ds, moved, shifted, added, head):
    """Bytes ``[:head]`` of the old rows that moved, last first (a row only moves down), and
    zeros in the rows of added values (no old row holds them)."""
    for j in shifted[::-1]:
        ds[int(moved[j]), :head] = ds[int(j), :head]
    for k in added:
        ds[int(k), :head] = np.zeros(head, dtype=np.uint8)
