"""A transcription, on h5py, of the Arkouda server's HDF5 read path: ``readAllHdfMsg`` and the
checks and readers it calls in ``src/HDF5Msg.chpl`` (``get_info``, ``getObjType``,
``get_dataset_info``, ``isBigIntPdarray``, ``isStringsObject``, ``get_subdoms``,
``readPdarrayFromFile``, ``readBigIntPdarrayFromFile``, ``readStringsFromFile``,
``fixupSegBoundaries``, ``readSegArrayFromFile``, ``categorical_readhdfMsg``,
``groupby_readhdfMsg``, ``dataframe_readhdfMsg``, ``index_readhdfMsg``) of the server
version named in SERVER. Written from reading that source (its logic, not its code); every
place the server throws raises ServerError with the server's message. It shares nothing with
purehep: it is the oracle that what purehep writes is what the server reads.

``read_all(filenames)`` returns ``{name: (ObjType name, value)}`` with values in plain Python
terms: pdarray -> numpy array (int64, uint64, float64 or bool, as the server's SymEntry), BigInt
-> list of ints, Strings -> list of str, SegArray -> list of lists, Categorical -> dict,
GroupBy -> dict, DataFrame -> {column: (type, value)}, Index -> [(type, value)].
"""
import os

import h5py
import numpy as np

SERVER = ("Arkouda server v2026.07.15-17-gc3f5003fe (Bears-R-Us/arkouda commit c3f5003fe of "
          "2026-08-18), src/HDF5Msg.chpl")
OBJTYPES = {-1: "UNKNOWN", 0: "ARRAYVIEW", 1: "PDARRAY", 2: "STRINGS", 3: "SEGARRAY",
            4: "CATEGORICAL", 5: "GROUPBY", 6: "DATAFRAME", 7: "DATETIME", 8: "TIMEDELTA",
            9: "IPV4", 10: "BITVECTOR", 11: "SERIES", 12: "INDEX", 13: "MULTIINDEX"}
PDARRAY_LIKE = ("PDARRAY", "IPV4", "DATETIME", "TIMEDELTA")
AK_META_GROUP = "_arkouda_metadata"


class ServerError(Exception):
    pass


def _open(path):
    return h5py.File(path, "r")


def get_obj_type(f, name):
    """getObjType: the ObjType attribute, else STRINGS if a ``values`` link exists, else
    PDARRAY."""
    if name not in f:
        raise ServerError(f"Dataset, {name}, not found.")
    obj = f[name]
    if "ObjType" in obj.attrs:
        return OBJTYPES.get(int(obj.attrs["ObjType"]), "UNKNOWN")
    return "STRINGS" if isinstance(obj, h5py.Group) and "values" in obj else "PDARRAY"


def get_dataset_info(f, name):
    """(class, size, signed) of a dataset (H5Dopen: a group fails)."""
    if name not in f or not isinstance(f[name], h5py.Dataset):
        raise ServerError(f"dataset {name} does not exist")
    dt = f[name].dtype
    cls = {"i": "INTEGER", "u": "INTEGER", "b": "INTEGER", "f": "FLOAT"}.get(dt.kind, dt.kind)
    return cls, dt.itemsize, dt.kind == "i"


def is_bigint(f, name):
    return name in f and int(f[name].attrs.get("isBigInt", 0)) == 1


def _strings_checks(f, dset, calc):
    if not calc and get_dataset_info(f, f"{dset}/segments")[0] != "INTEGER":
        raise ServerError(f"dataset {dset} has incorrect one or more sub-datasets")
    value = f"{dset}/values"
    if get_obj_type(f, value) == "STRINGS":
        return get_dataset_info(f, f"{value}/values")
    if is_bigint(f, value):
        return get_dataset_info(f, f"{value}/Limb_0")
    return get_dataset_info(f, value)


def get_info(filename, dset, calc):
    """(objType, class, size, signed): get_info's checks of one file."""
    if not os.path.exists(filename):
        raise ServerError(f"The file {filename} does not exist")
    if not h5py.is_hdf5(filename):
        raise ServerError(f"{filename} is not an HDF5 file")
    with _open(filename) as f:
        if dset not in f:
            raise ServerError(f"The dataset {dset} does not exist in the file {filename}")
        ot = get_obj_type(f, dset)
        if ot in ("STRINGS", "SEGARRAY"):
            info = _strings_checks(f, dset, calc)
        elif ot == "CATEGORICAL":
            info = get_dataset_info(f, f"{dset}/codes")
        elif ot == "GROUPBY":
            info = get_dataset_info(f, f"{dset}/permutation")
        elif ot in ("INDEX", "MULTIINDEX", "DATAFRAME"):
            first = f"{dset}/IDX_0" if ot != "DATAFRAME" else f"{dset}/Index"
            sub = get_obj_type(f, first)
            if sub == "PDARRAY":
                info = get_dataset_info(f, first)
            elif sub == "STRINGS":
                info = _strings_checks(f, first, calc)
            elif sub == "CATEGORICAL" and ot != "DATAFRAME":
                info = get_dataset_info(f, f"{first}/codes")
            else:
                raise ServerError("Invalid DataFrame Formatting of Index")
        elif is_bigint(f, dset):
            info = get_dataset_info(f, f"{dset}/Limb_0")
        else:
            info = get_dataset_info(f, dset)
    return (ot,) + info


def get_subdoms(filenames, dset):
    """Lengths of ``dset`` per file (H5LTget_dataset_info: a rank-1 dataset), and the files
    with none of it (skips)."""
    lengths = []
    for name in filenames:
        with _open(name) as f:
            if dset not in f or not isinstance(f[dset], h5py.Dataset):
                raise ServerError(f"in getting dataset info {dset}")
            lengths.append(int(f[dset].shape[0]) if f[dset].shape else 0)
    return lengths, {n for n, k in zip(filenames, lengths) if k == 0}


def _read_concat(filenames, dset, dtype):
    parts = []
    for name in filenames:
        with _open(name) as f:
            parts.append(np.asarray(f[dset][()]).astype(dtype))
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def read_pdarray(filenames, dset, cls, size, signed):
    with _open(filenames[0]) as f:
        if is_bigint(f, dset):
            return read_bigint(filenames, dset)
        is_bool = "isBool" in f[dset].attrs and int(f[dset].attrs["isBool"]) == 1
    get_subdoms(filenames, dset)
    if cls == "INTEGER":
        a = _read_concat(filenames, dset, np.uint64 if (not signed and size == 8) else np.int64)
        return a.astype(bool) if is_bool else a
    if cls == "FLOAT":
        return _read_concat(filenames, dset, np.float64)
    raise ServerError(f"detected unhandled datatype: objType? pdarray, class {cls}, size "
                      f"{size}, signed? {signed}")


def read_bigint(filenames, dset):
    with _open(filenames[0]) as f:
        attrs = f[dset].attrs
        max_bits = int(attrs["MaxBits"]) if "MaxBits" in attrs else -1
        if "NumLimbs" not in attrs:
            raise ServerError("NumKeys attribute not found. Required for GroupBy Reads.")
        nlimbs = int(attrs["NumLimbs"])
    values = None
    for i in range(nlimbs):
        get_subdoms(filenames, f"{dset}/Limb_{i}")
        limb = _read_concat(filenames, f"{dset}/Limb_{i}", np.uint64)
        if values is None:
            values = [0] * len(limb)
        values = [v + (int(x) << (64 * i)) for v, x in zip(values, limb.tolist())]
    if max_bits != -1:
        values = [v & ((1 << max_bits) - 1) for v in values]
    return values


def _calc_offsets(values):
    ends = np.flatnonzero(values == 0)
    return np.concatenate([[0], ends[:-1] + 1]).astype(np.int64) if len(ends) else \
        np.zeros(0, np.int64)


def _fixup(filenames, seg_dset, segs, value_lengths):
    """fixupSegBoundaries: each file's segments raised by the values of the files before
    (files whose segments part is empty add nothing)."""
    seg_lengths, _ = get_subdoms(filenames, seg_dset)
    if len(segs) == 1:
        return segs
    out, pos, raise_by = segs.copy(), 0, 0
    for n, vlen in zip(seg_lengths, value_lengths):
        out[pos:pos + n] += raise_by
        if n > 0:
            raise_by += vlen
        pos += n
    return out


def read_strings_raw(filenames, dset, cls, size, signed, calc):
    """(values uint8, offsets int64) of readStringsFromFile."""
    nseg = 0
    if not calc:
        seg_lengths, _ = get_subdoms(filenames, f"{dset}/segments")
        nseg = sum(seg_lengths)
    val_lengths, skips = get_subdoms(filenames, f"{dset}/values")
    if size != 1 or signed:
        raise ServerError(f"Error: detected unhandled datatype: objType? SegString, class "
                          f"{cls}, size {size}, signed? {signed}")
    values = _read_concat(filenames, f"{dset}/values", np.uint8)
    if calc or nseg < 1 or skips:
        return values, _calc_offsets(values)
    segs = _read_concat(filenames, f"{dset}/segments", np.int64)
    return values, _fixup(filenames, f"{dset}/segments", segs, val_lengths)


def _split_strings(values, offsets):
    raw = values.tobytes()
    stops = list(offsets[1:]) + [len(raw)]
    return [raw[a:b].split(b"\0", 1)[0].decode("utf-8") for a, b in zip(offsets, stops)]


def read_strings(filenames, dset, cls, size, signed, calc):
    return _split_strings(*read_strings_raw(filenames, dset, cls, size, signed, calc))


def read_segarray(filenames, dset, cls, size, signed, calc):
    value = f"{dset}/values"
    with _open(filenames[0]) as f:
        nested = get_obj_type(f, value) == "STRINGS"
        big = is_bigint(f, value)
    if nested:
        val_lengths, _ = get_subdoms(filenames, f"{value}/segments")
        items = read_strings(filenames, value, cls, size, signed, calc)
    else:
        val_lengths, _ = get_subdoms(filenames, f"{value}/Limb_0" if big else value)
        items = read_pdarray(filenames, value, cls, size, signed)
        items = items if isinstance(items, list) else items.tolist()
    get_subdoms(filenames, f"{dset}/segments")
    segs = _fixup(filenames, f"{dset}/segments",
                  _read_concat(filenames, f"{dset}/segments", np.int64), val_lengths)
    stops = list(segs[1:]) + [len(items)]
    return [items[a:b] for a, b in zip(segs, stops)]


def read_categorical(filenames, dset, calc):
    get_subdoms(filenames, f"{dset}/codes")
    out = {"codes": _read_concat(filenames, f"{dset}/codes", np.int64)}
    _, cls, size, signed = get_info(filenames[0], f"{dset}/categories", calc)
    out["categories"] = read_strings(filenames, f"{dset}/categories", cls, size, signed, calc)
    get_subdoms(filenames, f"{dset}/NA_Codes")
    out["NA_Codes"] = _read_concat(filenames, f"{dset}/NA_Codes", np.int64)
    with _open(filenames[0]) as f:
        both = f"{dset}/segments" in f and f"{dset}/permutation" in f
    if both:
        for name in ("segments", "permutation"):
            get_subdoms(filenames, f"{dset}/{name}")
            out[name] = _read_concat(filenames, f"{dset}/{name}", np.int64)
    return out


def _read_member(filenames, path, calc, allowed, error):
    ot, cls, size, signed = get_info(filenames[0], path, calc)
    if ot in PDARRAY_LIKE and "PDARRAY" in allowed:
        return "PDARRAY", read_pdarray(filenames, path, cls, size, signed)
    if ot == "STRINGS" and ot in allowed:
        return ot, read_strings(filenames, path, cls, size, signed, calc)
    if ot == "CATEGORICAL" and ot in allowed:
        return ot, read_categorical(filenames, path, calc)
    if ot == "SEGARRAY" and ot in allowed:
        return ot, read_segarray(filenames, path, cls, size, signed, calc)
    raise ServerError(f"{error}, {ot}")


def _ls(filename, dset):
    """simulate_h5ls: the member names of a group, in the file's link order."""
    with _open(filename) as f:
        return list(f[dset].keys())


def read_groupby(filenames, dset, calc):
    out = {}
    for name in ("permutation", "segments", "unique_key_idx"):
        get_subdoms(filenames, f"{dset}/{name}")
        out[name] = _read_concat(filenames, f"{dset}/{name}", np.int64)
    with _open(filenames[0]) as f:
        if "NumKeys" not in f[dset].attrs:
            raise ServerError("NumKeys attribute not found. Required for GroupBy Reads.")
        nkeys = int(f[dset].attrs["NumKeys"])
    out["keys"] = [_read_member(filenames, f"{dset}/KEY_{k}", calc,
                                ("PDARRAY", "STRINGS", "CATEGORICAL"),
                                "Unsupported GroupBy key type") for k in range(nkeys)]
    return out


def read_dataframe(filenames, dset, calc):
    return {col: _read_member(filenames, f"{dset}/{col}", calc,
                              ("PDARRAY", "STRINGS", "CATEGORICAL", "SEGARRAY"),
                              "Unsupported DataFrame column type")
            for col in _ls(filenames[0], dset)}


def read_index(filenames, dset, calc):
    return [_read_member(filenames, f"{dset}/{name}", calc, ("PDARRAY", "STRINGS", "CATEGORICAL"),
                         "Unsupported Index value type") for name in _ls(filenames[0], dset)]


def read_all(filenames, dsets=None, calc_string_offsets=False, strict_types=False):
    """readAllHdfMsg over ``filenames`` (sorted like the server's glob) for ``dsets`` (default:
    the root members of the first file, as the client lists them)."""
    filenames = sorted(filenames)
    if dsets is None:
        dsets = _ls(filenames[0], "/")
    out = {}
    calc = calc_string_offsets
    for dset in dsets:
        if dset == AK_META_GROUP:       # legacy metadata group: ignored
            continue
        infos = [get_info(name, dset, calc) for name in filenames]
        ot, cls, size, signed = infos[0]
        for name, (o, c, s, g) in zip(filenames, infos):
            if o != ot:
                raise ServerError(f"Inconsistent objecttype in dataset {dset} of file {name}. "
                                  f"Expected: {ot}, Found: {o}")
            if c != cls:
                raise ServerError(f"Inconsistent dtype in dataset {dset} of file {name}")
            if strict_types and (s != size or g != signed):
                raise ServerError(f"Inconsistent precision or sign in dataset {dset}")
        if ot in PDARRAY_LIKE:
            value = read_pdarray(filenames, dset, cls, size, signed)
        elif ot == "STRINGS":
            value = read_strings(filenames, dset, cls, size, signed, calc)
        elif ot == "SEGARRAY":
            value = read_segarray(filenames, dset, cls, size, signed, calc)
        elif ot == "CATEGORICAL":
            value = read_categorical(filenames, dset, calc)
        elif ot == "GROUPBY":
            value = read_groupby(filenames, dset, calc)
        elif ot == "DATAFRAME":
            value = read_dataframe(filenames, dset, calc)
        elif ot in ("INDEX", "MULTIINDEX"):
            value = read_index(filenames, dset, calc)
        else:
            raise ServerError("Unknown object type found")
        out[dset] = (ot, value)
    return out
