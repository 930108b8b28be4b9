"""Writing and reading Arkouda HDF5 files: single files and one file per locale."""
import glob as _glob
import os

import numpy as np

from ..hl.files import File
from .convert import prepare
from .objects import (ArrayView, BigInt, Categorical, DataFrame, GroupBy, Index, SegArray,
                      Strings, concat, split)
from .schema import (ARRAYVIEW, CATEGORICAL, DATAFRAME, GROUPBY, INDEX, LEGACY_METADATA_GROUP,
                     MULTI_FILE, MULTIINDEX, PDARRAY, SEGARRAY, SINGLE_FILE, STRINGS,
                     bigint_metadata, metadata)

# ---------------------------------------------------------------- writing


def _dataset(parent, name, values, objtype=PDARRAY):
    """A 1-D dataset with its metadata; booleans stored as H5T_NATIVE_HBOOL (uint8)."""
    values = np.asarray(values)
    is_bool = values.dtype == np.bool_
    ds = parent.create_dataset(name, data=values.astype(np.uint8) if is_bool else values)
    metadata(ds, objtype, is_bool)
    return ds


def _write_bigint(parent, name, big, num_limbs):
    """pdarray_tohdfMsg for DType.BigInt: a group with writeBigIntMetaData and the
    pdarray metadata, holding uint64 ``Limb_<i>`` datasets (least significant first)."""
    group = parent.create_group(name)
    bigint_metadata(group, big.max_bits, num_limbs)
    metadata(group, PDARRAY)
    for i, limb in enumerate(big.limbs(num_limbs)):
        _dataset(group, f"Limb_{i}", limb)


def _write_object(parent, name, obj, limbs):
    """``obj`` (prepared) as ``name`` in ``parent``; ``limbs`` maps id(BigInt part) to the
    limb count of the whole array (the server counts limbs before distributing)."""
    if isinstance(obj, np.ndarray):
        _dataset(parent, name, obj)
    elif isinstance(obj, BigInt):
        _write_bigint(parent, name, obj, limbs.get(id(obj), obj.num_limbs()))
    elif isinstance(obj, ArrayView):
        ds = _dataset(parent, name, obj.values, ARRAYVIEW)
        ds.attrs.create("Rank", np.int64(len(obj.shape)), dtype="<i8")
        ds.attrs.create("Shape", np.asarray(obj.shape, dtype="<i8"), dtype="<i8")
    else:
        group = parent.create_group(name)
        for key, member in obj._members():
            _write_object(group, key, member, limbs)
        metadata(group, obj._objtype(), obj._is_bool(), obj._counts())


def locale_filenames(path, locales):
    """``<prefix>_LOCALE<i:04d><extension>`` for each locale (FileIO.generateFilename)."""
    prefix, extension = os.path.splitext(path)
    return [f"{prefix}_LOCALE{i:04d}{extension}" for i in range(locales)]


def _open_for_writing(path, mode, file_format):
    """Truncate: a new file; append: the existing file, or a new one (prepFiles)."""
    if mode == "append" and os.path.exists(path):
        return File(path, "a")
    f = File(path, "w")
    f.attrs.create("File_Format", np.int64(file_format), dtype="<i8")
    return f


def _write_file(path, objects, mode, file_format, limbs):
    with _open_for_writing(path, mode, file_format) as f:
        for name in objects:
            if name in f:
                raise ValueError(f"an object named {name!r} already exists in {path}")
        for name, obj in objects.items():
            _write_object(f, name, obj, limbs)


def _bigints(obj):
    """Every BigInt inside ``obj``."""
    if isinstance(obj, BigInt):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [b for x in obj for b in _bigints(x)]
    if isinstance(obj, dict):
        return [b for x in obj.values() for b in _bigints(x)]
    if isinstance(obj, (SegArray, GroupBy, DataFrame, Index, Categorical)):
        return [b for _, m in obj._members() for b in _bigints(m)]
    return []


def write(path, objects, mode="truncate", file_type="single", locales=1, arrayview=False):
    """Write ``{name: object}`` to ``path`` (single) or to one file per locale (distribute).

    Objects: 1-D numpy arrays (pdarray), BigInt, Strings, SegArray, Categorical, GroupBy,
    DataFrame, Index; lists and numpy string arrays become Strings (``convert``). Only what the
    current Arkouda server reads is written; anything else raises TypeError/ValueError before
    a file is touched. ArrayView (ObjType 0, no longer read by the server) only with
    ``arrayview=True``. Returns the list of files written."""
    if mode not in ("truncate", "append"):
        raise ValueError(f"mode must be 'truncate' or 'append', not {mode!r}")
    if file_type not in ("single", "distribute"):
        raise ValueError(f"file_type must be 'single' or 'distribute', not {file_type!r}")
    objects = {str(name): prepare(obj, str(name), arrayview) for name, obj in objects.items()}
    if LEGACY_METADATA_GROUP in objects:
        raise ValueError(f"{LEGACY_METADATA_GROUP!r} is the legacy metadata group the server "
                         "skips when reading")
    if file_type == "single":
        _write_file(path, objects, mode, SINGLE_FILE, {})
        return [path]
    paths = locale_filenames(path, locales)
    if mode == "append":
        _check_append(path, paths)
    pieces, limbs = {}, {}
    for name, obj in objects.items():
        parts = split(obj, locales)
        for whole, *bits in zip(_bigints(obj), *[_bigints(p) for p in parts]):
            limbs.update({id(b): whole.num_limbs() for b in bits})
        pieces[name] = parts
    for i, part in enumerate(paths):
        _write_file(part, {name: p[i] for name, p in pieces.items()}, mode, MULTI_FILE, limbs)
    return paths


def _check_append(path, paths):
    """prepFiles: appending needs as many existing locale files as locales, or none."""
    existing = _glob.glob(_locale_pattern(path))
    if existing and len(existing) != len(paths):
        raise ValueError(f"cannot append {len(paths)} locale files to {len(existing)} "
                         f"existing ones matching {_locale_pattern(path)}")


# ---------------------------------------------------------------- reading

_READERS = {STRINGS: Strings, SEGARRAY: SegArray, CATEGORICAL: Categorical, GROUPBY: GroupBy,
            DATAFRAME: DataFrame, INDEX: Index, MULTIINDEX: Index}


def _read_dataset(ds):
    values = ds[()]
    if int(ds.attrs.get("isBool", 0)):
        values = values.astype(np.bool_)
    objtype = ds.attrs.get("ObjType")
    if objtype == ARRAYVIEW or (objtype is None and "Shape" in ds.attrs):
        return ArrayView(values, tuple(ds.attrs["Shape"]))
    return values


def _read_bigint(group):
    """readBigIntPdarrayFromFile: NumLimbs ``Limb_<i>`` uint64 datasets, MaxBits mask."""
    if "NumLimbs" not in group.attrs:
        raise ValueError(f"{group.name}: a BigInt group without NumLimbs")
    count = int(group.attrs["NumLimbs"])
    max_bits = int(group.attrs.get("MaxBits", -1))
    missing = [i for i in range(count) if f"Limb_{i}" not in group]
    if missing:
        raise ValueError(f"{group.name}: NumLimbs is {count} but Limb_{missing[0]} is missing")
    limbs = [np.asarray(group[f"Limb_{i}"][()]).astype(np.uint64) for i in range(count)]
    if len({len(limb) for limb in limbs}) > 1:
        raise ValueError(f"{group.name}: limbs of different lengths")
    return BigInt.from_limbs(limbs, max_bits)


def _group_type(group):
    """ObjType, or the type the members imply (the schema's legacy inference)."""
    if "ObjType" in group.attrs:
        return int(group.attrs["ObjType"])
    for member, objtype in (("unique_key_idx", GROUPBY), ("codes", CATEGORICAL),
                            ("IDX_0", INDEX), ("Index", DATAFRAME)):
        if member in group:
            return objtype
    if "values" in group:
        values = group["values"]
        is_strings = hasattr(values, "dtype") and values.dtype == np.uint8
        return STRINGS if is_strings and "isBool" not in values.attrs else SEGARRAY
    raise ValueError(f"{group.name}: not an Arkouda object (no ObjType, no known members)")


def _read_node(node):
    if not hasattr(node, "keys"):
        return _read_dataset(node)
    if int(node.attrs.get("isBigInt", 0)) == 1:
        return _read_bigint(node)
    objtype = _group_type(node)
    if objtype not in _READERS:
        raise ValueError(f"{node.name}: ObjType {objtype} is not an Arkouda group object")
    members = {k: _read_node(node[k]) for k in node}
    return _READERS[objtype]._build(members)


def _locale_pattern(path):
    prefix, extension = os.path.splitext(path)
    return f"{prefix}_LOCALE*{extension}"


def _resolve(path):
    """The files of ``path``: a glob pattern, one file, or the locale files of a prefix."""
    if _glob.has_magic(path):
        found = sorted(_glob.glob(path))
    elif os.path.exists(path):
        found = [path]
    else:
        found = sorted(_glob.glob(_locale_pattern(path)))
    if not found:
        raise FileNotFoundError(f"no Arkouda HDF5 file matches {path!r}")
    return found


def read(path, names=None):
    """``{name: object}`` read from one file or a distributed set (parts concatenated). The
    legacy ``/_arkouda_metadata`` group is skipped, as the server's readAllHdfMsg skips it."""
    files = [File(p, "r") for p in _resolve(path)]
    try:
        wanted = list(files[0].keys()) if names is None else list(names)
        wanted = [n for n in wanted if n.strip("/") != LEGACY_METADATA_GROUP]
        return {name: concat([_read_node(f[name]) for f in files]) for name in wanted}
    finally:
        for f in files:
            f.close()
