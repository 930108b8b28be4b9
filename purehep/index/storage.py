"""An index as an HDF5 table (RFC §5.3 "Data structure" and "Index attributes").

The table is what ``H5TBmake_table`` writes — a 1-D chunked compound dataset of unlimited
maximum size, its fill value the zeroed record, and the attributes CLASS="TABLE",
VERSION="3.0", TITLE, FIELD_<n>_NAME, FIELD_<n>_FILL (scalar, of the field's own type) —
plus the RFC's index attributes (README.md lists them with their types).
"""
import numpy as np

from ..dtypes import ref_dtype, regionref_dtype, vlen_dtype
from ..hl.dims import _set_string   # H5LTset_attribute_string, shared with H5DS

TABLE_VERSION = "3.0"              # libhdf5's H5TB TABLE_VERSION
CHUNK_RECORDS = 1024               # records per chunk (H5TB takes it from the caller)
TARGET_TYPES = ("object", "region", "element")
_VLEN_BASE = {"object": ref_dtype, "region": regionref_dtype, "element": np.dtype("<u8")}


def target_dtype(target_type):
    """The target field's type: variable-length sequences of object references, region
    references or (element indexes) hsize_t coordinates (RFC §5.3)."""
    return vlen_dtype(_VLEN_BASE[target_type])


def fill_record(dtype):
    """The zeroed record H5TB-style tables use as fill (empty target sequence)."""
    fill = np.zeros(1, dtype)
    for name in dtype.names:
        if dtype[name].kind == "O":
            fill[name][0] = np.array([], dtype=dtype[name].metadata["vlen"])
    return fill[0]


def write_table(loc, name, index):
    """Create the table ``loc[name]`` holding ``index`` (records and metadata)."""
    records = index.records
    fill = fill_record(records.dtype)
    chunk = max(1, min(CHUNK_RECORDS, len(records)))
    ds = loc.create_dataset(name, data=records, maxshape=(None,), chunks=(chunk,),
                            fillvalue=fill)
    _set_string(ds, "CLASS", "TABLE")
    _set_string(ds, "VERSION", TABLE_VERSION)
    _set_string(ds, "TITLE", index.title)
    for n, field in enumerate(records.dtype.names):
        _set_string(ds, f"FIELD_{n}_NAME", field)
    for n, field in enumerate(records.dtype.names):     # zeros: the fill record's fields
        ds.attrs.create(f"FIELD_{n}_FILL", shape=(), dtype=records.dtype[field])
    _write_index_attributes(ds, index)
    return ds


def _write_index_attributes(ds, index):
    """TABLE_SUBCLASS and the INDEX_* attributes (RFC §5.3 "Index attributes")."""
    _set_string(ds, "TABLE_SUBCLASS", "INDEX")
    if index.primary is not None:
        _set_string(ds, "INDEX_PRIMARY_KEY_FIELD", index.primary)
    for n, key in enumerate(index.secondary_keys):
        _set_string(ds, f"INDEX_SECONDARY_KEY_{n}", key)
    for n, key in enumerate(index.keys):
        _set_string(ds, f"INDEX_SORT_KEY_{n}", key)
    _set_string(ds, "INDEX_TARGET_FIELD", index.target_field)
    _set_string(ds, "INDEX_TARGET_TYPE", index.target_type.upper())
    if index.target_type == "element":
        ds.attrs.create("INDEX_TARGET_DATASET", index.target_dataset, dtype=ref_dtype)
        ds.attrs.create("INDEX_TARGET_RANK", np.int32(index.target_rank), dtype="<i4")


def _text(ds, name):
    value = ds.attrs[name]
    return value.decode("ascii") if isinstance(value, bytes) else str(value)


def _numbered(ds, prefix):
    """Values of attributes ``<prefix>0``, ``<prefix>1``, … up to the first missing one."""
    values = []
    while f"{prefix}{len(values)}" in ds.attrs:
        values.append(_text(ds, f"{prefix}{len(values)}"))
    return values


def is_index(ds):
    """True if ``ds`` is a table whose TABLE_SUBCLASS says it is an index."""
    return ("CLASS" in ds.attrs and "TABLE_SUBCLASS" in ds.attrs
            and _text(ds, "CLASS") == "TABLE" and _text(ds, "TABLE_SUBCLASS") == "INDEX")


def read_metadata(ds):
    """The Index constructor's keyword arguments stored in the table's attributes."""
    if not is_index(ds):
        raise ValueError(f"{ds.name} is not an index table (CLASS/TABLE_SUBCLASS)")
    target_type = _text(ds, "INDEX_TARGET_TYPE").lower()
    if target_type not in TARGET_TYPES:
        raise ValueError(f"{ds.name}: unknown INDEX_TARGET_TYPE {target_type!r}")
    primary = _text(ds, "INDEX_PRIMARY_KEY_FIELD") if "INDEX_PRIMARY_KEY_FIELD" in ds.attrs \
        else None
    keys = _numbered(ds, "INDEX_SORT_KEY_") or ([primary] if primary else []) + \
        _numbered(ds, "INDEX_SECONDARY_KEY_")
    meta = dict(keys=keys, primary=primary, target_field=_text(ds, "INDEX_TARGET_FIELD"),
                target_type=target_type, title=_text(ds, "TITLE") if "TITLE" in ds.attrs
                else "")
    if target_type == "element":
        meta.update(target_dataset=ds.attrs["INDEX_TARGET_DATASET"],
                    target_rank=int(ds.attrs["INDEX_TARGET_RANK"]))
    return meta
