"""A file shortened by another process while purehep has it open for reading: every read
that needs bytes past the new end fails with a TruncatedError (an OSError, as h5py's reads
fail), and the process lives on.

libhdf5 does this to a file it opens with mode "w": it truncates the file, then fails to
take its lock because the file is open elsewhere. A read through a memory map of the file
would touch pages past its end and die of SIGBUS; purehep reads files by pread. Each case
runs in a child process, so that a regression kills the child, not the suite.
"""
import subprocess
import sys

import h5py
import numpy as np
import pytest

READS = {   # name: the read, given the open file f (purehep) and the dataset names
    "contiguous whole": "f['c'][...]",
    "contiguous rows": "f['c'][100_000:100_010]",
    "chunked unfiltered": "f['u'][...]",
    "chunked unfiltered box": "f['u'][150_000:150_004]",
    "chunked gzip": "f['z'][...]",
    "chunked gzip box": "f['z'][150_000:150_004]",
    "sparse csr": "f['s'].csr_array()",
    "group listing": "list(f['g'])",
    "attribute": "f['g'].attrs['a']",
}

CHILD = """
import os, sys, purehep
f = purehep.File(sys.argv[1], "r")
f["u"][:10]                               # the index and the first chunk: read before
for name in f: f[name]                    # the objects opened before the file shrinks
print("opened", flush=True)
sys.stdin.readline()                      # the parent shortens the file meanwhile
try:
    {read}
    print("read")
except purehep.TruncatedError as e:
    assert isinstance(e, OSError)
    print("TruncatedError", e)
try:
    f["u"][:10]                           # the process carries on
    print("still read")
except purehep.TruncatedError:
    print("still TruncatedError")
f.close()
"""


def _write(path):
    import purehep
    with h5py.File(path, "w", libver="latest") as f:
        f["c"] = np.arange(200_000.0)
        f.create_dataset("u", data=np.arange(200_000), chunks=(1000,))
        f.create_dataset("z", data=np.arange(200_000), chunks=(1000,), compression="gzip")
        f.create_group("g").attrs["a"] = np.arange(100)
    rng = np.random.default_rng(1)
    coords = np.unique(rng.integers(0, 400, (3000, 2)), axis=0)
    with purehep.File(path, "a") as f:
        f.create_dataset("s", (400, 400), "f8", chunks=(100, 100), sparse=True) \
            .write_sparse(coords, np.arange(len(coords), dtype="f8"))


@pytest.mark.parametrize("keep", [0, 4096])
@pytest.mark.parametrize("read", list(READS))
def test_read_of_a_shortened_file_fails_cleanly(tmp_path, read, keep):
    path = tmp_path / "f.h5"
    _write(path)
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(read=READS[read]), str(path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "opened\n", child.stderr.read()
        with open(path, "r+b") as fh:      # as libhdf5's open with O_TRUNC does (keep=0)
            fh.truncate(keep)
        out, err = child.communicate("go\n", timeout=300)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0, f"child died ({child.returncode}): {err[-2000:]}"
    lines = out.splitlines()
    if read.startswith(("group", "attribute")) and lines[0] == "read":
        pass      # its metadata was read (and kept) when the file was opened
    else:
        assert lines[0].startswith("TruncatedError"), out
    assert lines[-1].startswith("still"), out


def test_h5py_mode_w_on_an_open_file(tmp_path):
    """The case as users meet it: h5py opening the file with mode "w" while purehep has
    it open (libhdf5 truncates it, then fails to lock it)."""
    path = tmp_path / "f.h5"
    _write(path)
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(read=READS["contiguous whole"]),
                              str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "opened\n", child.stderr.read()
        with pytest.raises(OSError, match="lock"):
            h5py.File(path, "w")
        out, err = child.communicate("go\n", timeout=300)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0, f"child died ({child.returncode}): {err[-2000:]}"
    assert out.startswith("TruncatedError"), out
