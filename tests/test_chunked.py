"""Chunked datasets written by h5py (every chunk index, filters, fill values, resizing) read
through purehep.chunks.ChunkedStorage and compared with h5py's reads."""
import h5py
import numpy as np
import pytest

from purehep.chunks import ChunkedStorage
from purehep.errors import ChecksumError, UnsupportedFeatureError
from purehep.format.messages import decode as decode_message
from purehep.format.object_header import ObjectHeader
from purehep.format.superblock import Superblock
from purehep.io import open_source


def open_storage(path, name, threads=None):
    """ChunkedStorage of dataset ``name``: h5py only finds its object header address."""
    with h5py.File(path, "r") as f:
        ds = f[name]
        addr = h5py.h5o.get_info(ds.id).addr
        dtype, fill = ds.dtype, ds.fillvalue
    src = open_source(str(path))
    ctx = Superblock.find(src).context(src)
    msgs = {}
    for raw in ObjectHeader.decode(ctx, addr).messages:
        if raw.type in (0x01, 0x08, 0x0B):
            msgs[raw.type] = decode_message(ctx, raw)
    space, layout = msgs[0x01], msgs[0x08]
    return ChunkedStorage(ctx, layout, space.shape, np.dtype(dtype), msgs.get(0x0B),
                          np.array(fill, dtype=dtype), threads=threads, maxshape=space.maxshape)


def coords_of(sel, shape):
    return [np.arange(*s.indices(n), dtype=np.int64) for s, n in zip(sel, shape)]


def check(path, name, sels=(), threads=None, offsets=True):
    """Compare reads and chunk_info with h5py (``offsets=False``: libhdf5's get_chunk_info
    misreports offsets of extensible-array chunks when the unlimited dimension is not first)."""
    st = open_storage(path, name, threads)
    with h5py.File(path, "r") as f:
        ds = f[name]
        expect = ds[...]
        got = st.read(None)
        assert got.dtype == ds.dtype and got.shape == ds.shape
        np.testing.assert_array_equal(got, expect)
        for sel in sels:
            np.testing.assert_array_equal(st.read(coords_of(sel, ds.shape)), ds[sel])
        # single elements: first, last, middle
        for idx in {tuple(0 for _ in ds.shape), tuple(n - 1 for n in ds.shape),
                    tuple(n // 2 for n in ds.shape)}:
            got1 = st.read([np.array([i], np.int64) for i in idx])
            assert got1.reshape(()) == expect[idx]
        if ds.id.get_num_chunks():
            info = st.chunk_info()
            ref = []
            ds.id.chunk_iter(lambda c: ref.append((tuple(c.chunk_offset), c.byte_offset, c.size,
                                                   c.filter_mask)))
            ref.sort()
            if not offsets:
                ref = sorted(r[1:] for r in ref)
            mine = sorted(((tuple(int(v) for v in o),) if offsets else ()) + (int(a), int(s), int(m))
                          for o, a, s, m in
                          zip(info["offsets"], info["addresses"], info["sizes"],
                              info["filter_masks"]))
            assert mine == ref
            assert st.storage_size == ds.id.get_storage_size()
    return st


SHAPES = [
    ((97,), (10,)),
    ((23, 17), (5, 4)),
    ((9, 8, 7), (4, 3, 2)),
    ((5, 6, 4, 7), (2, 4, 3, 3)),
]


def _sels(shape):
    full = tuple(slice(None) for _ in shape)
    strided = tuple(slice(1, None, 3) for _ in shape)
    mixed = tuple(slice(n // 3, n - 1, 2) if i % 2 else slice(0, n // 2 + 1) for i, n in
                  enumerate(shape))
    return [full, strided, mixed]


@pytest.mark.parametrize("libver", ["earliest", "latest"])
@pytest.mark.parametrize("shape,chunks", SHAPES)
@pytest.mark.parametrize("kw", [{}, {"compression": "gzip", "shuffle": True},
                                {"compression": "gzip", "shuffle": True, "fletcher32": True}])
def test_fixed_shape(tmp_path, libver, shape, chunks, kw):
    p = tmp_path / "f.h5"
    data = np.random.default_rng(1).integers(-1000, 1000, size=shape).astype("<i4")
    with h5py.File(p, "w", libver=libver) as f:
        f.create_dataset("d", data=data, chunks=chunks, **kw)
    st = check(p, "d", _sels(shape))
    assert st.index_name == ("v1 B-tree" if libver == "earliest" else "fixed array")


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_partial_and_fill(tmp_path, libver):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver=libver) as f:
        d = f.create_dataset("d", shape=(50, 40), dtype="f8", chunks=(7, 6), fillvalue=-2.5)
        d[3:9, 5:20] = 1.25
        d[45:, 33:] = np.arange(5 * 7).reshape(5, 7)
        f.create_dataset("empty", shape=(10, 10), dtype="i2", chunks=(3, 3), fillvalue=7)
        g = f.create_dataset("gz", shape=(100,), dtype="u1", chunks=(9,), fillvalue=3,
                             compression="gzip")
        g[20:30] = 200
    check(p, "d", [(slice(0, 50, 4), slice(2, 39, 5)), (slice(44, 46), slice(30, 40))])
    check(p, "empty")
    check(p, "gz", [(slice(15, 35, 2),)])


def test_single_chunk(tmp_path):
    p = tmp_path / "f.h5"
    data = np.arange(600, dtype="<f4").reshape(20, 30)
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("plain", data=data, chunks=(20, 30))
        f.create_dataset("gz", data=data, chunks=(20, 30), compression="gzip")
        f.create_dataset("none", shape=(20, 30), dtype="f4", chunks=(20, 30), fillvalue=4)
    for name in ("plain", "gz"):
        assert check(p, name, _sels(data.shape)).index_name == "single chunk"
    check(p, "none")


def test_implicit(tmp_path):
    p = tmp_path / "f.h5"
    fid = h5py.h5f.create(str(p).encode(), h5py.h5f.ACC_TRUNC,
                          fapl=_fapl_latest())
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((4, 5))
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    space = h5py.h5s.create_simple((18, 23), (18, 23))
    h5py.h5d.create(fid, b"d", h5py.h5t.STD_I32LE, space, dcpl=dcpl)
    fid.close()
    with h5py.File(p, "a") as f:
        f["d"][2:11, 3:21] = np.arange(9 * 18).reshape(9, 18)
    st = check(p, "d", _sels((18, 23)))
    assert st.index_name == "implicit"


def _fapl_latest():
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    return fapl


def test_fixed_array_paged(tmp_path):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver="latest") as f:
        d = f.create_dataset("d", shape=(3000 * 4,), dtype="i8", chunks=(4,), fillvalue=-1)
        d[-8:] = [1, 2, 3, 4, 5, 6, 7, 8]           # only the last page is initialized
        d[4100:4104] = 9
        e = f.create_dataset("gz", shape=(2500, 8), dtype="i4", chunks=(2, 8),
                             compression="gzip", shuffle=True)
        e[...] = np.arange(2500 * 8).reshape(2500, 8)
    st = check(p, "d", [(slice(0, None, 7),), (slice(4090, 4110),)])
    assert st.index_name == "fixed array" and st.layout.index_info["page_bits"] < 12
    check(p, "gz", [(slice(5, 2000, 13), slice(None, None, 3))])


@pytest.mark.parametrize("filtered", [False, True])
def test_extensible_array(tmp_path, filtered):
    p = tmp_path / "f.h5"
    kw = {"compression": "gzip"} if filtered else {}
    with h5py.File(p, "w", libver="latest") as f:
        d = f.create_dataset("d", shape=(0,), maxshape=(None,), dtype="i4", chunks=(2,), **kw)
        n = 25_000   # 12,500 chunks: index block, many super blocks, paged data blocks
        d.resize((n,))
        d[:] = np.arange(n)
        d[30:40] = d.fillvalue  # still allocated (written)
        e = f.create_dataset("cols", shape=(6, 0), maxshape=(6, None), dtype="f4",
                             chunks=(4, 3), fillvalue=0.5, **kw)
        e.resize((6, 50))
        e[:, 10:40] = np.arange(6 * 30).reshape(6, 30)
    st = check(p, "d", [(slice(3, None, 97),), (slice(24_000, 25_000),)])
    assert st.index_name == "extensible array"
    check(p, "cols", _sels((6, 50)), offsets=False)


def test_extensible_array_sparse_writes(tmp_path):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver="latest") as f:
        d = f.create_dataset("d", shape=(200_000,), maxshape=(None,), dtype="i2", chunks=(8,),
                             fillvalue=11)
        for i in (0, 100, 5_000, 70_000, 199_990):
            d[i:i + 8] = np.arange(8) + i
    check(p, "d", [(slice(None, None, 101),), (slice(69_990, 70_020),)])


@pytest.mark.parametrize("kw", [{}, {"compression": "gzip", "shuffle": True}])
def test_btree2(tmp_path, kw):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver="latest") as f:
        d = f.create_dataset("d", shape=(0, 0), maxshape=(None, None), dtype="i4",
                             chunks=(3, 5), fillvalue=-9, **kw)
        d.resize((70, 80))
        d[:60, :] = np.arange(60 * 80).reshape(60, 80)
        d[65:, 77:] = 5
        e = f.create_dataset("e", shape=(4, 5, 6), maxshape=(None, 5, None), dtype="u2",
                             chunks=(2, 2, 2), **kw)
        e[...] = np.arange(120).reshape(4, 5, 6)
    st = check(p, "d", _sels((70, 80)))
    assert st.index_name == "v2 B-tree"
    check(p, "e", _sels((4, 5, 6)))


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_grown_and_shrunk(tmp_path, libver):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver=libver) as f:
        d = f.create_dataset("d", data=np.arange(30 * 20).reshape(30, 20), maxshape=(None, 40),
                             chunks=(7, 6), fillvalue=-1)
        d.resize((40, 40))
        d[35:, 30:] = 3
        d.resize((33, 25))
        d.resize((38, 31))
        s = f.create_dataset("s", data=np.arange(100.0), maxshape=(100,), chunks=(8,),
                             compression="gzip")
        s.resize((45,))
        s.resize((90,))
    check(p, "d", _sels((38, 31)))
    check(p, "s", [(slice(40, 60),)])


def test_compound_and_bigendian(tmp_path):
    p = tmp_path / "f.h5"
    dt = np.dtype([("a", "<i2"), ("b", ">f8"), ("c", "S3")])
    data = np.zeros((40, 3), dt)
    data["a"] = np.arange(120).reshape(40, 3)
    data["b"] = np.linspace(0, 1, 120).reshape(40, 3)
    data["c"] = b"xyz"
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("c", data=data, chunks=(7, 2), compression="gzip", shuffle=True)
        f.create_dataset("be", data=np.arange(50, dtype=">u4"), chunks=(6,))
    check(p, "c", [(slice(1, 39, 4), slice(0, 3, 2))])
    check(p, "be")


def test_threads_agree(tmp_path):
    p = tmp_path / "f.h5"
    data = np.random.default_rng(0).standard_normal((300, 200)).astype("f4")
    with h5py.File(p, "w") as f:
        f.create_dataset("d", data=data, chunks=(16, 16), compression="gzip", shuffle=True)
    a = open_storage(p, "d", threads=1).read(None)
    b = open_storage(p, "d", threads=4).read(None)
    np.testing.assert_array_equal(a, data)
    np.testing.assert_array_equal(b, data)


def test_fletcher32_mismatch(tmp_path):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("d", data=np.arange(100, dtype="i4"), chunks=(10,), fletcher32=True)
    st = open_storage(p, "d")
    info = st.chunk_info()
    victim = int(np.flatnonzero(info["offsets"][:, 0] == 30)[0])
    pos = int(info["addresses"][victim]) + 5
    raw = bytearray(p.read_bytes())
    raw[pos] ^= 0xFF
    p.write_bytes(bytes(raw))
    st = open_storage(p, "d")
    np.testing.assert_array_equal(st.read([np.arange(0, 30)]), np.arange(30))
    with pytest.raises(ChecksumError) as e:
        st.read(None)
    assert "[30]" in str(e.value)


def test_unknown_filter(tmp_path):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w") as f:
        d = f.create_dataset("d", shape=(20,), dtype="i4", chunks=(10,), compression=32002,
                             compression_opts=(0, 0, 0, 0, 5, 1, 0), allow_unknown_filter=True)
        d.id.write_direct_chunk((0,), b"\0" * 40, filter_mask=0)
    st = open_storage(p, "d")
    with pytest.raises(UnsupportedFeatureError, match="32002.*MAFISC"):
        st.read(None)


def test_many_small_chunks_each_index(tmp_path):
    """A moderately large dataset of small chunks, per index type (a quick timing sanity)."""
    p = tmp_path / "f.h5"
    n = 200_000
    data = np.arange(n, dtype="i4")
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("fa", data=data, chunks=(64,))
        f.create_dataset("ea", data=data, chunks=(64,), maxshape=(None,))
        f.create_dataset("bt", data=data.reshape(-1, 1), chunks=(64, 1), maxshape=(None, None))
    with h5py.File(p, "w" if False else "a", libver="earliest") as f:
        pass
    for name in ("fa", "ea", "bt"):
        st = open_storage(p, name)
        with h5py.File(p, "r") as f:
            np.testing.assert_array_equal(st.read(None), f[name][...])


def test_dont_filter_partial_edge_chunks(tmp_path):
    """Layout flag bit 0: partial edge chunks are stored unfiltered (set through ctypes:
    h5py does not wrap H5Pset_chunk_opts)."""
    import ctypes
    import glob
    import os
    libs = glob.glob(os.path.join(os.path.dirname(h5py.__file__), "..", "h5py.libs", "libhdf5-*"))
    try:
        fn = (ctypes.CDLL(libs[0]) if libs else ctypes.CDLL(None)).H5Pset_chunk_opts
    except (OSError, AttributeError):
        pytest.skip("H5Pset_chunk_opts is not reachable")
    fn.argtypes = [ctypes.c_int64, ctypes.c_uint]
    p = tmp_path / "f.h5"
    fid = h5py.h5f.create(str(p).encode(), h5py.h5f.ACC_TRUNC, fapl=_fapl_latest())
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((8, 6))
    dcpl.set_deflate(4)
    assert fn(dcpl.id, 0x0002) >= 0
    h5py.h5d.create(fid, b"d", h5py.h5t.STD_I32LE, h5py.h5s.create_simple((21, 20)), dcpl=dcpl)
    fid.close()
    with h5py.File(p, "a") as f:
        f["d"][...] = np.arange(420).reshape(21, 20)
    st = check(p, "d", _sels((21, 20)))
    assert st.layout.flags & 1
    expect = np.arange(420).reshape(21, 20)
    for box in [((17, 15), (21, 20)), ((6, 4), (10, 8)), ((20, 0), (21, 20))]:  # small reads
        np.testing.assert_array_equal(st.read_box(*box), expect[tuple(
            slice(a, b) for a, b in zip(*box))])


@pytest.mark.parametrize("libver", ["earliest", "latest"])
@pytest.mark.parametrize("kw", [{}, {"compression": "gzip"}])
def test_small_boxes(tmp_path, libver, kw):
    """``ds[a:b, i, ...]`` small reads (the box path: one chunk, several, unallocated ones,
    edge chunks, a shrunk extent) equal h5py's, through purehep.File."""
    import purehep
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver=libver) as f:
        a = f.create_dataset("a", shape=(101,), dtype="<i4", chunks=(8,), fillvalue=-7,
                             maxshape=(None,), **kw)
        a[:40] = np.arange(40)
        a[70:90] = np.arange(20)
        b = f.create_dataset("b", data=np.arange(23 * 19 * 5, dtype=">f8").reshape(23, 19, 5),
                             chunks=(4, 3, 2), maxshape=(None, 30, 5), **kw)
        b.resize((30, 19, 5))
        b.resize((21, 17, 5))
    rng = np.random.default_rng(5)
    with h5py.File(p, "r") as h, purehep.File(p, "r") as f:
        for s in rng.integers(0, 101, 200):
            e = s + int(rng.integers(1, 12))
            np.testing.assert_array_equal(f["a"][s:e], h["a"][s:e])
            assert f["a"][int(s)] == h["a"][int(s)]
        for _ in range(200):
            i, j, k = (int(rng.integers(0, n)) for n in (21, 17, 5))
            sel = (slice(i, i + int(rng.integers(1, 6))), j, slice(k, k + int(rng.integers(1, 4))))
            got = f["b"][sel]
            assert got.shape == h["b"][sel].shape
            np.testing.assert_array_equal(got, h["b"][sel])
            np.testing.assert_array_equal(f["b"][i, j], h["b"][i, j])


def test_small_box_past_end_of_file(tmp_path):
    """A chunk the index places past the end of a truncated file raises TruncatedError on
    the small-read path too."""
    import purehep
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver="earliest") as f:
        f.create_dataset("a", data=np.arange(1000, dtype="<i4"), chunks=(10,))
        last = f["a"].id.get_chunk_info(99).byte_offset
    data = bytearray(p.read_bytes()[:last + 8])
    assert last + 40 >= len(p.read_bytes())   # the last chunk ends the file
    data[40:48] = (last + 8).to_bytes(8, "little")   # superblock v0 end-of-file address
    t = tmp_path / "t.h5"
    t.write_bytes(data)
    with purehep.File(t, "r") as f:
        assert f["a"][5:15].tolist() == list(range(5, 15))
        with pytest.raises(purehep.TruncatedError):
            f["a"][992:995]


def test_decoded_chunk_cache(tmp_path):
    """Row-by-row reads of a compressed dataset decode each chunk once (the cache), equal
    h5py's reads with any cache size, and keep the cache within its budget."""
    import purehep
    from purehep.chunks.cache import ChunkCache
    p = tmp_path / "f.h5"
    data = np.arange(60 * 50, dtype="<f8").reshape(60, 50)
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=data, chunks=(8, 25), compression="gzip", shuffle=True)
    for nbytes in (None, 0, 3000, 4000):
        with purehep.File(p, "r", rdcc_nbytes=nbytes) as f:
            ds = f["x"]
            rows = [ds[i] for i in range(60)] + [ds[i, 20:30] for i in range(59, -1, -1)]
            np.testing.assert_array_equal(np.stack(rows[:60]), data)
            np.testing.assert_array_equal(np.stack(rows[60:]), data[::-1, 20:30])
            np.testing.assert_array_equal(ds[::3, 7], data[::3, 7])
            cache = ds._storage.chunked.cache
            if nbytes == 0:
                assert cache is None
            else:
                assert 0 < cache.used <= cache.nbytes
                assert cache.nbytes == (nbytes or 8 << 20)
    with pytest.raises(ValueError):
        purehep.File(p, "r", rdcc_w0=1.5)
    cache = ChunkCache(10)
    for k in range(4):
        cache.put(k, np.zeros(4, np.uint8))
    assert cache.get(0) is None and cache.get(1) is None and cache.used == 8
    assert not cache.get(3).flags.writeable
    cache.put(9, np.zeros(11, np.uint8))      # larger than the budget: not kept
    assert cache.get(9) is None and cache.used == 8


def test_decoded_chunk_cache_counts_decodes(tmp_path, monkeypatch):
    """Reading every row through ``f[name][i]`` decodes each chunk once: the file keeps the
    storage (index and chunk cache) of the datasets used last."""
    import purehep
    from purehep import filters
    p = tmp_path / "f.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(4000.0).reshape(100, 40), chunks=(20, 40),
                         compression="gzip")
    calls = []
    original = filters.decode_pipeline
    monkeypatch.setattr(filters, "decode_pipeline",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    with purehep.File(p, "r") as f:
        assert [float(f["x"][i][0]) for i in range(100)] == [40.0 * i for i in range(100)]
    assert len(calls) == 5
