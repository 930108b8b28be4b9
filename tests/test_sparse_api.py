"""The sparse dataset API: ds[sel] = v, write_sparse, defined, read_sparse, erase, nnz,
struct chunk iteration and raw read/write, scipy conversions, errors."""
import numpy as np
import pytest

import purehep
from purehep.errors import ChecksumError


def test_api(tmp_path):
    path = tmp_path / "a.h5"
    with purehep.File(path, "w", libver="latest") as f:
        ds = f.create_dataset("m", (6, 9), "i4", chunks=(3, 4), sparse=True, fillvalue=-7,
                              section_filters={1: "gzip"})
        ds[1, 2:5] = [1, 2, 3]
        ds[4:6, 8] = 9
        ds.write_sparse([[0, 0], [5, 0], [0, 0]], [10, 11, 12])    # last value wins
        assert ds[0, 0] == 12 and ds[3, 3] == -7 and ds.nnz == 7
        np.testing.assert_array_equal(ds.defined(np.s_[4:, :]), [[4, 8], [5, 0], [5, 8]])
        c, v = ds.read_sparse(np.s_[1])
        np.testing.assert_array_equal(c, [[1, 2], [1, 3], [1, 4]])
        np.testing.assert_array_equal(v, [1, 2, 3])
        ds.erase(np.s_[1, 3])
        assert ds[1, 3] == -7 and ds.nnz == 6
        info = {i.offset: i for i in ds.struct_chunk_iter()}
        assert set(info) == {(0, 0), (0, 4), (3, 0), (3, 8)}
        sections, masks = ds.read_struct_chunk((0, 0))
        assert len(sections) == 2 and masks == (0, 0)
        assert ds.read_struct_chunk((3, 4)) is None
        # copy a chunk's raw sections to another position
        ds.write_struct_chunk((3, 4), sections, masks, info[(0, 0)].unfiltered_sizes)
        np.testing.assert_array_equal(ds[3:6, 4:8], ds[0:3, 0:4])
        g = f.create_dataset("g", (4,), "f8", chunks=(2,), sparse=True)
        g.erase()
        assert g.nnz == 0 and np.all(g[...] == 0)
        with pytest.raises(TypeError):
            f.create_dataset("d", data=np.arange(3)).defined()
    with purehep.File(path) as f:
        ds = f["m"]
        assert ds.nnz == 8 and ds.compression == "gzip"
        with pytest.raises(ValueError):
            ds.erase()
        with pytest.raises(ValueError):
            ds.write_sparse([[0, 0]], [1])


def test_resize_and_dense_data(tmp_path):
    path = tmp_path / "r.h5"
    data = np.zeros((5, 5))
    data[1, 1] = data[4, 4] = 2.5
    with purehep.File(path, "w", libver="latest") as f:
        ds = f.create_dataset("r", data=data, chunks=(2, 2), maxshape=(None, 5), sparse=True)
        assert ds.nnz == 2
        ds.resize((8, 5))
        ds[7, 0] = 1
        ds.resize((4, 5))
    with purehep.File(path) as f:
        np.testing.assert_array_equal(f["r"].defined(), [[1, 1]])
        assert f["r"].shape == (4, 5)


def test_scipy_roundtrip(tmp_path):
    sp = pytest.importorskip("scipy.sparse")
    m = sp.random(40, 30, density=0.1, format="csr", random_state=1)
    path = tmp_path / "s.h5"
    with purehep.File(path, "w", libver="latest") as f:
        f.create_dataset("x", m.shape, "f8", chunks=(16, 16), sparse=True).write_sparse(m)
    with purehep.File(path) as f:
        csr = f["x"].csr_array()
        assert (abs(csr - m)).max() == 0
        assert f["x"].coo_array(np.s_[0:10, :]).shape == (10, 30)


def test_corrupt_checksum_names_chunk(tmp_path):
    path = tmp_path / "c.h5"
    with purehep.File(path, "w", libver="latest") as f:
        f.create_dataset("x", (8,), "f8", chunks=(4,), sparse=True)[5] = 1.0
    with purehep.File(path) as f:
        info = next(f["x"].struct_chunk_iter())
    with open(path, "r+b") as fh:
        fh.seek(info.address + 3)
        fh.write(b"\x77")
    with purehep.File(path) as f:
        with pytest.raises(ChecksumError, match=r"structured chunk at \(4,\)"):
            f["x"][...]


@pytest.mark.parametrize("index", ["fixed_array", "extensible_array", "btree2"])
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_modify_mode(tmp_path, index, compression):
    """Sparse datasets change in r+ mode (elements defined and erased, chunks added, the
    extent grown) and are created there; untouched chunks stay where they were."""
    import subprocess
    import sys
    import h5py
    p = tmp_path / "m.h5"
    maxshape = {"fixed_array": None, "extensible_array": (None, 60),
                "btree2": (None, None)}[index]
    with purehep.File(p, "w", libver="latest") as f:
        ds = f.create_dataset("s", shape=(60, 60), dtype="<i4", chunks=(10, 10), sparse=True,
                              maxshape=maxshape, compression=compression, fillvalue=-1)
        ds[5, 7] = 3
        ds[50:52, 1] = 2
        ds[25, 25] = 1                           # a chunk the session leaves alone
        f["plain"] = np.arange(4)
    with purehep.File(p) as f:
        kept = f["s"]._storage.sparse.chunk_info()
        kept = {tuple(o): a for o, a in zip(kept["offsets"].tolist(), kept["addresses"])}
    with purehep.File(p, "r+") as f:
        ds = f["s"]
        ds[5, 8] = 4
        ds[55, 55] = 9
        ds.erase(np.s_[50, 1])
        if maxshape is not None:
            ds.resize((70, 60))
            ds[65, 3] = 7
        new = f.create_dataset("t", shape=(20,), dtype="f8", chunks=(5,), sparse=True)
        new[[2, 17]] = [1.5, 2.5]
    expect = {(5, 7): 3, (5, 8): 4, (25, 25): 1, (51, 1): 2, (55, 55): 9}
    if maxshape is not None:
        expect[(65, 3)] = 7
    with purehep.File(p) as f:
        coords, values = f["s"].read_sparse()
        assert dict(zip(map(tuple, coords.tolist()), values.tolist())) == expect
        assert f["s"][50, 1] == -1 and f["s"].shape == ((70, 60) if maxshape else (60, 60))
        assert f["t"].read_sparse()[1].tolist() == [1.5, 2.5]
        info = f["s"]._storage.sparse.chunk_info()
        now = {tuple(o): a for o, a in zip(info["offsets"].tolist(), info["addresses"])}
        assert now[(50, 0)] != kept[(50, 0)] and now[(0, 0)] != kept[(0, 0)]
        assert now[(20, 20)] == kept[(20, 20)]
    with h5py.File(p) as h:                      # the rest of the file is intact for h5py
        assert h["plain"][()].tolist() == [0, 1, 2, 3]
    run = subprocess.run([sys.executable, "-m", "purehep", "check", str(p)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
