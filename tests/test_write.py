"""The writer: files written by purehep read back exactly by h5py (the oracle), by purehep,
and (when installed) accepted by h5dump. A matrix of dtypes x layouts x chunk indexes x filters
x libver, groups, links and attributes, plus a hypothesis round trip of random trees."""
import os
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import purehep
from compare import same_values

LIBVERS = ("earliest", "latest")
H5DUMP = shutil.which("h5dump")

DTYPES = {
    "i1": np.arange(-5, 7, dtype="i1"), "u2": np.arange(12, dtype="u2"),
    ">i4": np.arange(12, dtype=">i4"), "u8": np.arange(12, dtype="u8") * (2 ** 40),
    "f2": np.linspace(0, 1, 12).astype("f2"), "f4": np.linspace(-1, 1, 12).astype("f4"),
    ">f8": np.linspace(0, 3, 12).astype(">f8"), "c8": (np.arange(12) + 1j).astype("c8"),
    "c16": (np.arange(12) * 1j).astype("c16"), "bool": np.arange(12) % 3 == 0,
    "S5": np.array([b"ab", b"cdefg"] * 6, "S5"), "V3": np.frombuffer(bytes(range(36)), "V3"),
    "compound": np.array([(i, i / 2, b"x" * (i % 3)) for i in range(12)],
                         dtype=[("a", "i4"), ("b", "f8"), ("c", "S2")]),
    "nested": np.zeros(12, dtype=[("p", [("x", "u1"), ("y", "f4", (2,))]), ("q", "c8")]),
    "vlen_str": np.array(["", "a", "héllo", "xyz"] * 3, dtype=object),
    "vlen_bytes": np.array([b"", b"a", b"bc"] * 4, dtype=object),
    "vlen_int": np.array([np.arange(i % 4, dtype="i4") for i in range(12)] + [None],
                         dtype=object)[:12],
    "enum": np.arange(12, dtype="i2") % 3,
}
SPECIAL = {"vlen_str": purehep.string_dtype(), "vlen_bytes": purehep.string_dtype("ascii"),
           "vlen_int": purehep.vlen_dtype("i4"),
           "enum": purehep.enum_dtype({"a": 0, "b": 1, "c": 2}, "i2")}


def _data(name):
    data = DTYPES[name]
    if name == "nested":
        data = data.copy()
        data["p"]["x"] = np.arange(12)
        data["p"]["y"] = np.arange(24).reshape(12, 2)
        data["q"] = np.arange(12) * 1j
    return data, SPECIAL.get(name)


def h5dump_ok(path):
    if H5DUMP is None:
        return
    r = subprocess.run([H5DUMP, path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def compare_file(path):
    """Every object read by h5py equals what purehep reads."""
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        def visit(name, obj):
            q = p[name]
            assert sorted(obj.attrs.keys()) == sorted(q.attrs.keys()), name
            for k in obj.attrs:
                same_values(obj.attrs[k], q.attrs[k], f"{name}@{k}")
            if isinstance(obj, h5py.Dataset):
                assert obj.shape == q.shape and obj.chunks == q.chunks, name
                assert obj.dtype == q.dtype, (name, obj.dtype, q.dtype)
                if obj.shape is not None:
                    same_values(obj[()], q[()], name)
        h.visititems(visit)
        visit("/", h["/"])


def _layouts(libver):
    out = [("contiguous", {}), ("compact", {"compact": True}), ("chunked", {"chunks": (5,)})]
    if libver == "latest":
        out += [("single", {"chunks": (12,)}), ("implicit", {"chunks": (5,), "alloc_time": "early"}),
                ("earray", {"chunks": (5,), "maxshape": (None,)}),
                ("fixed-max", {"chunks": (4,), "maxshape": (20,)})]
    return out


@pytest.mark.parametrize("libver", LIBVERS)
def test_dtype_layout_matrix(tmp_path, libver):
    path = str(tmp_path / "m.h5")
    written = {}
    with purehep.File(path, "w", libver=libver) as f:
        for lname, kw in _layouts(libver):
            g = f.create_group(lname)
            for name in DTYPES:
                data, dt = _data(name)
                g.create_dataset(name, data=data, dtype=dt, **kw)
                written[f"{lname}/{name}"] = data
        # read back in write mode
        same_values(f["contiguous/f4"][()], DTYPES["f4"])
    with h5py.File(path, "r") as h:
        for key, data in written.items():
            got = h[key][()]
            if key.endswith("vlen_str"):
                got = np.array([x.decode() for x in got], dtype=object)
            if key.endswith(("vlen_int",)):
                for a, b in zip(got, data):
                    assert np.array_equal(a, b), key
                continue
            if key.endswith("vlen_bytes") or key.endswith("vlen_str"):
                assert list(got) == list(data), key
                continue
            assert got.dtype == data.dtype or key.endswith(("enum", "V3")), (key, got.dtype)
            assert got.tobytes() == np.asarray(data).astype(got.dtype).tobytes(), key
    compare_file(path)
    h5dump_ok(path)


FILTERS = [dict(compression="gzip"), dict(compression="gzip", compression_opts=9, shuffle=True),
           dict(shuffle=True, fletcher32=True),
           dict(scaleoffset=0), dict(compression="gzip", fletcher32=True,
                                                               shuffle=True)]


@pytest.mark.parametrize("libver", LIBVERS)
def test_filters_and_indexes(tmp_path, libver):
    path = str(tmp_path / "f.h5")
    data = np.arange(40 * 30, dtype="i4").reshape(40, 30) % 97
    shapes = [dict(chunks=(7, 9)), dict(chunks=(40, 30)), dict(chunks=(7, 9), maxshape=(None, 30)),
              dict(chunks=(7, 9), maxshape=(None, None)), dict(chunks=True)]
    with purehep.File(path, "w", libver=libver) as f:
        for i, flt in enumerate(FILTERS):
            for j, shp in enumerate(shapes):
                f.create_dataset(f"d{i}_{j}", data=data, **flt, **shp)
    with h5py.File(path, "r") as h:
        for name in h:
            assert np.array_equal(h[name][()], data), name
    compare_file(path)
    h5dump_ok(path)


def test_lzf_h5py(tmp_path):
    """lzf is h5py's own filter: h5py reads it, h5dump (no plugin) cannot."""
    path = str(tmp_path / "l.h5")
    data = np.arange(1000, dtype="i2").reshape(10, 100)
    with purehep.File(path, "w") as f:
        f.create_dataset("l", data=data, compression="lzf", chunks=(3, 30), shuffle=True)
    with h5py.File(path, "r") as h:
        assert h["l"].compression == "lzf"
        assert np.array_equal(h["l"][()], data)
    compare_file(path)


def test_zstd_purehep_only(tmp_path):
    """zstd (filter 32015) needs a plugin for libhdf5; purehep reads it back itself."""
    path = str(tmp_path / "z.h5")
    data = np.arange(1000, dtype="f8").reshape(10, 100)
    with purehep.File(path, "w", libver="latest") as f:
        f.create_dataset("z", data=data, compression="zstd", chunks=(3, 30), shuffle=True)
    with purehep.File(path) as f:
        assert np.array_equal(f["z"][()], data)


@pytest.mark.parametrize("libver", LIBVERS)
def test_partial_writes_and_resize(tmp_path, libver):
    path = str(tmp_path / "p.h5")
    ref = np.full((50, 20), 7, "f8")
    with purehep.File(path, "w", libver=libver) as f:
        a = f.create_dataset("a", shape=(50, 20), dtype="f8", chunks=(8, 8), fillvalue=7.0,
                             compression="gzip")
        b = f.create_dataset("b", shape=(50, 20), dtype="f8", fillvalue=7.0)
        e = f.create_dataset("e", shape=(0, 4), maxshape=(None, 4), dtype="i8", chunks=(3, 4))
        for ds in (a, b):
            ds[3:17, 2] = np.arange(14)
            ds[::5, 5:9] = -1
            ds[[1, 4, 9], 10:12] = 3.5
            ds[40] = 2
        ref[3:17, 2] = np.arange(14)
        ref[::5, 5:9] = -1
        ref[[1, 4, 9], 10:12] = 3.5
        ref[40] = 2
        for i in range(5):
            e.resize(e.shape[0] + 3, axis=0)
            e[-3:] = i
        assert np.array_equal(a[()], ref)
    with h5py.File(path, "r") as h:
        assert np.array_equal(h["a"][()], ref)
        assert np.array_equal(h["b"][()], ref)
        assert h["e"].shape == (15, 4)
        assert np.array_equal(h["e"][()], np.repeat(np.arange(5), 3)[:, None] * np.ones(4))
    compare_file(path)
    h5dump_ok(path)


@pytest.mark.parametrize("libver", LIBVERS)
def test_groups_links_attributes(tmp_path, libver):
    path = str(tmp_path / "g.h5")
    other = str(tmp_path / "other.h5")
    with purehep.File(other, "w") as f:
        f["x"] = np.arange(3)
    with purehep.File(path, "w", libver=libver) as f:
        big = f.create_group("big")
        for i in range(1000):
            big.create_group(f"m{i:04d}")
        t = f.create_group("a/b/tracked", track_order=True)
        for name in ("z", "y", "x", "w", "v", "u", "t", "s", "r", "q"):
            t.create_group(name)
            t.attrs[name] = len(name)
        d = f.create_dataset("data", data=np.arange(6))
        f["alias"] = d
        f["soft"] = purehep.SoftLink("/a/b")
        f["ext"] = purehep.ExternalLink("other.h5", "/x")
        f["dtype"] = np.dtype("<i2")
        f["tmp"] = np.zeros(3)
        del f["tmp"]
        f.attrs["scalar"] = 3
        f.attrs["array"] = np.arange(5.0)
        f.attrs["str"] = "text"
        f.attrs["strs"] = ["a", "bc"]
        f.attrs["bytes"] = b"raw"
        f.attrs["empty"] = purehep.Empty("f4")
        f.attrs["compound"] = np.array((1, 2.0), dtype=[("i", "i4"), ("f", "f8")])
        f.attrs.create("shaped", data=np.arange(6), shape=(2, 3), dtype="u1")
        f.attrs["mod"] = 1
        f.attrs.modify("mod", 2)
        f.attrs["gone"] = 1
        del f.attrs["gone"]
        f.attrs["ref"] = d.ref
        f.create_dataset("refs", data=np.array([d.ref, t.ref], dtype=object),
                         dtype=purehep.ref_dtype)
        f.create_dataset("rrefs", data=np.array([d.regionref[1:4]], dtype=object),
                         dtype=purehep.regionref_dtype)
        for i in range(30):
            d.attrs[f"attr{i:02d}"] = np.arange(i)
        if libver == "latest":
            f.attrs["large"] = np.arange(20000.0)
        assert "a/b/tracked/q" in f and "nope" not in f
    with h5py.File(path, "r") as h:
        assert len(h["big"]) == 1000
        assert list(h["a/b/tracked"]) == ["z", "y", "x", "w", "v", "u", "t", "s", "r", "q"]
        assert list(h["a/b/tracked"].attrs) == ["z", "y", "x", "w", "v", "u", "t", "s", "r", "q"]
        assert h["alias"] == h["data"]
        assert h["ext"][()].tolist() == [0, 1, 2]
        assert h.get("soft", getlink=True).path == "/a/b"
        assert "tmp" not in h and "gone" not in h.attrs
        assert h.attrs["mod"] == 2 and h.attrs["str"] == "text"
        assert h[h.attrs["ref"]] == h["data"]
        assert h[h["refs"][1]] == h["a/b/tracked"]
        assert h["data"][h["rrefs"][0]].tolist() == [1, 2, 3]
        assert h.attrs["shaped"].shape == (2, 3)
        assert isinstance(h["dtype"], h5py.Datatype)
    compare_file(path)
    h5dump_ok(path)


def test_modes_userblock_and_atomic(tmp_path):
    path = str(tmp_path / "u.h5")
    with purehep.File(path, "w", userblock_size=512) as f:
        f["x"] = np.arange(4)
    with h5py.File(path, "r") as h:
        assert h.userblock_size == 512 and h["x"][()].tolist() == [0, 1, 2, 3]
    with pytest.raises(FileExistsError):
        purehep.File(path, "w-")
    before = open(path, "rb").read()
    with pytest.raises(TypeError):
        with purehep.File(path, "w") as f:
            f.create_dataset("bad", data=np.array(["unicode"]))
            f.close()
    assert open(path, "rb").read() == before or os.path.exists(path)


def test_deterministic(tmp_path):
    def make(p):
        with purehep.File(p, "w", libver="latest") as f:
            f.create_dataset("a", data=np.arange(100).reshape(10, 10), chunks=(3, 3),
                             compression="gzip")
            f.attrs["s"] = "x"
            f.create_group("g", track_order=True).attrs["v"] = [1, 2]
    a, b = str(tmp_path / "a.h5"), str(tmp_path / "b.h5")
    make(a)
    make(b)
    assert open(a, "rb").read() == open(b, "rb").read()


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_extensible_array_paged_data_blocks(tmp_path, monkeypatch, compression):
    """Past 2**page_bits elements a data block is paged (super block page bitmap); a small
    page size reaches them with ~2000 chunks, some pages left unwritten (holes in the grid)."""
    from purehep.write import policy
    monkeypatch.setitem(policy.EA_PARAMS, "page_bits", 6)
    path = str(tmp_path / "ea.h5")
    data = np.arange(2100 * 3, dtype="i4").reshape(2100, 3)
    with purehep.File(path, "w", libver="latest") as f:
        d = f.create_dataset("d", shape=(2100, 3), maxshape=(None, 3), dtype="i4", chunks=(1, 3),
                             compression=compression)
        d[:900] = data[:900]
        d[1500:] = data[1500:]
    ref = data.copy()
    ref[900:1500] = 0
    with h5py.File(path, "r") as h:
        assert np.array_equal(h["d"][()], ref)
    compare_file(path)


def test_dense_storage_past_the_root_direct_rows(tmp_path):
    """Dense attributes and links that outgrow the direct rows of the fractal heap's root
    indirect block go to child indirect blocks (spec III.G); h5py reads all of them."""
    from purehep.cli import main as cli_main
    path = tmp_path / "bigdense.h5"
    with purehep.File(path, "w", libver="latest") as f:
        g = f.create_group("g")
        for i in range(3000):
            g.attrs[f"a{i}"] = np.arange(100) + i
        links = f.create_group("links")
        for i in range(30000):
            links[f"soft_link_with_a_long_name_{i:06d}"] = purehep.SoftLink(f"/target/{i}")
    with h5py.File(path, "r") as h:
        assert len(h["g"].attrs) == 3000
        assert all(h["g"].attrs[f"a{i}"][0] == i for i in range(0, 3000, 97))
        assert len(h["links"]) == 30000
        assert h["links"].get("soft_link_with_a_long_name_029999", getlink=True).path == \
            "/target/29999"
    assert cli_main(["check", str(path)]) == 0


@pytest.mark.parametrize("chunks", [None, (2,)])
def test_compound_field_writes_match_h5py(tmp_path, chunks):
    """ds['b'] = ..., ds[sel, 'c'] = ...: the named fields change, the others keep their values,
    exactly as when h5py performs the same writes."""
    dt = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")])
    data = np.array([(i, 0.5, b"x") for i in range(6)], dtype=dt)
    files = {}
    for module in (h5py, purehep):
        path = str(tmp_path / f"{module.__name__}.h5")
        with module.File(path, "w") as f:
            d = f.create_dataset("c", data=data, chunks=chunks)
            d["b"] = np.arange(6.0)
            d[1:3, "c"] = np.array([b"yy", b"zz"])
            d[4, "a"] = 40
        files[module.__name__] = path
    with h5py.File(files["h5py"], "r") as h, h5py.File(files["purehep"], "r") as p:
        same_values(h["c"][()], p["c"][()])
    with pytest.raises(ValueError):
        with purehep.File(str(tmp_path / "bad.h5"), "w") as f:
            f.create_dataset("c", data=data)["nosuchfield"] = 1


GUESSED = ["f.attrs['a'] = b'abc'", "f.attrs['a'] = np.bytes_(b'abc')", "f.attrs['a'] = 'xyz'",
           "f.attrs['a'] = [b'a', b'bcd']", "f.attrs['a'] = ['a', 'bcd']",
           "f.attrs['a'] = np.array(['a', 'bcd'], dtype=object)", "f.attrs['a'] = [[1.5, 2]]",
           "f['x'] = b'abc'", "f['x'] = np.bytes_(b'abc')", "f['x'] = 'xyz'",
           "f['x'] = ['a', 'bcd']", "f['x'] = [b'a', b'bcd']", "f['x'] = [[b'a'], [b'bc']]",
           "f['x'] = np.array([b'a', b'bcd'])", "f['x'] = True", "f['x'] = (1, 2.5)"]


@pytest.mark.parametrize("stmt", GUESSED)
def test_guessed_types_match_h5py(tmp_path, stmt):
    """Values given without a dtype are stored with the type h5py picks for them (Python
    str/bytes as variable-length strings, numpy bytes as fixed-length ones, ...)."""
    out = []
    for mod in (h5py, purehep):
        path = tmp_path / f"{mod.__name__}.h5"
        with mod.File(path, "w") as f:
            exec(stmt)
        with h5py.File(path) as f:
            obj = f["x"] if "x" in f else None
            dt = obj.dtype if obj is not None else f.attrs.get_id("a").dtype
            value = obj[()] if obj is not None else f.attrs["a"]
            out.append((dt, h5py.check_string_dtype(dt), np.shape(value), repr(value)))
    assert out[0] == out[1]


@pytest.mark.parametrize("base", ["i1", "u1", "<i2", ">u4"])
def test_enum_of_every_width(tmp_path, base):
    """Enums over one-byte integers too (their dtype has no byte order to normalise)."""
    e = purehep.enum_dtype({"A": 0, "B": 1}, np.dtype(base))
    with purehep.File(tmp_path / "e.h5", "w") as f:
        f.create_dataset("e", data=np.array([0, 1, 1], e))
        f.attrs["a"] = np.array(1, e)
    with h5py.File(tmp_path / "e.h5") as f:
        assert f["e"][()].tolist() == [0, 1, 1] and f.attrs["a"] == 1
        assert h5py.check_enum_dtype(f["e"].dtype) == {"A": 0, "B": 1}
        assert f["e"].dtype == np.dtype(base)


def test_vlen_of_arrays(tmp_path):
    """A variable-length sequence of array elements holds one array per element (numpy would
    broadcast each scalar over the array's dimensions if asked to convert naively)."""
    a = np.empty(2, purehep.vlen_dtype(np.dtype(("<u8", (2,)))))
    a[0] = np.array([[1, 2], [3, 4]], "<u8")
    a[1] = np.array([[5, 6]], "<u8")
    with purehep.File(tmp_path / "v.h5", "w") as f:
        f.create_dataset("v", data=a)
    with h5py.File(tmp_path / "v.h5") as h, purehep.File(tmp_path / "v.h5") as p:
        for f in (h, p):
            assert [x.tolist() for x in f["v"][()]] == [[[1, 2], [3, 4]], [[5, 6]]]


def test_h5py_conveniences(tmp_path):
    """MutableMapping methods on groups and attributes, build_virtual_dataset, filter ids
    and names, driver and swmr_mode, as h5py has them."""
    p = tmp_path / "c.h5"
    with purehep.File(p, "w") as f:
        a = f.create_dataset("a", data=np.arange(100), chunks=(10,), compression="gzip",
                             shuffle=True, fletcher32=True)
        with f.build_virtual_dataset("v", (2, 3), "i8", fillvalue=-1) as layout:
            layout[0] = purehep.VirtualSource(a)[:3]
        f.attrs.update({"x": 1, "y": 2})
        assert f.attrs.pop("x") == 1 and f.attrs.setdefault("y", 5) == 2
        f.update({"z": np.arange(2)})
        f.pop("z")
        assert "z" not in f
        a.flush()
    with h5py.File(p) as h, purehep.File(p) as f:
        assert h["v"][()].tolist() == [[0, 1, 2], [-1, -1, -1]]
        assert dict(h.attrs) == {"y": 2} and sorted(h) == ["a", "v"]
        assert f["a"].filter_ids == h["a"].filter_ids
        assert f["a"].filter_names == h["a"].filter_names
        assert (f.driver, f.swmr_mode) == (h.driver, h.swmr_mode)
        with pytest.raises(ValueError):
            f.attrs.pop("y")                      # read-only


def test_file_access_options(tmp_path):
    """h5py's driver, swmr and locking options."""
    p = tmp_path / "o.h5"
    with h5py.File(p, "w") as f:
        f["x"] = np.arange(5)
    with purehep.File(p, driver="core") as f, purehep.File(p, swmr=True) as g:
        assert f["x"][()].tolist() == g["x"][()].tolist() == [0, 1, 2, 3, 4]
        assert f.driver == "core"
    with pytest.raises(purehep.UnsupportedFeatureError):
        purehep.File(p, driver="family")
    with pytest.raises(purehep.UnsupportedFeatureError):
        purehep.File(p, "a", swmr=True)
    with purehep.File(p, "r+"):
        purehep.File(p, "r+").close()                  # shared with the first, as in h5py
        with pytest.raises(OSError):
            purehep.File(p, "r+", locking=False)       # other locking flags (libhdf5's error)
    purehep.File(p, "r+", locking=False).close()       # asked not to lock


def test_compound_fields_read_alone(tmp_path):
    """Reading some fields of a compound converts only those (a variable-length member is
    not decoded when not asked for); values equal h5py's."""
    p = tmp_path / "f.h5"
    dt = np.dtype([("i", "<i4"), ("s", h5py.string_dtype()), ("f", "<f8")])
    data = np.array([(k, str(k) * k, k / 2) for k in range(20)], dtype=dt)
    with h5py.File(p, "w") as f:
        f["c"] = data
    with h5py.File(p) as h, purehep.File(p) as f:
        for sel in [(), (slice(3, 9),), ([1, 5, 7],)]:
            for names in (["i"], ["f", "i"], ["s"]):
                got = f["c"].fields(names)[sel]
                want = h["c"].fields(names)[sel]
                assert got.dtype.names == want.dtype.names and got.tolist() == want.tolist()
        assert f["c"]["i", 4] == 4
        with pytest.raises(ValueError):
            f["c"]["nope"]


def test_zero_dim_object_array_of_string(tmp_path):
    """A 0-d object array holding a str, given as an attribute's or a dataset's value of a
    variable-length string type, stores the str: purehep kept the array as the element and
    could not write the file at close."""
    got = {}
    for lib in (h5py, purehep):
        p = tmp_path / f"{lib.__name__}.h5"
        v = np.array(["v1"], dtype=object).reshape(())
        with lib.File(p, "w") as f:
            f.attrs["c"] = v
            f.create_dataset("d", data=v, dtype=h5py.string_dtype())
        with h5py.File(p, "r") as h:
            got[lib] = (h.attrs["c"], h["d"][()])
    assert got[purehep] == got[h5py] == ("v1", b"v1")


def test_global_heap_collection_outlives_a_deleted_dataset(tmp_path):
    """Variable-length strings of a dataset deleted in the session and of an attribute kept
    share a global heap collection (spec III.E): purehep freed the collection with the
    dataset's structures, and h5py could not read the attribute (bad heap index)."""
    got = {}
    for lib in (h5py, purehep):
        p = tmp_path / f"{lib.__name__}.h5"
        with h5py.File(p, "w", libver="earliest") as f:
            f["x"] = np.arange(3)
        with lib.File(p, "a") as f:
            f["t"] = np.dtype("<f8")
            f.create_dataset("gone", data=np.array(["v%d" % i for i in range(9)], object),
                             dtype=h5py.string_dtype())
            f.create_dataset("td", data=np.arange(5.0), dtype=f["t"], chunks=(2,))
            f["x"].attrs["at"] = np.array(["a1", "b2"], object)
            del f["gone"]
        with h5py.File(p, "r") as h:
            got[lib] = (sorted(h), h["x"].attrs["at"].tolist())
    assert got[purehep] == got[h5py] == (["t", "td", "x"], ["a1", "b2"])


def test_list_and_integer_selection_writes_in_h5py_order(tmp_path):
    """ds[0, :, [1, 3]] = values writes values[i, j] at [0, i, [1, 3][j]] as h5py does, in
    every layout: numpy's indexing moves the list's axis first (its advanced indices are not
    side by side), so purehep transposed square values into contiguous, compact and external
    datasets and refused the others."""
    made = {}
    for lib in (h5py, purehep):
        p = str(tmp_path / f"{lib.__name__}.h5")
        base = np.arange(24, dtype="f4").reshape(2, 3, 4)
        with lib.File(p, "w") as f:
            layouts = {"contiguous": {}, "chunked": {"chunks": (1, 2, 2)},
                       "external": {"external": [(p + ".bin", 0, 96)]}}
            for name, kw in layouts.items():
                d = f.create_dataset(name, data=base, **kw)
                d[0, :, [1, 3]] = np.array([[100, 101], [102, 103], [104, 105]], "f4")
                d[1, [0, 2], 3] = np.array([7, 8], "f4")
                d[-1, [0, 1], 2] = 5
                sq = f.create_dataset(name + "_square", data=np.zeros((2, 2, 2), "i2"), **(
                    {} if name == "external" else kw))
                sq[1, :, [0, 1]] = np.array([[1, 2], [3, 4]], "i2")
                v = f.create_dataset(name + "_vlen", (2, 3, 2), lib.string_dtype(),
                                     **({"chunks": (1, 2, 2)} if name == "chunked" else {}))
                v[0, :, [0, 1]] = np.array([["a", "b"], ["c", "d"], ["e", "f"]], object)
        with h5py.File(p, "r") as h:
            made[lib] = {k: h[k][()].tolist() for k in h}
    assert made[purehep] == made[h5py]
