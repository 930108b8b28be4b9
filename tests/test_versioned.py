"""purehep.versioned against the versioned-hdf5 package: the same staging calls made through
(h5py, versioned_hdf5) and through (purehep, purehep.versioned) give files whose raw data,
hash tables, virtual-dataset mappings, attributes and version data are equal; each side reads
the other's files and appends versions to them."""
import datetime
import re
import shutil
import tracemalloc

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
versioned_hdf5 = pytest.importorskip("versioned_hdf5")

import purehep  # noqa: E402
from purehep import versioned  # noqa: E402

UTC = datetime.timezone.utc
V1_TIME = datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
V2_TIME = np.datetime64("2024-01-03T00:00:00.5")
SIDES = {"package": (h5py, versioned_hdf5.VersionedHDF5File),
         "purehep": (purehep, versioned.VersionedHDF5File)}


def build(mod, vf_class, path):
    """Four versions: new datasets (N-d, edge chunks, fill values, filters, strings, nested
    groups, attributes), then chunk edits, resizes, deletions, a branch and a re-creation."""
    with mod.File(path, "w") as f:
        vf = vf_class(f)
        with vf.stage_version("v1", timestamp=V1_TIME) as g:
            g.create_dataset("values", data=np.arange(10, dtype="i4"), chunks=(4,),
                             fillvalue=-1)
            g.create_dataset("grid", data=np.arange(35.0).reshape(7, 5), chunks=(3, 2),
                             fillvalue=np.nan)
            g.create_dataset("cube", data=np.arange(120, dtype="<i2").reshape(4, 5, 6),
                             chunks=(2, 2, 4), compression="gzip")
            g.create_dataset("zeros", data=np.zeros((6, 4), "u1"), chunks=(4, 4))
            g.create_dataset("strings", data=np.array(["a", "bb", "ccc", "dddd", "é"], object),
                             dtype=mod.string_dtype(), chunks=(2,))
            g.create_dataset("long", data=np.arange(1000, dtype="<f4"), chunks=(100,))
            g.create_dataset("grp/sub/todelete", data=np.arange(5, dtype="i8"), chunks=(2,))
            g["values"].attrs["scale"] = 2.5
            g["grp"].attrs["kind"] = "group"
            g["grp/sub/todelete"].attrs["units"] = "m"
            g.attrs["author"] = "me"
        with vf.stage_version("v2", timestamp=V2_TIME) as g:
            g["grid"][1:5, 3] = -1.0
            g["grid"].resize((8, 6))
            g["grid"][7, 5] = 42.0
            g["cube"][0, 0, 0] = 100
            g["values"].resize((6,))
            g["zeros"][5, 3] = 7
            g["strings"][4] = "ü"
            g["long"][[5, 950]] = -5.0
            del g["grp/sub/todelete"]
            g["grid"].attrs["note"] = np.arange(3)
        with vf.stage_version("v3", prev_version="v1", make_current=False) as g:
            g["values"].resize((14,))
            g["values"][12] = 3
            g["values"][0:4] = [8, 9, -1, -1]       # the content of v1's edge chunk
            g["zeros"].resize((0, 4))
            g.create_dataset("fresh", data=np.full((3, 3), 5, "i4"), chunks=(2, 2),
                             fillvalue=5)
        with vf.stage_version("v4") as g:
            g.create_dataset("grp/sub/todelete", data=np.arange(5, dtype="i8"), chunks=(2,))
            g["cube"].resize((5, 5, 7))
            g["cube"][4] = 1


def append(vf):
    """A fifth version on top of the current one; the branch v3 deleted."""
    with vf.stage_version("v5") as g:
        g["values"][1] = 1234
        g["values"] = np.arange(12, dtype="i4") * 2      # replaced, attributes kept
        g["grid"].resize((9, 6))
        g["grid"][8] = 8.0
        g["cube"][-1, ::2, 1:3] = [[7], [8], [9]]
        g.create_dataset("later", data=np.arange(6, dtype="u2"), chunks=(4,))
        del g["strings"]
    del vf["v3"]


def _value(obj):
    return obj[()].tolist() if obj.size else []


def dump(path):
    """Everything in the file as h5py and the package see it (timestamps apart): each object's
    attributes with their types, each dataset's storage settings and values, each virtual
    mapping, and every version's datasets read through versioned_hdf5."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            attrs = {k: (repr(obj.attrs[k]), obj.attrs.get_id(k).dtype)
                     for k in obj.attrs if k != "timestamp"}
            if isinstance(obj, h5py.Dataset):
                maps = [(s.file_name, s.dset_name, s.vspace.get_select_bounds(),
                         s.src_space.get_select_bounds())
                        for s in obj.virtual_sources()] if obj.is_virtual else None
                out[name] = (obj.shape, obj.dtype, obj.chunks, obj.maxshape, repr(obj.fillvalue),
                             obj.compression, obj.is_virtual, repr(_value(obj)), attrs, maps)
            else:
                out[name] = attrs
        f.visititems(visit)
        vf = versioned_hdf5.VersionedHDF5File(f)
        out["current_version"] = vf.current_version
        for version in vf.versions:
            vf[version].visititems(lambda name, obj: out.__setitem__(
                f"{version}:{name}", (repr(_value(obj)), obj.dtype, dict(obj.attrs)))
                if isinstance(obj, h5py.Dataset) else None)
    return out


def assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        assert str(a[key]) == str(b[key]), key


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The four versions written by each side."""
    root = tmp_path_factory.mktemp("versioned")
    paths = {side: root / f"{side}.h5" for side in SIDES}
    for side, (mod, vf_class) in SIDES.items():
        build(mod, vf_class, paths[side])
    return paths


def test_purehep_writes_what_the_package_writes(files):
    assert_same(dump(files["package"]), dump(files["purehep"]))


def test_purehep_reads_package_files(files):
    """Every version's datasets and attributes, read by purehep.versioned, equal the
    package's reading of the same file."""
    with h5py.File(files["package"], "r") as hf, purehep.File(files["package"], "r") as pf:
        theirs, mine = versioned_hdf5.VersionedHDF5File(hf), versioned.VersionedHDF5File(pf)
        assert sorted(mine.versions) == sorted(theirs.versions) == ["v1", "v2", "v3", "v4"]
        assert mine.current_version == theirs.current_version == "v4"
        for version in theirs.versions:
            assert dict(mine[version].attrs) == dict(theirs[version].attrs)
            names = []
            theirs[version].visit(names.append)
            for name in names:
                a, b = theirs[version][name], mine[version][name]
                assert dict(b.attrs).keys() == dict(a.attrs).keys(), (version, name)
                for key in a.attrs:
                    np.testing.assert_array_equal(b.attrs[key], a.attrs[key])
                if isinstance(a, h5py.Dataset):
                    assert b.dtype == a.dtype and b.shape == a.shape
                    np.testing.assert_array_equal(b[()], a[()])


def test_version_metadata(files):
    """prev_version, committed and the timestamp strings as the package reads them."""
    with h5py.File(files["purehep"], "r") as f:
        vf = versioned_hdf5.VersionedHDF5File(f)
        attrs = {v: dict(vf[v].attrs) for v in vf.versions}
        assert {v: a["prev_version"] for v, a in attrs.items()} == {
            "v1": "__first_version__", "v2": "v1", "v3": "v1", "v4": "v2"}
        assert all(a["committed"] is np.True_ for a in attrs.values())
        assert attrs["v1"]["timestamp"] == V1_TIME.strftime("%Y-%m-%d %H:%M:%S.%f%z")
        for a in attrs.values():
            assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+0000", a["timestamp"])
        first = f["_version_data/versions/__first_version__"].attrs["timestamp"]
        datetime.datetime.strptime(first, versioned.TIMESTAMP_FMT)
        assert vf.get_version_by_timestamp(V2_TIME).name.endswith("/v2")
        assert f["_version_data/versions"].attrs["data_version"] == versioned.DATA_VERSION


def test_timestamps_and_history_read_by_purehep(files):
    with purehep.File(files["purehep"], "r") as f:
        vf = versioned.VersionedHDF5File(f)
        assert vf[V2_TIME].name == vf["v2"].name
        assert vf[V1_TIME + datetime.timedelta(hours=1)].name == vf["v1"].name
        assert vf[-1].name == vf["v2"].name and vf[None].name == vf["v4"].name
        with pytest.raises(KeyError):
            vf.get_version_by_timestamp(V1_TIME - datetime.timedelta(days=1))


def test_raw_data_grows_by_changed_chunks_only(tmp_path):
    """1,000 elements in chunks of 100: each version stores only the chunks it changes."""
    rows = []
    with purehep.File(tmp_path / "grow.h5", "w") as f:
        vf = versioned.VersionedHDF5File(f)
        edits = [None, [5], [5, 250, 999], [250]]   # chunk 2 gets back v2's content in v4
        for i, edit in enumerate(edits):
            with vf.stage_version(f"v{i}") as g:
                if edit is None:
                    g.create_dataset("x", data=np.arange(1000.0), chunks=(100,))
                else:
                    g["x"][edit] = -float(i)
            rows.append(f["_version_data/x/raw_data"].shape[0])
        expected = np.arange(1000.0)
        for i, edit in enumerate(edits[1:], 1):
            expected[edit] = -float(i)
        np.testing.assert_array_equal(vf["v3"]["x"][()], expected)
    changed = [10, 1, 3, 1]     # chunks touched per version, whole dataset first
    assert rows == list(np.cumsum(changed) * 100)
    with h5py.File(tmp_path / "grow.h5", "r") as f:
        assert f["_version_data/x/hash_table"].attrs["largest_index"] == sum(changed)
        np.testing.assert_array_equal(
            versioned_hdf5.VersionedHDF5File(f)["v3"]["x"][()], expected)


@pytest.mark.parametrize("writer", sorted(SIDES))
def test_append_to_each_others_files(files, tmp_path, writer):
    """A version appended by purehep to a file ``writer`` wrote equals the version the
    package appends to the same file."""
    mine, theirs = tmp_path / "mine.h5", tmp_path / "theirs.h5"
    shutil.copy(files[writer], mine)
    shutil.copy(files[writer], theirs)
    with h5py.File(theirs, "r+") as f:
        append(versioned_hdf5.VersionedHDF5File(f))
    with purehep.File(mine, "r+") as f:
        append(versioned.VersionedHDF5File(f))
    assert_same(dump(theirs), dump(mine))


def test_failed_staging_leaves_no_version(tmp_path):
    with purehep.File(tmp_path / "f.h5", "w") as f:
        vf = versioned.VersionedHDF5File(f)
        with vf.stage_version("v1") as g:
            g["x"] = np.arange(4)
        with pytest.raises(RuntimeError):
            with vf.stage_version("v2") as g:
                g["x"][0] = 9
                raise RuntimeError("abandoned")
        assert vf.versions == ["v1"] and vf.current_version == "v1"
        with pytest.raises(ValueError):
            with vf.stage_version("v3") as g:
                g.create_dataset("versions/x", data=np.arange(3))
        assert vf.versions == ["v1"]
        np.testing.assert_array_equal(vf["v1"]["x"][()], np.arange(4))


BIG, BIG_CHUNK = 50_000_000, 1_000_000      # float64: 400 MB in 8 MB chunks


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """One version of 50 M float64 in 1 M-element chunks, all alike (one stored chunk)."""
    path = tmp_path_factory.mktemp("big") / "big.h5"
    with purehep.File(path, "w") as f:
        with versioned.VersionedHDF5File(f).stage_version("v1") as g:
            g.create_dataset("x", data=np.broadcast_to(1.5, (BIG,)), chunks=(BIG_CHUNK,))
    return path


def test_small_edit_of_large_dataset_stages_one_chunk(big_file, tmp_path):
    """Staging a one-element edit reads, keeps and stores the one chunk it touches."""
    path = tmp_path / "big.h5"
    shutil.copy(big_file, path)
    with purehep.File(path, "r+") as f:
        vf = versioned.VersionedHDF5File(f)
        tracemalloc.start()
        with vf.stage_version("v2") as g:
            g["x"][BIG_CHUNK + 7] = -1.0
            assert g["x"][BIG_CHUNK + 6:BIG_CHUNK + 8].tolist() == [1.5, -1.0]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"peak {peak / 2**20:.1f} MiB")
        assert peak < 3 * BIG_CHUNK * 8
        assert f["_version_data/x/raw_data"].shape == (2 * BIG_CHUNK,)
        x = vf["v2"]["x"]
        assert x[BIG_CHUNK + 5:BIG_CHUNK + 9].tolist() == [1.5, 1.5, -1.0, 1.5]
        assert x[BIG - 1] == 1.5


KEYS = [(), 3, (slice(2, 9), np.array([True, False, True, False, False, True, True])),
        (slice(1, 6), 2), (slice(None, None, 3), slice(1, None, 2)), (slice(8, 0, -2), 0),
        (Ellipsis, 4), ([0, 5, 2, 5], slice(2, 5)), -1, (np.int64(6), [-1, 0]),
        (slice(4, 4), 1)]


@pytest.mark.parametrize("base", ["new", "committed"])
def test_staged_reads_and_writes_match_numpy(tmp_path, base):
    """Reads and writes of a staged dataset (new, or of the previous version) through h5py's
    kinds of keys, between resizes, agree with numpy's on an array and after the commit."""
    expected = np.arange(63.0).reshape(9, 7)
    with purehep.File(tmp_path / "f.h5", "w") as f:
        vf = versioned.VersionedHDF5File(f)
        if base == "committed":
            with vf.stage_version("v0") as g:
                g.create_dataset("x", data=expected, chunks=(4, 3), fillvalue=-2.0)
        with vf.stage_version("v1") as g:
            x = g["x"] if base == "committed" else \
                g.create_dataset("x", data=expected, chunks=(4, 3), fillvalue=-2.0)
            for i, key in enumerate(KEYS):
                np.testing.assert_array_equal(x[key], expected[key], str(key))
                expected[key] = -10.0 - i
                x[key] = -10.0 - i
                np.testing.assert_array_equal(x[()], expected, str(key))
                if i in (3, 7):     # shrink then grow: the dropped elements come back filled
                    x.resize((6, 5) if i == 3 else (10, 8))
                    grown = np.full((6, 5) if i == 3 else (10, 8), -2.0)
                    common = tuple(slice(0, min(a, b)) for a, b in zip(grown.shape,
                                                                       expected.shape))
                    grown[common] = expected[common]
                    expected = grown
            np.testing.assert_array_equal(np.asarray(x), expected)
        np.testing.assert_array_equal(vf["v1"]["x"][()], expected)


def edit_after_delete(vf):
    """A version on top of what is left: the rebuilt hash tables find the kept chunks."""
    with vf.stage_version("v9") as g:
        g["values"][0] = 77
        g["cube"][0, 0, 0] = 100 - g["cube"][0, 0, 0]   # v1's or v2's chunk content
        g["grid"][0, 0] = 1.0


@pytest.mark.parametrize("writer, doomed", [("package", ["v2"]), ("purehep", ["v4", "v3"]),
                                            ("package", ["v1", "v2"])])
def test_delete_versions_as_the_package(files, tmp_path, writer, doomed):
    """purehep's delete_versions on a file ``writer`` wrote leaves the raw data, hash tables,
    virtual datasets and version attributes the package's leaves, and a version staged
    afterwards re-uses the same rows."""
    mine, theirs = tmp_path / "mine.h5", tmp_path / "theirs.h5"
    shutil.copy(files[writer], mine)
    shutil.copy(files[writer], theirs)
    with h5py.File(theirs, "r+") as f:
        versioned_hdf5.delete_versions(f, doomed)
    with purehep.File(mine, "r+") as f:
        versioned.delete_versions(versioned.VersionedHDF5File(f), doomed)
    assert_same(dump(theirs), dump(mine))
    with h5py.File(theirs, "r+") as f:
        edit_after_delete(versioned_hdf5.VersionedHDF5File(f))
    with purehep.File(mine, "r+") as f:
        edit_after_delete(versioned.VersionedHDF5File(f))
    assert_same(dump(theirs), dump(mine))
