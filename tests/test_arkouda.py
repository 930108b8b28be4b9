"""purehep.arkouda: Arkouda's HDF5 schema, checked with h5py as the oracle.

Schema: Arkouda's HDF5 file-format document; attribute types and member names from the
server's src/HDF5Msg.chpl (writeArkoudaMetaData: ObjType/isBool int64, file_version
real(32), arkouda_version H5T_C_S1 of strlen+1 bytes, NULLTERM; CODES_NAME "codes",
NACODES_NAME "NA_Codes", UKI_NAME "unique_key_idx", INDEX_NAME "Index", KEY_<i>, IDX_<i>),
ServerConfig.ObjType values and FileIO.generateFilename (_LOCALE%04i).
"""
import math

import h5py
import numpy as np
import pytest

from purehep import arkouda as ak

# ObjType values of Arkouda's ServerConfig.ObjType enum (the schema's numbering)
OBJTYPE = {"ArrayView": 0, "pdarray": 1, "Strings": 2, "SegArray": 3, "Categorical": 4,
           "GroupBy": 5, "DataFrame": 6, "Index": 12, "MultiIndex": 13}
WORDS = ["alpha", "", "βeta", "gamma", "d", "epsilon", "ζ"]


def strings(items):
    return ak.Strings.from_list(items)


def objects():
    """One of every object type, with lengths that split unevenly and leave empty parts."""
    return {
        "ints": np.arange(7, dtype=np.int64) * 3 - 5,
        "uints": np.arange(5, dtype=np.uint64) + np.uint64(2**63),
        "floats": np.linspace(-1, 1, 4),
        "bools": np.array([True, False, False, True, True]),
        "empty": np.zeros(0, np.int64),
        "words": strings(WORDS),
        "pair": strings(["one", "two"]),
        "segs": ak.SegArray(np.arange(9, dtype=np.float64), np.array([0, 3, 3, 7, 8])),
        "boolsegs": ak.SegArray(np.array([True, False, True]), np.array([0, 0, 2])),
        "strsegs": ak.SegArray(strings(WORDS), np.array([0, 2, 2, 5])),
        "cat": ak.Categorical(np.array([0, 1, 0, 2, 1]), strings(["x", "y", "N/A"]),
                              np.array([2]), np.array([0, 2, 1, 4, 3]), np.array([0, 2, 4])),
        "plaincat": ak.Categorical(np.array([1, 1, 0]), strings(["a", "b"]), np.array([2])),
        "gb": ak.GroupBy(np.array([1, 3, 0, 2]), np.array([0, 2]), np.array([1, 0]),
                         [np.array([7, 5, 7, 5]), strings(["u", "v", "u", "v"])]),
        "catgb": ak.GroupBy(np.array([0, 1]), np.array([0]), np.array([0]),
                            [ak.Categorical(np.array([0, 0]), strings(["k"]), np.array([1]))]),
        "df": ak.DataFrame({"a": np.arange(5), "b": strings(["p", "q", "r", "s", "t"]),
                            "c": np.array([True, True, False, False, True])},
                           np.arange(5, 10)),
        "sdf": ak.DataFrame({"n": np.array([1.5, 2.5])}, strings(["i", "j"])),
        "idx": ak.Index([np.arange(3)]),
        "multi": ak.Index([np.array([1, 2, 3]), strings(["a", "b", "c"])]),
        "big": ak.BigInt([0, 1, 2**64, 2**130 + 5, 7, 2**64 - 1]),
        "bigmod": ak.BigInt([2**70 + 3, 5, 2**69], max_bits=70),
        "bigsegs": ak.SegArray(ak.BigInt([2**65, 1, 2, 3]), np.array([0, 1, 1])),
        "bigdf": ak.DataFrame({"b": ak.BigInt([2**80, 2, 3]),
                               "c": ak.Categorical.from_list(["u", "v", "u"])},
                              np.array([1.5, 2.5, 3.5])),
        "biggb": ak.GroupBy(np.array([0, 1, 2]), np.array([0]), np.array([0]),
                            [ak.BigInt([2**100, 2**100, 2**100])]),
        "bigidx": ak.Index([np.arange(3), ak.BigInt([1, 2**66, 3])]),
    }


def legacy_objects():
    """ArrayViews: ObjType 0, which the current server no longer reads."""
    return {"view": ak.ArrayView(np.arange(24, dtype=np.int64).reshape(2, 3, 4)),
            "boolview": ak.ArrayView(np.eye(2, dtype=bool))}


def all_objects():
    return {**objects(), **legacy_objects()}


def expected_tree(objs):
    """path -> (ObjType, isBool) as the schema lays each object out."""
    tree = {}

    def visit(path, obj):
        if isinstance(obj, np.ndarray):
            tree[path] = (OBJTYPE["pdarray"], obj.dtype == bool)
            return
        kind = type(obj).__name__
        if isinstance(obj, ak.ArrayView):
            tree[path] = (OBJTYPE["ArrayView"], obj.values.dtype == bool)
            return
        if isinstance(obj, ak.BigInt):
            kind = "pdarray"
        if isinstance(obj, ak.Index) and len(obj.levels) > 1:
            kind = "MultiIndex"
        bool_values = isinstance(obj, ak.SegArray) and getattr(obj.values, "dtype", None) == bool
        tree[path] = (OBJTYPE[kind], bool_values)
        for name, member in members(obj):
            visit(f"{path}/{name}", member)

    for name, obj in objs.items():
        visit(name, obj)
    return tree


def members(obj):
    """The schema's member names of a group object."""
    if isinstance(obj, ak.BigInt):
        return [(f"Limb_{i}", limb) for i, limb in enumerate(obj.limbs())]
    if isinstance(obj, (ak.Strings, ak.SegArray)):
        return [("values", obj.values), ("segments", obj.segments)]
    if isinstance(obj, ak.Categorical):
        found = [("codes", obj.codes), ("categories", obj.categories), ("NA_Codes", obj.na_codes)]
        if obj.permutation is not None:
            found += [("permutation", obj.permutation), ("segments", obj.segments)]
        return found
    if isinstance(obj, ak.GroupBy):
        return [("permutation", obj.permutation), ("segments", obj.segments),
                ("unique_key_idx", obj.unique_key_idx)] + \
            [(f"KEY_{i}", k) for i, k in enumerate(obj.keys)]
    if isinstance(obj, ak.DataFrame):
        return [("Index", obj.index)] + list(obj.columns.items())
    return [(f"IDX_{i}", level) for i, level in enumerate(obj.levels)]


def assert_same(got, want):
    assert set(got) == set(want)
    for name in want:
        assert got[name] == want[name] if not isinstance(want[name], np.ndarray) else (
            got[name].dtype == want[name].dtype and np.array_equal(got[name], want[name])), name


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("file_type,locales", [("single", 1), ("distribute", 1),
                                               ("distribute", 2), ("distribute", 3),
                                               ("distribute", 8)])
def test_round_trip(tmp_path, file_type, locales):
    objs = all_objects()
    path = str(tmp_path / "data.h5")
    written = ak.write(path, objs, file_type=file_type, locales=locales, arrayview=True)
    assert len(written) == locales
    assert_same(ak.read(path), objs)
    assert_same(ak.read(written[0] if file_type == "single" else str(tmp_path / "data_LOCALE*.h5"),
                        names=["words", "cat"]), {k: objs[k] for k in ("words", "cat")})


def test_values_are_what_was_written():
    s = strings(WORDS)
    assert s.tolist() == WORDS
    raw = b"".join(w.encode("utf-8") + b"\0" for w in WORDS)
    assert s.values.tobytes() == raw
    assert s.segments.tolist() == [len(b"".join(w.encode("utf-8") + b"\0" for w in WORDS[:i]))
                                   for i in range(len(WORDS))]
    cat = objects()["cat"]
    assert cat.tolist() == ["x", "y", "x", "N/A", "y"]
    assert np.array_equal(legacy_objects()["view"].to_ndarray(), np.arange(24).reshape(2, 3, 4))


def test_append(tmp_path):
    path = str(tmp_path / "a.h5")
    objs = objects()
    ak.write(path, {"ints": objs["ints"]})
    ak.write(path, {"words": objs["words"]}, mode="append")
    assert_same(ak.read(path), {k: objs[k] for k in ("ints", "words")})
    with pytest.raises(ValueError, match="already exists"):
        ak.write(path, {"ints": objs["ints"]}, mode="append")
    ak.write(path, {"floats": objs["floats"]})                    # truncate
    assert list(ak.read(path)) == ["floats"]


def test_append_distributed(tmp_path):
    path = str(tmp_path / "d.h5")
    objs = objects()
    ak.write(path, {"segs": objs["segs"]}, mode="append", file_type="distribute", locales=3)
    ak.write(path, {"df": objs["df"]}, mode="append", file_type="distribute", locales=3)
    assert_same(ak.read(path), {k: objs[k] for k in ("segs", "df")})
    with pytest.raises(ValueError, match="cannot append"):
        ak.write(path, {"ints": objs["ints"]}, mode="append", file_type="distribute", locales=2)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        ak.write(str(tmp_path / "x.h5"), {"m": np.zeros((2, 2))})
    with pytest.raises(ValueError):
        ak.write(str(tmp_path / "x.h5"), {}, mode="overwrite")
    with pytest.raises(FileNotFoundError):
        ak.read(str(tmp_path / "missing.h5"))


# ---------------------------------------------------------------- the files, seen by h5py

def check_metadata(obj, objtype, is_bool):
    """writeArkoudaMetaData's attributes and their HDF5 types."""
    attrs = obj.attrs
    assert attrs.get_id("ObjType").dtype == np.dtype("<i8")
    assert attrs.get_id("ObjType").shape == ()
    assert attrs["ObjType"] == objtype
    assert ("isBool" in attrs) == is_bool
    if is_bool:
        assert attrs.get_id("isBool").dtype == np.dtype("<i8") and attrs["isBool"] == 1
    assert attrs.get_id("file_version").dtype == np.dtype("<f4")
    assert attrs["file_version"] == np.float32(2.0)
    version = attrs.get_id("arkouda_version")
    vtype = version.get_type()
    assert isinstance(vtype, h5py.h5t.TypeStringID) and not vtype.is_variable_str()
    assert vtype.get_strpad() == h5py.h5t.STR_NULLTERM
    assert vtype.get_cset() == h5py.h5t.CSET_ASCII
    assert vtype.get_size() == len(ak.ARKOUDA_VERSION) + 1
    assert attrs["arkouda_version"] == ak.ARKOUDA_VERSION.encode()


def check_file(path, objs, file_format):
    tree = expected_tree(objs)
    with h5py.File(path, "r") as f:
        assert f.attrs.get_id("File_Format").dtype == np.dtype("<i8")
        assert f.attrs["File_Format"] == file_format
        seen = []
        f.visit(seen.append)
        assert sorted(seen) == sorted(tree)
        for name, (objtype, is_bool) in tree.items():
            node = f[name]
            check_metadata(node, objtype, is_bool)
            if isinstance(node, h5py.Dataset):
                assert node.ndim == 1
                assert node.dtype != bool and (node.dtype == np.uint8 or not is_bool)


@pytest.mark.parametrize("locales", [1, 3])
def test_layout_and_attributes(tmp_path, locales):
    objs = all_objects()
    file_type = "single" if locales == 1 else "distribute"
    for path in ak.write(str(tmp_path / "f.h5"), objs, file_type=file_type, locales=locales,
                         arrayview=True):
        check_file(path, objs, int(file_type == "distribute"))


def test_single_file_contents(tmp_path):
    objs = all_objects()
    path = str(tmp_path / "s.h5")
    ak.write(path, objs, arrayview=True)
    with h5py.File(path, "r") as f:
        assert f["bools"].dtype == np.uint8
        assert f["bools"][()].tolist() == objs["bools"].astype(np.uint8).tolist()
        assert f["uints"].dtype == np.dtype("<u8") and f["floats"].dtype == np.dtype("<f8")
        assert f["empty"].shape == (0,)
        view = f["view"]
        assert view.shape == (24,) and view[()].tolist() == list(range(24))
        assert view.attrs.get_id("Rank").dtype == np.dtype("<i8")
        assert view.attrs["Rank"] == 3 and view.attrs.get_id("Rank").shape == ()
        assert view.attrs.get_id("Shape").dtype == np.dtype("<i8")
        assert view.attrs["Shape"].tolist() == [2, 3, 4]
        words = f["words"]
        assert words["values"].dtype == np.uint8 and words["segments"].dtype == np.dtype("<i8")
        raw = words["values"][()].tobytes()
        assert raw.split(b"\0")[:-1] == [w.encode("utf-8") for w in WORDS]
        starts = np.cumsum([0] + [len(w.encode("utf-8")) + 1 for w in WORDS[:-1]])
        assert words["segments"][()].tolist() == starts.tolist()
        assert f["gb"].attrs["NumKeys"] == 2 and f["df"].attrs["NumCols"] == 3
        assert f["multi"].attrs["NumIdx"] == 2 and f["idx"].attrs["NumIdx"] == 1
        for group, name in (("gb", "NumKeys"), ("df", "NumCols"), ("idx", "NumIdx")):
            assert f[group].attrs.get_id(name).dtype == np.dtype("<i8")


def block(n, locales):
    """Chapel's Block distribution of n elements (locale i starts at ceil(n*i/L))."""
    return [(math.ceil(n * i / locales), math.ceil(n * (i + 1) / locales)) for i in range(locales)]


@pytest.mark.parametrize("locales", [2, 3, 9])
def test_distributed_split(tmp_path, locales):
    objs = all_objects()
    paths = ak.write(str(tmp_path / "p.h5"), objs, file_type="distribute", locales=locales,
                     arrayview=True)
    assert [p.rsplit("/", 1)[1] for p in paths] == [f"p_LOCALE{i:04d}.h5" for i in range(locales)]
    files = [h5py.File(p, "r") for p in paths]
    try:
        for f, (lo, hi) in zip(files, block(len(objs["ints"]), locales)):
            assert f["ints"][()].tolist() == objs["ints"][lo:hi].tolist()
        for f, (lo, hi) in zip(files, block(len(WORDS), locales)):
            part = WORDS[lo:hi]
            raw = b"".join(w.encode("utf-8") + b"\0" for w in part)
            assert f["words/values"][()].tobytes() == raw
            starts = np.cumsum([0] + [len(w.encode("utf-8")) + 1 for w in part])[:len(part)]
            assert f["words/segments"][()].tolist() == starts.tolist()
        for f, (lo, hi) in zip(files, block(24, locales)):
            assert f["view"][()].tolist() == list(range(lo, hi))
            assert f["view"].attrs["Shape"].tolist() == [2, 3, 4]
        # Categorical components are distributed independently (codes, NA_Codes, categories)
        for f, (lo, hi) in zip(files, block(1, locales)):
            assert f["cat/NA_Codes"].shape == (hi - lo,)
        segs = objs["segs"]
        bounds = list(segs.segments) + [len(segs.values)]
        for f, (lo, hi) in zip(files, block(len(segs.segments), locales)):
            assert f["segs/values"][()].tolist() == segs.values[bounds[lo]:bounds[hi]].tolist()
            assert f["segs/segments"][()].tolist() == (segs.segments[lo:hi] - bounds[lo]).tolist()
    finally:
        for f in files:
            f.close()


# ---------------------------------------------------------------- files built with h5py

def h5_metadata(obj, objtype, is_bool=False, version=b"v2024.06.21"):
    """The attributes as the Arkouda server writes them (writeArkoudaMetaData)."""
    obj.attrs.create("ObjType", objtype, dtype="<i8")
    if is_bool:
        obj.attrs.create("isBool", 1, dtype="<i8")
    obj.attrs.create("file_version", 2.0, dtype="<f4")
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(len(version) + 1)
    tid.set_strpad(h5py.h5t.STR_NULLTERM)
    space = h5py.h5s.create(h5py.h5s.SCALAR)
    attr = h5py.h5a.create(obj.id, b"arkouda_version", tid, space)
    attr.write(np.array(version + b"\0", dtype=f"S{len(version) + 1}"), mtype=tid)


def h5_strings(parent, name, items, meta=True, with_segments=True):
    group = parent.create_group(name)
    raw = b"".join(w.encode("utf-8") + b"\0" for w in items)
    values = group.create_dataset("values", data=np.frombuffer(raw, np.uint8))
    if with_segments:
        starts = np.cumsum([0] + [len(w.encode("utf-8")) + 1 for w in items])[:len(items)]
        segments = group.create_dataset("segments", data=starts.astype(np.int64))
        if meta:
            h5_metadata(segments, 1)
    if meta:
        h5_metadata(values, 1)
        h5_metadata(group, 2)
    return group


def test_read_files_arkouda_writes(tmp_path):
    """A single file as HDF5Msg.chpl lays it out, including its irregular spots: Categorical
    members and Index IDX_<i> datasets without metadata (writeLocalCategoricalRequiredData,
    index_tohdfMsg), Strings without segments and objects without the optional attributes."""
    path = str(tmp_path / "ark.h5")
    with h5py.File(path, "w") as f:
        f.attrs.create("File_Format", 0, dtype="<i8")
        h5_metadata(f.create_dataset("ints", data=np.array([4, -1, 9])), 1)
        h5_metadata(f.create_dataset("flags", data=np.array([1, 0, 1], np.uint8)), 1, True)
        f.create_dataset("plain", data=np.array([0.5, 1.5])).attrs["ObjType"] = 1
        view = f.create_dataset("view", data=np.arange(6, dtype=np.uint64))
        view.attrs.create("Rank", 2, dtype="<i8")
        view.attrs.create("Shape", [3, 2], dtype="<i8")
        h5_metadata(view, 0)
        h5_strings(f, "words", WORDS)
        h5_strings(f, "nosegs", ["a", "bc", ""], with_segments=False)
        legacy = h5_strings(f, "legacy", ["old", "style"], meta=False)
        assert "ObjType" not in legacy.attrs
        sa = f.create_group("sa")
        h5_metadata(sa.create_dataset("values", data=np.array([1, 0, 1], np.uint8)), 1, True)
        h5_metadata(sa.create_dataset("segments", data=np.array([0, 1])), 1)
        h5_metadata(sa, 3, True)
        cat = f.create_group("cat")
        cat.create_dataset("codes", data=np.array([1, 0, 1]))
        h5_strings(cat, "categories", ["lo", "hi", "N/A"], meta=False)
        cat.create_dataset("NA_Codes", data=np.array([2]))
        h5_metadata(cat, 4)
        gb = f.create_group("gb")
        for name, data in (("segments", [0, 1]), ("permutation", [1, 0, 2]),
                           ("unique_key_idx", [1, 0])):
            h5_metadata(gb.create_dataset(name, data=np.array(data)), 1)
        h5_metadata(gb.create_dataset("KEY_0", data=np.array([3, 2, 3])), 1)
        h5_strings(gb, "KEY_1", ["m", "n", "m"])
        h5_metadata(gb, 5)
        gb.attrs.create("NumKeys", 2, dtype="<i8")
        idx = f.create_group("idx")
        idx.create_dataset("IDX_0", data=np.array([10, 20]))
        h5_metadata(idx, 12)
        df = f.create_group("df")
        h5_metadata(df.create_dataset("Index", data=np.array([0, 1])), 1)
        h5_metadata(df.create_dataset("col", data=np.array([2.0, 3.0])), 1)
        h5_strings(df, "name", ["x", "y"])
        h5_metadata(df, 6)
    want = {
        "ints": np.array([4, -1, 9]),
        "flags": np.array([True, False, True]),
        "plain": np.array([0.5, 1.5]),
        "view": ak.ArrayView(np.arange(6, dtype=np.uint64).reshape(3, 2)),
        "words": strings(WORDS),
        "nosegs": strings(["a", "bc", ""]),
        "legacy": strings(["old", "style"]),
        "sa": ak.SegArray(np.array([True, False, True]), np.array([0, 1])),
        "cat": ak.Categorical(np.array([1, 0, 1]), strings(["lo", "hi", "N/A"]), np.array([2])),
        "gb": ak.GroupBy(np.array([1, 0, 2]), np.array([0, 1]), np.array([1, 0]),
                         [np.array([3, 2, 3]), strings(["m", "n", "m"])]),
        "idx": ak.Index([np.array([10, 20])]),
        "df": ak.DataFrame({"col": np.array([2.0, 3.0]), "name": strings(["x", "y"])},
                           np.array([0, 1])),
    }
    assert_same(ak.read(path), want)


def test_read_distributed_files_arkouda_writes(tmp_path):
    """Locale files as writeSegmentedDistDset writes them: segments rebased per file, and an
    empty locale written by writeNilSegmentedGroupToHdf (members with ObjType only)."""
    parts = [["ab", "c"], ["", "def"], []]
    ints = [np.array([1, 2]), np.array([3]), np.array([], np.int64)]
    for i, (items, values) in enumerate(zip(parts, ints)):
        with h5py.File(tmp_path / f"run_LOCALE{i:04d}.h5", "w") as f:
            f.attrs.create("File_Format", 1, dtype="<i8")
            h5_metadata(f.create_dataset("n", data=values), 1)
            if items:
                h5_strings(f, "s", items)
            else:
                group = f.create_group("s")
                for name, dtype in (("values", np.uint8), ("segments", np.int64)):
                    group.create_dataset(name, shape=(0,), dtype=dtype).attrs.create(
                        "ObjType", 1, dtype="<i8")
                h5_metadata(group, 2)
    want = {"n": np.array([1, 2, 3]), "s": strings(["ab", "c", "", "def"])}
    assert_same(ak.read(str(tmp_path / "run.h5")), want)
    assert_same(ak.read(str(tmp_path / "run_LOCALE*")), want)
