"""Pickling purehep objects: a Dataset, Group or File of a file opened read-only by path
pickles as what reopens it (in another process too) and reads as h5py reads the file;
objects that cannot be reopened refuse, as h5py's refuse every pickle."""
import io
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import purehep
from purehep.hl.reopen import close_shared

h5py = pytest.importorskip("h5py")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "p.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("g/x", data=np.arange(600).reshape(20, 30), chunks=(4, 7),
                         compression="gzip")
        f["g/y"] = np.linspace(0, 1, 9)
    yield p
    close_shared()       # the shared opens hold a lock on the file


def test_objects_round_trip(path):
    with h5py.File(path, "r") as f:
        x, y = f["g/x"][()], f["g/y"][()]
    with purehep.File(path, rdcc_nbytes=0) as f:
        ds, group = pickle.loads(pickle.dumps(f["g/x"])), pickle.loads(pickle.dumps(f["g"]))
        again = pickle.loads(pickle.dumps(f))
    assert np.array_equal(ds[()], x) and np.array_equal(group["y"][()], y)
    assert ds.name == "/g/x" and group.name == "/g" and again.filename == path
    assert ds.file is group.file is again      # one open per process, options kept
    assert again._rdcc_nbytes == 0 and again.mode == "r"


def test_unpickled_in_another_process(path):
    with h5py.File(path, "r") as f:
        expected = f["g/x"][3:17, 2:29]
    with purehep.File(path) as f:
        blob = pickle.dumps(f["g/x"])
    code = ("import pickle, sys, numpy as np; ds = pickle.loads(sys.stdin.buffer.read()); "
            "np.save(sys.stdout.buffer, ds[3:17, 2:29])")
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True,
                         cwd=ROOT, check=True).stdout
    assert np.array_equal(np.load(io.BytesIO(out)), expected)


def test_rewritten_file_is_opened_again(path):
    with purehep.File(path) as f:
        blob = pickle.dumps(f["g/y"])
    first = pickle.loads(blob)
    assert np.array_equal(first[()], np.linspace(0, 1, 9))
    with h5py.File(path + ".new", "w") as f:      # replaced, as writers replace files
        f["g/y"] = np.arange(5.0)
    os.replace(path + ".new", path)
    assert np.array_equal(pickle.loads(blob)[()], np.arange(5.0))
    assert np.array_equal(first[()], np.linspace(0, 1, 9))      # the old one still reads


@pytest.mark.parametrize("how", ["write", "buffer", "closed"])
def test_refused(path, how):
    if how == "write":
        f = purehep.File(path, "a")
    else:
        with open(path, "rb") as fh:
            f = purehep.File(fh.read() if how == "buffer" else path)
    obj = f["g/x"]
    if how == "closed":
        f.close()
    with pytest.raises(TypeError):
        pickle.dumps(obj)
    with pytest.raises(TypeError):
        pickle.dumps(f)
    f.close()
