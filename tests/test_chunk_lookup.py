"""Chunk lookups without decoding the whole index (ChunkedStorage.record_at before the table
is decoded): every index kind, deep trees and paged arrays, against the decoded table and
h5py's reads."""
import h5py
import numpy as np
import pytest

import purehep

from test_chunked import open_storage


def _implicit(p, name, data, chunks):
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    fid = h5py.h5f.create(str(p).encode(), h5py.h5f.ACC_TRUNC, fapl=fapl)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    tid = h5py.h5t.py_create(data.dtype)
    dsid = h5py.h5d.create(fid, name.encode(), tid, h5py.h5s.create_simple(data.shape),
                           dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
    del dsid
    fid.close()


CASES = {
    # name: (libver, create kwargs, shape); sparse writes leave chunks unallocated
    "btree1_deep": ("earliest", dict(chunks=(3,)), (20000,)),
    "btree1_2d_gz": ("earliest", dict(chunks=(3, 4), compression="gzip", shuffle=True),
                     (300, 70)),
    "fixed_paged": ("latest", dict(chunks=(2,)), (9000,)),
    "fixed_gz_2d": ("latest", dict(chunks=(3, 5), compression="gzip", fletcher32=True),
                    (200, 100)),
    "ea_deep": ("latest", dict(chunks=(2,), maxshape=(None,)), (40000,)),
    "ea_2d_gz": ("latest", dict(chunks=(4, 3), maxshape=(50, None), compression="gzip"),
                 (50, 2000)),
    "bt2": ("latest", dict(chunks=(3, 2), maxshape=(None, None)), (300, 120)),
    "bt2_gz": ("latest", dict(chunks=(5, 5, 2), maxshape=(None, None, 10),
                              compression="gzip"), (60, 40, 10)),
    "single": ("latest", dict(chunks=(30, 20), compression="gzip"), (30, 20)),
}


@pytest.fixture(scope="module")
def lookup_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("lookup") / "f.h5"
    rng = np.random.default_rng(11)
    for name, (libver, kw, shape) in CASES.items():
        mode = "w" if name == "btree1_deep" else "a"
        with h5py.File(p, mode, libver=libver) as f:
            data = rng.integers(-10**6, 10**6, shape).astype("<i4")
            ds = f.create_dataset(name, shape=shape, dtype="<i4", fillvalue=-7, **kw)
            # leave some chunks unallocated: skip a band of the first dimension
            cut = shape[0] // 3
            ds[:cut] = data[:cut]
            ds[2 * cut:] = data[2 * cut:]
    _implicit(p.with_name("implicit.h5"), "implicit", np.arange(5000 * 3, dtype="<i4").reshape(
        5000, 3), (7, 2))
    return p


@pytest.mark.parametrize("name", list(CASES) + ["implicit"])
def test_record_at_matches_table(lookup_file, name):
    p = lookup_file.with_name("implicit.h5") if name == "implicit" else lookup_file
    st = open_storage(p, name)
    grid = st.grid
    rng = np.random.default_rng(1)
    positions = {tuple(int(rng.integers(0, g)) for g in grid) for _ in range(300)}
    positions |= {tuple(0 for _ in grid), tuple(g - 1 for g in grid)}
    got = {pos: st.record_at(pos) for pos in positions}     # the lookup path
    assert st._table is None                                 # nothing decoded the index
    t = st.table
    for pos, rec in got.items():
        row = st.row_at(pos, grid)
        expect = None if row < 0 else (int(t.addresses[row]), int(t.sizes[row]),
                                       int(t.masks[row]))
        assert rec == expect, pos
    assert any(r is None for r in got.values()) == (name not in ("implicit", "single"))


@pytest.mark.parametrize("name", list(CASES) + ["implicit"])
def test_small_reads_match_h5py(lookup_file, name):
    p = lookup_file.with_name("implicit.h5") if name == "implicit" else lookup_file
    rng = np.random.default_rng(2)
    with h5py.File(p, "r") as h, purehep.File(p) as f:
        hd, pd = h[name], f[name]
        for _ in range(60):
            # boxes up to a chunk wide: at most two chunks along each dimension
            lo = [int(rng.integers(0, n)) for n in hd.shape]
            sel = tuple(slice(a, min(n, a + int(rng.integers(1, c + 1)))) for a, n, c in
                        zip(lo, hd.shape, hd.chunks))
            np.testing.assert_array_equal(pd[sel], hd[sel])
            idx = tuple(int(rng.integers(0, n)) for n in hd.shape)
            assert pd[idx] == hd[idx]
        st = pd._storage.chunked
        assert st._table is None
        np.testing.assert_array_equal(pd[()], hd[()])       # a big read decodes the index


def test_damaged_page_fails_alone(tmp_path):
    """A fixed array page whose checksum does not match: reading a chunk it indexes raises
    ChecksumError naming the page; chunks of other pages still read."""
    from purehep.format import fixed_array
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=np.arange(9000, dtype="<i4"), chunks=(2,))
    st = open_storage(p, "x")
    arr = fixed_array.Elements(st.ctx, st.layout.address)
    pn, es = arr.page_n, arr.header.entry_size
    page3 = arr.header.data_block_address + arr.dsize + 3 * (pn * es + 4)
    data = bytearray(p.read_bytes())
    data[st.ctx.absolute(page3) + 5] ^= 0xFF
    with purehep.File(bytes(data)) as f:
        assert f["x"][10:12].tolist() == [10, 11]
        with pytest.raises(purehep.ChecksumError, match="fixed array data block page"):
            f["x"][2 * 3 * pn + 6]


def test_bt2_every_position_in_random_order(tmp_path):
    """Every grid position of a depth-2 v2 B-tree of several level-1 nodes (keys sharing
    first offsets across node boundaries), looked up in random order: from the root, from
    a level-1 node met before (its range of first offsets) or from the leaf searched last,
    as the decoded table says."""
    p = tmp_path / "bt2_deep.h5"
    with h5py.File(p, "w", libver="latest") as f:
        ds = f.create_dataset("x", shape=(100, 200), dtype="<i4", chunks=(1, 1),
                              maxshape=(None, None))
        ds[:] = np.arange(20000, dtype="<i4").reshape(100, 200)
    st = open_storage(p, "x")
    grid = st.grid
    positions = [(a, b) for a in range(grid[0]) for b in range(grid[1])]
    np.random.default_rng(3).shuffle(positions)
    got = [st.record_at(pos) for pos in positions]
    t = st.table
    for pos, rec in zip(positions, got):
        row = st.row_at(pos, grid)
        expect = None if row < 0 else (int(t.addresses[row]), int(t.sizes[row]),
                                       int(t.masks[row]))
        assert rec == expect, pos
