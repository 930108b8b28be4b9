"""pandas' ``HDFStore`` on purehep's File: the same methods, arguments, errors and results as
pandas.io.pytables.HDFStore (pandas 2.3 / 3.x), writing through the ``fixed`` and ``table``
modules. Modes as PyTables' open_file: "r" and "r+" need an existing file, "a" creates one,
"w" truncates; writing to a store opened "r" raises ReadOnlyError (PyTables: FileModeError,
also a ValueError, "the file is not writable"). Store-wide ``complevel``/``complib``/
``fletcher32`` filter every written node as pandas' store Filters do (only with a complevel
above 0); ``put``/``append`` may name their own complib for a table.
"""
import os
import posixpath
from contextlib import suppress

from ...errors import ReadOnlyError, UnsupportedFeatureError, warn
from . import pytables as pt
from .convert import STORE_API_3_1
from .pytables import PandasFormatError

_FORMATS = {"f": "fixed", "fixed": "fixed", "t": "table", "table": "table"}
_MODES = ("r", "r+", "a", "w")
NOT_GIVEN = type("NotGiven", (), {"__repr__": lambda self: "<not given>"})()


def _dropna(dropna, method):
    """put/append's ``dropna`` as the installed pandas takes it: pandas 2 (append's None,
    its default: the io.hdf.dropna_table option; put's: False), pandas 3.1 (a
    Pandas4Warning when given, False when not)."""
    import pandas as pd
    if STORE_API_3_1:
        if dropna is NOT_GIVEN:
            return False
        warn(f"The 'dropna' keyword in HDFStore.{method} is deprecated and will be removed "
             "in a future version. Use DataFrame.dropna before writing instead.",
             pd.errors.Pandas4Warning)
        return bool(dropna)
    dropna = None if dropna is NOT_GIVEN else dropna
    if dropna is None and method == "append":
        return bool(pd.get_option("io.hdf.dropna_table"))
    return bool(dropna)


def _track_times(track_times):
    """put's ``track_times``: True when not given, pandas 3.1 warning that this changes."""
    if track_times is not NOT_GIVEN:
        return track_times
    if STORE_API_3_1:
        import pandas as pd
        warn("The default value of 'track_times' in HDFStore.put will change from True to "
             "False in a future version. Pass track_times=False explicitly to silence this "
             "warning and get deterministic HDF5 files.", pd.errors.Pandas4Warning)
    return True


def _append_error(key):
    """pandas' error for appending to, or with, the fixed format."""
    if STORE_API_3_1:
        return ValueError(f"Can only append to Tables; the write for key {key!r} uses the "
                          "'fixed' format. Pass format='table'; if a 'fixed'-format object "
                          "already exists at this key, remove or overwrite it first.")
    return ValueError("Can only append to Tables")


# tables.attributeset.SYS_ATTRS: what a group keeps of its attributes when emptied
_SYSTEM_ATTRS = ("CLASS", "VERSION", "TITLE", "NROWS", "EXTDIM", "ENCODING",
                 "PYTABLES_FORMAT_VERSION", "FLAVOR", "FILTERS", "AUTO_INDEX", "DIRTY",
                 "NODE_TYPE", "NODE_TYPE_VERSION", "PSEUDOATOM")


def _empty_group(f, group):
    """Remove the pandas object stored in ``group`` for a put over it: the whole group, or,
    in pandas 3.1 when keys are nested below it (GH#17267), only the object's own members
    (its "meta" group with them) and attributes other than PyTables' system ones; the group
    left, or None."""
    from ...hl.group import Group
    stored = pt.attr(group, "pandas_type") is not None
    nested = [name for name in group if isinstance(group.get(name), Group)
              and not (stored and name == "meta")]
    if not (STORE_API_3_1 and nested):
        del f[group.name]
        return None
    for name in [n for n in group if n not in nested]:
        del group[name]
    for name in [n for n in group.attrs if n not in _SYSTEM_ATTRS]:
        del group.attrs[name]
    return group


def _open(source, mode):
    """(purehep File, close-when-done) for a path, file object or open purehep File; a
    missing file in mode "r"/"r+" and an unknown mode raise PyTables' errors."""
    from ...hl.files import File
    from ...hl.group import Group
    if isinstance(source, Group):
        return source.file, False
    if mode not in _MODES:
        raise ValueError(f"invalid mode string ``{mode}``. Allowed modes are: 'r', 'r+', 'a' "
                         "and 'w'")
    if isinstance(source, (str, os.PathLike)) and mode in ("r", "r+") \
            and not os.path.exists(source):
        raise FileNotFoundError(f"``{os.path.abspath(source)}`` does not exist")
    return File(source, mode), True


def walk_groups(group):
    """PyTables' walk_groups: ``group``, then, from a stack, each popped group's subgroups
    in name order (so a group's children come before its last child's subtree)."""
    from ...hl.group import Group
    yield group
    stack = [group]
    while stack:
        parent = stack.pop()
        for name in sorted(parent):
            child = parent.get(name)
            if isinstance(child, Group):
                stack.append(child)
                yield child


def kind_of(group):
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


def read_group(group, where=None, start=None, stop=None, columns=None):
    """The pandas object stored in ``group`` (``where``/``columns``: table format only)."""
    kind = kind_of(group)
    try:
        if kind in ("series", "frame"):
            if where is not None or columns is not None:
                raise TypeError("cannot pass a where or columns specification when reading "
                                "from a Fixed format store. this store must be selected in "
                                "its entirety")
            from . import fixed
            return fixed.read(group, kind, start, stop)
        if kind in ("frame_table", "series_table"):
            from . import table
            return table.read(group, where=where, start=start, stop=stop, columns=columns)
    except KeyError as e:          # a member pandas writes is missing
        raise PandasFormatError(f"{group.name}: incomplete pandas {kind} object ({e})") from e
    raise PandasFormatError(f"{group.name}: pandas_type {kind!r} is not one purehep reads")


class Storer:
    """What ``get_storer`` gives: ``pandas_type``, ``is_table``, ``nrows`` (a table's rows,
    None for the fixed format), ``pathname``, and the repr pandas' storers have (info())."""

    def __init__(self, group):
        self.group, self.pathname = group, group.name
        self.pandas_type = kind_of(group)
        self.is_table = "table" in self.pandas_type
        self.nrows = int(pt.attr(group["table"], "NROWS")) if self.is_table else None

    def _fixed_shape(self):
        """pandas' SeriesFixed/BlockManagerFixed.shape: the values' length; the first
        block's rows and the items of all blocks (None when there is no block)."""
        group = self.group
        if self.pandas_type == "series":
            return [group["values"].shape[0]] if "values" in group else None
        if "block0_values" not in group:
            return None
        items = sum(group[f"block{i}_items"].shape[0]
                    for i in range(pt.attr(group, "nblocks", 0)))
        return list(group["block0_values"].shape[:1]) + [items]

    def __repr__(self):
        if not self.is_table:
            shape = self._fixed_shape()
            if shape is None:
                return self.pandas_type
            return f"{self.pandas_type:12.12} (shape->[{','.join(map(str, shape))}])"
        table = self.group["table"]
        ncols = sum(len(pt.attr(table, f"{c}_kind") or [])
                    for c in pt.attr(self.group, "values_cols") or [])
        ttype = pt.attr(self.group, "table_type") or ""
        kind = "appendable_multi" if ttype == "appendable_multiframe" else ttype.split("_")[0]
        dcs = ",".join(map(str, pt.attr(self.group, "data_columns") or []))
        return (f"{self.pandas_type:12.12} (typ->{kind},nrows->{self.nrows},ncols->{ncols},"
                f"indexers->[index],dc->[{dcs}])")


class TableIterator:
    """pandas' TableIterator over a table: the rows matching ``where`` (found once, over the
    whole table), taken ``chunksize`` at a time from position ``start`` to ``stop`` of that
    list of rows (pandas' own use of start/stop here; pandas 3.1 resolves them as slice
    bounds), empty chunks skipped; the store closed at the end with ``auto_close``."""

    def __init__(self, store, group, where, start, stop, columns, chunksize, auto_close):
        from . import table
        nrows = int(pt.attr(group["table"], "NROWS"))
        self.store, self.group, self.columns = store, group, columns
        if STORE_API_3_1:
            self.start, self.stop, _ = slice(start, stop).indices(nrows)
        else:
            self.start = 0 if start is None else start
            self.stop = nrows if stop is None else min(nrows, stop)
        self.chunksize, self.auto_close = int(chunksize), auto_close
        self.coordinates = table.coordinates(group, where)

    def __iter__(self):
        from . import table
        current = self.start
        while current < self.stop:
            end = min(current + self.chunksize, self.stop)
            value = table.read(self.group, columns=self.columns,
                               rows=self.coordinates[current:end])
            current = end
            if len(value):
                yield value
        self.close()

    def close(self):
        if self.auto_close:
            self.store.close()


class HDFStore:
    """pandas.HDFStore without PyTables (module docstring). ``path`` may be a file name, a
    file object or an open purehep.File (left open on close)."""

    def __init__(self, path, mode="a", complevel=None, complib=None, fletcher32=False,
                 **kwargs):
        if "format" in kwargs:
            raise ValueError("format is not a defined argument for HDFStore")
        if kwargs:
            raise TypeError(f"purehep's HDFStore takes no PyTables open_file options "
                            f"({', '.join(kwargs)})")
        if complib is not None and complib not in pt.COMPLIBS:
            raise ValueError(f"complib only supports {pt.COMPLIBS} compression.")
        if STORE_API_3_1 and complib is not None and complevel is None:
            warn(f"complib={complib!r} was specified without complevel; no compression will "
                 "be applied. Pass complevel (an int in 1-9) to enable compression.",
                 UserWarning)
        self._complevel = complevel or 0
        self._fletcher32 = fletcher32
        self._filters = pt.Filters.make(complevel, complib, fletcher32) if complevel \
            else None
        self._mode = mode or "a"
        self._file = None
        self._file, self._owned = _open(path, self._mode)
        self._path = os.fspath(path) if isinstance(path, (str, os.PathLike)) \
            else self._file.filename

    # -- the file ------------------------------------------------------------------------------

    @property
    def filename(self):
        return self._path

    def __fspath__(self):
        return self._path

    @property
    def is_open(self):
        """Whether the store's file is open."""
        return self._file is not None and bool(self._file.id)

    def _check_if_open(self):
        if not self.is_open:
            from pandas.errors import ClosedFileError
            raise ClosedFileError(f"{self._path} file is not open!")

    def _check_writable(self):
        self._check_if_open()
        if self._mode == "r":
            raise ReadOnlyError(f"the file is not writable ({self._path} was opened with "
                                "mode 'r')")

    def flush(self, fsync=False):
        """Commit what was written; ``fsync``: also os.fsync the file on disk (errors
        ignored, as pandas)."""
        if self.is_open:
            self._file.flush()
            if fsync:
                with suppress(OSError, UnsupportedFeatureError):
                    os.fsync(self._file.id.get_vfd_handle())

    def close(self):
        if self._file is not None and self._owned:
            self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"{type(self)}\nFile path: {self._path}\n"

    # -- looking up ----------------------------------------------------------------------------

    def get_node(self, key):
        """The group or dataset at ``key`` ("/" added in front), or None."""
        self._check_if_open()
        path = key if key.startswith("/") else "/" + key
        return self._file[path] if path in self._file else None

    def _group(self, key):
        node = self.get_node(key)
        if node is None:
            raise KeyError(f"No object named {key} in the file")
        return node

    def groups(self):
        """The groups holding a pandas object (a ``pandas_type`` or a member "table"), in
        PyTables' walk_groups order."""
        self._check_if_open()
        return [g for g in walk_groups(self._file)
                if pt.attr(g, "pandas_type") or "table" in g]

    def keys(self, include="pandas"):
        """The absolute paths of the pandas objects ("pandas") or of every PyTables Table
        ("native")."""
        if include == "pandas":
            return [g.name for g in self.groups()]
        if include == "native":
            self._check_if_open()
            return [g[name].name for g in walk_groups(self._file) for name in sorted(g)
                    if pt.attr(g[name], "CLASS") == "TABLE"]
        raise ValueError(f"`include` should be either 'pandas' or 'native' but is "
                         f"'{include}'")

    def __iter__(self):
        return iter(self.keys())

    def items(self):
        for g in self.groups():
            yield g.name, g

    def __len__(self):
        return len(self.groups())

    def __contains__(self, key):
        node = self.get_node(key)
        return node is not None and key in (node.name, node.name[1:])

    def walk(self, where="/"):
        """(path, subgroups, pandas objects) of ``where`` and each group below it holding no
        pandas object itself, in walk_groups order; children by name."""
        from ...hl.group import Group
        for g in walk_groups(self._group(where)):
            if pt.attr(g, "pandas_type") is not None:
                continue
            groups, leaves = [], []
            for name in sorted(g):
                child = g[name]
                if pt.attr(child, "pandas_type") is not None:
                    leaves.append(name)
                elif isinstance(child, Group):
                    groups.append(name)
            yield g.name.rstrip("/"), groups, leaves

    def get_storer(self, key):
        return Storer(self._group(key))

    def _table_storer(self, key, what):
        storer = self.get_storer(key)
        if not storer.is_table:
            raise TypeError(f"can only {what} with a table")
        return storer

    def info(self):
        """pandas' info(): the class, the path, then each key with its storer's repr."""
        from pandas.io.formats.printing import adjoin
        output = f"{type(self)}\nFile path: {self._path}\n"
        if not self.is_open:
            return output + "File is CLOSED"
        keys, values = [], []
        for key in sorted(self.keys()):
            try:
                storer = self.get_storer(key)
                keys.append(storer.pathname or key)
                values.append(repr(storer))
            except Exception as detail:  # noqa: BLE001 - shown, as pandas shows it
                keys.append(key)
                values.append(f"[invalid_HDFStore node: {detail}]")
        return output + (adjoin(12, keys, values) if keys else "Empty")

    def __getattr__(self, name):
        """``store.df``: the object at "/df", as pandas allows."""
        if name.startswith("_"):
            raise AttributeError(name)
        from pandas.errors import ClosedFileError
        try:
            return self.get(name)
        except (KeyError, ClosedFileError):
            pass
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # -- reading -------------------------------------------------------------------------------

    def get(self, key):
        return read_group(self._group(key))

    def __getitem__(self, key):
        return self.get(key)

    def select(self, key, where=None, start=None, stop=None, columns=None, iterator=False,
               chunksize=None, auto_close=False):
        """The object at ``key`` (rows ``start:stop`` matching ``where``, only ``columns``:
        table format); with ``iterator`` or ``chunksize`` a TableIterator (100000 rows a
        chunk by default)."""
        group = self._group(key)
        if iterator or chunksize is not None:
            if "table" not in kind_of(group):
                raise TypeError("can only use an iterator or chunksize on a table")
            return TableIterator(self, group, where, start, stop, columns,
                                 100000 if chunksize is None else chunksize, auto_close)
        try:
            return read_group(group, where, start, stop, columns)
        finally:
            if auto_close:
                self.close()

    def select_as_coordinates(self, key, where=None, start=None, stop=None):
        """The numbers of the rows ``start:stop`` matching ``where``, an Index."""
        import pandas as pd
        from . import table
        storer = self._table_storer(key, "read_coordinates")
        return pd.Index(table.coordinates(storer.group, where, start, stop))

    def select_column(self, key, column, start=None, stop=None):
        """The index ("index") or a data column of a table, a Series."""
        from . import table
        return table.read_column(self._table_storer(key, "read_column").group, column,
                                 start, stop)

    # -- writing -------------------------------------------------------------------------------

    def put(self, key, value, format=None, index=True, append=False, complib=None,
            complevel=None, min_itemsize=None, nan_rep=None, data_columns=None, encoding=None,
            errors="strict", track_times=NOT_GIVEN, dropna=NOT_GIVEN):
        """Store ``value`` at ``key`` (replacing what is there unless ``append``), "fixed"
        (pandas' io.hdf.default_format, else the default) or "table". ``index`` is accepted
        for pandas' signature: purehep writes no PyTables search index."""
        import pandas as pd
        dropna = _dropna(dropna, "put")
        format = self._format(format, pd.get_option("io.hdf.default_format") or "fixed")
        self._write(key, value, format, append=append, complib=complib, complevel=complevel,
                    min_itemsize=min_itemsize, nan_rep=nan_rep, data_columns=data_columns,
                    encoding=encoding, errors=errors, track_times=_track_times(track_times),
                    dropna=dropna)

    def __setitem__(self, key, value):
        """put(key, value); track_times=False in pandas 3.1."""
        self.put(key, value, **({"track_times": False} if STORE_API_3_1 else {}))

    def append(self, key, value, format=None, axes=None, index=True, append=True,
               complib=None, complevel=None, columns=None, min_itemsize=None, nan_rep=None,
               chunksize=None, expectedrows=None, dropna=NOT_GIVEN, data_columns=None,
               encoding=None, errors="strict"):
        """Add ``value``'s rows to the table at ``key`` (created when missing). ``dropna``
        (pandas 2's default: its io.hdf.dropna_table option): leave out rows missing in every
        column;
        ``chunksize``: write that many rows at a time; ``expectedrows``: the chunk shape of a
        new table, as PyTables picks it."""
        import pandas as pd
        if columns is not None:
            raise TypeError("columns is not a supported keyword in append, try data_columns")
        if axes is not None and list(axes) != [0]:
            raise UnsupportedFeatureError("purehep.pandas stores tables indexed by the rows "
                                          "(axes=[0]) only")
        dropna = _dropna(dropna, "append")
        self._write(key, value, self._format(format, pd.get_option("io.hdf.default_format")
                                              or "table"),
                    append=append, complib=complib, complevel=complevel,
                    min_itemsize=min_itemsize, nan_rep=nan_rep, chunksize=chunksize,
                    expectedrows=expectedrows, dropna=dropna, data_columns=data_columns,
                    encoding=encoding, errors=errors)

    @staticmethod
    def _format(format, default):
        format = default if format is None else format
        try:
            return _FORMATS[format.lower()]
        except KeyError:
            raise TypeError(f"invalid HDFStore format specified [{format}]") from None

    def _write(self, key, value, format, append, complib, complevel, encoding, errors,
               **table_options):
        """pandas' _write_to_group: nothing for an empty table; the group replaced unless
        appending; a table's own ``complib`` (level ``complevel``, else the store's, else 9)
        or the store's filters."""
        import pandas as pd
        self._check_writable()
        if not isinstance(value, (pd.DataFrame, pd.Series)):
            raise TypeError("value must be None, Series, or DataFrame")
        if value.empty and (format == "table" or append):
            if STORE_API_3_1:
                warn("Writing an empty DataFrame or Series with format='table' or "
                     "append=True is a no-op; the HDFStore is not modified.", UserWarning)
            return
        if append and format == "fixed":
            raise _append_error(key)
        if format == "fixed" and complib:
            raise ValueError("Compression not supported on Fixed format stores")
        filters = self._filters
        if complib:
            level = complevel if complevel is not None else (self._complevel or 9)
            filters = pt.Filters.make(level, complib, self._fletcher32)
        group = self._target_group(key, append)
        if append and pt.attr(group, "pandas_type") in ("frame", "series"):
            raise _append_error(key)
        encoding = encoding or "UTF-8"
        if format == "fixed":
            from . import fixed
            fixed.write(group, value, encoding, errors, filters)
        else:
            from . import table
            table.write(group, value, encoding=encoding, errors=errors, filters=filters,
                        meta_filters=self._filters, **table_options)

    def _target_group(self, key, append):
        """The group for ``key``, emptied unless appending (``_empty_group``); parents
        created as PyTables groups."""
        f = self._file
        pt.mark_root(f)
        path = posixpath.normpath("/" + key.strip("/"))
        if path == "/":
            raise ValueError("the key must name a group below the root")
        if path in f and not append and _empty_group(f, f[path]) is not None:
            return f[path]
        group = f
        for part in path.strip("/").split("/"):
            group = group[part] if part in group else pt.create_group(group, part)
        return group

    def remove(self, key, where=None, start=None, stop=None):
        """Delete the object at ``key``, or (table format) its rows ``start:stop`` matching
        ``where``, returning how many; a node that is no pandas object is deleted whole."""
        self._check_writable()
        node = self._group(key)
        try:
            storer = Storer(node)
        except PandasFormatError:
            if where is not None:
                raise ValueError("trying to remove a node with a non-None where clause!") \
                    from None
            del self._file[node.name]
            return None
        if where is None and start is None and stop is None:
            del self._file[node.name]
            return None
        if not storer.is_table:
            raise ValueError("can only remove with where on objects written as tables")
        from . import table
        return table.delete(node, where, start, stop)

    def __delitem__(self, key):
        return self.remove(key)
