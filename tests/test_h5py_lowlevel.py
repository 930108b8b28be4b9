"""purehep's pieces of h5py's low-level API (what h5netcdf and other h5py code call):
purehep.h5ds, purehep.h5t with ``ds.id.get_type()`` / ``Datatype.id``, purehep.h5p with
``group.id.get_create_plist()``, purehep.version, and h5py's ``Dataset._filters`` dict with
``compression`` / ``compression_opts`` — each compared with h5py on the same file."""
import h5py
import hdf5plugin
import numpy as np
import pytest

import purehep
from purehep import h5ds, h5p, h5t


def _both(path):
    return purehep.File(path, "r"), h5py.File(path, "r")


DTYPES = {
    "i4": np.dtype("i4"), "u8": np.dtype(">u8"), "f2": np.dtype("f2"), "f8": np.dtype("f8"),
    "bool": np.dtype(bool), "S5": np.dtype("S5"), "vstr": h5py.string_dtype(),
    "vbytes": h5py.string_dtype("ascii"), "vlen": h5py.vlen_dtype("i4"),
    "enum": h5py.enum_dtype({"a": 1, "b": 2}, basetype="i2"),
    "compound": np.dtype([("x", "i4"), ("y", "f8")]), "array": np.dtype(("i4", (3,))),
    "ref": h5py.ref_dtype, "complex": np.dtype("c16"), "opaque": np.dtype("V7"),
}


def test_type_classes_match_h5py(tmp_path):
    path = str(tmp_path / "types.h5")
    with h5py.File(path, "w") as f:
        for name, dt in DTYPES.items():
            f.create_dataset(name, (2,), dtype=dt)
            if name != "ref":                       # h5py cannot commit its reference type
                f[f"t_{name}"] = dt
    mine, theirs = _both(path)
    with mine, theirs:
        for name in DTYPES:
            expected = theirs[name].id.get_type().get_class()
            assert mine[name].id.get_type().get_class() == expected, name
            if name != "ref":
                assert mine[f"t_{name}"].id.get_class() == theirs[f"t_{name}"].id.get_class()
            assert mine[name].id.get_type().get_size() == theirs[name].id.get_type().get_size()
    for const in ("NO_CLASS", "INTEGER", "FLOAT", "TIME", "STRING", "BITFIELD", "OPAQUE",
                  "COMPOUND", "REFERENCE", "ENUM", "VLEN", "ARRAY", "COMPLEX"):
        assert getattr(h5t, const) == getattr(h5py.h5t, const), const


@pytest.mark.parametrize("writer", ["h5py", "purehep"])
def test_creation_order_flags_match_h5py(tmp_path, writer):
    path = str(tmp_path / "order.h5")
    lib = h5py if writer == "h5py" else purehep
    with lib.File(path, "w", track_order=True) as f:
        f.create_group("tracked", track_order=True)
        f.create_group("plain", track_order=False)
    mine, theirs = _both(path)
    with mine, theirs:
        for name in ("/", "tracked", "plain"):
            a, b = mine[name].id.get_create_plist(), theirs[name].id.get_create_plist()
            assert a.get_attr_creation_order() == b.get_attr_creation_order(), name
            assert a.get_link_creation_order() == b.get_link_creation_order(), name
    assert (h5p.CRT_ORDER_TRACKED, h5p.CRT_ORDER_INDEXED) == \
        (h5py.h5p.CRT_ORDER_TRACKED, h5py.h5p.CRT_ORDER_INDEXED)


FILTERS = {
    "gzip": dict(compression="gzip", compression_opts=7),
    "gzip_shuffle_f32": dict(compression="gzip", shuffle=True, fletcher32=True),
    "lzf": dict(compression="lzf"),
    "szip_nn": dict(compression="szip", compression_opts=("nn", 8)),
    "szip_ec": dict(compression="szip", compression_opts=("ec", 16)),
    "scaleoffset": dict(scaleoffset=3),
    "zstd": dict(**hdf5plugin.Zstd(clevel=5)),
    "bitshuffle_lz4": dict(shuffle=True, **hdf5plugin.Bitshuffle()),
    "plain": {},
}


@pytest.mark.parametrize("writer", ["h5py", "purehep"])
def test_filters_dict_matches_h5py(tmp_path, writer):
    path = str(tmp_path / "filters.h5")
    lib = h5py if writer == "h5py" else purehep
    with lib.File(path, "w") as f:
        for name, kw in FILTERS.items():
            f.create_dataset(name, data=np.arange(400, dtype="i4").reshape(20, 20),
                             chunks=(10, 10), **kw)
    mine, theirs = _both(path)
    with mine, theirs:
        for name in FILTERS:
            assert mine[name]._filters == theirs[name]._filters, name
            assert list(mine[name]._filters) == list(theirs[name]._filters), name
            assert mine[name].compression == theirs[name].compression, name
            assert mine[name].compression_opts == theirs[name].compression_opts, name


@pytest.mark.parametrize("writer", ["h5py", "purehep"])
def test_h5ds_matches_h5py(tmp_path, writer):
    path = str(tmp_path / "dims.h5")
    if writer == "h5py":
        with h5py.File(path, "w") as f:
            data, x, y = (f.create_dataset(n, shape) for n, shape in
                          (("data", (3, 4)), ("x", (4,)), ("y", (3,))))
            h5py.h5ds.set_scale(x.id, b"x name")
            h5py.h5ds.set_scale(y.id)
            h5py.h5ds.attach_scale(data.id, x.id, 1)
            h5py.h5ds.attach_scale(data.id, y.id, 0)
            h5py.h5ds.set_label(data.id, 1, b"across")
    else:
        with purehep.File(path, "w") as f:
            data, x, y = (f.create_dataset(n, shape) for n, shape in
                          (("data", (3, 4)), ("x", (4,)), ("y", (3,))))
            h5ds.set_scale(x.id, b"x name")
            h5ds.set_scale(y.id)
            h5ds.attach_scale(data.id, x.id, 1)
            h5ds.attach_scale(data.id, y.id, 0)
            h5ds.set_label(data.id, 1, b"across")
            assert h5ds.is_attached(data.id, x.id, 1)        # in the write session
    mine, theirs = _both(path)
    with mine, theirs:
        for name in ("data", "x", "y"):
            assert h5ds.is_scale(mine[name].id) == h5py.h5ds.is_scale(theirs[name].id)
        for name in ("x", "y"):
            assert h5ds.get_scale_name(mine[name].id) == \
                h5py.h5ds.get_scale_name(theirs[name].id)
        for dim in (0, 1):
            assert h5ds.get_num_scales(mine["data"].id, dim) == \
                h5py.h5ds.get_num_scales(theirs["data"].id, dim)
            assert h5ds.get_label(mine["data"].id, dim) == \
                h5py.h5ds.get_label(theirs["data"].id, dim)
            for name in ("x", "y"):
                assert h5ds.is_attached(mine["data"].id, mine[name].id, dim) == \
                    h5py.h5ds.is_attached(theirs["data"].id, theirs[name].id, dim)
            found = []
            assert h5ds.iterate(mine["data"].id, dim, lambda s: found.append(s) or None) is None
            seen = []
            h5py.h5ds.iterate(theirs["data"].id, dim, lambda s: seen.append(s) or None)
            assert [h5ds.get_scale_name(s) for s in found] == \
                [h5py.h5ds.get_scale_name(s) for s in seen]
        assert h5ds.iterate(mine["data"].id, 1, lambda s: "stop") == "stop"
        with pytest.raises(RuntimeError):                  # a scale has no scales
            h5ds.is_attached(mine["x"].id, mine["y"].id, 0)
        with pytest.raises(TypeError):
            h5ds.is_scale(mine["x"])                       # a Dataset, not its id


def test_version():
    from purehep import version
    assert version.version == purehep.__version__
    assert version.version_tuple == tuple(int(p) for p in purehep.__version__.split("."))
    assert version.hdf5_version == ".".join(map(str, version.hdf5_version_tuple))
    assert purehep.version is version and purehep.h5ds is h5ds


def test_commit_over_existing_name_raises_as_h5py(tmp_path):
    errors = {}
    for lib in (h5py, purehep):
        with lib.File(str(tmp_path / f"{lib.__name__}.h5"), "w") as f:
            f["t"] = np.dtype("i4")
            for value in (np.dtype("f8"), np.arange(3)):
                with pytest.raises(Exception) as info:
                    f["t"] = value
                errors[lib, value.__class__.__name__] = info.type
                assert "name already exists" in str(info.value)
    assert errors[purehep, "Float64DType"] is errors[h5py, "Float64DType"] is KeyError
    assert errors[purehep, "ndarray"] is errors[h5py, "ndarray"] is OSError


def _closed_ids(lib, path):
    out = []
    with lib.File(path, "w") as f:
        g = f.create_group("g")
        g.attrs["a"] = 1
        d = f.create_dataset("d", data=[1, 2])
        gid, did = g.id, d.id
        gid.close()
        did._close()
        out.append((repr(g), bool(g), bool(gid.valid), repr(g.attrs), repr(d), bool(d),
                    bool(did.valid), g.name, d.name))
        for call in (lambda: g["x"], lambda: d[0], lambda: g.attrs["a"]):
            with pytest.raises(Exception) as info:
                call()
            out.append(info.type)
        again = f["g"]
        out.append((repr(again), bool(again), again.attrs["a"], bool(f["d"]), "g" in f))
    return out


def test_closing_an_id_closes_its_object_as_h5py(tmp_path):
    assert _closed_ids(purehep, str(tmp_path / "p.h5")) == _closed_ids(h5py, str(tmp_path / "h.h5"))


@pytest.mark.parametrize("mode", ["w", "r", "r+"])
def test_vfd_handle_is_the_files_descriptor_as_h5py(tmp_path, mode):
    """FileID.get_vfd_handle of a file on disk: a descriptor of that file (fsync-able)."""
    import os
    for lib in (purehep, h5py):
        path = str(tmp_path / f"{lib.__name__}.h5")
        if mode != "w":
            lib.File(path, "w").close()
        with lib.File(path, mode) as f:
            fd = f.id.get_vfd_handle()
            assert isinstance(fd, int) and fd > 0
            assert os.path.samestat(os.fstat(fd), os.stat(path))
            if mode != "r":
                os.fsync(fd)


def _h5f_files(lib, folder):
    """h5f.open / create / open_file_image with creation and access lists, File(fid)."""
    import os
    h5f, h5p = lib.h5f, lib.h5p
    out = []

    def error(f):
        with pytest.raises(Exception) as info:
            f()
        return info.type
    fx, fy = (os.fsencode(os.path.join(folder, n)) for n in ("fx.h5", "fy.h5"))
    with lib.File(fx, "w") as f:
        f["a"] = 1
    with lib.File(h5f.open(fx, h5f.ACC_RDONLY)) as f:
        out.append((f.mode, list(f)))
    out.append(error(lambda: h5f.open(os.fsencode(os.path.join(folder, "nope.h5")))))
    fcpl = h5p.create(h5p.FILE_CREATE)
    fcpl.set_userblock(512)
    fcpl.set_link_creation_order(h5p.CRT_ORDER_TRACKED)
    fapl = h5p.create(h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5f.LIBVER_LATEST, h5f.LIBVER_LATEST)
    fapl.set_cache(0, 101, 2 ** 20, 0.5)
    with lib.File(h5f.create(fy, fcpl=fcpl, fapl=fapl)) as f:
        f["z"], f["b"] = 1, 2
        out.append((f.mode, f.userblock_size, f.libver, f.id.get_access_plist().get_cache(),
                    list(f)))
    out.append(error(lambda: h5f.create(fy, h5f.ACC_EXCL)))
    with open(fx, "rb") as fh:
        img = fh.read()
    f = lib.File(h5f.open_file_image(img))
    out += [(f.mode, list(f)), error(lambda: f.create_dataset("z", data=1))]
    f = lib.File(h5f.open_file_image(img, h5f.FILE_IMAGE_OPEN_RW))
    f["z"] = 1
    out.append((f.mode, list(f)))
    fapl = h5p.create(h5p.FILE_ACCESS)
    out.append(error(fapl.get_fapl_core))
    fapl.set_fapl_core(backing_store=False)
    out.append(fapl.get_fapl_core())
    fapl.set_file_image(img)
    f = lib.File(h5f.open(os.fsencode(os.path.join(folder, "image.h5")), h5f.ACC_RDONLY,
                          fapl=fapl))
    out.append((list(f), f["a"][()]))
    for size in (1000, 256):
        out.append(error(lambda: fcpl.set_userblock(size)))
    return out


def test_h5f_open_create_image_match_h5py(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "h").mkdir()
    assert _h5f_files(purehep, str(tmp_path / "p")) == _h5f_files(h5py, str(tmp_path / "h"))
