"""pandas HDFStore files (``DataFrame.to_hdf`` / ``pandas.read_hdf``) with no PyTables and no
libhdf5: ``read_hdf``, ``to_hdf`` and a small read-only ``HDFStore``, on purehep's File.

Both of pandas' formats are read: "fixed" (``fixed`` module) and "table" (``table`` module,
with ``where=`` conditions evaluated by numpy in ``where``). Both are written, for what pandas
itself can write and read back; see the README ("pandas HDFStore files") for what is not
covered. pandas is needed (the results are pandas objects); PyTables is not. What is read and
written follows the installed pandas, 2 or 3 (``convert`` names the differences).

Pickles: PyTables keeps some attribute values, and pandas' fixed format keeps object (string)
columns, as Python pickles. purehep unpickles them with an allow-list (numpy arrays, dtypes and
scalars, builtin values, fixed-offset, pytz and zoneinfo time zones, pandas date offsets,
pd.NA); a pickle naming any
other class or function raises ``UnsafePickleError`` without importing or calling it.
"""
import posixpath

from . import pytables as pt
from .pickles import UnsafePickleError
from .pytables import PandasFormatError
from .where import UnsupportedWhereError

__all__ = ["read_hdf", "to_hdf", "HDFStore", "UnsafePickleError", "PandasFormatError",
           "UnsupportedWhereError"]


def _open(source, mode):
    """(purehep File, close-when-done) for a path, file object or open purehep File."""
    from ...hl.files import File
    from ...hl.group import Group
    if isinstance(source, Group):
        return source.file, False
    return File(source, mode), True


def _groups(f):
    """The keys HDFStore.keys() lists, in its order: PyTables' walk_groups (each group's
    subgroups by name, then the last one's subtree first), keeping the groups with a
    ``pandas_type`` or a member named "table" (pandas lists a group holding a "table" group
    too, though it cannot read it)."""
    from ...hl.group import Group
    order, stack = [], [f]
    while stack:
        group = stack.pop()
        subgroups = [group[name] for name in sorted(group) if isinstance(group[name], Group)]
        order.extend(subgroups)
        stack.extend(subgroups)
    return [g.name for g in order if "pandas_type" in g.attrs or "table" in g]


def _kind(group):
    """pandas_type of a group; a group holding a PyTables Table "table" and no pandas_type is
    "frame_table" (pandas' generic table, which ``table.read`` refuses by name)."""
    from ...hl.group import Group
    if isinstance(group, Group):
        kind = pt.attr(group, "pandas_type")
        if kind is not None:
            return kind
        table = group.get("table")
        if table is not None and pt.attr(table, "CLASS") == "TABLE":
            return "frame_table"
    raise PandasFormatError(f"{group.name} is not a pandas object (no pandas_type attribute "
                            "and no PyTables table)")


def _read_group(group, where=None, start=None, stop=None, columns=None):
    kind = _kind(group)
    try:
        return _read_kind(group, kind, where, start, stop, columns)
    except KeyError as e:          # a member pandas writes is missing
        raise PandasFormatError(f"{group.name}: incomplete pandas {kind} object ({e})") from e


def _read_kind(group, kind, where, start, stop, columns):
    if kind in ("series", "frame"):
        if where is not None or columns is not None:
            raise TypeError("cannot pass a where or columns specification when reading from "
                            "a Fixed format store. this store must be selected in its entirety")
        from . import fixed
        return fixed.read(group, kind, start, stop)
    if kind in ("frame_table", "series_table"):
        from . import table
        return table.read(group, where=where, start=start, stop=stop, columns=columns)
    raise PandasFormatError(f"{group.name}: pandas_type {kind!r} is not one purehep reads")


class HDFStore:
    """A read-only view of a pandas HDFStore file: ``keys()``, ``store[key]``, ``select``,
    ``get_storer(key).nrows``; a context manager. ``path`` may be a file name, a file object
    or an open purehep.File (left open on close)."""

    def __init__(self, path, mode="r"):
        if mode != "r":
            raise ValueError("purehep.pandas.HDFStore is read-only (mode='r'); write with "
                             "purehep.pandas.to_hdf")
        self._file, self._owned = _open(path, "r")

    def keys(self):
        """The keys of the pandas objects in the file ("/df", "/a/b", …)."""
        return _groups(self._file)

    def __iter__(self):
        return iter(self.keys())

    def __contains__(self, key):
        return ("/" + key.lstrip("/")) in self.keys()

    def _group(self, key):
        name = "/" + key.lstrip("/")
        if name not in self._file:
            raise KeyError(f"No object named {key} in the file")
        return self._file[name]

    def __getitem__(self, key):
        return self.select(key)

    def select(self, key, where=None, start=None, stop=None, columns=None):
        """The object at ``key``; ``where``/``columns`` for the table format only."""
        return _read_group(self._group(key), where, start, stop, columns)

    def get_storer(self, key):
        """An object with the stored object's ``pandas_type`` and ``nrows``: the table's row
        count, or None for the fixed format (as pandas' storers give)."""
        from types import SimpleNamespace
        group = self._group(key)
        kind = _kind(group)
        nrows = int(pt.attr(group["table"], "NROWS")) if "table" in kind else None
        return SimpleNamespace(pandas_type=kind, nrows=nrows)

    def close(self):
        if self._owned:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_hdf(path_or_buf, key=None, where=None, start=None, stop=None, columns=None):
    """pandas.read_hdf for files pandas wrote: the DataFrame or Series at ``key`` (optional
    when the file holds one object). ``where`` (a condition string or a list of them, ANDed),
    ``columns``: table format only; ``start``/``stop``: a row range."""
    with HDFStore(path_or_buf) as store:
        if key is None:
            keys = store.keys()
            if not keys:
                raise ValueError("Dataset(s) incompatible with Pandas data types, not table, "
                                 "or no datasets found in HDF5 file.")
            if any(not k.startswith(keys[0] + "/meta/") for k in keys[1:]):
                raise ValueError("key must be provided when HDF5 file contains multiple "
                                 "datasets.")
            key = keys[0]
        return store.select(key, where=where, start=start, stop=stop, columns=columns)


def _filters(complevel, complib):
    """PyTables Filters as pandas' store sets them: only with a complevel above 0."""
    if not complevel:
        return None
    complib = complib or "zlib"
    from ...filters.blosc import COMPRESSORS
    if complib != "zlib" and complib not in ["blosc"] + [f"blosc:{c}" for c in COMPRESSORS]:
        raise ValueError(f"purehep.pandas writes complib 'zlib' or 'blosc[:codec]' (codec one "
                         f"of {', '.join(COMPRESSORS)}), not {complib!r}")
    return int(complevel), complib


def _target_group(f, key, append):
    """The group for ``key``, emptied unless appending; parents created as PyTables groups."""
    pt.mark_root(f)
    path = posixpath.normpath("/" + key.strip("/"))
    if path == "/":
        raise ValueError("the key must name a group below the root")
    if path in f and not append:
        del f[path]
    group = f
    for part in path.strip("/").split("/"):
        group = group[part] if part in group else pt.create_group(group, part)
    return group


def to_hdf(obj, path_or_buf, key, mode="a", format=None, data_columns=None, complevel=None,
           complib=None, index=True, min_itemsize=None, append=False, nan_rep=None,
           encoding="UTF-8", errors="strict"):
    """DataFrame.to_hdf / Series.to_hdf with purehep: a file pandas (with PyTables) reads back
    equal. ``format`` "fixed" (the default) or "table" ("f"/"t"; the default with
    ``append``, which adds rows to a table). An empty object in table format writes nothing,
    as pandas.
    ``index`` is accepted for pandas' signature: purehep never writes PyTables' optional
    search indexes (pandas with ``index=False``), which only speed up ``where`` queries."""
    import pandas as pd
    if not isinstance(obj, (pd.DataFrame, pd.Series)):
        raise TypeError("value must be None, Series, or DataFrame")
    format = {"f": "fixed", "t": "table", None: "table" if append else "fixed"}.get(format,
                                                                                format)
    if format not in ("fixed", "table"):
        raise ValueError(f"invalid HDFStore format specified [{format}]")
    if append and format == "fixed":
        raise ValueError("Can only append to Tables")
    if mode not in ("a", "w", "r+"):
        raise ValueError(f"mode {mode!r} cannot write")
    filters = _filters(complevel, complib)
    f, owned = _open(path_or_buf, mode)
    try:
        if obj.empty and format == "table":
            return
        group = _target_group(f, key, append)
        if format == "fixed":
            if data_columns is not None or min_itemsize is not None:
                raise TypeError("data_columns and min_itemsize are for the table format")
            from . import fixed
            fixed.write(group, obj, encoding, errors, filters)
        else:
            from . import table
            table.write(group, obj, encoding=encoding, errors=errors, filters=filters,
                        data_columns=data_columns, min_itemsize=min_itemsize,
                        nan_rep=nan_rep)
    finally:
        if owned:
            f.close()
