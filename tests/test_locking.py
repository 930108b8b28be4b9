"""File locking as libhdf5 does it (issue 12): a file open for writing in one process cannot
be opened by another, purehep or h5py, in either direction; readers share; ``locking=False``
and ``HDF5_USE_FILE_LOCKING=FALSE`` turn the locks off."""
import os
import subprocess
import sys

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402

HOLD = """
import sys, numpy as np
import {lib} as lib
f = lib.File(sys.argv[1], sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
f.close()
"""
TRY = """
import sys, h5py
try:
    h5py.File(sys.argv[1], sys.argv[2]).close()
    print("opened")
except OSError as exc:
    print("OSError", exc)
"""


class Holder:
    """A child process holding ``path`` open in ``mode`` with ``lib`` until closed."""

    def __init__(self, lib, path, mode):
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD.format(lib=lib), path, mode],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"

    def close(self):
        self.proc.communicate("\n", timeout=60)


def h5py_opens(path, mode, env=None):
    out = subprocess.run([sys.executable, "-c", TRY, path, mode], capture_output=True,
                         text=True, timeout=60, env=env)
    return out.stdout.strip().split(" ", 1)


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "f.h5")
    with h5py.File(p, "w") as f:
        f["x"] = np.arange(3)
    return p


@pytest.mark.parametrize("holder_mode", ["w", "r+"])
def test_purehep_refused_while_h5py_writes(path, holder_mode):
    size = os.path.getsize(path)
    held = Holder("h5py", path, holder_mode)
    try:
        for mode in ("w", "r+", "a", "r"):
            with pytest.raises(OSError):
                purehep.File(path, mode)
        if holder_mode == "r+":
            assert os.path.getsize(path) == size             # the refused 'w' cut nothing
            purehep.File(path, "r", locking=False).close()   # asked not to lock
    finally:
        held.close()
    with purehep.File(path, "r+") as f:                      # free again
        assert ("x" in f) == (holder_mode == "r+")


@pytest.mark.parametrize("holder_mode", ["w", "a"])
def test_h5py_refused_while_purehep_writes(path, holder_mode):
    held = Holder("purehep", path, holder_mode)
    try:
        for mode in ("r+", "r"):
            assert h5py_opens(path, mode)[0] == "OSError", mode
        env = dict(os.environ, HDF5_USE_FILE_LOCKING="FALSE")
        assert h5py_opens(path, "r", env) == ["opened"]
        # last: libhdf5 opens with O_TRUNC before it tries the lock, so its refused 'w'
        # still empties the file (purehep locks first and truncates only once it holds it)
        assert h5py_opens(path, "w")[0] == "OSError"
    finally:
        held.close()
    assert h5py_opens(path, "w") == ["opened"]


def test_readers_share(path):
    held = Holder("h5py", path, "r")
    try:
        with purehep.File(path, "r") as f:
            assert f["x"][()].tolist() == [0, 1, 2]
        with pytest.raises(OSError):
            purehep.File(path, "r+")
    finally:
        held.close()


def test_same_process(path):
    with purehep.File(path, "r+"):
        with pytest.raises(OSError):
            purehep.File(path, "w")                          # a second writer
        with purehep.File(path, "r") as g:                   # a reader shares the file
            assert g["x"][()].tolist() == [0, 1, 2]
