"""Files read through fsspec (io/fsspec.py): over a local HTTP server with byte
ranges (tools/rangeserver.py), memory:// and file://, and fsspec file objects; every value
equal to h5py's local read, every request counted by the server, and a full chunked read in
no more requests than pyfive takes over the same server."""
import io

import numpy as np
import pytest

fsspec = pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")
h5py = pytest.importorskip("h5py")

import purehep                                          # noqa: E402
from compare import same_tree, same_values              # noqa: E402
from purehep.errors import ReadOnlyError                # noqa: E402
from purehep.io.fsspec import coalesce        # noqa: E402
from tools.rangeserver import RangeServer               # noqa: E402

FILTERS = dict(compression="gzip", shuffle=True)
# the chunk index each dataset gets (libhdf5's choice from maxshape and chunk shape)
INDEXES = {"btree1": ("earliest", {}), "fixed": ("v110", {}),
           "extensible": ("v110", {"maxshape": (None, 300)}),
           "btree2": ("v110", {"maxshape": (None, None)}),
           "single": ("v110", {"chunks": (400, 300)})}
INDEX_NAMES = {"btree1": "v1 B-tree", "fixed": "fixed array", "extensible": "extensible array",
               "btree2": "v2 B-tree", "single": "single chunk"}


def _walk(rng):
    return np.cumsum(rng.normal(size=(400, 300)), axis=0).astype("f4")  # compressible


def _misc(f, rng):
    """Contiguous data, compound and string types, attributes and nested groups."""
    f.attrs["title"] = "fsspec test"
    f.attrs["scale"] = np.float64(0.5)
    f.attrs["ids"] = np.arange(7, dtype="i2")
    f["contiguous"] = rng.integers(0, 1000, (300, 50)).astype("i4")
    cmp = np.dtype([("x", "f8"), ("n", "i4"), ("tag", "S6")])
    f["compound"] = np.array([(i * 0.25, i, f"t{i}".encode()) for i in range(40)], cmp)
    f.create_dataset("strings", data=["alpha", "beta", "gamma" * 9],
                     dtype=h5py.string_dtype())
    g = f.create_group("a/b/c")
    g.attrs["depth"] = 3
    g["leaf"] = np.arange(12.0).reshape(3, 4)
    g["leaf"].attrs["units"] = "m"
    f["a"].attrs["names"] = np.array([b"x", b"yy"])
    raw = f.create_dataset("raw_chunked", data=rng.integers(0, 99, (130, 70)), chunks=(32, 32))
    raw.attrs["edge chunks"] = True
    part = f.create_dataset("unallocated", shape=(200, 200), dtype="f8", chunks=(50, 50),
                            fillvalue=-1.0, **FILTERS)
    part[60:120, 10:30] = 1.5


def _make(libver, names):
    buf = io.BytesIO()
    rng = np.random.default_rng(len(names))
    with h5py.File(buf, "w", libver=libver) as f:
        _misc(f, rng)
        for name in names:
            kw = dict(chunks=(40, 30), **FILTERS)
            kw.update(INDEXES[name][1])
            f.create_dataset(name, data=_walk(rng), **kw)
    return buf.getvalue()


@pytest.fixture(scope="module")
def files():
    by_libver = {}
    for name, (libver, _) in INDEXES.items():
        by_libver.setdefault(libver, []).append(name)
    made = {f"{libver}.h5": _make(libver, names) for libver, names in by_libver.items()}
    buf = io.BytesIO()          # 100 chunks, 3.7 MB: more than the first metadata blocks
    with h5py.File(buf, "w", libver="earliest") as f:
        data = np.cumsum(np.random.default_rng(1).normal(size=(1000, 1000)), 0).astype("f4")
        f.create_dataset("big", data=data, chunks=(100, 100), **FILTERS)
    made["big.h5"] = buf.getvalue()
    buf = io.BytesIO()          # 2,000 chunks: a v1 B-tree of ~30 nodes spread through the file
    with h5py.File(buf, "w", libver="earliest") as f:
        f.create_dataset("many", data=np.random.default_rng(2).random(200_000).astype("f4"),
                         chunks=(100,), compression="gzip")
    made["many.h5"] = buf.getvalue()
    buf = io.BytesIO()          # object headers spread out between contiguous raw data,
    with h5py.File(buf, "w", libver="earliest", userblock_size=512) as f:    # after a user block
        for g in range(3):
            for d in range(3):
                f[f"g{g}/d{d}"] = np.random.default_rng(g * 3 + d).random(5000)
                f[f"g{g}/d{d}"].attrs["n"] = d
            f.create_dataset(f"g{g}/chunked", data=np.arange(3000.0), chunks=(256,), **FILTERS)
    made["spread.h5"] = buf.getvalue()
    return made


@pytest.fixture(scope="module")
def server(files):
    with RangeServer(files) as srv:
        yield srv
    assert not srv._thread.is_alive()


def _file_of(name):
    return f"{INDEXES[name][0]}.h5"


def _local(files, fname):
    return h5py.File(io.BytesIO(files[fname]), "r")


@pytest.mark.parametrize("fname", ["earliest.h5", "v110.h5", "spread.h5"])
@pytest.mark.parametrize("block_size", [None, 4 << 10])
def test_http_tree_and_requests(files, server, fname, block_size):
    """The whole tree (links, attributes, every dataset's values) as h5py reads it, and the
    source's counts are the server's (with small blocks, a group's members' headers are
    fetched together: ByteSource.warm)."""
    server.reset()
    with _local(files, fname) as h, purehep.File(server.url(fname), block_size=block_size) as p:
        assert p.driver == "fsspec" and p.filename == server.url(fname)
        names_h, names_p = [], []
        h.visititems(lambda n, o: names_h.append((n, list(o.attrs))))
        p.visititems(lambda n, o: names_p.append((n, list(o.attrs))))
        assert names_h == names_p
        assert same_tree(h, p) >= 5
        src = p._source
        assert (src.requests, src.bytes_fetched) == (server.requests, server.bytes_served)
        assert src.bytes_fetched <= 2 * len(files[fname])


SLICES = [np.s_[:], np.s_[5:123, 17:250], np.s_[50:60, 40:70], np.s_[::7, 3], np.s_[399, :],
          np.s_[[2, 90, 391], 100:131]]


@pytest.mark.parametrize("name", list(INDEXES))
@pytest.mark.parametrize("block_size", [None, 16 << 10])
def test_http_chunked_slices(files, server, name, block_size):
    """Full and partial reads under each chunk index kind, with the default metadata blocks
    and with blocks small enough that the raw data is fetched ahead, coalesced (no decoded
    chunk cache: every read goes to the server)."""
    with _local(files, _file_of(name)) as h, \
            purehep.File(server.url(_file_of(name)), block_size=block_size, rdcc_nbytes=0) as p:
        assert p[name]._storage.chunked.index_name == INDEX_NAMES[name]
        for sel in SLICES:
            same_values(h[name][sel], p[name][sel], f"{name}{sel}")


@pytest.mark.parametrize("name", ["raw_chunked", "unallocated"])
def test_http_unfiltered_and_unallocated_slices(files, server, name):
    """Unfiltered chunks (edge chunks cut) and chunks never written (the fill value)."""
    with _local(files, "earliest.h5") as h, \
            purehep.File(server.url("earliest.h5"), block_size=4 << 10, rdcc_nbytes=0) as p:
        for sel in [np.s_[:], np.s_[3:129, 5:69], np.s_[40:70, 20:40], np.s_[[1, 64, 127], 9]]:
            same_values(h[name][sel], p[name][sel], f"{name}{sel}")


def test_full_read_coalesces(files, server):
    """100 chunks written one after the other come in a handful of requests, not 100."""
    fname = _file_of("btree1")
    server.reset()
    with purehep.File(server.url(fname), block_size=16 << 10) as p:
        ds = p["btree1"]
        before = server.requests
        with _local(files, fname) as h:
            assert np.array_equal(ds[:], h["btree1"][:])
        data_requests = server.requests - before
    print(f"\nfull read of 100 chunks: {data_requests} requests")
    assert data_requests <= 10, data_requests


def test_index_read_ahead(files, server):
    """A chunk index written forward through the file is read in runs of blocks that grow
    while the misses go forward: fewer requests than block by block, the same values."""
    counts = {}
    with _local(files, "many.h5") as h:
        expected = h["many"][:]
    for readahead in (None, 1):
        server.reset()
        with purehep.File(server.url("many.h5"), block_size=16 << 10) as p:
            if readahead:
                p._source.max_readahead = readahead
            assert np.array_equal(p["many"][:], expected)
        counts[readahead] = server.requests
    print(f"\n2,000-chunk read, requests with / without read-ahead: {counts}")
    assert 2 * counts[None] <= counts[1]


def test_fewer_requests_than_pyfive(files, server):
    """Opening a file and reading a 100-chunk dataset in full, counted by the server."""
    pyfive = pytest.importorskip("pyfive")
    url = server.url("big.h5")
    server.reset()
    with purehep.File(url) as p:
        ours = p["big"][:]
    counts = {"purehep": (server.requests, server.bytes_served)}
    server.reset()
    with fsspec.open(url, "rb") as fo, pyfive.File(fo) as q:
        theirs = q["big"][:]
    counts["pyfive"] = (server.requests, server.bytes_served)
    with _local(files, "big.h5") as h:
        expected = h["big"][:]
    assert np.array_equal(ours, expected) and np.array_equal(theirs, expected)
    print(f"\nfull chunked read over HTTP (requests, bytes): {counts}, "
          f"file size {len(files['big.h5'])}")
    assert counts["purehep"][0] <= counts["pyfive"][0]


def test_opened_http_file(files, server):
    """An opened fsspec HTTP file: its filesystem and path are read, its known size used."""
    fname = "v110.h5"
    with fsspec.open(server.url(fname), "rb") as fo:
        server.reset()
        with _local(files, fname) as h, purehep.File(fo) as p:
            assert same_tree(h, p) > 5
            assert p._source.requests == server.requests     # no size lookup of its own


def test_memory_file_and_fileobjects(files, tmp_path):
    fname = "earliest.h5"
    path = tmp_path / fname
    path.write_bytes(files[fname])
    mem = fsspec.filesystem("memory")
    mem.pipe("/purehep-test/" + fname, files[fname])
    try:
        with _local(files, fname) as h:
            for target in ("memory://purehep-test/" + fname, "file://" + str(path)):
                with purehep.File(target) as p:
                    assert same_tree(h, p) > 5
            with fsspec.open("memory://purehep-test/" + fname) as fo, purehep.File(fo) as p:
                assert p.driver == "fsspec" and same_tree(h, p) > 5
            opened = fsspec.open("file://" + str(path))
            with purehep.File(opened) as p:
                assert same_tree(h, p) > 5
    finally:
        mem.rm("/purehep-test", recursive=True)


def test_local_paths_stay_mapped(files, tmp_path):
    path = tmp_path / "f.h5"
    path.write_bytes(files["earliest.h5"])
    with purehep.File(str(path)) as p:
        assert p.driver == "sec2" and p._source.prefetch_batch == 0


@pytest.mark.parametrize("mode", ["r+", "a", "w", "w-", "x"])
def test_remote_files_are_read_only(server, mode):
    with pytest.raises(ReadOnlyError) as err:
        purehep.File(server.url("earliest.h5"), mode)
    assert isinstance(err.value, OSError)


def test_storage_options_need_a_url(tmp_path):
    with pytest.raises(ValueError, match="storage_options"):
        purehep.File(str(tmp_path / "f.h5"), storage_options={"anon": True})


@pytest.mark.parametrize("seed", range(5))
def test_coalesce_covers_and_merges(seed):
    """Every range is covered; merged ranges are disjoint, and two neighbours closer than
    the gap would make a range over the size bound."""
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, 10_000, 60)
    ranges = [(int(s), int(s + n)) for s, n in zip(starts, rng.integers(1, 300, 60))]
    merged = coalesce(ranges, max_gap=100, max_block=2_000)
    for a, b in ranges:
        assert any(lo <= a and b <= hi for lo, hi in merged)
    for (lo0, hi0), (lo1, hi1) in zip(merged, merged[1:]):
        assert lo1 >= hi0
        assert lo1 - hi0 > 100 or hi1 - lo0 > 2_000


def test_without_fsspec_a_url_names_the_extra():
    """In a numpy-only process a URL fails naming the extra; importing purehep is unharmed."""
    from tools.bench.common import run_python
    code = ("import purehep\ntry:\n    purehep.File('https://example.invalid/f.h5')\n"
            "except ImportError as e:\n    print(e)\n")
    _, out = run_python(code, numpy_only=True)
    assert "pip install purehep[fsspec]" in out
