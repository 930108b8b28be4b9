"""A whole 2-D sparse dataset read into scipy CSR / COO (chunks/structured_csr.py): the gathering
kernel and the general path both give exactly scipy's canonical CSR of the matrix written,
which is also what h5py reads back from the same matrix stored as CSR datasets; every
density, chunk shape (edge chunks, empty chunks), filter and dtype; checksums verified."""
import struct

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

import purehep
from purehep.errors import ChecksumError
from purehep.chunks import structured_csr as csr

CASES = [  # shape, chunks, density, dtype, filters
    ((53, 47), (10, 8), 0.05, "f8", {}),
    ((53, 47), (10, 8), 0.0, "f8", {}),
    ((40, 61), (7, 60), 0.3, "<i4", {}),
    ((300, 200), (32, 32), 0.01, ">f4", {}),              # most chunks empty
    ((20, 30), (20, 30), 1.0, "u2", {}),                  # every element: an "all" chunk
    ((64, 64), (16, 16), 0.2, "f8", {"compression": "gzip"}),
    ((64, 64), (16, 16), 0.2, "i8", {"section_filters": {0: "gzip"}}),
    ((1, 500), (1, 64), 0.1, "f8", {}),
    ((500, 3), (64, 3), 0.5, "i1", {}),
    ((3, 70_000), (2, 66_000), 0.01, "f8", {}),           # 4-byte coordinates, edge chunks
]


def _matrix(shape, density, dtype, seed=3):
    rng = np.random.default_rng(seed)
    n = int(round(shape[0] * shape[1] * density))
    lin = np.sort(rng.choice(shape[0] * shape[1], n, replace=False))
    rows, cols = np.unravel_index(lin, shape)
    values = (rng.integers(1, 100, n) * (1 if np.dtype(dtype).kind != "f" else 0.25))
    return rows, cols, values.astype(dtype)


@pytest.fixture(params=["kernel", "numpy", "general"])
def path_kind(request, monkeypatch):
    """Each case through the gathering kernel (when numba is there), its numpy form and the
    general path."""
    if request.param == "general":
        monkeypatch.setattr(csr, "_parsed", lambda *args: None)
    elif request.param == "numpy":
        monkeypatch.setattr(csr, "_gathered", csr._vectorised)
    else:
        monkeypatch.setattr(csr, "_POINT_SECONDS", 1.0)     # worth the loop at any size
    return request.param


@pytest.mark.parametrize("shape, chunks, density, dtype, filters", CASES)
def test_csr_equals_scipy_and_h5py_csr(tmp_path, path_kind, shape, chunks, density, dtype,
                                       filters):
    rows, cols, values = _matrix(shape, density, dtype)
    expected = sp.csr_array((values.astype(values.dtype.newbyteorder("=")), (rows, cols)),
                            shape=shape)
    with purehep.File(tmp_path / "s.h5", "w", libver="latest") as f:
        f.create_dataset("x", shape, dtype, chunks=chunks, sparse=True, **filters) \
            .write_sparse(np.stack([rows, cols], axis=1), values)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f["data"], f["indices"], f["indptr"] = expected.data, expected.indices, expected.indptr
    with h5py.File(tmp_path / "c.h5") as f:
        oracle = sp.csr_array((f["data"][...], f["indices"][...], f["indptr"][...]),
                              shape=shape)
    with purehep.File(tmp_path / "s.h5") as f:
        got, coo, dense = f["x"].csr_array(), f["x"].coo_array(), f["x"][...]
    assert got.has_sorted_indices and got.dtype == np.dtype(dtype).newbyteorder("=")
    for want in (expected, oracle):
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
    np.testing.assert_array_equal(got.toarray(), dense)
    np.testing.assert_array_equal(coo.row, rows)
    np.testing.assert_array_equal(coo.col, cols)
    np.testing.assert_array_equal(coo.data, values)


def test_points_past_a_shrunk_extent_are_left_out(tmp_path, path_kind):
    with purehep.File(tmp_path / "r.h5", "w", libver="latest") as f:
        ds = f.create_dataset("r", (9, 9), "f8", chunks=(4, 4), maxshape=(None, None),
                              sparse=True)
        ds.write_sparse([[1, 1], [2, 7], [6, 2], [8, 8]], [1.0, 2.0, 3.0, 4.0])
        ds.resize((7, 5))
    with purehep.File(tmp_path / "r.h5") as f:
        got = f["r"].csr_array()
        np.testing.assert_array_equal(got.toarray(), f["r"][...])
        assert got.nnz == 2


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("ordered", [True, False])
def test_point_lists_of_other_writers(tmp_path, path_kind, version, ordered):
    """A chunk listing its points in a version 1 list, or out of row-major order (as
    another writer may), gives the same canonical CSR."""
    from purehep.format import selection as S
    from purehep.kernels.checksum import lookup3
    from purehep.format import sparse_sections as chunkcodec
    points = np.array([[3, 1], [0, 2], [2, 0], [0, 0]], np.int64)
    if ordered:
        points = points[np.lexsort(points.T[::-1])]
    sel = S.Selection(S.POINTS, version, 2, points=points, encode_size=2)
    section0 = chunkcodec.encode_section0(None, (4, 4), sel)
    section0 += struct.pack("<I", lookup3(section0))
    values = np.array([1.5, 2.5, 3.5, 4.5])
    with purehep.File(tmp_path / "u.h5", "w", libver="latest") as f:
        ds = f.create_dataset("u", (8, 8), "f8", chunks=(4, 4), sparse=True)
        ds.write_struct_chunk((4, 4), [section0, values.tobytes()])
        ds.write_sparse([[0, 5]], [9.0])
    with purehep.File(tmp_path / "u.h5") as f:
        got = f["u"].csr_array()
    expected = sp.csr_array((np.append(values, 9.0), (np.append(points[:, 0] + 4, 0),
                                                      np.append(points[:, 1] + 4, 5))),
                            shape=(8, 8))
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.data, expected.data)


def test_corrupt_section0_checksum(tmp_path, path_kind):
    path = tmp_path / "k.h5"
    with purehep.File(path, "w", libver="latest") as f:
        f.create_dataset("x", (16, 16), "f8", chunks=(8, 8), sparse=True) \
            .write_sparse([[1, 2], [9, 9], [15, 0]], [1.0, 2.0, 3.0])
    with purehep.File(path) as f:
        info = next(f["x"].struct_chunk_iter())
    with open(path, "r+b") as fh:
        fh.seek(info.address + info.section_offsets[1] - 5)     # last byte before the sum
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with purehep.File(path) as f:
        with pytest.raises(ChecksumError):
            f["x"].csr_array()


def _stored(path, shape, chunks, density, dtype, seed=3, resize=None):
    rows, cols, values = _matrix(shape, density, dtype, seed)
    with purehep.File(path, "w", libver="latest") as f:
        ds = f.create_dataset("x", shape, dtype, chunks=chunks, sparse=True,
                              maxshape=(None, None))
        ds.write_sparse(np.stack([rows, cols], axis=1), values)
        if resize:
            ds.resize(resize)


def _csr_parts(a):
    return a.indptr.tolist(), a.indices.tolist(), a.data.tolist(), a.indptr.dtype


@pytest.mark.parametrize("shape, chunks, density, dtype, resize", [
    ((203, 157), (16, 20), 0.05, "<f8", None),      # edge chunks on both axes
    ((203, 157), (16, 20), 0.03, ">i2", (150, 101)),  # points past a shrunk extent
    ((64, 300), (8, 7), 0.08, "u1", None),          # rows spanning many chunk columns
    ((300, 200), (32, 32), 0.002, "f4", (297, 131)),  # mostly empty chunks and bands
])
def test_threads_and_sources_give_the_same_csr(tmp_path, monkeypatch, shape, chunks, density,
                                              dtype, resize):
    """Rows of chunks split among several threads (one band each at most), from the mapped
    file and from chunks read into a buffer (a file object): the same arrays as one thread
    and as the general path, and as scipy's CSR of what the dataset reads densely (every
    chunk a point list: the kernel runs whenever numba is there)."""
    path = tmp_path / "t.h5"
    _stored(path, shape, chunks, density, dtype, resize=resize)
    monkeypatch.setattr(csr, "_POINT_SECONDS", 1.0)
    monkeypatch.setattr(csr, "_TASK_POINTS", 1)
    general_calls = []
    general = csr._general
    monkeypatch.setattr(csr, "_general", lambda st: general_calls.append(1) or general(st))
    got = []
    for threads in (1, 2, 5):
        with purehep.File(path, threads=threads) as f:
            got.append(_csr_parts(f["x"].csr_array()))
            dense = f["x"][...]
        with open(path, "rb") as fh, purehep.File(fh, threads=threads) as f:
            got.append(_csr_parts(f["x"].csr_array()))
    assert not general_calls      # (the loop kernel, or without numba the numpy form)
    monkeypatch.setattr(csr, "_parsed", lambda *args: None)
    with purehep.File(path) as f:
        via_general = _csr_parts(f["x"].csr_array())
    want = _csr_parts(sp.csr_array(dense.astype(dense.dtype.newbyteorder("="))))
    for parts in got:
        assert parts[:3] == want[:3] == via_general[:3]
        assert parts[3] == np.int32


def test_chunks_out_of_file_order_and_apart(tmp_path, monkeypatch):
    """Chunks written bottom rows first, with other data between them (each task's chunks
    then lie in several runs, not in file order): the kernel path, on several threads, gives
    the arrays scipy makes of the dense read."""
    path = tmp_path / "o.h5"
    rows, cols, values = _matrix((120, 90), 0.05, "<f8")
    with purehep.File(path, "w", libver="latest") as f:
        ds = f.create_dataset("x", (120, 90), "f8", chunks=(10, 30), sparse=True)
        for top in range(110, -10, -10):
            band = (rows >= top) & (rows < top + 10)
            ds.write_sparse(np.stack([rows[band], cols[band]], axis=1), values[band])
            f.flush()
            f[f"pad{top}"] = np.arange(700.0)       # 5.6 KB between rows of chunks
    monkeypatch.setattr(csr, "_POINT_SECONDS", 1.0)
    monkeypatch.setattr(csr, "_TASK_POINTS", 1)
    general = csr._general
    calls = []
    monkeypatch.setattr(csr, "_general", lambda st: calls.append(1) or general(st))
    want = _csr_parts(sp.csr_array((values, (rows, cols)), shape=(120, 90)))
    for threads in (1, 3):
        with purehep.File(path, threads=threads) as f:
            assert _csr_parts(f["x"].csr_array())[:3] == want[:3]
    assert not calls


def test_corrupt_checksum_found_by_any_thread(tmp_path, monkeypatch):
    """A section 0 checksum mismatch in a later row of chunks (another thread's) is raised
    by the kernel path, naming that chunk, before its coordinates are used (the corrupted
    column lies outside the chunk); a file opened with verify_checksums=False is read by
    the general path's rules (nothing verified: the bad point makes it fall back)."""
    path = tmp_path / "k.h5"
    _stored(path, (64, 64), (8, 8), 0.1, "f8")
    with purehep.File(path) as f:
        info = [i for i in f["x"].struct_chunk_iter() if i.offset == (56, 8)][0]
    with open(path, "r+b") as fh:
        fh.seek(info.address + info.section_offsets[1] - 5)   # last column's high byte
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0x01]))
    monkeypatch.setattr(csr, "_POINT_SECONDS", 1.0)
    monkeypatch.setattr(csr, "_TASK_POINTS", 1)
    general = csr._general
    calls = []
    monkeypatch.setattr(csr, "_general", lambda st: calls.append(1) or general(st))
    with purehep.File(path, threads=4) as f:
        with pytest.raises(ChecksumError, match="section 0 checksum") as err:
            f["x"].csr_array()
    assert "(56, 8)" in str(err.value)
    assert not calls
    with purehep.File(path, threads=4, verify_checksums=False) as f:
        with pytest.raises(purehep.errors.FormatError, match="outside the chunk"):
            f["x"].csr_array()


def test_plain_python_kernel_matches(tmp_path, monkeypatch):
    """The kernel's plain-Python form (what runs without numba when called) gives the same
    CSR arrays as the general path, edge chunks and several threads included."""
    from purehep.kernels import sparse as K
    path = tmp_path / "p.h5"
    _stored(path, (45, 38), (8, 10), 0.06, "<f4", resize=(41, 33))
    monkeypatch.setattr(K, "points_csr", K.points_csr.plain)
    monkeypatch.setattr(csr, "_TASK_POINTS", 1)
    with purehep.File(path, threads=3) as f:
        st = f["x"]._sparse_storage()
        t = st.table
        order = np.lexsort((t.scaled[:, 1], t.scaled[:, 0]))
        sizes = t.sizes[order].astype(np.int64)
        sec1 = t.offsets[order, 0].astype(np.int64)
        got = csr._gathered(st, order, sizes, sec1, (sizes - sec1) // st.dtype.itemsize)
        assert got is not None
        want = csr._general(st)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_userblock_buffer_and_scratch_bound(tmp_path, monkeypatch):
    """A file with a user block (chunk addresses relative to the base address), read from
    the path and from bytes in memory; and a dataset whose kernel scratch (per chunk and
    row of a row of chunks) would pass the bound, which takes the general path: the same
    CSR arrays."""
    path = tmp_path / "u.h5"
    rows, cols, values = _matrix((90, 70), 0.01, "f8")
    with purehep.File(path, "w", libver="latest", userblock_size=512) as f:
        f.create_dataset("x", (90, 70), "f8", chunks=(20, 16), sparse=True) \
            .write_sparse(np.stack([rows, cols], axis=1), values)
    want = sp.csr_array((values, (rows, cols)), shape=(90, 70))
    monkeypatch.setattr(csr, "_POINT_SECONDS", 1.0)
    with purehep.File(path) as f:
        got = [f["x"].csr_array()]
    with purehep.File(path.read_bytes()) as f:
        got.append(f["x"].csr_array())
    monkeypatch.setattr(csr, "SCRATCH_BYTES", 0)
    general = csr._general
    calls = []
    monkeypatch.setattr(csr, "_general", lambda st: calls.append(1) or general(st))
    with purehep.File(path) as f:
        got.append(f["x"].csr_array())
    from purehep.kernels import sparse as K
    assert bool(calls) == K.points_csr.ready    # (the numpy form has no kernel scratch)
    for a in got:
        np.testing.assert_array_equal(a.indptr, want.indptr)
        np.testing.assert_array_equal(a.indices, want.indices)
        np.testing.assert_array_equal(a.data, want.data)


def test_numpy_form_when_the_loop_does_not_pay(tmp_path, monkeypatch):
    """Where compiling the loop would not pay (or numba is missing), point-list chunks are
    put in CSR order by the numpy form, not the general path: int32 indices as the kernel
    gives them, edge chunks left out, the same arrays as the general path."""
    from purehep.kernels import sparse as K
    path = tmp_path / "n.h5"
    _stored(path, (203, 157), (16, 20), 0.05, "<f8", resize=(190, 150))
    monkeypatch.setattr(K.points_csr, "worth", lambda seconds: False)
    general = csr._general
    calls = []
    monkeypatch.setattr(csr, "_general", lambda st: calls.append(1) or general(st))
    with purehep.File(path) as f:
        got = _csr_parts(f["x"].csr_array())
        want = _csr_parts(sp.csr_array(f["x"][...]))
    assert not calls and got[3] == np.int32
    assert got[:3] == want[:3]
