"""HEP001 table groups (§5–§7): create, open, append, read; search indexes via
:mod:`.indexes`; queries via :mod:`.planner`."""
import numpy as np

from ..errors import UnsupportedFeatureError, ValidationError
from ..hl.serialize import serialized
from . import convert
from . import indexes as ix
from .txn import Transaction
from .update import update_index
from .vtypes import explicit_fill
from ._attrs import (get_refs, get_text, is_dataset, same, set_ascii, set_bool, set_ref,
                     set_refs, set_utf8, set_utf8_list, text)
from .anndata_layout import (ANNDATA_VERSION, RANGE_INDEX, anndata_data, anndata_mask,
                             categories_of, column_dataset, column_name,
                             labels_made_up, mark_element, warn_nullable, write_categorical)

CLASS, VERSION = "COLUMN_TABLE", "1.0"


def is_table(group):
    """A HEP001 table group is identified by, and only by, scalar CLASS="COLUMN_TABLE" (§5.1)."""
    attrs = getattr(group, "attrs", None)
    if attrs is None or "CLASS" not in attrs or attrs.get_shape("CLASS") != ():
        return False
    return text(attrs["CLASS"]) == CLASS


def default_fill(dtype):
    """A fill value outside the usual value range (§6.4): NaN, the integer extreme opposite
    zero, b'' for strings; None (HDF5 default) for bool and variable-length types."""
    return convert.free_fill(np.dtype(dtype), np.zeros(0, dtype))


def _layout(group):
    """(columns, index datasets, categories datasets) of a table group, columns in
    column-order when it is present (§5.3, §6.6, §7)."""
    datasets = _datasets(group)
    categories = {c.name for c in map(categories_of, datasets.values()) if c is not None}
    indexes = [n for n, d in datasets.items() if "_columns_list" in d.attrs]
    if "column-order" in group.attrs:
        order = [text(v) for v in np.asarray(group.attrs["column-order"]).reshape(-1)]
        columns = [n for n in order if n in datasets and datasets[n].name not in categories]
    else:
        columns = [n for n, d in datasets.items()
                   if n not in indexes and d.name not in categories]
    return columns, indexes, [n for n, d in datasets.items() if d.name in categories]


def members(group):
    """{name: object} of the group's members that resolve; dangling soft links and
    external links to missing files are skipped (a table never links out, §5.5)."""
    out = {}
    for name in group.keys():
        try:
            out[name] = group[name]
        except (KeyError, OSError, ValueError):
            continue
    return out


def _datasets(group):
    """{name: dataset} of the group's members that resolve to datasets (an Anndata
    categorical group: its codes)."""
    out = {}
    for name, obj in members(group).items():
        data = obj if is_dataset(obj) else anndata_data(obj)
        if data is not None:
            out[name] = data
    return out


def _frame_parts(data, index):
    """(columns, row-index labels) of a pandas DataFrame or a pyarrow Table / RecordBatch
    (a DataFrame's index becomes the row index unless it is the default 0..n-1); other
    mappings are taken as they are."""
    module = type(data).__module__ or ""
    if module.startswith("pandas"):
        import pandas as pd
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"create_table takes a DataFrame, not a {type(data).__name__}")
        if not data.columns.is_unique or not all(isinstance(c, str) for c in data.columns):
            raise ValueError("DataFrame column names must be unique strings")
        columns = {c: data[c] for c in data.columns}
        if index is None and not _default_index(data.index, pd):
            if isinstance(data.index, pd.MultiIndex):
                raise ValueError("a MultiIndex is not representable (one row-index dataset each)")
            index = {data.index.name or "_index": data.index}
        return columns, index
    if module.startswith("pyarrow"):
        return {n: data.column(n) for n in data.column_names}, index
    return dict(data or {}), index


def _default_index(idx, pd):
    return isinstance(idx, pd.RangeIndex) and idx.start == 0 and idx.step == 1 and idx.name is None


def create_table(parent, name=None, data=None, *, chunks=1 << 16, compression=None,
                 fillvalue=None, categories=None, index=None, title=None, description=None,
                 units=None, units_vocabulary=None, anndata=False, lossy=False):
    """Write a table group ``parent/name`` (``name=None``: ``parent`` itself becomes the table,
    which it must not already hold anything for).

    data: a pandas DataFrame, a pyarrow Table or RecordBatch, or {column: 1-D values} (numpy,
    lists, pandas or Arrow arrays) in column order; categories: {column: category values}
    (the column's data are category values, or codes when integers and the categories are
    not); index: the name of a column or a {name: values} of row-index datasets labelling
    every column; units: {column: str}. Every column is converted and checked before anything
    is written (see :mod:`.convert`; ``lossy=True`` accepts lossy casts).
    """
    columns, index = _frame_parts(data, index)
    categories, fillvalue = dict(categories or {}), dict(fillvalue or {})
    labels = {index: None} if isinstance(index, str) else dict(index or {})
    for label, values in labels.items():
        if values is not None and label in columns:     # one dataset each (§6.1, §7.1)
            raise ValueError(f"the row index {label!r} has the name of a column (anndata "
                             "refuses it too): rename one")
    specs = {col: convert.spec_for(values, col, categories=categories.get(col),
                                   fill=fillvalue.get(col), lossy=lossy)
             for col, values in columns.items()}
    specs.update({label: convert.spec_for(values, label, fill=fillvalue.get(label), lossy=lossy)
                  for label, values in labels.items() if values is not None})
    _check_lengths({k: v.values for k, v in specs.items()})
    for label in labels:
        if label not in specs:
            raise ValueError(f"index {label!r} names no column")
    for col in specs:
        if col == ix.SEARCH_GROUP:
            raise ValueError("the column name _search_indexes is reserved (HEP001 §6.1)")
    if anndata:
        warn_nullable(specs)
    group = parent if name is None else parent.create_group(name)
    if name is None and len(group):
        raise ValueError(f"{group.name} already holds {sorted(group.keys())[:5]}: a table "
                         "group holds only its table (HEP001 §5.5)")
    if anndata and not labels:
        labels = {"_index": None}
        specs["_index"] = convert.spec_for(np.arange(len(next(iter(specs.values())).values)
                                                     if specs else 0).astype(str), "_index")
        specs["_index"].logical = RANGE_INDEX
    order = [c for c in columns if not (anndata and c in labels)]
    for col, spec in specs.items():
        _create_column(group, col, spec, chunks, compression, anndata)
    for label in labels:
        label_ds = column_dataset(group, label)
        set_refs(label_ds, "_columns_list", [column_dataset(group, c) for c in columns if c != label])
        for col in columns:
            if col != label:
                ds = column_dataset(group, col)
                set_refs(ds, "_indexes", [*get_refs(ds, "_indexes"), label_ds])
    _table_attrs(group, order, labels, title, description, units_vocabulary, anndata)
    for col, unit in (units or {}).items():
        set_utf8(column_dataset(group, col), "units", unit)
    return Table(group)


def _check_lengths(arrays):
    lengths = {len(v) for v in arrays.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns differ in length: {sorted(lengths)} (HEP001 §4 Row)")


def _create_column(group, name, spec, chunks, compression, anndata=False):
    """A column dataset from its :class:`.convert.Spec` (and its categories dataset); with
    ``anndata`` a categorical column is Anndata's categorical group (README "Anndata")."""
    if anndata and spec.categories is not None:
        return write_categorical(group, name, spec, chunks, compression)
    ds = group.create_dataset(name, data=spec.values, dtype=spec.dtype, chunks=(chunks,),
                              maxshape=(None,), compression=compression, fillvalue=spec.fill)
    for attr, value in spec.text_attrs():
        set_utf8(ds, attr, value)
    if spec.categories is not None:
        cats = spec.categories
        cds = group.create_dataset(f"{name}_categories", data=cats.values, dtype=cats.dtype,
                                   chunks=(max(1, min(len(cats.values), 1024)),), maxshape=(None,))
        if cats.logical:
            set_utf8(cds, convert.LOGICAL_ATTR, cats.logical)
        set_utf8(cds, "encoding-type", "categorical")
        set_bool(cds, "ordered", spec.ordered)
        set_ref(ds, "_categories", cds)
    return ds


def _table_attrs(group, columns, labels, title, description, units_vocabulary, anndata):
    set_ascii(group, "CLASS", CLASS)
    set_ascii(group, "VERSION", VERSION)
    for attr, value in (("TITLE", title), ("description", description),
                        ("units_vocabulary", units_vocabulary)):
        if value is not None:
            set_utf8(group, attr, value)
    if columns or anndata:
        set_utf8_list(group, "column-order", columns)
    if labels:
        set_utf8(group, "_index", next(iter(labels)))
    if anndata:
        set_utf8(group, "encoding-type", "dataframe")
        set_utf8(group, "encoding-version", ANNDATA_VERSION)
        for name in dict.fromkeys([*columns, *labels]):
            if is_dataset(group[name]):
                mark_element(group[name])


MODES = ("verify", "trust", "ignore")


@serialized("group")
class Table:
    """An open HEP001 table group. In a file open for writing each call holds the file's
    write lock (hl/serialize.py), so an append or a column change from one thread is never
    interleaved with another thread's (each is one transaction of the columns it touches).

    ``indexes`` says which search indexes queries use (HEP001 §12, Security): "verify" (the
    default) uses an index only once it has been checked against its column's current
    values, so an answer never differs from a scan, whoever wrote the file; the check is
    kept for later queries while the file is open read-only, and repeated at each query in a
    file open for writing (where other handles may write the column). "trust" uses every
    structurally current index unchecked — fast, and right as long as every write went
    through this API (which keeps indexes current) — a stale or tampered index then gives
    wrong rows. "ignore" scans. ``trust_indexes`` (True/False) is the older spelling of
    "trust"/"ignore".
    """

    def __init__(self, group, trust_indexes=None, *, indexes=None, anndata=False):
        self.foreign = not is_table(group)
        if self.foreign and not (anndata and get_text(group, "encoding-type") == "dataframe"):
            raise ValidationError(f"{group.name}: no scalar CLASS='{CLASS}' attribute (HEP001 §5.1)"
                                  + ("" if anndata else "; Table(group, anndata=True) reads "
                                     "Anndata dataframes"))
        if indexes is None:
            indexes = "verify" if trust_indexes is None else "trust" if trust_indexes else "ignore"
        if indexes not in MODES:
            raise ValueError(f"indexes must be one of {MODES}, not {indexes!r}")
        self.group = group
        self.indexes = indexes
        if self.foreign:
            _check_readable(group)
        self._verified = {}
        self._owed = {}          # index name -> scans it would have saved, before its check
        self._probes = {}

    @property
    def trust_indexes(self):
        return self.indexes != "ignore"

    def __repr__(self):
        return f"<HEP001 table {self.group.name!r}: {len(self)} rows, columns {self.columns}>"

    @property
    def columns(self):
        return _layout(self.group)[0]

    @property
    def index_datasets(self):
        return _layout(self.group)[1]

    def __len__(self):
        names = self.columns + self.index_datasets
        label = get_text(self.group, "_index")
        if not names and label in self.group:
            names = [label]
        return len(self._ds(names[0])) if names else 0

    def _ds(self, name):
        """The dataset of column (or index) ``name``."""
        return column_dataset(self.group, name)

    def __getitem__(self, name):
        """A :class:`Column`: the dataset, whose writes keep the search indexes current."""
        return Column(self, self._ds(name))

    def fillvalue(self, name):
        """The column's fill value (missing value, §6.4); None for variable-length types and,
        in an Anndata dataframe, where none was set (Anndata marks missing values otherwise)."""
        ds = self._ds(name)
        if ds.dtype.kind == "O" or (self.foreign and not explicit_fill(ds)):
            return None
        return ds.fillvalue

    def categories(self, name):
        """The categories array of a categorical column, or None (§6.6)."""
        cats = categories_of(self._ds(name))
        return None if cats is None else cats[()]

    def missing_mask(self, name, values, rows=None):
        """Where ``values`` of column ``name`` (its ``rows``: None for all, a slice or row
        numbers) are missing: equal to the fill value (§6.4), NaN, for a categorical column a
        code that names no category (§6.6), for an Anndata nullable column its mask."""
        values = np.asarray(values)
        ds = self._ds(name)
        fill = self.fillvalue(name)
        mask = np.zeros(len(values), dtype=bool)
        if ds.dtype.kind != "b" and fill is not None:
            mask |= np.asarray(values == fill, dtype=bool)
        if values.dtype.kind == "f":
            mask |= np.isnan(values)
        cats = categories_of(ds)
        if cats is not None and values.dtype.kind in "iu":
            mask |= (values < 0) | (values >= len(cats))
        flags = anndata_mask(ds)
        if flags is not None:
            mask |= np.asarray(flags[()] if rows is None else flags[()][rows], dtype=bool)
        return mask

    def missing_at(self, rows=None):
        """{column: function(values) -> missing mask} of ``rows``, for IS NULL."""
        return _Missing(self, rows)

    @property
    def missing(self):
        """{column: function(values) -> missing mask}, for the query evaluator's IS NULL."""
        return _Missing(self)

    def read(self, fields=None, rows=None):
        """{name: values} of the given fields (default: all columns) at ``rows`` (default all);
        variable-length UTF-8 strings are returned as str."""
        out = {}
        for name in fields or self.columns:
            ds = self._ds(name)
            values = ds[()] if rows is None else _take(ds, np.asarray(rows, dtype=np.int64))
            if ds.dtype.kind == "O" and values.dtype.kind == "O":
                values = np.array([v.decode("utf-8") if isinstance(v, bytes) else v
                                   for v in values.tolist()], dtype=object)
            out[name] = values
        return out

    def read_structured(self, fields=None, rows=None):
        """The same rows as one numpy structured array."""
        cols = self.read(fields, rows)
        out = np.empty(len(next(iter(cols.values()))) if cols else 0,
                       dtype=[(n, v.dtype) for n, v in cols.items()])
        for name, values in cols.items():
            out[name] = values
        return out

    def to_pandas(self, rows=None, fields=None):
        """The table (or some rows/fields) as a pandas DataFrame with the dtypes it was
        written from (see :mod:`.frames`)."""
        from .frames import to_pandas
        return to_pandas(self, rows, fields)

    def to_arrow(self, rows=None, fields=None):
        """The table (or some rows/fields) as a pyarrow Table."""
        from .frames import to_arrow
        return to_arrow(self, rows, fields)

    # mutations: every one is all-or-nothing (see :mod:`.txn`)
    def append(self, data, *, lossy=False):
        """Append rows to every column and index dataset, then update the search indexes
        (§9: a mutation MUST update or delete the affected indexes; see :mod:`.update`).
        ``data`` is a {column: values} mapping, a DataFrame or an Arrow table; a DataFrame's
        index gives the values of the row index it names (``_index`` when unnamed), as
        create_table wrote it. Every value is converted and checked before anything is
        written; a failure while writing restores the table as it was."""
        self._writable()
        data, given = _frame_parts(data, index=None)
        _, labels, _ = _layout(self.group)
        names = list(dict.fromkeys(self.columns + labels))
        for label, values in (given or {}).items():
            # a DataFrame's index gives the row index it was written as (create_table)
            if label in labels and label not in data and \
                    RANGE_INDEX not in labels_made_up(self.group, [label]):
                data = {**data, label: values}
        if RANGE_INDEX in labels_made_up(self.group, labels) and "_index" not in data:
            data = {**data, "_index": np.arange(len(self), len(self) + _rows_in(data)).astype(str)}
        missing = set(names) - set(data)
        if missing:
            raise ValueError(f"append needs values for {sorted(missing)}")
        extra = set(data) - set(names)
        if extra:
            raise ValueError(f"append got values for {sorted(extra)}, which are not columns")
        arrays = {n: self._stored(n, data[n], lossy) for n in names}
        _check_lengths(arrays)
        start = len(self)
        found = [(i, self._fill_of(i)) for i in self.search_indexes()]
        current = [(i, fill, not ix.structural_problems(i, start, fill)) for i, fill in found]
        drops = []
        with Transaction(self.group) as tx:
            for name in names:
                self._write_rows(tx, name, arrays[name], start)
            for index, fill, is_current in current:
                _save_index(tx, index)
                try:
                    if not (is_current and update_index(self.group, index, start, fill)):
                        self._rebuild(index, tx)
                except ix.TooManyValues:
                    drops.append(index)
            for index in drops:
                self._drop(tx, index.ds)

    def _stored(self, name, values, lossy):
        """``values`` converted to column ``name``'s stored type (checked, nothing written);
        dictionary-encoded string columns get ("extend", codes, new categories)."""
        ds = self._ds(name)
        cat_ds = categories_of(ds)
        known = None if cat_ds is None else _category_values(cat_ds[()])
        out = convert.cast_to(ds, values, name, categories=known, lossy=lossy,
                              categories_logical=None if cat_ds is None else
                              get_text(cat_ds, convert.LOGICAL_ATTR))
        if isinstance(out, convert.Values):          # dictionary-encoded strings
            return _DictionaryRows(out, known, ds.dtype)
        return out

    def _write_rows(self, tx, name, arr, start):
        ds = self._ds(name)
        if isinstance(arr, _DictionaryRows):
            cat_ds = categories_of(ds)
            if arr.new:
                tx.grows(cat_ds)
                cat_ds.resize((len(arr.known) + len(arr.new),))
                cat_ds[len(arr.known):] = np.array([s.encode("utf-8") for s in arr.new], dtype=object)
            arr = arr.codes
        tx.grows(ds)
        ds.resize((start + len(arr),))
        if len(arr):
            ds[start:] = arr

    def _fill_of(self, index):
        return self.fillvalue(column_name(index.column))

    def write(self, name, key, values, *, lossy=False):
        """``column[key] = values`` for an existing column, converted and checked like an
        append, with every search index of the column rebuilt in the same transaction."""
        self._writable()
        ds = self._ds(name)
        given = values if hasattr(values, "dtype") or convert.marks_missing(values) \
            else np.asarray(values, dtype=object)
        # pandas / Arrow values as they are: they mark missing values themselves
        arr = self._stored(name, np.atleast_1d(given) if np.ndim(given) == 0 else given, lossy)
        if isinstance(arr, _DictionaryRows):
            raise ValueError(f"{name!r} is dictionary-encoded: rewrite it with append only")
        with Transaction(self.group) as tx:
            tx.rewrites(ds)
            if np.ndim(values) == 0 and arr.shape == (1,):
                arr = arr[0]
            ds[key] = arr
            for index in self.search_indexes(name):
                _save_index(tx, index)
                self._rebuild(index, tx)
        self._verified.clear()
        self._owed.clear()

    # column mutations (§9)
    def add_column(self, name, values, *, categories=None, fillvalue=None, units=None,
                   chunks=None, compression=None, lossy=False):
        """Add a column of ``len(self)`` values: listed last in column-order (§9.6), labelled
        by every row-index dataset (§7.2), Anndata attributes when the table carries them."""
        self._writable()
        if name in self.group:
            raise ValueError(f"{self.group.name} already has a member named {name!r}")
        if name == ix.SEARCH_GROUP:
            raise ValueError("the column name _search_indexes is reserved (HEP001 §6.1)")
        names, order = self.columns + self.index_datasets, [*self.columns, name]
        spec = convert.spec_for(values, name, categories=categories, fill=fillvalue, lossy=lossy)
        if names and len(spec.values) != len(self):
            raise ValueError(f"{len(spec.values)} values for a table of {len(self)} rows (HEP001 §9.1)")
        first = self._ds(names[0]).chunks if names else None
        chunks = chunks or (first[0] if first else 1 << 16)
        with Transaction(self.group) as tx:
            tx.attrs(self.group)
            tx.creates(self.group, name)
            if spec.categories is not None:
                tx.creates(self.group, f"{name}_categories")
            anndata = get_text(self.group, "encoding-type") == "dataframe"
            ds = _create_column(self.group, name, spec, chunks, compression, anndata)
            for label in self.index_datasets:
                tx.attrs(self._ds(label))
                _link(self._ds(label), ds)
            set_utf8_list(self.group, "column-order", order)
            if anndata:
                mark_element(ds)
            if units is not None:
                set_utf8(ds, "units", units)

    def drop_column(self, name):
        """Delete a column with its search indexes, categories and the row-index links to it
        (§9: no reference may dangle); row-index datasets themselves are not dropped here."""
        self._writable()
        if name not in self.columns or name in self.index_datasets:
            raise ValueError(f"{name!r} is not a column of {self.group.name} (or is a row index)")
        ds = self._ds(name)
        labels = {label: _without(self._ds(label), ds) for label in self.index_datasets}
        self.drop_search_index(name)
        for label, kept in labels.items():
            set_refs(self._ds(label), "_columns_list", kept)
        categories = [c for c in get_refs(ds, "_categories") if c is None or c.parent.name == self.group.name]
        order = [c for c in self.columns if c != name]
        del self.group[name]
        for cat in categories:
            if cat is not None and not _referenced(self.group, cat):
                del self.group[cat.name.rsplit("/", 1)[-1]]
        set_utf8_list(self.group, "column-order", order)

    def _writable(self):
        if self.foreign:
            raise ValueError(f"{self.group.name} is an Anndata dataframe, not a HEP001 table: "
                             "read-only here (create_table(..., anndata=True) writes tables "
                             "both read)")

    # search indexes (§8)
    def search_indexes(self, column=None):
        """Loaded search indexes of registered KIND, optionally those of one column."""
        found = ix.load_indexes(self.group)
        if column is not None:
            found = [i for i in found if same(i.column, self._ds(column))]
        return found

    def verified(self, index):
        """Whether ``index`` equals one rebuilt from its column's current values (§12's
        verification); remembered while the file is open read-only."""
        key = index.ds.name
        if key in self._verified:
            return self._verified[key]
        fill = self._fill_of(index)
        ok = not ix.content_problems(index, index.column[()], fill)
        if getattr(self.group.file, "mode", "r") == "r":
            self._verified[key] = ok
        return ok

    def checked_when_worth(self, index):
        """Whether ``index`` may answer the query under way in "verify" mode: once checked
        (``verified``), and checked only once the scans of its column it would have saved
        add up to what checking it costs (``indexes.VERIFY_SCANS``), so that no query, a
        first one included, costs much more than a scan. The scans are counted while the
        file is open read-only (else each query weighs one, as each checks again)."""
        key = index.ds.name
        if key in self._verified:
            return self._verified[key]
        owed = self._owed.get(key, 0) + 1
        if owed < ix.VERIFY_SCANS[index.kind]:
            if getattr(self.group.file, "mode", "r") == "r":
                self._owed[key] = owed
            return False
        self._owed.pop(key, None)
        return self.verified(index)

    def sorted_probes(self, index):
        """{position: column value} of a SORTED_ROWS index's binary searches: remembered
        across queries while the file is open read-only (nothing can change then), fresh
        for each query otherwise."""
        if getattr(self.group.file, "mode", "r") != "r":
            return {}
        return self._probes.setdefault(index.ds.name, {})

    def create_search_index(self, column, kind, name=None, **options):
        """Build a CHUNK_MINMAX, SORTED_ROWS, BITMAP or CHUNK_BLOOM index of one column."""
        self._writable()
        kind = kind.upper()
        if kind not in ix.BUILDERS:
            raise ValueError(f"unknown search index KIND {kind!r}; known: {ix.KINDS}")
        ds = self._ds(column)
        data, attrs = ix.BUILDERS[kind](ds[()], self.fillvalue(column), ix.chunk_length(ds),
                                        **options)
        return ix.write_index(self.group, ds, kind, data, attrs, name)

    def drop_search_index(self, column, kind=None):
        """Delete a column's search indexes (all, or those of one KIND)."""
        for index in self.search_indexes(column):
            if kind is None or index.kind == kind.upper():
                ix.drop_index(self.group, index.ds)

    def refresh_search_indexes(self):
        """Rebuild every search index from its column's current values."""
        for index in self.search_indexes():
            self._rebuild(index)

    def _rebuild(self, index, tx=None):
        """Rebuild one index with its kind's kept options (Bloom size, BITMAP max_values),
        in place; a BITMAP whose column now exceeds max_values is dropped (§9 allows
        deleting)."""
        column = column_name(index.column)
        try:
            data, attrs = ix.BUILDERS[index.kind](index.column[()], self.fillvalue(column),
                                                  ix.chunk_length(index.column),
                                                  **ix.rebuild_options(index))
        except ix.TooManyValues:
            self._drop(tx, index.ds)
            return
        if not ix.rewrite_index(self.group, index, data, attrs):
            if tx is not None:
                tx.attrs(index.column)
                sgroup = self.group[ix.SEARCH_GROUP]
                tx.creates(sgroup, index.name)
                tx.creates(sgroup, f"{index.name}__values")
            self.create_search_index(column, index.kind, index.name, **ix.rebuild_options(index))

    def _drop(self, tx, ds):
        """Drop a search index; inside a transaction its column's links are restorable but
        the index itself is not (drops come last in every change)."""
        if tx is not None:
            for column in get_refs(ds, "_columns_list"):
                if column is not None:
                    tx.attrs(column)
        ix.drop_index(self.group, ds)

    # queries
    def where(self, expr, fields=None, structured=False):
        """Rows where a parsed expression holds (row numbers, or the rows' ``fields``)."""
        from .planner import plan_rows
        rows = plan_rows(self, expr)
        if fields is None and not structured:
            return rows
        return self.read_structured(fields, rows) if structured else self.read(fields, rows)

    def query(self, text, fields=None, structured=False, *, as_=None):
        """Rows matching a query string such as "(A>3 AND A<7) AND B=10": row numbers, the
        rows' ``fields`` ({name: values} or ``structured``), or with ``as_="pandas"`` /
        ``"arrow"`` a DataFrame / Arrow table of the rows."""
        from ..query import parse
        if as_ is not None:
            rows = self.where(parse(text))
            if as_ not in ("pandas", "arrow"):
                raise ValueError(f"as_ must be 'pandas' or 'arrow', not {as_!r}")
            return (self.to_pandas if as_ == "pandas" else self.to_arrow)(rows, fields)
        return self.where(parse(text), fields, structured)

    def validate(self, verify_indexes=True):
        """Problems with this table against every HEP001 MUST (see :func:`.validate`)."""
        from .validate import validate
        return validate(self.group, verify_indexes=verify_indexes)


class Column:
    """A column dataset of a :class:`Table`: reads and attributes are the dataset's; writes
    (``col[key] = values``) are checked like appends and keep the column's search indexes
    current, all or nothing."""

    def __init__(self, table, ds):
        self._table, self._ds = table, ds

    def __getattr__(self, name):
        return getattr(self._ds, name)

    def __getitem__(self, key):
        return self._ds[key]

    def __setitem__(self, key, values):
        self._table.write(column_name(self._ds), key, values)

    def __len__(self):
        return len(self._ds)

    def __array__(self, dtype=None, copy=None):
        arr = self._ds[()]
        return arr if dtype is None else arr.astype(dtype)

    def __repr__(self):
        return f"<HEP001 column {self._ds.name!r}: {len(self._ds)} rows, {self._ds.dtype}>"


class _Missing:
    """The table's IS NULL meaning per column, as the query evaluator asks for it."""

    def __init__(self, table, rows=None):
        self.table, self.rows = table, rows

    def get(self, name, default=None):
        return lambda values: self.table.missing_mask(name, values, self.rows)


class _DictionaryRows:
    """Codes of strings appended to a dictionary-encoded string column, and the strings it
    must add to its categories."""

    def __init__(self, values, known, dtype):
        self.known = list(known)
        lookup = {c: i for i, c in enumerate(self.known)}
        self.new = []
        codes = np.full(len(values.data), -1, dtype=np.int64)
        for i, (s, m) in enumerate(zip(values.data.tolist(), values.mask if values.mask is not None
                                       else [False] * len(values.data))):
            if m:
                continue
            if s not in lookup:
                lookup[s] = len(self.known) + len(self.new)
                self.new.append(s)
            codes[i] = lookup[s]
        if len(lookup) > np.iinfo(dtype).max + 1:
            raise ValueError(f"{len(lookup)} distinct strings exceed the {dtype} codes")
        self.codes = codes.astype(dtype)

    def __len__(self):
        return len(self.codes)


def _category_values(stored):
    """A categories dataset's values as a list: variable-length UTF-8 strings decoded, fixed
    byte strings kept as bytes (they were decoded too: bytes categories took str values,
    refused bytes, and non-UTF-8 ones raised UnicodeDecodeError)."""
    values = stored.tolist()
    if stored.dtype.kind != "O":
        return values
    return [v.decode("utf-8") if isinstance(v, bytes) else v for v in values]


def _save_index(tx, index):
    """Make an index (and a BITMAP's values dataset) restorable before it changes."""
    tx.rewrites(index.ds)
    for values in get_refs(index.ds, "_values"):
        if values is not None:
            tx.rewrites(values)


def _link(label, column):
    """Row-index dataset ``label`` labels ``column`` (both directions, §7.2)."""
    set_refs(label, "_columns_list", [*get_refs(label, "_columns_list"), column])
    set_refs(column, "_indexes", [*get_refs(column, "_indexes"), label])


def _without(label, column):
    """A row index's _columns_list without ``column``; refused when none would remain (§7.1)."""
    kept = [c for c in get_refs(label, "_columns_list") if not same(c, column)]
    if not kept:
        raise ValueError(f"{label.name} would label no column (HEP001 §7.1)")
    return kept


def _referenced(group, target):
    """Whether a dataset of ``group`` still refers to ``target`` as its categories."""
    return any(same(c, target) for d in members(group).values() if is_dataset(d)
               for c in get_refs(d, "_categories"))


def _take(ds, rows):
    """Values of ``ds`` at sorted row numbers, read as one span per dense run."""
    if len(rows) == 0:
        return ds[0:0]
    lo, hi = int(rows.min()), int(rows.max()) + 1
    return ds[lo:hi][rows - lo]


def _check_readable(group):
    """An Anndata dataframe's columns are all ones purehep reads (no silent omissions)."""
    if "column-order" not in group.attrs:
        raise ValueError(f"{group.name}: an Anndata dataframe without column-order")
    readable = _datasets(group)
    for name in (text(v) for v in np.asarray(group.attrs["column-order"]).reshape(-1)):
        if name not in readable:
            kind = get_text(group[name], "encoding-type") if name in group else "missing"
            raise UnsupportedFeatureError(f"{group.name}/{name}: Anndata column encoding "
                                          f"{kind!r} is not read by purehep.table")


def _rows_in(data):
    return len(next(iter(data.values()))) if data else 0


def open_table(group, trust_indexes=None, *, indexes=None, anndata=False):
    return Table(group, trust_indexes, indexes=indexes, anndata=anndata)
