"""Reading through file objects and range-reading callables fetches only what it needs (the
way remote and embedded readers use purehep); SWMR and unclosed files read what is there."""
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import h5py
import numpy as np
import pytest

import purehep
from compare import same_tree, same_values


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("src") / "big.h5")
    rng = np.random.default_rng(0)
    with h5py.File(path, "w", libver="latest") as f:
        for g in range(10):
            grp = f.create_group(f"g{g}")
            grp.attrs["index"] = g
            for d in range(10):
                ds = grp.create_dataset(f"d{d}", data=rng.random((256, 64)), chunks=(64, 64),
                                        compression="gzip")
                ds.attrs["units"] = "m"
        f["flat"] = np.arange(4 << 20, dtype="f8")  # 32 MiB contiguous
    return path


class CountingReader:
    def __init__(self, path):
        self.data = open(path, "rb").read()
        self.size = len(self.data)
        self.requests = 0
        self.fetched = 0

    def __call__(self, offset, size):
        self.requests += 1
        self.fetched += size
        return self.data[offset:offset + size]


def test_metadata_walk_fetches_a_small_fraction(big_file):
    reader = CountingReader(big_file)
    with purehep.File(reader, block_size=16 * 1024) as f:
        seen = []
        f.visititems(lambda name, obj: seen.append(
            (name, getattr(obj, "shape", None), getattr(obj, "dtype", None), dict(obj.attrs))))
    assert len(seen) == 111
    fraction = reader.fetched / reader.size
    print(f"\nmetadata walk: {reader.requests} requests, {reader.fetched} bytes "
          f"of {reader.size} ({100 * fraction:.2f}%)")
    assert fraction < 0.05


def test_one_slice_fetches_only_its_chunks(big_file):
    reader = CountingReader(big_file)
    with purehep.File(reader, block_size=16 * 1024) as f, h5py.File(big_file, "r") as h:
        before = reader.fetched
        same_values(h["g3/d4"][70:80, 5], f["g3/d4"][70:80, 5])
        same_values(h["flat"][1000:1010], f["flat"][1000:1010])
        assert reader.fetched - before < 256 * 1024


def test_file_object_equals_path(big_file):
    with open(big_file, "rb") as fh, purehep.File(fh) as p, h5py.File(big_file, "r") as h:
        assert same_tree(h, p, data=False) == 111
        same_values(h["g0/d0"][()], p["g0/d0"][()])


SWMR_WRITER = textwrap.dedent("""
    import sys, time, h5py, numpy as np
    path, ready = sys.argv[1], sys.argv[2]
    f = h5py.File(path, "w", libver="latest")
    ds = f.create_dataset("log", shape=(0,), maxshape=(None,), chunks=(100,), dtype="i8")
    f.swmr_mode = True
    for i in range(5):
        ds.resize((100 * (i + 1),))
        ds[100 * i:] = np.arange(100 * i, 100 * (i + 1))
        ds.flush()
    open(ready, "w").close()
    time.sleep(60)
""")


def test_swmr_file_being_written(tmp_path):
    path, ready = str(tmp_path / "swmr.h5"), str(tmp_path / "ready")
    proc = subprocess.Popen([sys.executable, "-c", SWMR_WRITER, path, ready])
    try:
        for _ in range(600):
            if os.path.exists(ready):
                break
            proc.poll()
            assert proc.returncode is None
            import time
            time.sleep(0.05)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with purehep.File(path) as f:
                assert f["log"].shape == (500,)
                assert np.array_equal(f["log"][()], np.arange(500))
        assert any("open for writing" in str(w.message) for w in caught)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # killed without closing: still readable, with the warning
    with pytest.warns(purehep.PurehepWarning):
        with purehep.File(path) as f:
            assert np.array_equal(f["log"][()], np.arange(500))


def test_dimension_scales(tmp_path):
    path = str(tmp_path / "dims.h5")
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(5.0)
        f["y"] = np.arange(3.0)
        f["data"] = np.zeros((3, 5))
        f["x"].make_scale("x")
        f["y"].make_scale("y")
        f["data"].dims[0].attach_scale(f["y"])
        f["data"].dims[1].attach_scale(f["x"])
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        same_tree(h, p)
        refs = p["data"].attrs["DIMENSION_LIST"]
        assert [p[r[0]].name for r in refs] == ["/y", "/x"]
        back = p["x"].attrs["REFERENCE_LIST"]
        assert p[back[0]["dataset"]].name == "/data" and back[0]["dimension"] == 1
