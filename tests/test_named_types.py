"""Datasets and attributes created from a committed (named) datatype share it, as h5py links
them: their Datatype message is a shared message pointing to the type's object header (spec
IV.A.2.d, IV.A.2 "Shared Message") and each use counts in the type's object reference count
(spec IV.A.1). The same operations are done by h5py and by purehep; h5py reads both files and
must find the same: committed types, equal to the named type, the same values and the same
reference counts. purehep reads h5py's files the same way."""
import shutil
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402

LIBVERS = ["earliest", "latest"]
WRITERS = [h5py, purehep]
COMPOUND = np.dtype([("a", "<i4"), ("b", "<f8")])
ENUM = h5py.enum_dtype({"red": 0, "green": 1, "blue": 2}, basetype="u1")


def _rc(obj):
    return h5py.h5o.get_info(obj.id).rc


def _build(f, lib):
    """Committed types and the datasets and attributes that use them."""
    f["t"] = np.dtype("u8")
    f["grp/c"] = COMPOUND
    f["s"] = lib.string_dtype()
    f["e"] = lib.enum_dtype({"red": 0, "green": 1, "blue": 2}, basetype="u1")
    d = f.create_dataset("x", (4,), dtype=f["t"])
    d[...] = [1, 2, 3, 4]
    f.attrs.create("a", 42, dtype=f["t"])
    d.attrs.create("b", [1, 2], dtype=f["t"])
    d.attrs.create("plain", 7)
    c = f["grp"].create_dataset("rec", (3,), dtype=f["grp/c"], chunks=(2,))
    c[...] = np.array([(1, 1.5), (2, 2.5), (3, 3.5)], COMPOUND)
    f["grp"].attrs.create("words", ["ab", "cde"], dtype=f["s"])
    f.create_dataset("colour", data=np.array([0, 2, 1], "u1"), dtype=f["e"])
    f.attrs.create("zeros", np.zeros((2, 2), COMPOUND), dtype=f["grp/c"])
    f.attrs.create("null", lib.Empty("u8"), dtype=f["t"])


def _write(lib, path, libver):
    with lib.File(path, "w", libver=libver) as f:
        _build(f, lib)


USES = [("x", None, "t"), ("/", "a", "t"), ("x", "b", "t"), ("grp/rec", None, "grp/c"),
        ("grp", "words", "s"), ("colour", None, "e"), ("/", "zeros", "grp/c"),
        ("/", "null", "t")]


def _observe(path):
    """What h5py sees: per use, (committed, equal to the named type, value); per type, its
    reference count."""
    out = {}
    with h5py.File(path, "r") as f:
        for obj, attr, tname in USES:
            if attr is None:
                tid, value = f[obj].id.get_type(), f[obj][()]
            else:
                tid, value = f[obj].attrs.get_id(attr).get_type(), f[obj].attrs[attr]
            value = value.dtype.str if isinstance(value, h5py.Empty) else \
                np.asarray(value).tolist()
            out[(obj, attr)] = (tid.committed(), tid == f[tname].id, value)
        out["plain"] = f["x"].attrs.get_id("plain").get_type().committed()
        out["rc"] = {t: _rc(f[t]) for t in ("t", "grp/c", "s", "e")}
    return out


@pytest.mark.parametrize("libver", LIBVERS)
def test_written_like_h5py(tmp_path, libver):
    a, b = str(tmp_path / "h5py.h5"), str(tmp_path / "purehep.h5")
    _write(h5py, a, libver)
    _write(purehep, b, libver)
    expected, found = _observe(a), _observe(b)
    assert found == expected
    assert all(found[(o, at)][:2] == (True, True) for o, at, _ in USES)
    assert found["rc"]["t"] == 5 and found["plain"] is False
    if shutil.which("h5dump"):          # libhdf5's own tool reads it whole
        assert subprocess.run(["h5dump", b], capture_output=True).returncode == 0


@pytest.mark.parametrize("libver", LIBVERS)
@pytest.mark.parametrize("writer", WRITERS, ids=lambda m: m.__name__)
def test_read_by_purehep(tmp_path, writer, libver):
    path = str(tmp_path / "f.h5")
    _write(writer, path, libver)
    with purehep.File(path, "r") as f:
        d = f["x"]
        assert d.dtype == np.dtype("u8")
        assert d.id.get_type().committed()
        assert d.id.get_type() == f["t"].id
        assert d[()].tolist() == [1, 2, 3, 4]
        assert f.attrs["a"] == 42
        assert f.attrs.get_id("a").get_type().committed()
        assert not d.attrs.get_id("plain").get_type().committed()
        assert f["grp/rec"].dtype == COMPOUND
        assert f["grp/rec"][()].tolist() == [(1, 1.5), (2, 2.5), (3, 3.5)]
        assert list(f["grp"].attrs["words"]) == ["ab", "cde"]
        assert h5py.check_enum_dtype(f["colour"].dtype) == h5py.check_enum_dtype(ENUM)


def _modify(f, lib):
    """Uses of committed types added to, replaced in and removed from an existing file."""
    f.create_dataset("y", data=[5, 6], dtype=f["t"])
    f["x"].attrs.create("copy", 3, dtype=f["t"].id)     # attrs.create copies a TypeID
    lib.h5a.create(f["x"].id, b"low", f["t"].id, lib.h5s.create_simple((2,)))   # shares it
    f.create_dataset("z", (2,), dtype=f["t"].id)        # and create_dataset shares it
    f.attrs.create("a", 1.5)                # replaced by a plain attribute: one use less
    del f["x"].attrs["b"]                   # one use less
    f["grp"].attrs.create("n", [1, 2, 3], dtype=f["t"])
    f["h"] = f["grp"]                       # another hard link (no type involved)


@pytest.mark.parametrize("libver", LIBVERS)
@pytest.mark.parametrize("base", WRITERS, ids=lambda m: m.__name__)
def test_modify_like_h5py(tmp_path, base, libver):
    a, b = str(tmp_path / "h5py.h5"), str(tmp_path / "purehep.h5")
    _write(base, a, libver)
    _write(base, b, libver)
    for lib, path in ((h5py, a), (purehep, b)):
        with lib.File(path, "a") as f:
            _modify(f, lib)
    for path in (a, b):
        with h5py.File(path, "r") as f:
            assert f["y"].id.get_type().committed() and f["y"][()].tolist() == [5, 6]
            assert not f["x"].attrs.get_id("copy").get_type().committed()
            assert f["x"].attrs.get_id("low").get_type().committed()
            assert f["z"].id.get_type().committed()
            assert not f.attrs.get_id("a").get_type().committed()
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for name in ("t", "grp/c", "s", "e", "grp", "x"):
            assert _rc(fb[name]) == _rc(fa[name]), name
        assert fb["grp"].attrs["n"].tolist() == [1, 2, 3]


@pytest.mark.parametrize("libver", LIBVERS)
def test_delete_users_and_type_link(tmp_path, libver):
    """A deleted dataset no longer uses the type; a type whose link goes while objects still
    use it stays in the file (anonymous), as in libhdf5."""
    paths = {}
    for lib in WRITERS:
        paths[lib] = path = str(tmp_path / f"{lib.__name__}.h5")
        _write(lib, path, libver)
        with lib.File(path, "a") as f:
            del f["colour"]
            del f["t"]
    for lib, path in paths.items():
        with h5py.File(path, "r") as f:
            assert "t" not in f
            assert f["x"].id.get_type().committed()
            assert f["x"][()].tolist() == [1, 2, 3, 4]
    with h5py.File(paths[h5py], "r") as fa, h5py.File(paths[purehep], "r") as fb:
        assert _rc(fb["e"]) == _rc(fa["e"]) == 1
        ta = h5py.h5o.open(fa.id, b"x")
        tb = h5py.h5o.open(fb.id, b"x")
        assert ta.get_type().committed() and tb.get_type().committed()


@pytest.mark.parametrize("libver", LIBVERS)
def test_same_stage_hard_links_counted(tmp_path, libver):
    """Objects linked twice before anything is written count both links."""
    def build(f):
        g = f.create_group("g")
        f["h"] = g
        f["t"] = np.dtype("i2")
        f["t2"] = f["t"]

    rcs = _each_writer(tmp_path, libver, build, lambda f: (_rc(f["g"]), _rc(f["t"])))
    assert rcs[purehep] == rcs[h5py] == (2, 2)


def _each_writer(tmp_path, libver, build, read):
    """{writer: ``read`` of the file h5py opens} after each of WRITERS ran ``build`` on a
    new file of ``libver``."""
    out = {}
    for lib in WRITERS:
        path = str(tmp_path / f"{lib.__name__}.h5")
        with lib.File(path, "w", libver=libver) as f:
            build(f)
        with h5py.File(path, "r") as f:
            out[lib] = read(f)
    return out


def test_type_of_another_file_is_copied(tmp_path):
    """A committed type of another file is copied into the new object, as h5py does."""
    with purehep.File(str(tmp_path / "a.h5"), "w") as fa, \
            purehep.File(str(tmp_path / "b.h5"), "w") as fb:
        fa["t"] = np.dtype("i4")
        fb.create_dataset("x", (3,), dtype=fa["t"])
        fb.attrs.create("a", 1, dtype=fa["t"])
    with h5py.File(str(tmp_path / "b.h5"), "r") as f:
        assert not f["x"].id.get_type().committed()
        assert not f.attrs.get_id("a").get_type().committed()
        assert f["x"].dtype == np.dtype("i4")
    with h5py.File(str(tmp_path / "a.h5"), "r") as f:
        assert _rc(f["t"]) == 1


@pytest.mark.parametrize("libver", LIBVERS)
def test_many_attributes(tmp_path, libver):
    """Attributes sharing a committed type in dense storage (libver latest: more than 8)."""
    def build(f):
        f["t"] = np.dtype("<i2")
        d = f.create_dataset("d", data=np.arange(3, dtype="<i2"), dtype=f["t"])
        for i in range(12):
            d.attrs.create(f"a{i:02d}", [i, -i], dtype=f["t"])

    def read(f):
        d = f["d"]
        assert all(d.attrs.get_id(f"a{i:02d}").get_type().committed() for i in range(12))
        assert [d.attrs[f"a{i:02d}"].tolist() for i in range(12)] == \
            [[i, -i] for i in range(12)]
        return _rc(f["t"])

    rcs = _each_writer(tmp_path, libver, build, read)
    assert rcs[purehep] == rcs[h5py] == 14


def _sharing(path):
    """What h5py reads of every object: its reference count and, for each use of a committed
    type (dataset type, attribute types), which type (numbered as first met) and that type's
    reference count."""
    out, names = [], {}
    with h5py.File(path, "r") as f:
        def use(tid):
            if not tid.committed():
                return None
            info = h5py.h5o.get_info(tid)
            return names.setdefault(info.addr, len(names)), info.rc

        def each(name, obj):
            row = [name, type(obj).__name__, _rc(obj)]
            if isinstance(obj, h5py.Datatype):
                row.append(use(obj.id))
            if isinstance(obj, h5py.Dataset):
                row += [use(obj.id.get_type()), None if obj.shape is None else obj[()].tolist()]
            row += [(k, use(obj.attrs.get_id(k).get_type())) for k in sorted(obj.attrs)]
            out.append(row)
        each("/", f)
        f.visititems(each)
    return out


@pytest.mark.parametrize("libver", LIBVERS)
def test_copy_shares_a_copy_of_the_type(tmp_path, libver):
    """Group.copy of objects sharing a committed type: the copies share one copy of it per
    copy (h5py's H5Ocopy), unlinked unless the type itself is copied along."""
    found = {}
    for lib in WRITERS:
        a, b = tmp_path / f"{lib.__name__}_a.h5", tmp_path / f"{lib.__name__}_b.h5"
        with lib.File(a, "w", libver=libver) as f:
            f["t"] = np.dtype("<i2")
            f["t"].attrs["on_type"] = 1
            d = f.create_dataset("d", (3,), dtype=f["t"])
            d[...] = [1, 2, 3]
            d.attrs.create("a", 5, dtype=f["t"])
            f.attrs.create("fa", 5, dtype=f["t"])
            g = f.create_group("g")
            g.create_dataset("d2", (2,), dtype=f["t"], chunks=(1,))
            g.create_dataset("d3", data=lib.Empty("<i2"), dtype=f["t"])
            f.copy("d", "dcopy")
            f.copy("dcopy", "dcopy2")
            f.copy("g", "gcopy")
            f.copy("t", "tcopy")
            with lib.File(b, "w", libver=libver) as f2:
                f.copy("d", f2, "dother")
                f.copy(f, f2, "rootcopy")
                f.copy(f["d"], f2, "noattrs", without_attrs=True)
        with lib.File(a, "r") as f, lib.File(b, "a") as f2:      # from a read-only file
            f.copy("g", f2, "ro")
            f.copy("d", f2["ro"], "d")
        found[lib] = (_sharing(a), _sharing(b))
    assert found[purehep] == found[h5py]
    with purehep.File(tmp_path / "purehep_b.h5", "r") as f:
        assert f["ro/d"].id.get_type().committed() and f["rootcopy/d"].dtype == np.int16


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_group_deleted_with_new_members(tmp_path, libver):
    """An existing group deleted with members made since the last flush (datasets of a
    committed type, a subgroup, a hard link to a kept dataset): the commit failed (the new
    members have no header to count references in) and the file was not written; the
    type and the kept dataset lose the uses the members had, as libhdf5 counts them."""
    got = {}
    for lib in (h5py, purehep):
        p = tmp_path / f"{lib.__name__}.h5"
        with h5py.File(p, "w", libver=libver) as f:
            f.create_group("grp")
            f["t"] = np.dtype("<i2")
            f["keep"] = np.arange(4)
        with lib.File(p, "a") as f:
            f.create_dataset("grp/d1", data=np.arange(3), dtype=f["t"])
            f.create_dataset("grp/sub/d2", data=np.arange(3), dtype=f["t"], chunks=(2,))
            f["grp/sub"].attrs.create("a", [1, 2], dtype=f["t"])
            f["grp/sub/hard"] = f["keep"]
            del f["grp"]
            f["after"] = 1
        with h5py.File(p, "r") as h:
            got[lib] = (sorted(h), h5py.h5o.get_info(h["t"].id).rc,
                        h5py.h5o.get_info(h["keep"].id).rc, h["keep"][()].tolist())
    assert got[purehep] == got[h5py] == (["after", "keep", "t"], 1, 1, [0, 1, 2, 3])
