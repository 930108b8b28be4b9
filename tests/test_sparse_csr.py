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
]


def _matrix(shape, density, dtype, seed=3):
    rng = np.random.default_rng(seed)
    n = int(round(shape[0] * shape[1] * density))
    lin = np.sort(rng.choice(shape[0] * shape[1], n, replace=False))
    rows, cols = np.unravel_index(lin, shape)
    values = (rng.integers(1, 100, n) * (1 if np.dtype(dtype).kind != "f" else 0.25))
    return rows, cols, values.astype(dtype)


@pytest.fixture(params=["kernel", "general"])
def path_kind(request, monkeypatch):
    """Each case through the gathering kernel (when numba is there) and the general path."""
    if request.param == "general":
        monkeypatch.setattr(csr, "_plan", lambda st, order: None)
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
