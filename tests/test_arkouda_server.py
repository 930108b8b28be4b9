"""What purehep.arkouda writes, read by a transcription of the Arkouda server's read path
(tests/arkouda_server.py, server version in arkouda_server.SERVER); Arkouda's own repository
HDF5 files (from a fetched copy of Bears-R-Us/arkouda, else skipped) and h5py-built files of
the same structure read by purehep and by the transcription; BigInt groups as the server lays
them out; the objects the current server refuses are refused at the call; plain Python data
converted."""
import os
import subprocess

import h5py
import numpy as np
import pytest

from purehep import arkouda as ak
from arkouda_server import SERVER, ServerError, read_all
from test_arkouda import h5_metadata, h5_strings, objects

ARKOUDA_REPO = os.environ.get("ARKOUDA_REPO", "/work/.mirror/Bears-R-Us+arkouda/repo")
REPO_FILES = ["resources/hdf5-testing/Legacy_String.hdf5",
              "resources/hdf5-testing/array_v0_LOCALE0000.hdf5",
              "resources/hdf5-testing/array_v1_LOCALE0000.hdf5",
              "tests/server/resources/UnitTestHDF5_noOffsets_LOCALE0000",
              "tests/server/resources/UnitTestHDF5_withOffsets_LOCALE0000",
              "tests/server/resources/sample.hdf5"]


def server_view(obj):
    """(ObjType name, value) of a purehep object in arkouda_server.read_all's terms."""
    if isinstance(obj, np.ndarray):
        kind = obj.dtype.kind
        dtype = bool if kind == "b" else np.float64 if kind == "f" else \
            np.uint64 if (kind == "u" and obj.dtype.itemsize == 8) else np.int64
        return "PDARRAY", obj.astype(dtype)
    if isinstance(obj, ak.BigInt):
        return "PDARRAY", obj.tolist()
    if isinstance(obj, ak.Strings):
        return "STRINGS", obj.tolist()
    if isinstance(obj, ak.SegArray):
        values = server_view(obj.values)[1]
        values = values if isinstance(values, list) else values.tolist()
        stops = list(obj.segments[1:]) + [len(values)]
        return "SEGARRAY", [values[a:b] for a, b in zip(obj.segments, stops)]
    if isinstance(obj, ak.Categorical):
        out = {"codes": obj.codes.astype(np.int64), "categories": obj.categories.tolist(),
               "NA_Codes": obj.na_codes.astype(np.int64)}
        if obj.permutation is not None and obj.segments is not None:
            out["segments"] = obj.segments.astype(np.int64)
            out["permutation"] = obj.permutation.astype(np.int64)
        return "CATEGORICAL", out
    if isinstance(obj, ak.GroupBy):
        return "GROUPBY", {"permutation": obj.permutation, "segments": obj.segments,
                           "unique_key_idx": obj.unique_key_idx,
                           "keys": [server_view(k) for k in obj.keys]}
    if isinstance(obj, ak.DataFrame):
        return "DATAFRAME", {"Index": server_view(obj.index),
                             **{k: server_view(v) for k, v in obj.columns.items()}}
    if isinstance(obj, ak.Index):
        return ("INDEX" if len(obj.levels) == 1 else "MULTIINDEX",
                [server_view(level) for level in obj.levels])
    raise TypeError(type(obj))


def same(a, b, where="."):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and np.array_equal(a, b), (where, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (where, set(a), set(b))
        for k in a:
            same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def test_server_version_is_named():
    assert "HDF5Msg.chpl" in SERVER and "c3f5003fe" in SERVER


@pytest.mark.parametrize("file_type,locales", [("single", 1), ("distribute", 1),
                                               ("distribute", 3), ("distribute", 8)])
def test_every_default_write_passes_the_server_read_path(tmp_path, file_type, locales):
    objs = objects()
    paths = ak.write(str(tmp_path / "a.h5"), objs, file_type=file_type, locales=locales)
    got = read_all(paths)
    assert set(got) == set(objs)
    for name, obj in objs.items():
        same(got[name], server_view(obj), name)


def test_conversions_pass_the_server_read_path(tmp_path):
    objs = {"words": ["a", "bé", ""], "ustr": np.array(["x", "yz"]),
            "ostr": np.array(["p", "q"], dtype=object), "ints": [1, 2, 3],
            "big": [1, 2**70], "cat": ak.Categorical.from_list(["b", "a", "b", "N/A", "c"]),
            "emptycat": ak.Categorical.from_list([]),
            "nums": ak.SegArray.from_lists([[1, 2], [], [3]]),
            "texts": ak.SegArray.from_lists([["u", "v"], ["w"], []]),
            "bigs": ak.SegArray.from_lists([[2**65], [1, 2]]),
            "df": ak.DataFrame({"s": ["x", "y"], "n": [1.5, 2.5]}, ["r0", "r1"])}
    path = str(tmp_path / "c.h5")
    ak.write(path, objs)
    got = read_all([path])
    assert got["words"] == ("STRINGS", ["a", "bé", ""])
    assert got["ustr"] == ("STRINGS", ["x", "yz"]) and got["ostr"] == ("STRINGS", ["p", "q"])
    same(got["ints"], ("PDARRAY", np.array([1, 2, 3])))
    assert got["big"] == ("PDARRAY", [1, 2**70])
    cat = got["cat"][1]
    assert [cat["categories"][c] for c in cat["codes"]] == ["b", "a", "b", "N/A", "c"]
    assert cat["categories"][cat["NA_Codes"][0]] == "N/A"
    # permutation groups equal codes; segments start each category's run
    perm_codes = cat["codes"][cat["permutation"]]
    assert np.all(np.diff(perm_codes) >= 0)
    assert np.array_equal(perm_codes[cat["segments"]], np.arange(len(cat["segments"])))
    assert got["emptycat"][1]["categories"] == ["N/A"]
    assert got["nums"] == ("SEGARRAY", [[1, 2], [], [3]])
    assert got["texts"] == ("SEGARRAY", [["u", "v"], ["w"], []])
    assert got["bigs"] == ("SEGARRAY", [[2**65], [1, 2]])
    assert got["df"][1]["Index"] == ("STRINGS", ["r0", "r1"])
    back = ak.read(path)
    assert back["words"].tolist() == ["a", "bé", ""] and back["big"].tolist() == [1, 2**70]
    assert back["cat"].tolist() == ["b", "a", "b", "N/A", "c"]
    assert back["nums"].tolist() == [[1, 2], [], [3]]


@pytest.mark.parametrize("obj,match", [
    (ak.ArrayView(np.arange(6).reshape(2, 3)), "ArrayView"),
    (np.array([1 + 2j]), "complex"),
    (np.array([b"a", b"b"]), "byte-string"),
    (ak.DataFrame({"a": np.arange(2)}, ak.Index([np.arange(2)])), "DataFrame index"),
    (ak.DataFrame({"a": np.arange(2)}, ak.Categorical.from_list(["p", "q"])), "DataFrame index"),
    (ak.DataFrame({"a": np.array([1j, 2j])}, np.arange(2)), "complex"),
    (ak.DataFrame({"g": ak.GroupBy(np.arange(1), np.arange(1), np.arange(1))}, np.arange(1)),
     "DataFrame column"),
    (ak.GroupBy(np.arange(2), np.array([0]), np.array([0]),
                [ak.SegArray(np.arange(2), np.array([0, 1]))]), "GroupBy key"),
    (ak.Index([ak.BigInt([1, 2])]), "first Index level"),
    (np.array(["2024-01-01"], dtype="datetime64[D]"), "datetime64"),
    ([1, "a"], "mixed"),
])
def test_refused_at_the_call(tmp_path, obj, match):
    path = tmp_path / "r.h5"
    with pytest.raises((TypeError, ValueError), match=match):
        ak.write(str(path), {"x": obj})
    assert not path.exists()


def test_arrayview_on_request_is_what_the_server_refuses(tmp_path):
    path = str(tmp_path / "v.h5")
    ak.write(path, {"v": ak.ArrayView(np.arange(6).reshape(2, 3))}, arrayview=True)
    with pytest.raises(ServerError, match="Unknown object type"):
        read_all([path])
    assert ak.read(path)["v"] == ak.ArrayView(np.arange(6).reshape(2, 3))


def test_bigint_as_the_server_lays_it_out(tmp_path):
    """pdarray_tohdfMsg's BigInt group, built with h5py: read by purehep and the
    transcription alike; purehep's own writing of the same values gives the same layout."""
    values = [0, 5, 2**64 + 1, 2**127 + 2**64 + 9]
    path = str(tmp_path / "big.h5")
    with h5py.File(path, "w") as f:
        for name, max_bits in (("b", -1), ("m", 65)):
            g = f.create_group(name)
            for attr, v in (("isBigInt", 1), ("MaxBits", max_bits), ("NumLimbs", 2)):
                g.attrs.create(attr, v, dtype="<i8")
            h5_metadata(g, 1)
            for i in range(2):
                limb = np.array([(v >> (64 * i)) & (2**64 - 1) for v in values], np.uint64)
                h5_metadata(g.create_dataset(f"Limb_{i}", data=limb), 1)
    masked = [v & (2**65 - 1) for v in values]
    got = ak.read(path)
    assert got["b"] == ak.BigInt(values) and got["b"].tolist() == values
    assert got["m"].tolist() == masked and got["m"].max_bits == 65
    assert read_all([path]) == {"b": ("PDARRAY", values), "m": ("PDARRAY", masked)}
    mine = str(tmp_path / "mine.h5")
    ak.write(mine, {"b": ak.BigInt(values), "m": ak.BigInt(values, max_bits=65)})
    with h5py.File(path, "r") as a, h5py.File(mine, "r") as b:
        for name in ("b", "m"):
            assert sorted(a[name]) == sorted(b[name]) == ["Limb_0", "Limb_1"]
            for attr in ("isBigInt", "MaxBits", "NumLimbs", "ObjType"):
                assert a[name].attrs[attr] == b[name].attrs[attr]
                assert b[name].attrs.get_id(attr).dtype == np.dtype("<i8")
            for i in range(2):
                assert b[f"{name}/Limb_{i}"].dtype == np.dtype("<u8")
            assert np.array_equal(a[f"{name}/Limb_1"][()], b[f"{name}/Limb_1"][()]) or \
                name == "m"


def _equivalents(tmp_path):
    """Files with the structure of Arkouda's repository files, built with h5py: a legacy
    /_arkouda_metadata group, metadata-free datasets and Strings with and without segments."""
    out = {}
    p = str(tmp_path / "Legacy_String.hdf5")
    with h5py.File(p, "w") as f:
        meta = f.create_group("_arkouda_metadata")
        meta.attrs["arkouda_version"] = np.bytes_(b"v2022.09.30")
        meta.attrs.create("file_version", 1.0, dtype="<f4")
        h5_strings(f, "strings_array", ["abc", "de", "f"], meta=False)
    out[p] = {"strings_array": ("STRINGS", ["abc", "de", "f"])}
    p = str(tmp_path / "array_v1_LOCALE0000.hdf5")
    with h5py.File(p, "w") as f:
        f.create_group("_arkouda_metadata").attrs.create("file_version", 1.0, dtype="<f4")
        f["array"] = np.arange(50, dtype=np.int64)
    out[p] = {"array": ("PDARRAY", np.arange(50, dtype=np.int64))}
    p = str(tmp_path / "UnitTestHDF5_noOffsets_LOCALE0000")
    with h5py.File(p, "w") as f:
        h5_strings(f, "strings", ["one", "two", "three"], meta=False, with_segments=False)
    out[p] = {"strings": ("STRINGS", ["one", "two", "three"])}
    p = str(tmp_path / "sample.hdf5")
    with h5py.File(p, "w") as f:
        f["sample"] = np.arange(100, dtype=np.int32)
    out[p] = {"sample": ("PDARRAY", np.arange(100, dtype=np.int64))}
    return out


def _check_file(path, want=None):
    # files without Strings offsets need the server's calc_string_offsets=True (its unit
    # test reads UnitTestHDF5_noOffsets so); without it the server refuses them
    calc = "noOffsets" in path
    if calc:
        with pytest.raises(ServerError):
            read_all([path])
    server = read_all([path], calc_string_offsets=calc)
    if want is not None:
        same(server, want)
    mine = ak.read(path)
    assert set(mine) == set(server)
    for name, obj in mine.items():
        same(server_view(obj), server[name], name)


def test_files_like_arkoudas_read(tmp_path):
    for path, want in _equivalents(tmp_path).items():
        _check_file(path, want)


@pytest.mark.parametrize("name", REPO_FILES)
def test_arkoudas_repository_files_read(tmp_path, name):
    """The six HDF5 files of Arkouda's repository, from a fetched copy (not vendored)."""
    if not os.path.isdir(ARKOUDA_REPO):
        pytest.skip(f"no copy of Bears-R-Us/arkouda at {ARKOUDA_REPO}")
    blob = subprocess.run(["git", "-C", ARKOUDA_REPO, "show", f"HEAD:{name}"],
                          capture_output=True)
    if blob.returncode:
        pytest.skip(f"{name} is not in the copy at {ARKOUDA_REPO}")
    path = tmp_path / os.path.basename(name)
    path.write_bytes(blob.stdout)
    _check_file(str(path))
