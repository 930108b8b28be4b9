"""The chunk lookups' node cache and in-place node reading (chunks.cache.NodeCache,
chunks.table.Records): random small reads under every chunk index kind, at several index
sizes (a single node, trees of two levels, paged arrays), equal h5py's; a cache bounded to a few
leaves still finds every chunk; a file open for writing reads its new chunks after the
index changes (read, grow, write, read again), and h5py reads the result."""
import h5py
import numpy as np
import pytest

import purehep
from purehep.chunks import cache

from test_chunk_lookup import _implicit

CHUNK = 4
KINDS = ("btree1", "fixed_array", "extensible_array", "btree2", "implicit")


def _make(p, kind, nchunks):
    """Dataset "x" of ``nchunks`` chunks of CHUNK int32 (btree2: a column, 2-D) indexed by
    ``kind``; the middle third of the chunks is left unallocated (but for the implicit
    index). Returns the values (fill value -1 in that third)."""
    n = nchunks * CHUNK
    data = np.arange(n, dtype="<i4") * 3 - 5
    if kind == "implicit":
        _implicit(p, "x", data, (CHUNK,))
        return data
    libver = "earliest" if kind == "btree1" else "latest"
    maxshape = {"btree1": (None,), "fixed_array": (n,), "extensible_array": (None,),
                "btree2": (None, None)}[kind]
    shape = (n, 1) if kind == "btree2" else (n,)
    with h5py.File(p, "w", libver=libver) as f:
        ds = f.create_dataset("x", shape=shape, dtype="<i4", chunks=(CHUNK,) + shape[1:],
                              maxshape=maxshape, fillvalue=-1)
        lo, hi = _gap(nchunks)
        ds[:lo] = data[:lo].reshape((-1,) + shape[1:])
        ds[hi:] = data[hi:].reshape((-1,) + shape[1:])
    data[lo:hi] = -1
    return data


def _gap(nchunks):
    """Elements lo..hi of the unallocated chunks."""
    return nchunks // 3 * CHUNK, 2 * nchunks // 3 * CHUNK


@pytest.mark.parametrize("nchunks", [2, 300, 6000])
@pytest.mark.parametrize("kind", KINDS)
def test_random_small_reads_match_h5py(tmp_path, kind, nchunks):
    p = tmp_path / "f.h5"
    _make(p, kind, nchunks)
    rng = np.random.default_rng(nchunks)
    starts = rng.integers(0, nchunks * CHUNK - 2, 300).tolist()
    with h5py.File(p, "r") as h, purehep.File(p, "r") as f:
        hd, pd = h["x"], f["x"]
        for s in starts:
            sel = (slice(s, s + 3), 0) if kind == "btree2" else slice(s, s + 3)
            np.testing.assert_array_equal(pd[sel], hd[sel])
        assert pd._storage.chunked._table is None       # all found by lookups


@pytest.mark.parametrize("kept", [0, 2])
@pytest.mark.parametrize("kind", ["btree1", "btree2"])
def test_bounded_leaf_cache_finds_every_chunk(tmp_path, monkeypatch, kind, kept):
    """No leaf or two leaves kept: leaves are dropped and read again, and every lookup
    still agrees with the decoded table."""
    monkeypatch.setattr(cache, "LEAVES_KEPT", kept)
    p = tmp_path / "f.h5"
    _make(p, kind, 3000)
    with purehep.File(p, "r") as f:
        st = f["x"]._storage.chunked
        grid = st.grid
        positions = [(int(i),) + (0,) * (st.rank - 1)
                     for i in np.random.default_rng(3).integers(0, grid[0], 400)]
        got = [st.record_at(pos) for pos in positions]
        assert st._table is None
        t = st.table
        for pos, rec in zip(positions, got):
            row = st.row_at(pos, grid)
            assert rec == (None if row < 0 else (int(t.addresses[row]), int(t.sizes[row]),
                                                  int(t.masks[row])))


@pytest.mark.parametrize("kind", ["btree1", "extensible_array", "btree2", "fixed_array"])
def test_write_session_reads_the_changed_index(tmp_path, kind):
    """r+: small reads fill the lookup's node cache; growing the dataset and writing new
    chunks (or, for the fixed array, writing the unallocated ones) changes the index, and
    the next small reads see the new chunks; h5py reads the same after close."""
    p = tmp_path / "f.h5"
    nchunks = 600
    data = _make(p, kind, nchunks)
    n = nchunks * CHUNK
    two = kind == "btree2"
    rng = np.random.default_rng(7)

    def box(ds, s):
        return ds[s:s + 3, 0] if two else ds[s:s + 3]

    expect = data.copy()
    with purehep.File(p, "r+") as f:
        ds = f["x"]
        for s in rng.integers(0, n - 3, 100).tolist():
            np.testing.assert_array_equal(box(ds, s), expect[s:s + 3])
        if kind == "fixed_array":
            lo, hi = _gap(nchunks)
            new = np.arange(lo, hi, dtype="<i4") * -2
            ds[lo:hi] = new
            expect[lo:hi] = new
        else:
            ds.resize((2 * n, 1) if two else (2 * n,))
            tail = np.arange(n, 2 * n, dtype="<i4") * 7
            ds[n:] = tail.reshape(-1, 1) if two else tail
            expect = np.concatenate([expect, tail])
        for s in rng.integers(0, len(expect) - 3, 200).tolist():
            np.testing.assert_array_equal(box(ds, s), expect[s:s + 3])
    with h5py.File(p, "r") as h:
        got = h["x"][:, 0] if two else h["x"][:]
        np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("driver", [None, "core"])
def test_damaged_leaf(tmp_path, driver):
    """A v1 B-tree leaf with a bad signature (the file read by pread, or in memory): the
    chunks it indexes fail with a FormatError naming the node and its offset; chunks of
    other leaves still read."""
    from purehep.format import btree1
    p = tmp_path / "f.h5"
    data = _make(p, "btree1", 3000)
    with purehep.File(p, "r") as f:
        st = f["x"]._storage.chunked
        ctx, node = st.ctx, btree1.decode_node(st.ctx, st.layout.address, btree1.CHUNK, 2)
        while node.level:
            node = btree1.decode_node(ctx, node.children(ctx)[-1], btree1.CHUNK, 2)
        where = ctx.absolute(node.address)
    raw = bytearray(p.read_bytes())
    raw[where] ^= 0xFF
    p.write_bytes(bytes(raw))
    with purehep.File(p, "r", driver=driver) as f:
        np.testing.assert_array_equal(f["x"][:3], data[:3])
        with pytest.raises(purehep.FormatError, match=f"v1 B-tree node at offset {where}: "
                                                      "bad signature"):
            f["x"][-3:]


@pytest.mark.parametrize("memory", [False, True])
def test_read_small_checks_bounds(tmp_path, memory):
    from purehep.io.source import BytesSource, FileSource
    p = tmp_path / "b.bin"
    p.write_bytes(bytes(range(100)))
    src = BytesSource(p.read_bytes()) if memory else FileSource(p)
    try:
        assert src.read_small(90, 10) == bytes(range(90, 100))
        with pytest.raises(purehep.TruncatedError, match="node"):
            src.read_small(95, 10, "node")
    finally:
        src.close()


def test_node_that_points_to_itself(tmp_path):
    """A v1 B-tree root whose first child is the root itself: the cached root met again one
    level down is a FormatError (the level differs), not a loop."""
    from purehep.format import btree1
    p = tmp_path / "f.h5"
    _make(p, "btree1", 3000)
    with purehep.File(p, "r") as f:
        st = f["x"]._storage.chunked
        ctx, root = st.ctx, st.layout.address
        node = btree1.decode_node(ctx, root, btree1.CHUNK, 2)
        assert node.level > 0
        child0 = ctx.absolute(root) + 8 + 2 * ctx.sizeof_offsets + btree1.key_size(
            ctx, btree1.CHUNK, 2)
    raw = bytearray(p.read_bytes())
    raw[child0:child0 + 8] = root.to_bytes(8, "little")
    with purehep.File(bytes(raw), "r") as f:
        with pytest.raises(purehep.FormatError, match="node level .*, expected"):
            f["x"][:3]


@pytest.mark.parametrize("kind", ["btree1", "btree2"])
def test_sequential_reads_through_every_leaf(tmp_path, kind):
    """Reads one element apart, the whole dataset through (each key first looked for in
    the leaf found last, then the tree descended when it lies outside), across the
    unallocated gap, equal h5py's."""
    p = tmp_path / "f.h5"
    _make(p, kind, 900)
    with h5py.File(p, "r") as h, purehep.File(p, "r") as f:
        expect = h["x"][:, 0] if kind == "btree2" else h["x"][:]
        ds = f["x"]
        for s in range(0, len(expect) - 2):
            got = ds[s:s + 3, 0] if kind == "btree2" else ds[s:s + 3]
            np.testing.assert_array_equal(got, expect[s:s + 3])
        for s in range(len(expect) - 3, -1, -5):     # and backwards
            got = ds[s:s + 3, 0] if kind == "btree2" else ds[s:s + 3]
            np.testing.assert_array_equal(got, expect[s:s + 3])


@pytest.mark.parametrize("kind", ["btree1", "btree2"])
def test_four_byte_addresses(tmp_path, kind):
    """Files with 4-byte addresses and lengths: node records whose fields are not all
    8-byte aligned (unpacked by struct, not viewed), and a filtered v2 B-tree (type 11
    records with a chunk size field); small reads equal h5py's."""
    p = tmp_path / "f.h5"
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_sizes(4, 4)
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    if kind == "btree2":
        fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    n = 12000
    with h5py.File(h5py.h5f.create(str(p).encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl,
                                   fapl=fapl)) as f:
        shape, chunks = ((n, 1), (CHUNK, 1)) if kind == "btree2" else ((n,), (CHUNK,))
        ds = f.create_dataset("x", shape=shape, dtype="<i4", chunks=chunks,
                              maxshape=(None,) * len(shape),
                              compression="gzip" if kind == "btree2" else None)
        data = np.arange(n, dtype="<i4").reshape(shape)
        ds[:n // 3] = data[:n // 3]
        ds[2 * n // 3:] = data[2 * n // 3:]
    rng = np.random.default_rng(4)
    with h5py.File(p, "r") as h, purehep.File(p, "r") as f:
        assert f["x"]._storage.chunked.ctx.sizeof_offsets == 4
        for s in rng.integers(0, n - 3, 300).tolist():
            sel = (slice(s, s + 3), 0) if kind == "btree2" else slice(s, s + 3)
            np.testing.assert_array_equal(f["x"][sel], h["x"][sel])
