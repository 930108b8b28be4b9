"""Anndata's dataframe encodings inside HEP001 tables (§10; README "Anndata"): categorical
columns as Anndata categorical groups whose ``codes`` are the column's data, Anndata's
nullable-integer / nullable-boolean groups when reading Anndata's own files, the per-element
encoding attributes, and the row labels a table without a row index gets."""

import numpy as np

from ..errors import PurehepWarning, warn
from . import convert
from ._attrs import get_refs, get_text, is_dataset, is_group, same, set_bool, set_ref, set_utf8

ANNDATA_VERSION = "0.2.0"
RANGE_INDEX = "RangeIndex"     # pandas_dtype of the row labels anndata=True makes up
NULLABLE = ("nullable-integer", "nullable-boolean", "nullable-string-array")  # masked groups


def is_anndata_categorical(obj):
    """An Anndata categorical column: a group with encoding-type "categorical" holding
    ``codes`` and ``categories`` (the layout ``anndata=True`` writes, README "Anndata")."""
    return is_group(obj) and get_text(obj, "encoding-type") == "categorical" and \
        is_dataset(obj.get("codes")) and is_dataset(obj.get("categories"))


def anndata_data(obj):
    """The dataset holding an Anndata column group's values: a categorical's codes, a
    nullable-integer / -boolean / -string-array column's values (its mask:
    :func:`anndata_mask`); None for anything else."""
    if is_anndata_categorical(obj):
        return obj["codes"]
    if is_group(obj) and get_text(obj, "encoding-type") in NULLABLE and \
            is_dataset(obj.get("values")) and is_dataset(obj.get("mask")):
        return obj["values"]
    return None


def anndata_mask(ds):
    """The mask dataset of an Anndata nullable column's values dataset, or None."""
    if not (ds.name and ds.name.endswith("/values")):
        return None
    parent = ds.parent
    return parent["mask"] if get_text(parent, "encoding-type") in NULLABLE and \
        anndata_data(parent) is not None else None


def column_name(ds):
    """The column name of a column's dataset: its link name, or its Anndata group's."""
    name = ds.name or ""
    if name.endswith(("/codes", "/values")):
        data = anndata_data(ds.parent)
        if data is not None and same(data, ds):
            return ds.parent.name.rsplit("/", 1)[-1]
    return name.rsplit("/", 1)[-1]


def column_dataset(group, name):
    """The dataset holding column ``name``: the member itself, or the values of an Anndata
    column group (categorical codes, nullable values)."""
    obj = group[name]
    data = anndata_data(obj)
    return obj if data is None else data


def categories_of(ds):
    """The categories dataset of a categorical column's dataset (§6.6 ``_categories``, or the
    sibling ``categories`` of Anndata codes), or None."""
    cats = get_refs(ds, "_categories")
    if cats:
        return cats[0] if is_dataset(cats[0]) else None
    parent = ds.parent if ds.name and ds.name.endswith("/codes") else None
    return parent["categories"] if is_anndata_categorical(parent) else None


def write_categorical(group, name, spec, chunks, compression):
    """Anndata's categorical encoding (group ``name`` with ``codes`` and ``categories``,
    ``ordered`` on the group); the codes are the column's data, with HEP001's explicit fill
    value, ``_categories`` reference and the links later steps add."""
    cat_group = group.create_group(name)
    ds = cat_group.create_dataset("codes", data=spec.values, dtype=spec.dtype, chunks=(chunks,),
                                  maxshape=(None,), compression=compression, fillvalue=spec.fill)
    cats = spec.categories
    cds = cat_group.create_dataset("categories", data=cats.values, dtype=cats.dtype,
                                   chunks=(max(1, min(len(cats.values), 1024)),), maxshape=(None,))
    for attr, value in spec.text_attrs():
        set_utf8(ds, attr, value)
    if cats.logical:
        set_utf8(cds, convert.LOGICAL_ATTR, cats.logical)
    mark_element(ds)
    mark_element(cds)
    set_utf8(cat_group, "encoding-type", "categorical")
    set_utf8(cat_group, "encoding-version", ANNDATA_VERSION)
    set_bool(cat_group, "ordered", spec.ordered)
    set_ref(ds, "_categories", cds)
    return ds


def mark_element(ds):
    """Anndata's per-element encoding attributes (string-array or array, version 0.2.0)."""
    is_string = ds.dtype.kind in "SO"
    set_utf8(ds, "encoding-type", "string-array" if is_string else "array")
    set_utf8(ds, "encoding-version", ANNDATA_VERSION)


def labels_made_up(group, labels):
    """pandas_dtype of the row-index datasets ``labels`` (RANGE_INDEX for the labels
    ``anndata=True`` writes when the table has none)."""
    return {get_text(column_dataset(group, n), convert.LOGICAL_ATTR) for n in labels}


def warn_nullable(specs):
    """Warn of what Anndata misreads (§10 note: its masks are not HEP001's fill values):
    nullable integer columns with missing values (Anndata shows the fill value) and nullable
    boolean columns (stored as int8 0/1 with fill -1, which Anndata shows as integers).
    Nullable floats are NaN where missing, which pandas reads as missing."""
    shown = [n for n, spec in specs.items() if spec.categories is None and (
        spec.logical == "boolean" or (spec.logical or "").startswith(("Int", "UInt")) and
        len(spec.values) and np.any(np.asarray(spec.values) == spec.fill))]
    if shown:
        warn(f"nullable columns {shown}: Anndata reads their stored values (HEP001 fill "
             "values where missing, int8 0/1/-1 for booleans); purehep reads them back "
             "as written", PurehepWarning)
