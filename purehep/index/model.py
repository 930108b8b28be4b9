"""The Index object and the operations create_index, open_index, cache_index and
delete_index (RFC §5.1 "Conceptual structures", §5.2 "Operations" 1–4)."""
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from ..dtypes import check_enum_dtype, ref_dtype, regionref_dtype
from ..query import And, Between, Compare, IsNull, Not, Or, parse
from ..reference import Reference, RegionReference
from . import storage
from .search import Searcher


class Index:
    """An index: records sorted by ``keys`` (precedence order) with one target field.

    Bound to a table in a file (``table`` set: records are read from the file on each
    use) or cached in memory (``table`` None: independent of any file, RFC §5.2.4).
    """

    def __init__(self, records, keys, target_field, target_type, primary=None, title="",
                 target_dataset=None, target_rank=None, table=None, paths=None):
        self._records = records
        self._paths = dict(paths or {})
        self.keys = tuple(keys)
        self.primary = primary
        self.target_field = target_field
        self.target_type = target_type
        self.title = title
        self.target_dataset = target_dataset
        self.target_rank = target_rank
        self.table = table
        self.deleted = False
        self._search = (None, None)     # (state it was loaded at, Searcher)

    @property
    def records(self):
        """The index records, a structured array (read from the table when bound)."""
        self._alive()
        return self.table[...] if self.table is not None else self._records

    @property
    def secondary_keys(self):
        return tuple(k for k in self.keys if k != self.primary)

    @property
    def cached(self):
        return self.table is None

    def metadata(self):
        """The descriptive state (everything but the records) as constructor keywords."""
        return dict(keys=self.keys, primary=self.primary, target_field=self.target_field,
                    target_type=self.target_type, title=self.title,
                    target_dataset=self.target_dataset, target_rank=self.target_rank)

    def target_paths(self, records=None):
        """{address: path} of the objects the targets (and an element index's dataset)
        refer to: resolved in the file for a bound index (None where an address resolves to
        nothing; ``records``: the index's records when already read), the paths it was made
        with for a cached one (see :mod:`.xmlio`)."""
        if self.table is None:
            return dict(self._paths)
        addresses = {int(self.target_dataset.address)} if self.target_dataset is not None else set()
        if self.target_type != "element":
            stored = self.targets(range(len(self))) if records is None else \
                records[self.target_field]
            addresses |= {int(t.address) for ts in stored for t in ts}
        return _paths(self.table.file, addresses)

    def __len__(self):
        self._alive()
        return len(self.table) if self.table is not None else len(self._records)

    def _alive(self):
        if self.deleted:
            raise ValueError("the index was deleted")

    def __repr__(self):
        where = "cached" if self.cached else f'"{self.table.name}"'
        return (f"<purehep Index {where}: {len(self)} records, keys {list(self.keys)}, "
                f"{self.target_type} targets>")

    @property
    def dtype(self):
        self._alive()
        return self.table.dtype if self.table is not None else self._records.dtype

    def _read(self, names, rows=slice(None)):
        """Field name -> values of the records ``rows`` (default: all); a bound index reads
        just those fields, never the variable-length target field unless it is asked for."""
        self._alive()
        if self.table is None:
            return {n: self._records[n][rows] for n in names}
        data = self.table.fields(list(names))[rows]
        return {n: data[n] for n in names}

    def columns(self):
        """Field name -> 1-D array for every field but the target field."""
        return self._read([f for f in self.dtype.names if f != self.target_field])

    def query(self, query):
        """Record numbers (ascending) of the records satisfying ``query`` (text or Expr),
        found by binary search on the sorted keys (RFC §5.2.2)."""
        expr = parse(query) if isinstance(query, str) else query
        return self._searcher().run(_enum_values(expr, self.dtype))

    def _searcher(self):
        """The Searcher over the key fields, loaded (and its sort order checked) once and
        kept until the records change: a cached index's records replaced, a bound index's
        file written (its writer's generation moves on each staged change)."""
        self._alive()
        state = self._state()
        if self._search[0] != state:
            dtypes = {f: self.dtype[f] for f in self.dtype.names if f != self.target_field}
            keys = [k for k in self.keys if k in dtypes]
            read = lambda name, lo, hi: self._read([name], slice(lo, hi))[name]  # noqa: E731
            self._search = (state, Searcher(self._read(keys), self.keys, dtypes, read, len(self)))
        return self._search[1]

    def _state(self):
        if self.table is None:      # the records object itself: identity, never a reused id
            return ("cached", _Identity(self._records))
        writer = self.table.file._writer
        if writer is None:
            return ("read-only", id(self.table))
        self.table._sync()                  # stages pending writes: the generation moves on
        return ("written", id(self.table), writer.generation)

    def targets(self, records):
        """Per record number, its stored targets: an array of References or
        RegionReferences, or (element indexes) an (n, rank) array of coordinates."""
        rows = np.asarray(records, dtype=np.int64).reshape(-1)
        if not len(rows):
            return []
        unique, back = np.unique(rows, return_inverse=True)
        column = self._read([self.target_field], unique)[self.target_field]
        stored = [column[i] for i in back]
        if self.target_type == "element":
            return [np.asarray(t, np.uint64).reshape(-1, self.target_rank) for t in stored]
        return stored

    def dereference(self, records, file=None):
        """Per record number, its targets resolved in ``file`` (default: the index's own):
        objects; the selected values of each region; the values of each element."""
        file = self.table.file if file is None else file
        if self.target_type == "object":
            return [[file[ref] for ref in t] for t in self.targets(records)]
        if self.target_type == "region":
            return [[file[ref][ref] for ref in t] for t in self.targets(records)]
        values = file[self.target_dataset][...]
        return [values[tuple(c.T.astype(np.intp))] for c in self.targets(records)]


class _Identity:
    """Equal only to a wrapper of the very same object."""

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.obj is self.obj

    __hash__ = None


def _paths(file, addresses):
    """{address: a path reaching it by hard links, or None}, from one walk of the file (a
    search per address, as ``obj.name`` does for dereferenced objects, is quadratic)."""
    want, found = set(addresses), {}
    root = file["/"]
    if root.addr in want:
        found[root.addr] = "/"

    def visit(name, obj):
        if obj.addr in want and obj.addr not in found:
            found[obj.addr] = "/" + name
        return True if len(found) == len(want) else None
    if len(found) < len(want):
        file.visititems(visit)
    return {a: found.get(a) for a in sorted(want)}


def _enum_values(expr, dtype):
    """``expr`` with enum member names replaced by their values (RFC §5.1: key fields may be
    enumerated); other literals are left for the query evaluator to judge."""
    if isinstance(expr, (And, Or)):
        return replace(expr, items=tuple(_enum_values(e, dtype) for e in expr.items))
    if isinstance(expr, Not):
        return replace(expr, item=_enum_values(expr.item, dtype))
    enum = check_enum_dtype(dtype[expr.field]) if expr.field in dtype.names else None
    if not enum or isinstance(expr, IsNull):
        return expr
    value = lambda v: enum.get(v, v) if isinstance(v, str) else v  # noqa: E731
    if isinstance(expr, Compare):
        return replace(expr, value=value(expr.value))
    if isinstance(expr, Between):
        return replace(expr, lo=value(expr.lo), hi=value(expr.hi))
    return replace(expr, values=tuple(map(value, expr.values)))


# --- create_index -------------------------------------------------------------------------------

def create_index(loc, name, table, keys, target, target_type="object", primary=None,
                 names=None, extra=None, target_dataset=None, title=""):
    """Create index table ``loc[name]`` from ``table`` (RFC §5.2.1) and return it bound.

    ``table``: a structured array, a compound Dataset or a mapping name -> values.
    ``keys``: key field names in sort precedence; ``primary``: the key whose values are
    unique, if any; ``names``: input name -> index field name; ``extra``: other fields to
    carry (default: all the others); ``target``: the field holding each record's targets
    (one target or a sequence: purehep objects or References for "object", RegionReferences
    for "region", coordinates in ``target_dataset`` for "element").
    """
    index = build_index(table, keys, target, target_type, primary, names, extra,
                        target_dataset, title)
    return Index(None, table=storage.write_table(loc, name, index), **index.metadata())


def build_index(table, keys, target, target_type="object", primary=None, names=None,
                extra=None, target_dataset=None, title=""):
    """The cached (in-memory) Index create_index writes: records sorted by ``keys``."""
    if target_type not in storage.TARGET_TYPES:
        raise ValueError(f"target_type must be one of {storage.TARGET_TYPES}")
    columns = _input_columns(table)
    keys = list(keys)
    carried = [f for f in columns if f not in keys and f != target] if extra is None \
        else list(extra)
    for field in keys + carried + [target]:
        if field not in columns:
            raise KeyError(f"no field {field!r} in the input table")
    if primary is not None and primary not in keys:
        raise ValueError(f"primary key {primary!r} is not one of the keys {keys}")
    names = {f: f for f in columns} | dict(names or {})
    rank = None if target_dataset is None else len(target_dataset.shape)
    if target_type == "element" and rank is None:
        raise ValueError("element indexes need target_dataset")
    columns = {f: _key_column(v, f) if f in keys or f in carried else v for f, v in columns.items()}
    order = np.lexsort([columns[k] for k in reversed(keys)]) if keys else \
        np.arange(len(columns[target]))
    dtype = np.dtype([(names[f], columns[f].dtype) for f in keys + carried]
                     + [(names[target], storage.target_dtype(target_type))])
    records = np.zeros(len(order), dtype)
    for f in keys + carried:
        records[names[f]] = columns[f][order]
    shape = None if target_dataset is None else target_dataset.shape
    for i, r in enumerate(order):
        records[names[target]][i] = _targets(columns[target][r], target_type, shape)
    if primary is not None and len(np.unique(records[names[primary]])) != len(records):
        raise ValueError(f"primary key {primary!r} has duplicate values")
    return Index(records, [names[k] for k in keys], names[target], target_type,
                 None if primary is None else names[primary], title,
                 None if target_dataset is None else target_dataset.ref, rank)


def _input_columns(table):
    """Field name -> values of a structured array, compound Dataset or mapping."""
    if isinstance(table, Mapping):
        return dict(table)
    records = np.asarray(table[...] if hasattr(table, "attrs") else table)
    if records.dtype.names is None:
        raise TypeError("the input table must have named fields")
    return {f: records[f] for f in records.dtype.names}


def _key_column(values, name=None):
    """Values as a 1-D numpy column; text becomes UTF-8 fixed-length strings (H5TB fields
    are fixed-length). Object columns (pandas' str and string dtypes, lists of str or bytes)
    are accepted when every value is a str, or every value bytes; missing values (None, NaN,
    pandas NA) and mixed objects are refused: a fixed-length field holds neither."""
    column = np.asarray(values)
    if column.dtype.kind == "O":
        column = _object_keys(column, name)
    if column.dtype.kind == "U":
        encoded = np.char.encode(column, "utf-8")
        return encoded.astype(np.dtype(encoded.dtype, metadata={"h5py_encoding": "utf-8"}))
    return column


def _object_keys(column, name):
    """An object column as numpy str or bytes (see :func:`_key_column`)."""
    items = column.reshape(-1).tolist()
    kinds = {type(v) for v in items}
    if kinds <= {str}:
        return np.array(items, dtype=str) if items else np.zeros(0, "S1")
    if kinds <= {bytes}:
        return np.array(items, dtype=bytes)
    bad = next((v for v in items if not isinstance(v, (str, bytes))), None)
    if bad is None and not any(v is None for v in items):
        raise ValueError(f"field {name!r}: object values mix str and bytes (found bytes "
                         f"{next(v for v in items if isinstance(v, bytes))!r} among str)")
    missing = bad is None or type(bad).__name__ == "NAType" or \
        (isinstance(bad, float) and bad != bad)
    what = "missing values" if missing else f"a {type(bad).__name__} value ({bad!r})"
    raise ValueError(f"field {name!r}: object values must be all str or all bytes; found "
                     f"{what} (fixed-length index fields hold no missing or mixed values)")


def _targets(value, target_type, shape):
    """One record's targets as the array its vlen target field stores."""
    if target_type == "element":
        coords = np.asarray(value, dtype=np.int64).reshape(-1, len(shape))
        if coords.size and (coords.min() < 0 or np.any(coords >= np.asarray(shape))):
            raise ValueError(f"element coordinates {coords.tolist()} outside {shape}")
        return coords.astype(np.uint64).ravel()
    items = [value] if isinstance(value, Reference) or hasattr(value, "ref") else list(value)
    if target_type == "region":
        if not all(isinstance(t, RegionReference) for t in items):
            raise TypeError("region indexes need RegionReferences (ds.regionref[...])")
        return np.array(items, dtype=regionref_dtype)
    refs = [t if isinstance(t, Reference) else t.ref for t in items]
    if any(isinstance(t, RegionReference) for t in refs):
        raise TypeError("object indexes need object references, not region references")
    return np.array(refs, dtype=ref_dtype)


# --- open, cache, delete --------------------------------------------------------------------------

def open_index(loc, name=None):
    """The index stored in table ``loc[name]`` (or the table ``loc`` itself), bound."""
    table = loc if name is None else loc[name]
    return Index(None, table=table, **storage.read_metadata(table))


def cache_index(index, name=None):
    """An in-memory copy of an index (an Index, or ``index[name]`` a table) that keeps
    working after its file is closed (RFC §5.2.4)."""
    index = index if isinstance(index, Index) else open_index(index, name)
    records = np.array(index.records)
    return Index(records, paths=index.target_paths(records), **index.metadata())


def delete_index(index, name=None):
    """Delete an index (RFC §5.2.3): a cached one is dropped from memory, its file untouched;
    a stored one (an Index bound to its table, or ``loc, name``) is unlinked from its file
    with its metadata — all of which lives in the table's own attributes."""
    if isinstance(index, Index) and index.cached:
        index._records = None
        index.deleted = True
        return
    table = index.table if isinstance(index, Index) else index[name]
    storage.read_metadata(table)            # refuse to delete anything that is not an index
    parent = table.parent
    del parent[table.name.rsplit("/", 1)[-1]]
    if isinstance(index, Index):
        index.table = None
        index.deleted = True
