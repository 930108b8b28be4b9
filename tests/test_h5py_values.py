"""Values purehep once read or wrote differently from h5py 3.16 (issues 12 and 14): non-ASCII
names, opaque datetimes, array dtypes, vlen string tags, bfloat16, huge never-written datasets,
"fail if unknown" messages, long-double floats and metadata cache images. Each case is compared
with h5py (or with h5dump where h5py is wrong)."""
import os
import shutil

import h5py
import numpy as np
import pytest

import purehep

CORPUS_FILES = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus", "files",
                            "hdf5-repo")


def corpus_file(rel):
    path = os.path.join(CORPUS_FILES, rel)
    if not os.path.exists(path):
        pytest.skip(f"{rel} is absent from ../shared/corpus")
    return path


# -- 1. non-ASCII attribute and link names ----------------------------------------------------
def _write_names(mod, path, libver, n, track_order):
    soft = h5py.SoftLink if mod is h5py else purehep.SoftLink
    with mod.File(path, "w", libver=libver, track_order=track_order) as f:
        for i in range(n):
            f.attrs[f"Ω{i}"] = i
            f[f"dΩ{i}"] = i
            f[f"d{i}"] = i
        f.attrs["plain"] = -1
        f.create_group("gΩ").attrs["é"] = 2
        f["sΩ"] = soft("/dΩ1")


def _names_seen_by_h5py(path):
    """Names, order, values and the character set flags libhdf5 reports for them."""
    with h5py.File(path, "r") as f:
        return (list(f.attrs), list(f), [f.attrs[k] for k in f.attrs],
                {k: h5py.h5a.get_info(f.id, k.encode()).cset for k in f.attrs},
                {k: f.id.links.get_info(k.encode()).cset for k in f},
                f["gΩ"].attrs["é"], f["sΩ"][()])


@pytest.mark.parametrize("libver", ["earliest", "v108", "latest"])
@pytest.mark.parametrize("n", [3, 20])          # compact, dense (beyond 8) storage
@pytest.mark.parametrize("track_order", [False, True])
def test_non_ascii_names(tmp_path, libver, n, track_order):
    ours, theirs = str(tmp_path / "p.h5"), str(tmp_path / "h.h5")
    _write_names(h5py, theirs, libver, n, track_order)
    _write_names(purehep, ours, libver, n, track_order)
    # purehep writes what h5py writes: same names, order and character set flags (attributes
    # ASCII whatever their bytes, links UTF-8 when not ASCII, which libhdf5 stores as link
    # messages even in a symbol-table group)
    assert _names_seen_by_h5py(ours) == _names_seen_by_h5py(theirs)
    for path in (ours, theirs):
        with purehep.File(path) as f, h5py.File(path) as g:
            assert list(f.attrs) == list(g.attrs)
            assert list(f) == list(g)
            assert all(f.attrs[k] == g.attrs[k] for k in g.attrs)
            assert f.attrs["Ω1"] == 1 and f["dΩ1"][()] == 1 and "dΩ1" in f
            assert f["gΩ"].attrs["é"] == 2 and f["sΩ"][()] == 1


def test_non_ascii_link_added_in_modify_mode(tmp_path):
    """A non-ASCII link added to a symbol-table group in 'a' mode: UTF-8, as h5py adds it."""
    seen = []
    for mod in (h5py, purehep):
        path = str(tmp_path / f"{mod.__name__}.h5")
        with h5py.File(path, "w", libver="earliest") as f:
            f["a"] = 1
            f.create_group("g")
        with mod.File(path, "a") as f:
            f["xΩ"] = 2
            f["g/yΩ"] = 3
            f.attrs["Ωa"] = 4
        with h5py.File(path) as g:
            sub = g["g"]          # held: a temporary's id closes before get_info runs
            seen.append((list(g), g["xΩ"][()], g["g/yΩ"][()], g.attrs["Ωa"],
                         {k: g.id.links.get_info(k.encode()).cset for k in g},
                         sub.id.links.get_info("yΩ".encode()).cset,
                         h5py.h5a.get_info(g.id, "Ωa".encode()).cset))
    assert seen[0] == seen[1]


# -- 7. "fail if unknown" message flags ------------------------------------------------------
TBOGUS = ["Dataset1", "Dataset2", "Dataset3", "Dataset4", "Dataset5", "group/Dataset1",
          "group/Dataset2", "group/Dataset3", "group/Dataset4", "group/Dataset5"]


def _opens(mod, path, mode):
    out = {}
    with mod.File(path, mode) as f:
        for name in TBOGUS:
            try:
                out[name] = (int(f[name][()]), name in f)
            except (KeyError, purehep.UnsupportedFeatureError):
                out[name] = ("refused", name in f)
    return out


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_fail_if_unknown_flags(tmp_path, mode):
    """tbogus.h5: unknown messages flagged 0x80 always refuse the object, 0x08 only when the
    file is open for writing; both objects stay members of their group."""
    src = corpus_file("test/testfiles/tbogus.h5")
    theirs, ours = str(tmp_path / "h.h5"), str(tmp_path / "p.h5")
    shutil.copy(src, theirs)
    shutil.copy(src, ours)
    expected = _opens(h5py, theirs, mode)
    assert _opens(purehep, ours, mode) == expected
    assert expected["Dataset3"][0] == "refused"
    assert (expected["Dataset2"][0] == "refused") == (mode == "r+")


# -- 6. never-written datasets larger than memory ----------------------------------------------
def test_never_written_huge_dataset():
    """tlayouto.h5: a (8589934592, 268435457) int32 dataset never written; parts read as the
    fill value at the size of the selection, as h5py reads them."""
    path = corpus_file("test/testfiles/tlayouto.h5")
    keys = [(0, 0), (5, slice(3, 9)), (-1, slice(-3, None)), (slice(None, None, 2 ** 32), 7)]
    with purehep.File(path) as f, h5py.File(path) as g:
        d, e = f["Dataset"], g["Dataset"]
        assert d.shape == e.shape and d.dtype == e.dtype
        for key in keys:
            a, b = d[key], e[key]
            assert np.shape(a) == np.shape(b) and np.array_equal(a, b)
        with pytest.raises(purehep.errors.AllocationError):
            d[()]


def test_huge_empty_chunked_dataset(tmp_path):
    """An empty chunked dataset of 2**60 elements and an unallocated contiguous one of 2**60:
    parts read as h5py reads them; a full read raises purehep's AllocationError (a MemoryError,
    as numpy's error under h5py is) before allocating anything."""
    path = str(tmp_path / "huge.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", shape=(2 ** 30, 2 ** 30), chunks=(64, 64), dtype="i1",
                         fillvalue=3)
        f.create_dataset("c", shape=(2 ** 60,), dtype="i4")
    with purehep.File(path) as f, h5py.File(path) as g:
        for name, key in [("x", (5, 7)), ("x", (slice(1, 3), slice(2 ** 29, 2 ** 29 + 70))),
                          ("c", slice(2 ** 59, 2 ** 59 + 3))]:
            assert np.array_equal(f[name][key], g[name][key])
        for name in ("x", "c"):
            with pytest.raises(MemoryError):
                g[name][()]
            with pytest.raises(purehep.errors.AllocationError):
                f[name][()]


# -- 9. metadata cache images --------------------------------------------------------------------
def _libhdf5():
    """h5py's own libhdf5, for the one property h5py does not wrap (H5Pset_mdc_image_config)."""
    import ctypes
    import glob
    libdir = os.path.join(os.path.dirname(h5py.__file__), os.pardir, "h5py.libs")
    found = glob.glob(os.path.join(libdir, "libhdf5-*.so*"))
    if not found:
        pytest.skip("h5py's bundled libhdf5 is not where a manylinux wheel puts it")
    return ctypes, ctypes.CDLL(found[0])


def _write_with_cache_image(path):
    ctypes, lib = _libhdf5()

    class ImageConfig(ctypes.Structure):       # H5AC_cache_image_config_t
        _fields_ = [("version", ctypes.c_int), ("generate_image", ctypes.c_bool),
                    ("save_resize_status", ctypes.c_bool), ("entry_ageout", ctypes.c_int)]
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    config = ImageConfig(1, True, False, -1)
    assert lib.H5Pset_mdc_image_config(ctypes.c_int64(fapl.id), ctypes.byref(config)) >= 0
    with h5py.File(h5py.h5f.create(path.encode(), h5py.h5f.ACC_TRUNC, fapl=fapl)) as f:
        g = f.create_group("g")
        for i in range(30):
            g.attrs[f"a{i}"] = np.arange(i)
            g[f"d{i}"] = np.arange(i + 1)
        f.create_dataset("c", data=np.arange(10000).reshape(100, 100), chunks=(10, 10),
                         compression="gzip")
        f.create_dataset("e", data=np.arange(1000), chunks=(10,), maxshape=(None,))


def test_metadata_cache_image_written_by_h5py(tmp_path):
    """A file h5py closed with a metadata cache image: its dirty entries hold the only current
    metadata (the root object header is zeros at its address). purehep reads back exactly what
    h5py wrote (h5py 3.16 itself fails to reopen this file read-only: "non-parent entry has
    children", "bad object header version number"; h5dump fails too), and refuses to modify
    the file (the image would go stale)."""
    path = str(tmp_path / "image.h5")
    _write_with_cache_image(path)
    with purehep.File(path) as f:
        assert sorted(f) == ["c", "e", "g"]
        g = f["g"]
        assert len(g) == 30 and len(g.attrs) == 30
        for i in range(30):
            assert np.array_equal(g[f"d{i}"][()], np.arange(i + 1))
            assert np.array_equal(g.attrs[f"a{i}"], np.arange(i))
        assert np.array_equal(f["c"][()], np.arange(10000).reshape(100, 100))
        assert np.array_equal(f["e"][()], np.arange(1000))
    with pytest.raises(purehep.UnsupportedFeatureError, match="cache image"):
        purehep.File(path, "r+")


def test_metadata_cache_image_corpus_file():
    path = corpus_file("tools/test/misc/testfiles/h5clear_mdc_image.h5")
    with h5py.File(path, "r") as g, purehep.File(path) as f:
        assert list(f) == list(g) == ["DSET"]
        assert np.array_equal(f["DSET"][()], g["DSET"][()])


def test_metadata_cache_image_damaged(tmp_path):
    """A damaged image is a ChecksumError naming the image, not wrong metadata."""
    src = corpus_file("tools/test/misc/testfiles/h5clear_mdc_image.h5")
    raw = bytearray(open(src, "rb").read())
    at = raw.index(b"MDCI")
    raw[at + 100] ^= 0xFF
    path = tmp_path / "damaged.h5"
    path.write_bytes(bytes(raw))
    with pytest.raises(purehep.errors.ChecksumError, match="metadata cache image"):
        purehep.File(str(path))


# -- 5, 8. floats numpy lacks: bfloat16, IEEE binary128, x87 extended, long-double complex -------
def _bfloat16(order):
    t = (h5py.h5t.IEEE_F32LE if order == "<" else h5py.h5t.IEEE_F32BE).copy()
    t.set_fields(15, 7, 8, 0, 7)
    t.set_offset(0)
    t.set_precision(16)
    t.set_size(2)
    t.set_ebias(127)
    return t


def _dataset(f, name, ftype, data, mtype):
    d = h5py.h5d.create(f.id, name.encode(), ftype, h5py.h5s.create_simple(data.shape))
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, data, mtype=mtype)


def test_bfloat16_reads_as_h5py(tmp_path):
    """bfloat16 (8-bit exponent, 7-bit mantissa) reads as float32, in the stored byte order,
    bit for bit what h5py 3.16 returns (libhdf5 converts; NaN with every mantissa bit set)."""
    path = str(tmp_path / "bf16.h5")
    values = np.array([9.98e4, 2.99e38, 9.98e-31, -1.5, 0, -0.0, np.inf, -np.inf, np.nan,
                       1e-40, 3.0e38, -np.nan], "f4")
    with h5py.File(path, "w") as f:
        _dataset(f, "le", _bfloat16("<"), values, h5py.h5t.NATIVE_FLOAT)
        _dataset(f, "be", _bfloat16(">"), values, h5py.h5t.NATIVE_FLOAT)
    with h5py.File(path) as g, purehep.File(path) as f:
        for name in ("le", "be"):
            expected = g[name][()]
            got = f[name][()]
            assert f[name].dtype == g[name].dtype == np.dtype(("<" if name == "le" else ">")
                                                              + "f4")
            assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
            assert np.array_equal(got[:3], np.array([99840.0, 2.9907630e38, 9.9840208e-31],
                                                    "f4"))
            assert f[name][2:5].tobytes() == expected[2:5].tobytes()


def _libhdf5_read(dataset, shape, dtype, mtype):
    """libhdf5's own conversion of a dataset into a native type (h5py's low-level read)."""
    out = np.zeros(shape, dtype)
    dataset.id.read(h5py.h5s.ALL, h5py.h5s.ALL, out, mtype=mtype)
    return out


def _significant(a):
    """The bytes of x87 long doubles (or their complex pairs) that hold the value: 10 of 16."""
    b = a.view(np.uint8).reshape(a.shape + (-1, 16))
    return b[..., :10]


X87 = np.finfo(np.longdouble).nmant == 63 and np.dtype(np.longdouble).itemsize == 16


@pytest.mark.skipif(not X87, reason="the platform long double is not the x87 80-bit format")
def test_binary128_and_x87_into_long_double(tmp_path):
    """IEEE binary128 (both byte orders) and x87 extended in 10 and 16 bytes, big-endian,
    read into np.longdouble bit for bit as libhdf5 converts them (the oracle: h5py's low-level
    read into H5T_NATIVE_LDOUBLE; h5py's high level refuses binary128): random mantissas of
    112 bits, denormals, infinities, NaNs, ties, and the largest finite binary128 value,
    which libhdf5 keeps finite rather than round up to infinity."""
    rng = np.random.default_rng(5)
    n = 300
    raw = rng.integers(0, 256, (n, 16), dtype=np.uint8)     # little-endian binary128 bytes
    exps = rng.integers(1, 32767, n)
    exps[:10] = 0                                           # denormals
    exps[10:16] = 32767                                     # infinities and NaNs
    exps[16:40] = 16383 + rng.integers(-70, 70, 24)
    raw[10:12, :14] = 0                                     # +-inf
    raw[40:60, :6] = 0                                      # first dropped bit set, rest 0
    raw[40:60, 6] = 0x01
    raw[:, 14] = exps & 0xFF
    raw[:, 15] = ((exps >> 8) & 0x7F) | (rng.integers(0, 2, n) << 7)
    raw[60, :14], raw[60, 14], raw[60, 15] = 0xFF, 0xFE, 0x7F     # largest finite
    raw[61, :] = 0                                          # +0
    raw[62, :15], raw[62, 15] = 0, 0x80                     # -0
    path = str(tmp_path / "quad.h5")
    x87_10 = h5py.h5t.NATIVE_LDOUBLE.copy()
    x87_10.set_order(h5py.h5t.ORDER_BE)
    x87_10.set_size(10)
    with h5py.File(path, "w") as f:
        for name, ftype, data in [
                ("quad_le", h5py.h5t.IEEE_F128LE, raw),
                ("quad_be", h5py.h5t.IEEE_F128BE, raw[:, ::-1].copy())]:
            _dataset(f, name, ftype, data.view("V16").reshape(n), ftype)
        wide = _libhdf5_read(f["quad_le"], (n,), np.longdouble, h5py.h5t.NATIVE_LDOUBLE)
        _dataset(f, "x87_be16", h5py.h5t.LDOUBLE_BE, wide, h5py.h5t.NATIVE_LDOUBLE)
        _dataset(f, "x87_be10", x87_10, wide, h5py.h5t.NATIVE_LDOUBLE)
    with h5py.File(path) as g, purehep.File(path) as f:
        for name in ("quad_le", "quad_be", "x87_be16", "x87_be10"):
            expected = _libhdf5_read(g[name], (n,), np.longdouble, h5py.h5t.NATIVE_LDOUBLE)
            got = f[name][()]
            assert got.dtype.kind == "f" and got.dtype.itemsize == 16, name
            got = got.astype(np.longdouble)
            compared = np.ones(n, bool)
            if name == "x87_be10":      # libhdf5's soft conversion of x87 denormals (biased
                # exponent 0) is off by a factor of 2; purehep keeps the stored bits' value
                compared = ~((np.abs(got) < np.finfo(np.longdouble).smallest_normal)
                             & (got != 0))
            assert np.array_equal(_significant(got)[compared],
                                  _significant(expected)[compared]), name
            assert np.array_equal(got[20:25], expected[20:25])
    assert np.isfinite(wide[60])


@pytest.mark.skipif(not X87, reason="the platform long double is not the x87 80-bit format")
def test_long_double_complex_from_binary128(tmp_path):
    """An HDF5 2.0 complex type over IEEE binary128 (a long-double complex written where long
    double is binary128) reads as np.clongdouble as libhdf5 converts each part. libhdf5 leaves
    the imaginary part unconverted (zero) when the real part is an infinity or a NaN; purehep
    converts it: those elements are compared on their real part only."""
    ctypes, lib = _libhdf5()
    if not hasattr(lib, "H5Tcomplex_create"):
        pytest.skip("h5py's libhdf5 has no complex datatypes (before HDF5 2.0)")
    lib.H5Tcomplex_create.restype = ctypes.c_int64
    lib.H5Tcomplex_create.argtypes = [ctypes.c_int64]
    rng = np.random.default_rng(7)
    n = 100
    raw = rng.integers(0, 256, (2 * n, 16), dtype=np.uint8)
    exps = 16383 + rng.integers(-200, 200, 2 * n)
    exps[:4], exps[4:8] = 0, 32767
    raw[:, 14] = exps & 0xFF
    raw[:, 15] = ((exps >> 8) & 0x7F) | (rng.integers(0, 2, 2 * n) << 7)
    path = str(tmp_path / "cquad.h5")
    base = h5py.h5t.IEEE_F128LE.copy()
    ctype = h5py.h5t.typewrap(lib.H5Tcomplex_create(base.id))
    with h5py.File(path, "w") as f:
        _dataset(f, "c", ctype, raw.reshape(n, 32).view("V32").reshape(n), ctype)
    with h5py.File(path) as g, purehep.File(path) as f:
        expected = _libhdf5_read(g["c"], (n,), np.clongdouble, h5py.h5t.NATIVE_LDOUBLE_COMPLEX)
        got = f["c"][()]
        assert got.dtype == np.clongdouble
        parts_got, parts_expected = _significant(got), _significant(expected)
        special = ~np.isfinite(got.real)
        assert np.array_equal(parts_got[:, 0], parts_expected[:, 0])
        assert np.array_equal(parts_got[~special, 1], parts_expected[~special, 1])
        assert special.sum() < n // 10


def _h5dump_values(path, name):
    """The values h5dump prints for a dataset (6 significant digits)."""
    import subprocess
    if not shutil.which("h5dump"):
        pytest.skip("h5dump is not installed")
    out = subprocess.run(["h5dump", "-d", name, path], capture_output=True, text=True,
                         check=True).stdout
    body = out.split("DATA {", 1)[1].split("}", 1)[0]
    tokens = []
    for line in body.splitlines():
        line = line.split("):", 1)[-1]
        tokens += [t.strip() for t in line.split(",") if t.strip()]
    return np.array([np.longdouble(t) for t in tokens])


@pytest.mark.skipif(not X87, reason="the platform long double is not the x87 80-bit format")
def test_long_double_values_as_h5dump_prints_them(tmp_path):
    """The same conversions seen through h5dump (libhdf5's tool, 6 significant digits)."""
    path = str(tmp_path / "ld.h5")
    values = np.array([1, -2.5, 1 / 3, np.pi, 1e300, -1e-300, 0, np.inf, -np.inf],
                      np.longdouble) / np.longdouble(7)
    values[4] *= np.longdouble(10) ** 1000       # beyond float64's range
    with h5py.File(path, "w") as f:
        _dataset(f, "quad", h5py.h5t.IEEE_F128BE, values, h5py.h5t.NATIVE_LDOUBLE)
        _dataset(f, "x87be", h5py.h5t.LDOUBLE_BE, values, h5py.h5t.NATIVE_LDOUBLE)
    with purehep.File(path) as f:
        for name in ("quad", "x87be"):
            got = f[name][()].astype(np.longdouble)
            printed = _h5dump_values(path, name)
            assert np.array_equal(np.isinf(printed), np.isinf(got))
            finite = np.isfinite(printed)
            # h5dump prints with %g: compare at its 6 digits (mantissa and decimal exponent)
            assert [f"{v:.5e}" for v in got[finite]] == [f"{v:.5e}" for v in printed[finite]] \
                or np.allclose(got[finite], printed[finite], rtol=1e-5, atol=0)


def test_tldouble_corpus_files():
    """libhdf5's tldouble*.h5 (x87 extended in 16 bytes): values h5dump prints."""
    for rel, expected in [("tools/test/h5dump/testfiles/tldouble.h5", [1, 2, 3]),
                          ("tools/test/h5dump/testfiles/tldouble_scalar.h5", [0, 1, 2, 3, 4, 5])]:
        path = corpus_file(rel)
        with purehep.File(path) as f, h5py.File(path) as g:
            assert f["dset"].dtype == g["dset"].dtype
            got = np.asarray(f["dset"][()]).reshape(-1)
            assert got.tolist() == expected
            assert np.array_equal(got, np.asarray(g["dset"][()]).reshape(-1))


# -- 2. datetime64 / timedelta64 stored as opaque ------------------------------------------------
STAMPS = np.array(["2020-01-01T00:00:00.123456789", "1970-01-01", "NaT", "2262-01-01"], "M8[ns]")


def _opaque_file(path):
    od = h5py.opaque_dtype
    span = np.array([1, 2, -3, 4], "m8[s]")
    with h5py.File(path, "w") as f:
        f["a"] = STAMPS.astype(od(STAMPS.dtype))
        f.create_dataset("ch", data=STAMPS.astype(od(STAMPS.dtype)), chunks=(2,),
                         compression="gzip")
        f.create_dataset("sc", data=np.array(STAMPS[0]).astype(od(STAMPS.dtype)))
        f.create_dataset("cmp", data=np.array([(1, STAMPS[0])],
                                              dtype=[("i", "i4"), ("t", od(STAMPS.dtype))]))
        f.create_dataset("fill", (3,), dtype=od(STAMPS.dtype),
                         fillvalue=np.array(STAMPS[0]).astype(od(STAMPS.dtype)))
        f.create_dataset("td", data=span.astype(od(span.dtype)), maxshape=(None,))
        f.attrs["t"] = span.astype(od(span.dtype))
        f.attrs.create("s", np.array(STAMPS[0]).astype(od(STAMPS.dtype)))


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.dtype.metadata == b.dtype.metadata and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def test_opaque_datetimes_read_as_h5py(tmp_path):
    """h5py's opaque_dtype datetimes (tag "NUMPY:<M8[ns]"): same dtype (with h5py's
    'h5py_opaque' tag) and values for every way of reading, contiguous (was "cannot include
    dtype 'M' in a buffer" for ds[...]), chunked, scalar, in a compound, as a fill value and
    as attributes."""
    path = str(tmp_path / "dt.h5")
    _opaque_file(path)
    with h5py.File(path) as g, purehep.File(path) as f:
        for name in g:
            assert f[name].dtype == g[name].dtype
            assert f[name].dtype.metadata == g[name].dtype.metadata
            keys = [(), Ellipsis] + ([0, slice(1, 3)] if g[name].shape else [])
            for key in keys:
                _same(g[name][key], f[name][key])
        for name in g.attrs:
            _same(g.attrs[name], f.attrs[name])


def _datetime_writes(mod, path):
    od = h5py.opaque_dtype
    seen = []
    with mod.File(path, "w") as f:
        f["ok"] = STAMPS.astype(od(STAMPS.dtype))
        f.create_dataset("ch", data=STAMPS.astype(od(STAMPS.dtype)), chunks=(1,),
                         compression="gzip")
        f.create_dataset("e", (3,), dtype=od(np.dtype("m8[us]")))
        for name, call in [
                ("plain dataset", lambda: f.__setitem__("p", STAMPS)),
                ("create with dtype", lambda: f.create_dataset("q", (3,), dtype="M8[ns]")),
                ("create with data", lambda: f.create_dataset("q2", data=STAMPS)),
                ("compound member", lambda: f.create_dataset("q3", (2,), dtype=[("t", "M8[s]")])),
                ("plain attribute", lambda: f.attrs.__setitem__("p", STAMPS)),
                ("scalar attribute", lambda: f.attrs.__setitem__("p2", STAMPS[0])),
                ("timedelta attribute", lambda: f.attrs.__setitem__("p3", np.timedelta64(3, "s"))),
                ("scalar into opaque", lambda: f["ok"].__setitem__(0, np.datetime64("2021-05-05",
                                                                                    "ns"))),
                ("opaque into opaque", lambda: f["e"].__setitem__(
                    1, np.array(np.timedelta64(7, "us")).astype(od(np.dtype("m8[us]"))))),
                ("plain array into opaque", lambda: f["ch"].__setitem__(
                    slice(0, 1), np.array(["2000-01-01"], "M8[ns]")))]:
            try:
                call()
                seen.append((name, "ok"))
            except TypeError as exc:
                seen.append((name, "TypeError", str(exc)))
    return seen


def test_datetime_writes_as_h5py(tmp_path):
    """Writing datetimes: opaque-tagged ones are stored as h5py stores them; plain datetime64
    and timedelta64 are refused with h5py's TypeError at the call (never at close), and the
    file keeps everything else."""
    theirs, ours = str(tmp_path / "h.h5"), str(tmp_path / "p.h5")
    assert _datetime_writes(purehep, ours) == _datetime_writes(h5py, theirs)
    with h5py.File(theirs) as g, h5py.File(ours) as f:
        assert sorted(f) == sorted(g) == ["ch", "e", "ok"]
        for name in g:
            assert f[name].dtype == g[name].dtype
            assert f[name].dtype.metadata == g[name].dtype.metadata
            _same(g[name][()], f[name][()])
    with h5py.File(ours) as f:      # the opaque tag itself, as h5py writes it
        assert f["ok"].id.get_type().get_tag() == b"NUMPY:<M8[ns]"


# -- 3. array dtypes ------------------------------------------------------------------------------
def _array_dtype_file(mod, path):
    out = {}
    with mod.File(path, "w") as f:
        for name, call in [
                ("A", lambda: f.create_dataset("A", (), dtype="(3,2)f")),
                ("B", lambda: f.create_dataset("B", (4,), dtype="(3,2)f")),
                ("G", lambda: f.create_dataset("G", (3,), dtype="(2,)i2", compression="gzip")),
                ("K", lambda: f.create_dataset("K", (2,), dtype="(2,)S3", chunks=(1,))),
                ("M", lambda: f.create_dataset("M", (5,), dtype="(2,)i2", maxshape=(None,))),
                ("Gw", lambda: f["G"].__setitem__(0, [1, 2])),
                ("Gw2", lambda: f["G"].__setitem__(slice(1, 3), [[3, 4], [5, 6]])),
                ("Bw", lambda: f["B"].__setitem__((), np.arange(24).reshape(4, 3, 2))),
                ("Kw", lambda: f["K"].__setitem__(1, [b"ab", b"cde"])),
                ("Mw", lambda: f["M"].__setitem__(slice(None), np.arange(10).reshape(5, 2))),
                ("Mr", lambda: f["M"].resize((7,))),
                ("list data", lambda: f.create_dataset("E", data=[[1.0, 2.0]], dtype="(2,)f")),
                ("fill value", lambda: f.create_dataset("F", (5,), dtype="(2,)i2",
                                                        fillvalue=np.array([7, 8], "i2"))),
                ("at1", lambda: f.attrs.create("at1", np.arange(6).reshape(3, 2),
                                               dtype="(2,)i4")),
                ("at2", lambda: f.attrs.create("at2", np.arange(2), dtype="(2,)i4")),
                ("at bad", lambda: f.attrs.create("at3", np.arange(6).reshape(2, 3),
                                                  dtype="(2,)i4"))]:
            try:
                call()
                out[name] = "ok"
            except (ValueError, TypeError, OSError) as exc:
                out[name] = type(exc).__name__
    return out


def test_array_dtypes_as_h5py(tmp_path):
    """create_dataset with an array dtype keeps it (shape () and dtype ('<f4', (3, 2)), was
    shape (3, 2)); ds[()] gives the shape plus the array dimensions, ds.shape and ds.dtype keep
    the array dtype; writes, resizes, attributes and h5py's refusals alike, both ways."""
    theirs, ours = str(tmp_path / "h.h5"), str(tmp_path / "p.h5")
    assert _array_dtype_file(purehep, ours) == _array_dtype_file(h5py, theirs)
    for reader in (h5py, purehep):
        with reader.File(theirs) as g, reader.File(ours) as f:
            for name in ("A", "B", "G", "K", "M"):
                d, e = f[name], g[name]
                assert (d.shape, d.dtype, d.size, d.ndim) == (e.shape, e.dtype, e.size, e.ndim)
                keys = [(), Ellipsis] + ([0, slice(0, 2), -1] if e.shape else [])
                for key in keys:
                    _same(e[key], d[key])
            for name in ("at1", "at2"):
                _same(g.attrs[name], f.attrs[name])
    with purehep.File(ours) as f:
        assert f["A"].shape == () and f["A"].dtype == np.dtype(("<f4", (3, 2)))
        assert f["A"][()].shape == (3, 2)
        assert f.attrs.get_shape("at1") == (3,)


# -- 4. variable-length strings in arrays and compounds --------------------------------------------
VLEN_CASES = {
    "arr_str": np.dtype((h5py.string_dtype(), (3,))),
    "arr_bytes": np.dtype((h5py.string_dtype("ascii"), (2,))),
    "arr_vlen_int": np.dtype((h5py.vlen_dtype(np.int32), (2,))),
    "cmp": np.dtype([("a", h5py.string_dtype()), ("b", np.dtype((h5py.string_dtype(), (2,)))),
                     ("c", "i4"), ("d", h5py.vlen_dtype(np.int32))]),
    "cmp_nested": np.dtype([("x", np.dtype([("y", h5py.string_dtype())]))]),
}


def _tags(dt):
    """h5py's string and vlen tags of a dtype and of every member and array base in it."""
    out = {}

    def walk(d, path):
        out[path] = (h5py.check_string_dtype(d), h5py.check_vlen_dtype(d))
        if d.subdtype is not None:
            walk(d.subdtype[0], path + "[]")
        for name in d.names or ():
            walk(d.fields[name][0], path + "." + name)
    walk(dt, "")
    return out


def _vlen_file(mod, path):
    with mod.File(path, "w") as f:
        for name, dt in VLEN_CASES.items():
            f.create_dataset(name, (2,), dtype=dt)
        f["arr_str"][1] = ["x", "é", "z"]
        f.attrs.create("arr_str", np.array([["a", "b", "c"], ["d", "é", "f"]], dtype=object),
                       dtype=VLEN_CASES["arr_str"])
        f.attrs.create("arr_bytes", np.array([[b"a", b"b"], [b"d", b"e"]], dtype=object),
                       dtype=VLEN_CASES["arr_bytes"])


def test_vlen_tags_in_arrays_and_compounds(tmp_path):
    """Arrays of variable-length strings keep h5py's {'vlen': str} tag (and vlen sequences
    theirs), in datasets, attributes, compound members and nested compounds, written by either
    library and read by either; attribute values decode to str as h5py's do; unwritten
    elements read as empty strings and sequences (creating these crashed at close)."""
    theirs, ours = str(tmp_path / "h.h5"), str(tmp_path / "p.h5")
    _vlen_file(h5py, theirs)
    _vlen_file(purehep, ours)
    for reader in (h5py, purehep):
        with reader.File(theirs) as g, reader.File(ours) as f:
            for name, dt in VLEN_CASES.items():
                assert _tags(f[name].dtype) == _tags(g[name].dtype) == _tags(dt)
                assert repr(f[name][()]) == repr(g[name][()])
            for name in ("arr_str", "arr_bytes"):
                assert _tags(f.attrs[name].dtype) == _tags(g.attrs[name].dtype)
                assert f.attrs[name].tolist() == g.attrs[name].tolist()
    with h5py.File(theirs) as g, purehep.File(theirs) as f:
        assert g.attrs["arr_str"].tolist() == [["a", "b", "c"], ["d", "é", "f"]]
        assert f.attrs["arr_str"].tolist() == g.attrs["arr_str"].tolist()
        assert _tags(f.attrs.get_dtype("arr_str")) == _tags(VLEN_CASES["arr_str"])


@pytest.mark.skipif(not X87, reason="the platform long double is not the x87 80-bit format")
def test_scalar_binary128_dataset_and_attribute(tmp_path):
    """0-d values take the same conversion (a scalar dataset and a scalar attribute)."""
    path = str(tmp_path / "q0.h5")
    value = np.array(np.longdouble(1) / np.longdouble(3))
    with h5py.File(path, "w") as f:
        _dataset(f, "q", h5py.h5t.IEEE_F128BE, value, h5py.h5t.NATIVE_LDOUBLE)
        space = h5py.h5s.create(h5py.h5s.SCALAR)
        attr = h5py.h5a.create(f.id, b"q", h5py.h5t.IEEE_F128LE, space)
        attr.write(value, mtype=h5py.h5t.NATIVE_LDOUBLE)
        attr.close()
    with purehep.File(path) as f:
        assert f["q"][()] == value[()] and f["q"].shape == ()
        assert f.attrs["q"] == value[()]


@pytest.mark.parametrize("storage", [{}, {"chunks": (2,)}, {"chunks": (2,), "compression": "gzip"}])
def test_array_dtype_written_in_modify_mode(tmp_path, storage):
    """Writes into an array-typed dataset h5py made, and a new array-typed attribute, in 'r+'."""
    path = str(tmp_path / "m.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", (4,), dtype="(3,2)f", **storage)
    with purehep.File(path, "r+") as f:
        d = f["x"]
        assert d.shape == (4,) and d.dtype == np.dtype(("<f4", (3, 2)))
        d[1] = np.arange(6).reshape(3, 2)
        with pytest.raises(TypeError):        # as h5py: a constant is no (3, 2) array
            d[2:4] = 7
        d[2:4] = np.full((2, 3, 2), 7)
        f.attrs.create("b", np.arange(4).reshape(2, 2), dtype="(2,)i4")
    expected = np.zeros((4, 3, 2), "f4")
    expected[1] = np.arange(6).reshape(3, 2)
    expected[2:] = 7
    with h5py.File(path) as g:
        _same(g["x"][()], expected)
        assert g.attrs["b"].tolist() == [[0, 1], [2, 3]]
        assert h5py.h5a.open(g.id, b"b").dtype == np.dtype(("<i4", (2,)))
