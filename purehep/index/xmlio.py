"""export_index / import_index: an index as XML text (RFC §5.2.5 "a text-based format such
as XML"); the schema is in README.md. Every value is written exactly (floats as C99 hex,
non-printable bytes as hex), so import(export(index)) equals the index."""
import io
import os
import xml.etree.ElementTree as ET

import numpy as np

from ..dtypes import check_enum_dtype
from ..errors import PurehepError
from ..format import selection
from ..format.context import Cursor
from ..reference import Reference, RegionReference
from . import storage
from .model import Index

FORMAT = "purehep-index"
FORMAT_VERSION = "2"          # 2 adds the targets' paths; 1 (addresses only) still imports
TARGET_MODES = ("path", "address")


class UnresolvedTargetError(PurehepError, ValueError):
    """An imported index's target cannot be found in the file it is written into."""


# --- export -------------------------------------------------------------------------------------

def export_index(index, dest=None):
    """Write ``index`` as XML to ``dest`` (a path or a text file object); with no ``dest``,
    return the text."""
    root = _index_element(index)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
    if dest is None:
        return text
    if isinstance(dest, (str, os.PathLike)):
        with open(dest, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        dest.write(text)
    return None


def _index_element(index):
    records = index.records
    paths = index.target_paths(records)
    root = ET.Element("index", format=FORMAT, version=FORMAT_VERSION, title=index.title,
                      records=str(len(records)), target_type=index.target_type,
                      target_field=index.target_field)
    if index.target_type == "element":
        el = ET.SubElement(root, "target_dataset", address=str(index.target_dataset.address),
                           rank=str(index.target_rank))
        _set_path(el, paths.get(int(index.target_dataset.address)))
    for field in records.dtype.names:
        if field != index.target_field:
            root.append(_field_element(field, records.dtype[field], index))
    value_fields = [f for f in records.dtype.names if f != index.target_field]
    for record in records:
        rec = ET.SubElement(root, "record")
        for field in value_fields:
            rec.append(_value_element(record[field]))
        for target in record[index.target_field].reshape(-1, index.target_rank or 1) \
                if index.target_type == "element" else record[index.target_field]:
            rec.append(_target_element(target, index.target_type, paths))
    return root


def _field_element(name, dtype, index):
    role = "primary" if name == index.primary else "key" if name in index.keys else "extra"
    el = ET.Element("field", name=name, dtype=dtype.str, role=role)
    if name in index.keys:
        el.set("sort", str(index.keys.index(name)))
    encoding = (dtype.metadata or {}).get("h5py_encoding")
    if encoding:
        el.set("encoding", encoding)
    for member, value in (check_enum_dtype(dtype) or {}).items():
        ET.SubElement(el, "enum", name=member, value=str(value))
    return el


def _value_element(value):
    if isinstance(value, bytes):
        if all(0x20 <= b < 0x7F for b in value):
            return _element("v", text=value.decode("ascii"))
        return _element("v", hex=value.hex())
    if isinstance(value, np.floating):
        return _element("v", text=float(value).hex())
    return _element("v", text=str(int(value)))


def _target_element(target, target_type, paths):
    if target_type == "element":
        return _element("t", coords=" ".join(str(int(c)) for c in target))
    el = _element("t", address=str(target.address))
    _set_path(el, paths.get(int(target.address)))
    if target_type == "region":
        el.set("selection", selection.encode(target.selection).hex())
    return el


def _set_path(el, path):
    if path is not None:
        el.set("path", path)


def _element(tag, text=None, **attrib):
    el = ET.Element(tag, attrib)
    el.text = text
    return el


# --- import -------------------------------------------------------------------------------------

def import_index(source, loc=None, name=None, targets="path"):
    """Read an index exported by :func:`export_index` from ``source`` (a path or a text file
    object). Returned cached (targets as exported), or written as table ``loc[name]`` and
    returned bound. Written into a file, every target is re-resolved there:
    ``targets="path"`` (default) finds each target (and an element index's dataset) by the
    path it had when exported and refuses, with :class:`UnresolvedTargetError`, a target
    with no recorded path, a path the file lacks, or a region or element target that is not
    a dataset or does not fit it; ``targets="address"`` keeps the exported addresses (for the
    file the index was exported from) after checking that each names an object there."""
    if targets not in TARGET_MODES:
        raise ValueError(f"targets must be one of {TARGET_MODES}, not {targets!r}")
    if isinstance(source, str) and source.lstrip().startswith("<"):
        source = io.StringIO(source)
    root = ET.parse(source).getroot()
    if root.tag != "index" or root.get("format") != FORMAT or \
            root.get("version") not in ("1", FORMAT_VERSION):
        raise ValueError(f"not a {FORMAT} document (version 1 or {FORMAT_VERSION})")
    index = _index_from(root)
    if loc is None:
        return index
    index = _resolved(index, loc.file, targets)
    return Index(None, table=storage.write_table(loc, name, index), **index.metadata())


def _resolved(index, file, how):
    """``index`` with its targets re-resolved in ``file`` (see :func:`import_index`)."""
    paths = index.target_paths()
    lookup = _by_address if how == "address" else _by_path
    new = {a: lookup(file, a, paths.get(a), index.target_type) for a in paths}
    records = np.array(index.records)
    field = index.target_field
    if index.target_type == "element":
        dataset = new[int(index.target_dataset.address)]
        _check_elements(records[field], dataset, index.target_rank)
        meta = index.metadata() | {"target_dataset": Reference(int(dataset.ref.address))}
        return Index(records, paths={int(dataset.ref.address): dataset.name}, **meta)
    for i, stored in enumerate(records[field]):
        records[field][i] = np.array([_moved(t, new[int(t.address)]) for t in stored],
                                     dtype=stored.dtype)
    return Index(records, paths={int(o.ref.address): o.name for o in new.values()},
                 **index.metadata())


def _by_path(file, address, path, target_type):
    if path is None:
        raise UnresolvedTargetError(
            f"target at address {address} has no path in the document (exported from a cached "
            "index or a version 1 document): import it with targets='address' into the file "
            "it came from")
    try:
        obj = file[path]
    except (KeyError, ValueError, OSError):
        raise UnresolvedTargetError(f"target {path!r} is not in {file.filename}") from None
    if target_type != "object" and not hasattr(obj, "shape"):
        raise UnresolvedTargetError(f"{target_type} target {path!r} is not a dataset")
    return obj


def _by_address(file, address, path, target_type):
    try:
        obj = file[Reference(address)]
    except (KeyError, ValueError, OSError):
        where = f" ({path!r} when exported)" if path else ""
        raise UnresolvedTargetError(f"target address {address}{where} names no object in "
                                    f"{file.filename}") from None
    if target_type != "object" and not hasattr(obj, "shape"):
        raise UnresolvedTargetError(f"{target_type} target at address {address} is not a dataset")
    return obj


def _moved(target, obj):
    """``target`` pointing at ``obj``; a region's selection must fit the dataset."""
    if not isinstance(target, RegionReference):
        return Reference(int(obj.ref.address))
    sel = target.selection
    box = sel.bounding_box(obj.shape) if sel.rank in (None, len(obj.shape)) else False
    if box is False or (box is not None and any(h >= n for h, n in zip(box[1], obj.shape))):
        raise UnresolvedTargetError(f"a region of {obj.name} selects outside its shape {obj.shape}")
    return RegionReference(int(obj.ref.address), sel)


def _check_elements(column, dataset, rank):
    if len(dataset.shape) != rank:
        raise UnresolvedTargetError(f"element dataset {dataset.name} has rank "
                                    f"{len(dataset.shape)}, the index {rank}")
    for coords in column:
        c = np.asarray(coords, np.uint64).reshape(-1, rank)
        if c.size and np.any(c >= np.asarray(dataset.shape, np.uint64)):
            raise UnresolvedTargetError(f"element {c.max(axis=0).tolist()} outside "
                                        f"{dataset.name} of shape {dataset.shape}")


def _index_from(root):
    target_type = root.get("target_type")
    fields = root.findall("field")
    dtype = np.dtype([(f.get("name"), _dtype(f)) for f in fields]
                     + [(root.get("target_field"), storage.target_dtype(target_type))])
    records = np.zeros(int(root.get("records")), dtype)
    for i, rec in enumerate(root.findall("record")):
        for field, v in zip(fields, rec.findall("v")):
            records[field.get("name")][i] = _value(v, dtype[field.get("name")])
        records[root.get("target_field")][i] = _targets(rec.findall("t"), target_type)
    keys = sorted((f for f in fields if f.get("sort") is not None),
                  key=lambda f: int(f.get("sort")))
    primary = [f.get("name") for f in fields if f.get("role") == "primary"]
    dataset = root.find("target_dataset")
    paths = {int(el.get("address")): el.get("path") for el in root.iter()
             if el.tag in ("t", "target_dataset") and el.get("address") is not None}
    return Index(records, [f.get("name") for f in keys], root.get("target_field"),
                 target_type, primary[0] if primary else None, root.get("title"),
                 None if dataset is None else Reference(int(dataset.get("address"))),
                 None if dataset is None else int(dataset.get("rank")), paths=paths)


def _dtype(field):
    dt = np.dtype(field.get("dtype"))
    enum = {e.get("name"): int(e.get("value")) for e in field.findall("enum")}
    if enum:
        return np.dtype(dt, metadata={"enum": enum})
    if field.get("encoding"):
        return np.dtype(dt, metadata={"h5py_encoding": field.get("encoding")})
    return dt


def _value(el, dtype):
    if dtype.kind == "S":
        return bytes.fromhex(el.get("hex")) if el.get("hex") is not None \
            else (el.text or "").encode("ascii")
    if dtype.kind == "f":
        return float.fromhex(el.text)
    return int(el.text)


def _targets(elements, target_type):
    if target_type == "element":
        return np.array([int(c) for t in elements for c in t.get("coords").split()], np.uint64)
    refs = [_reference(t, target_type) for t in elements]
    return np.array(refs, dtype=storage.target_dtype(target_type).metadata["vlen"])


def _reference(el, target_type):
    address = int(el.get("address"))
    if target_type == "object":
        return Reference(address)
    raw = memoryview(bytes.fromhex(el.get("selection")))
    return RegionReference(address, selection.decode(Cursor(raw, 0, "region selection")))
