"""HEP001 table groups (§5–§7): create, open, append, read; search indexes via
:mod:`.indexes`; queries via :mod:`.planner`."""
import numpy as np

from ..dtypes import string_dtype
from ..errors import ValidationError
from . import indexes as ix
from .update import update_index
from ._attrs import (get_refs, get_text, same, set_ascii, set_bool, set_ref, set_refs, set_utf8,
                     set_utf8_list, text)

CLASS, VERSION = "COLUMN_TABLE", "1.0"
ANNDATA_VERSION = "0.2.0"


def is_table(group):
    """A HEP001 table group is identified by, and only by, scalar CLASS="COLUMN_TABLE" (§5.1)."""
    attrs = getattr(group, "attrs", None)
    if attrs is None or "CLASS" not in attrs or attrs.get_shape("CLASS") != ():
        return False
    return text(attrs["CLASS"]) == CLASS


def default_fill(dtype):
    """A fill value outside the usual value range (§6.4): NaN, the integer extreme opposite
    zero, b'' for strings; None (HDF5 default) for bool and variable-length types."""
    kind = dtype.kind
    if kind == "f":
        return np.nan
    if kind == "i":
        return np.iinfo(dtype).min
    if kind == "u":
        return np.iinfo(dtype).max
    return b"" if kind == "S" else None


def _column_array(values):
    """The array and HDF5 dtype stored for a column: str data becomes variable-length UTF-8."""
    arr = np.asarray(values)
    if arr.dtype.kind == "U" or (arr.dtype.kind == "O" and arr.size and isinstance(arr[0], str)):
        return np.array([str(v).encode("utf-8") for v in arr], dtype=object), string_dtype()
    return arr, arr.dtype


def _codes(values, categories):
    """Integer codes (smallest signed type, -1 = missing) of categorical values (§6.7)."""
    arr = np.asarray(values)
    dtype = np.min_scalar_type(-max(len(categories), 1) - 1)
    if arr.dtype.kind in "iu":
        return arr.astype(dtype)
    lookup = {c: i for i, c in enumerate(categories)}
    return np.array([lookup.get(v, -1) for v in arr.tolist()], dtype=dtype)


def _layout(group):
    """(columns, index datasets, categories datasets) of a table group, columns in
    column-order when it is present (§5.3, §6.7, §7)."""
    datasets = {name: obj for name, obj in group.items() if hasattr(obj, "dtype")}
    categories = {c.name for d in datasets.values() for c in get_refs(d, "_categories") if c}
    indexes = [n for n, d in datasets.items() if "_columns_list" in d.attrs]
    if "column-order" in group.attrs:
        order = [text(v) for v in np.asarray(group.attrs["column-order"]).reshape(-1)]
        columns = [n for n in order if n in datasets and datasets[n].name not in categories]
    else:
        columns = [n for n, d in datasets.items()
                   if n not in indexes and d.name not in categories]
    return columns, indexes, [n for n, d in datasets.items() if d.name in categories]


def create_table(parent, name=None, data=None, *, chunks=1 << 16, compression=None,
                 fillvalue=None, categories=None, index=None, title=None, description=None,
                 units=None, units_vocabulary=None, anndata=False):
    """Write a table group ``parent/name`` (``name=None``: ``parent`` itself becomes the table).

    data: {column: 1-D values}, in column order; categories: {column: category values}
    (the column's data are codes or category values); index: the name of a column or a
    {name: values} of row-index datasets labelling every column; units: {column: str}.
    """
    group = parent if name is None else parent.create_group(name)
    data, categories, fillvalue = dict(data or {}), dict(categories or {}), dict(fillvalue or {})
    labels = {index: None} if isinstance(index, str) else dict(index or {})
    _check_lengths({**data, **{k: v for k, v in labels.items() if v is not None}})
    for col, values in data.items():
        if col in categories:
            values = _codes(values, categories[col])
        _create_column(group, col, values, chunks, compression, fillvalue.get(col))
        if col in categories:
            _create_categories(group, col, categories[col])
    for label, values in labels.items():
        if values is not None:
            _create_column(group, label, values, chunks, compression, fillvalue.get(label))
        set_refs(group[label], "_columns_list", [group[c] for c in data])
        for col in data:
            set_refs(group[col], "_indexes", [*get_refs(group[col], "_indexes"), group[label]])
    _table_attrs(group, list(data), labels, title, description, units_vocabulary, anndata)
    for col, unit in (units or {}).items():
        set_utf8(group[col], "units", unit)
    return Table(group)


def _check_lengths(arrays):
    lengths = {len(v) for v in arrays.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns differ in length: {sorted(lengths)} (HEP001 §4 Row)")


def _create_column(group, name, values, chunks, compression, fill):
    if name == ix.SEARCH_GROUP:
        raise ValueError("the column name _search_indexes is reserved (HEP001 §6.1)")
    arr, dtype = _column_array(values)
    fill = default_fill(np.dtype(dtype)) if fill is None else fill
    return group.create_dataset(name, data=arr, dtype=dtype, chunks=(chunks,), maxshape=(None,),
                                compression=compression, fillvalue=fill)


def _create_categories(group, col, categories):
    arr, dtype = _column_array(list(categories))
    ds = group.create_dataset(f"{col}_categories", data=arr, dtype=dtype)
    set_utf8(ds, "encoding-type", "categorical")
    set_bool(ds, "ordered", False)
    set_ref(group[col], "_categories", ds)


def _table_attrs(group, columns, labels, title, description, units_vocabulary, anndata):
    set_ascii(group, "CLASS", CLASS)
    set_ascii(group, "VERSION", VERSION)
    for attr, value in (("TITLE", title), ("description", description),
                        ("units_vocabulary", units_vocabulary)):
        if value is not None:
            set_utf8(group, attr, value)
    if columns:
        set_utf8_list(group, "column-order", columns)
    if labels:
        set_utf8(group, "_index", next(iter(labels)))
    if anndata:
        set_utf8(group, "encoding-type", "dataframe")
        set_utf8(group, "encoding-version", ANNDATA_VERSION)
        for name in dict.fromkeys([*columns, *labels]):
            _anndata_element(group[name])


def _anndata_element(ds):
    """Anndata's per-element encoding attributes (string-array or array, version 0.2.0)."""
    is_string = ds.dtype.kind in "SO"
    set_utf8(ds, "encoding-type", "string-array" if is_string else "array")
    set_utf8(ds, "encoding-version", ANNDATA_VERSION)


class Table:
    """An open HEP001 table group; ``trust_indexes=False`` makes queries scan (§12)."""

    def __init__(self, group, trust_indexes=True):
        if not is_table(group):
            raise ValidationError(f"{group.name}: no scalar CLASS='{CLASS}' attribute (HEP001 §5.1)")
        self.group = group
        self.trust_indexes = trust_indexes

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
        return len(self.group[names[0]]) if names else 0

    def __getitem__(self, name):
        return self.group[name]

    def fillvalue(self, name):
        """The column's fill value (missing value, §6.4); None for variable-length types."""
        ds = self.group[name]
        return None if ds.dtype.kind == "O" else ds.fillvalue

    def categories(self, name):
        """The categories array of a categorical column, or None (§6.7)."""
        cats = get_refs(self.group[name], "_categories")
        return cats[0][()] if cats and cats[0] is not None else None

    def read(self, fields=None, rows=None):
        """{name: values} of the given fields (default: all columns) at ``rows`` (default all)."""
        out = {}
        for name in fields or self.columns:
            ds = self.group[name]
            out[name] = ds[()] if rows is None else _take(ds, np.asarray(rows, dtype=np.int64))
        return out

    def read_structured(self, fields=None, rows=None):
        """The same rows as one numpy structured array."""
        cols = self.read(fields, rows)
        out = np.empty(len(next(iter(cols.values()))) if cols else 0,
                       dtype=[(n, v.dtype) for n, v in cols.items()])
        for name, values in cols.items():
            out[name] = values
        return out

    def append(self, data):
        """Append rows to every column and index dataset, then update the search indexes
        (§9: a mutation MUST update or delete the affected indexes; see :mod:`.update`)."""
        _, labels, _ = _layout(self.group)
        names = list(dict.fromkeys(self.columns + labels))
        missing = set(names) - set(data)
        if missing:
            raise ValueError(f"append needs values for {sorted(missing)}")
        _check_lengths({n: data[n] for n in names})
        start = len(self)
        found = [(i, self._fill_of(i)) for i in self.search_indexes()]
        current = [(i, fill, not ix.structural_problems(i, start, fill)) for i, fill in found]
        for name in names:
            self._append_column(name, data[name], start)
        for index, fill, is_current in current:
            if not (is_current and update_index(self.group, index, start, fill)):
                self._rebuild(index)

    def _append_column(self, name, values, start):
        categories = self.categories(name)
        if categories is not None:
            values = _codes(values, [text(c) for c in categories])
        arr, _ = _column_array(values)
        ds = self.group[name]
        ds.resize((start + len(arr),))
        ds[start:] = arr

    def _fill_of(self, index):
        return self.fillvalue(index.column.name.rsplit("/", 1)[-1])

    # column mutations (§9)
    def add_column(self, name, values, *, categories=None, fillvalue=None, units=None,
                   chunks=None, compression=None):
        """Add a column of ``len(self)`` values: listed last in column-order (§9.6), labelled
        by every row-index dataset (§7.2), Anndata attributes when the table carries them."""
        if name in self.group:
            raise ValueError(f"{self.group.name} already has a member named {name!r}")
        names, order = self.columns + self.index_datasets, [*self.columns, name]
        if names and len(values) != len(self):
            raise ValueError(f"{len(values)} values for a table of {len(self)} rows (HEP001 §9.1)")
        first = self.group[names[0]].chunks if names else None
        chunks = chunks or (first[0] if first else 1 << 16)
        if categories is not None:
            values = _codes(values, categories)
        ds = _create_column(self.group, name, values, chunks, compression, fillvalue)
        if categories is not None:
            _create_categories(self.group, name, categories)
        for label in self.index_datasets:
            _link(self.group[label], ds)
        set_utf8_list(self.group, "column-order", order)
        if get_text(self.group, "encoding-type") == "dataframe":
            _anndata_element(ds)
        if units is not None:
            set_utf8(ds, "units", units)

    def drop_column(self, name):
        """Delete a column with its search indexes, categories and the row-index links to it
        (§9: no reference may dangle); row-index datasets themselves are not dropped here."""
        if name not in self.columns or name in self.index_datasets:
            raise ValueError(f"{name!r} is not a column of {self.group.name} (or is a row index)")
        ds = self.group[name]
        labels = {label: _without(self.group[label], ds) for label in self.index_datasets}
        self.drop_search_index(name)
        for label, kept in labels.items():
            set_refs(self.group[label], "_columns_list", kept)
        categories = get_refs(ds, "_categories")
        order = [c for c in self.columns if c != name]
        del self.group[name]
        for cat in categories:
            if cat is not None and not _referenced(self.group, cat):
                del self.group[cat.name.rsplit("/", 1)[-1]]
        set_utf8_list(self.group, "column-order", order)

    # search indexes (§8)
    def search_indexes(self, column=None):
        """Loaded search indexes of registered KIND, optionally those of one column."""
        found = ix.load_indexes(self.group)
        if column is not None:
            found = [i for i in found if same(i.column, self.group[column])]
        return found

    def create_search_index(self, column, kind, name=None, **options):
        """Build a CHUNK_MINMAX, SORTED_ROWS, BITMAP or CHUNK_BLOOM index of one column."""
        kind = kind.upper()
        if kind not in ix.BUILDERS:
            raise ValueError(f"unknown search index KIND {kind!r}; known: {ix.KINDS}")
        ds = self.group[column]
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

    def _rebuild(self, index):
        """Rebuild one index with its kind's kept options (Bloom size, BITMAP max_values);
        a BITMAP whose column now exceeds max_values is dropped (§9 allows deleting)."""
        column = index.column.name.rsplit("/", 1)[-1]
        try:
            self.create_search_index(column, index.kind, index.name, **ix.rebuild_options(index))
        except ix.TooManyValues:
            ix.drop_index(self.group, index.ds)

    # queries
    def where(self, expr, fields=None, structured=False):
        """Rows where a parsed expression holds (row numbers, or the rows' ``fields``)."""
        from .planner import plan_rows
        rows = plan_rows(self, expr)
        if fields is None and not structured:
            return rows
        return self.read_structured(fields, rows) if structured else self.read(fields, rows)

    def query(self, text, fields=None, structured=False):
        """Rows matching a query string such as "(A>3 AND A<7) AND B=10"."""
        from ..query import parse
        return self.where(parse(text), fields, structured)

    def validate(self, verify_indexes=True):
        """Problems with this table against every HEP001 MUST (see :func:`.validate`)."""
        from .validate import validate
        return validate(self.group, verify_indexes=verify_indexes)


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
    return any(same(c, target) for d in group.values() if hasattr(d, "dtype")
               for c in get_refs(d, "_categories"))


def _take(ds, rows):
    """Values of ``ds`` at sorted row numbers, read as one span per dense run."""
    if len(rows) == 0:
        return ds[0:0]
    lo, hi = int(rows.min()), int(rows.max()) + 1
    return ds[lo:hi][rows - lo]


def open_table(group, trust_indexes=True):
    return Table(group, trust_indexes)
