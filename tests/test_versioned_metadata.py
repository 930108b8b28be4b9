"""purehep.versioned's modify_metadata, recreate_dataset, tmp_group and swap against the
versioned-hdf5 package's: the same call on copies of one file (written by either library)
leaves files equal row for row (raw data, hash tables, mappings, attributes, fill values,
filters; every version read through h5py and the package), or raises the same error and
leaves the files equal; purehep reads every version as the package does."""
import shutil

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
versioned_hdf5 = pytest.importorskip("versioned_hdf5")
replay = pytest.importorskip("versioned_hdf5.replay")
backend = pytest.importorskip("versioned_hdf5.backend")

import purehep  # noqa: E402
from purehep import versioned  # noqa: E402
from purehep.versioned import metadata  # noqa: E402
from test_versioned import SIDES, assert_same, build, dump  # noqa: E402

CASES = {
    "grid: chunks, dtype, fill, gzip": ("grid", dict(chunks=(2, 4), dtype="f4", fillvalue=7.0,
                                                     compression="gzip")),
    "grid: NaN to int": ("grid", dict(dtype="i4", fillvalue=-5)),
    "grid: NaN to big-endian int": ("grid", dict(dtype=">i4", chunks=(3, 3))),
    "values: fill": ("values", dict(fillvalue=3)),
    "values: same fill": ("values", dict(fillvalue=-1)),
    "values: saturating dtype": ("values", dict(dtype="u1", fillvalue=200)),
    "values: int chunks": ("values", dict(chunks=3)),
    "values: chunks True": ("values", dict(chunks=True)),
    "values: NaN fill": ("values", dict(dtype="f4", fillvalue=np.nan)),
    "cube: no compression": ("cube", dict(compression=None)),
    "cube: options": ("cube", dict(chunks=(3, 2, 5), compression_opts=9)),
    "cube: scaleoffset": ("cube", dict(scaleoffset=0)),
    "long: filters": ("long", dict(chunks=(7,), shuffle=True, fletcher32=True)),
    "long: f2": ("long", dict(dtype="f2", chunks=(64,))),
    "strings: chunks": ("strings", dict(chunks=(3,))),
    "strings: fixed": ("strings", dict(dtype="S4")),
    "zeros: fill and dtype": ("zeros", dict(fillvalue=7, dtype="i2")),
    "nested": ("grp/sub/todelete", dict(chunks=(3,))),
    "fill like the data": ("fresh", dict(fillvalue=0)),
    "lzf with gzip options": ("cube", dict(compression="lzf")),
    "no such dataset": ("nope", dict(chunks=(3,))),
    "strings: ascii": ("strings", dict(dtype=h5py.string_dtype("ascii"))),
    "strings: fill refused": ("strings", dict(fillvalue=b"x")),
    "values: no conversion to strings": ("values", dict(dtype="S3")),
    "values: bool": ("values", dict(dtype=bool)),
    "cube: complex": ("cube", dict(dtype="c8", fillvalue=1 + 1j)),
    "chunks of another rank": ("values", dict(chunks=(3, 3))),
}


def modified(side, path, name, kwargs):
    """Dump of the file at ``path`` after ``side``'s modify_metadata (and its error)."""
    error = None
    try:
        if side == "package":
            with h5py.File(path, "r+") as f:
                replay.modify_metadata(f, name, **kwargs)
        else:
            with purehep.File(path, "r+") as f:
                versioned.modify_metadata(f, name, **kwargs)
    except Exception as e:     # noqa: BLE001 (compared with the package's)
        error = (type(e), str(e) if isinstance(e, ValueError) else "")
    return error, dump(path)


def versions_read(lib, vf_class, path):
    with lib.File(path, "r") as f:
        vf = vf_class(f)
        out = {}
        for version in vf.versions:
            vf[version].visititems(lambda name, obj: out.__setitem__(
                (version, name), (obj.dtype.str, obj.fillvalue, obj[()].tolist()))
                if hasattr(obj, "shape") else None)
        return repr(out)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    base = tmp_path_factory.mktemp("sources")
    paths = {side: base / f"{side}.h5" for side in SIDES}
    for side, (mod, vf_class) in SIDES.items():
        build(mod, vf_class, paths[side])
    return paths


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
@pytest.mark.parametrize("writer", sorted(SIDES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_modify_metadata_as_the_package(sources, tmp_path, writer, case):
    name, kwargs = CASES[case]
    results = {}
    for side in SIDES:
        path = tmp_path / f"{side}.h5"
        shutil.copy(sources[writer], path)
        results[side] = modified(side, path, name, kwargs)
    assert results["purehep"][0] == results["package"][0]
    assert_same(results["package"][1], results["purehep"][1])
    if results["purehep"][0] is None:
        assert versions_read(*SIDES["purehep"], tmp_path / "purehep.h5") == \
            versions_read(*SIDES["package"], tmp_path / "purehep.h5")


def test_rewritten_a_block_of_chunks_at_a_time_as_the_package(sources, tmp_path,
                                                              monkeypatch):
    """Blocks of a few chunks (the package's tiling, last axis first): rows in its order."""
    for module in (backend, metadata):
        monkeypatch.setattr(module, "REWRITE_BLOCK_BYTES_MIN", 40)
        monkeypatch.setattr(module, "REWRITE_BLOCK_BYTES_PER_CHUNK", 3)
    results = {}
    for side in SIDES:
        path = tmp_path / f"{side}.h5"
        shutil.copy(sources["package"], path)
        for name, chunks in (("cube", (1, 2, 3)), ("grid", (2, 2)), ("long", (30,))):
            error, results[side] = modified(side, path, name, dict(chunks=chunks))
            assert error is None
    assert_same(results["package"], results["purehep"])


def session(mod, vf_class, modify, path):
    """Versions staged before and after modify_metadata in one session."""
    with mod.File(path, "w") as f:
        vf = vf_class(f)
        with vf.stage_version("v1") as g:
            g.create_dataset("x", data=np.arange(30.0), chunks=(4,), fillvalue=1.0)
            g.create_dataset("y", data=np.arange(12).reshape(3, 4), chunks=(2, 2))
        with vf.stage_version("v2") as g:
            g["x"][3:9] = 1.0
            g["x"].attrs["unit"] = "m"
        modify(vf, "x", chunks=(5,), fillvalue=-1.0, dtype="f4")
        with vf.stage_version("v3") as g:
            g["x"][0] = 1.0
            g["x"].resize((33,))
            g["y"][0] = 7
        with vf.stage_version("v4", prev_version="v1") as g:
            g["x"][:] = -1.0


def test_versions_staged_after_modify_metadata_in_the_same_session(tmp_path):
    modifies = {"package": replay.modify_metadata, "purehep": versioned.modify_metadata}
    for side, (mod, vf_class) in SIDES.items():
        session(mod, vf_class, modifies[side], tmp_path / f"{side}.h5")
    assert_same(dump(tmp_path / "package.h5"), dump(tmp_path / "purehep.h5"))


def recreated(side, path):
    """recreate_dataset into tmp_group with a callback dropping v2's dataset, then swap."""
    lib = h5py if side == "package" else purehep
    module = replay if side == "package" else versioned.replay
    with lib.File(path, "r+") as f:
        newf = module.tmp_group(f)
        module.recreate_dataset(f, "values", newf,
                                callback=lambda ds, version: None if version == "v2" else ds)
        module.swap(f, newf)
        del f[newf.name]
    return dump(path)


def test_recreate_dataset_and_swap_as_the_package(sources, tmp_path):
    results = {}
    for side in SIDES:
        shutil.copy(sources["purehep"], tmp_path / f"{side}.h5")
        results[side] = recreated(side, tmp_path / f"{side}.h5")
    assert_same(results["package"], results["purehep"])


def nan_build(mod, vf_class, path):
    """NaN stored and NaN as the fill value (chunks of it left out), for conversions."""
    with mod.File(path, "w") as f:
        vf = vf_class(f)
        with vf.stage_version("v1") as g:
            data = np.arange(24.0).reshape(4, 6)
            data[0, ::2] = np.nan
            g.create_dataset("x", data=data, chunks=(2, 2), fillvalue=np.nan)
        with vf.stage_version("v2") as g:
            g["x"].resize((7, 6))
            g["x"][6, 1] = -2.5


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
@pytest.mark.parametrize("dtype", ["<i4", ">i4", ">i8", "<u8", ">f4"])
def test_nan_converted_as_the_package(tmp_path, dtype):
    """NaN held in raw_data converts as libhdf5 converts a read (0 where it converts in
    software, a type being of the other byte order; purehep gave C's cast), NaN of chunks
    not stored as numpy converts the fill value."""
    nan_build(*SIDES["purehep"], tmp_path / "source.h5")
    results = {}
    for side in SIDES:
        shutil.copy(tmp_path / "source.h5", tmp_path / f"{side}.h5")
        results[side] = modified(side, tmp_path / f"{side}.h5", "x", dict(dtype=dtype))
    assert results["purehep"][0] is results["package"][0] is None
    assert_same(results["package"][1], results["purehep"][1])
