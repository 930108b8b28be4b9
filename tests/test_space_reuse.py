"""The raw data of a dataset created and unlinked in one session, before anything was flushed,
is free again at once (libhdf5 frees an object when its last link and last open handle go):
a dataset replaced in a loop takes its predecessor's place, so the file stays as small as
h5py's. An open handle keeps the unlinked dataset's data, for linking it again as h5py
allows; hard links elsewhere keep it too. Files are read back by h5py."""
import os

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402

N = 50_000                   # float64: 400 kB a dataset


def _replace_in_loop(lib, path, times, **kw):
    with lib.File(path, "w") as f:
        for i in range(times):
            if "x" in f:
                del f["x"]
            f.create_dataset("x", data=np.arange(N, dtype="f8") + i, **kw)
    return os.path.getsize(path)


@pytest.mark.parametrize("kw", [{}, {"chunks": (5000,)}, {"chunks": (5000,), "compression": "gzip"},
                                {"chunks": (5000,), "maxshape": (None,)}])
def test_dataset_replaced_in_a_loop_reuses_its_space(tmp_path, kw):
    ours = _replace_in_loop(purehep, tmp_path / "p.h5", 20, **kw)
    theirs = _replace_in_loop(h5py, tmp_path / "h.h5", 20, **kw)
    once = _replace_in_loop(purehep, tmp_path / "once.h5", 1, **kw)
    assert ours <= max(1.25 * theirs, once + 64 * 1024), (ours, theirs, once)
    with h5py.File(tmp_path / "p.h5") as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(N, dtype="f8") + 19)


def test_sparse_dataset_replaced_in_a_loop_reuses_its_space(tmp_path):
    def run(times):
        path = tmp_path / f"s{times}.h5"
        with purehep.File(path, "w") as f:
            for i in range(times):
                if "s" in f:
                    del f["s"]
                ds = f.create_dataset("s", (2000, 2000), "f8", chunks=(500, 500), sparse=True)
                ds[::7, ::3] = i + 1.0
        return os.path.getsize(path)
    assert run(10) < run(1) + 256 * 1024


def test_an_open_handle_keeps_an_unlinked_dataset(tmp_path):
    """h5py: an unlinked dataset stays while open, and can be linked again."""
    for lib in (purehep, h5py):
        path = tmp_path / f"{lib.__name__}.h5"
        with lib.File(path, "w") as f:
            d = f.create_dataset("x", data=np.arange(N, dtype="f8"))
            del f["x"]
            for i in range(3):                # space that would be reused if it were free
                f[f"y{i}"] = np.full(N, -1.0 - i)
            f["again"] = d
            f.flush()
            f["z"] = np.full(N, 5.0)
        with h5py.File(path) as f:
            np.testing.assert_array_equal(f["again"][...], np.arange(N, dtype="f8"))
            for i in range(3):
                np.testing.assert_array_equal(f[f"y{i}"][...], np.full(N, -1.0 - i))
            np.testing.assert_array_equal(f["z"][...], np.full(N, 5.0))


def test_a_closed_handle_lets_the_space_go(tmp_path):
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        for i in range(10):
            d = f.create_dataset(f"x{i}", data=np.arange(N, dtype="f8"))
            del f[f"x{i}"]
            del d
        f["last"] = np.arange(N, dtype="f8")
    assert os.path.getsize(path) < 2.5 * N * 8
    with h5py.File(path) as f:
        assert list(f) == ["last"]
        np.testing.assert_array_equal(f["last"][...], np.arange(N, dtype="f8"))


def test_members_of_an_unlinked_group_linked_elsewhere_stay(tmp_path):
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        g = f.create_group("g")
        g["a"] = np.arange(N, dtype="f8")
        g["b"] = np.ones(N)
        f["keep"] = g["a"]
        del g
        del f["g"]
        for i in range(3):
            f[f"y{i}"] = np.full(N, 7.0 + i)
    with h5py.File(path) as f:
        assert sorted(f) == ["keep", "y0", "y1", "y2"]
        np.testing.assert_array_equal(f["keep"][...], np.arange(N, dtype="f8"))
        for i in range(3):
            np.testing.assert_array_equal(f[f"y{i}"][...], np.full(N, 7.0 + i))
    assert os.path.getsize(path) < 5.5 * N * 8


def test_chunks_cut_off_by_a_resize_are_reused(tmp_path):
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        d = f.create_dataset("x", (0,), "f8", chunks=(5000,), maxshape=(None,))
        for i in range(10):
            d.resize((N,))
            d[...] = np.arange(N, dtype="f8") + i
            d.resize((5000,))
    with h5py.File(path) as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(5000, dtype="f8") + 9)
    assert os.path.getsize(path) < 2.5 * N * 8
