"""The free space a session leaves is recorded past the end of the file's address space for
the next purehep session (purehep.write.free_record): a dataset replaced once a session does
not grow the file session after session. The record is invisible to h5py and h5dump, cut off
by libhdf5 when it writes the file, ignored when damaged or stale, and never outlives a
session that reused its space (a child process killed after its commit)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402
from purehep.write import free_record  # noqa: E402

N = 100_000                   # float64: 800 kB


def _replace(path, value, lib=purehep):
    with lib.File(path, "a") as f:
        if "x" in f:
            del f["x"]
        f["x"] = np.full(N, float(value))


def _superblock_eoa(path):
    with purehep.File(path, "r") as f:
        return f._superblock.eof_address


def _record(path):
    """(eoa, blocks) of the record at the end of the file, or None."""
    eoa = _superblock_eoa(path)
    with open(path, "rb") as fh:
        fh.seek(eoa)
        raw = fh.read()
    if not raw.startswith(free_record.SIGNATURE):
        return None
    _, end, count = free_record.HEAD.unpack_from(raw)
    return end, np.frombuffer(raw, "<u8", 2 * count, free_record.HEAD.size).reshape(-1, 2)


def test_a_dataset_replaced_once_a_session_does_not_grow_the_file(tmp_path):
    ours, theirs = tmp_path / "p.h5", tmp_path / "h.h5"
    sizes = []
    for i in range(8):
        _replace(ours, i)
        _replace(theirs, i, h5py)
        sizes.append(os.path.getsize(ours))
    # two generations of the dataset at most (a commit's space is free after the next)
    assert max(sizes) <= 2 * N * 8 + 64 * 1024, sizes
    assert sizes[-1] <= 2 * os.path.getsize(theirs) + 64 * 1024
    with h5py.File(ours) as f:
        np.testing.assert_array_equal(f["x"][...], np.full(N, 7.0))
    out = subprocess.run(["h5dump", "-H", str(ours)], capture_output=True, text=True) \
        if _have("h5dump") else None
    assert out is None or (out.returncode == 0 and "DATASET \"x\"" in out.stdout)
    out = subprocess.run([sys.executable, "-m", "purehep", "check", str(ours)],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "0 findings" in out.stdout, out.stdout + out.stderr


def _have(tool):
    return any(os.access(os.path.join(d, tool), os.X_OK)
               for d in os.environ.get("PATH", "").split(os.pathsep))


def test_the_record_lists_free_space_below_the_end_and_nothing_in_use(tmp_path):
    path = tmp_path / "p.h5"
    for i in range(2):          # (a third session would fill the space and trim the end)
        _replace(path, i)
    end, blocks = _record(path)
    assert end == _superblock_eoa(path)
    assert (blocks[:, 0] + blocks[:, 1] <= end).all() and blocks[:, 1].sum() >= N * 8
    # the dataset's own data lies in none of the blocks
    with purehep.File(path, "r") as f:
        at = f["x"].id.get_offset()
    assert not ((blocks[:, 0] < at + N * 8) & (at < blocks[:, 0] + blocks[:, 1])).any()


def test_libhdf5_writing_the_file_cuts_the_record_off(tmp_path):
    path = tmp_path / "p.h5"
    for i in range(2):
        _replace(path, i)
    assert _record(path) is not None
    with h5py.File(path, "a") as f:
        f["y"] = np.arange(10)
    assert _record(path) is None
    _replace(path, 5)
    with h5py.File(path) as f:
        np.testing.assert_array_equal(f["x"][...], np.full(N, 5.0))
        assert f["y"][...].tolist() == list(range(10))


@pytest.mark.parametrize("damage", ["checksum", "eoa", "overlap"])
def test_a_damaged_or_stale_record_is_ignored(tmp_path, damage):
    path = tmp_path / "p.h5"
    for i in range(2):
        _replace(path, i)
    eoa = _superblock_eoa(path)
    with open(path, "r+b") as fh:
        fh.seek(eoa)
        raw = bytearray(fh.read())
        if damage == "checksum":
            raw[-5] ^= 1
        elif damage == "eoa":          # a record of another end of file, checksum right
            raw = bytearray(free_record.encode(eoa + 8, [[0, 4096]]))
        else:                          # a block over the superblock and the root group
            raw = bytearray(free_record.encode(eoa, [[0, 4096]]))
        fh.seek(eoa)
        fh.truncate()
        fh.write(raw)
    _replace(path, 9)
    with h5py.File(path) as f:
        np.testing.assert_array_equal(f["x"][...], np.full(N, 9.0))


def test_a_session_killed_after_reusing_the_space_leaves_no_stale_record(tmp_path):
    path = tmp_path / "p.h5"
    for i in range(2):
        _replace(path, i)
    assert _record(path) is not None
    child = textwrap.dedent(f"""
        import os, numpy as np, purehep
        f = purehep.File({str(path)!r}, "a")
        del f["x"]
        f["x"] = np.full({N}, 3.0)
        f.flush()
        os._exit(0)
    """)
    subprocess.run([sys.executable, "-c", child], check=True, cwd=os.getcwd(),
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert _record(path) is None
    for i in range(3):
        _replace(path, 10 + i)
        with h5py.File(path) as f:
            np.testing.assert_array_equal(f["x"][...], np.full(N, 10.0 + i))


@pytest.mark.parametrize("lib", [h5py, purehep])
def test_an_object_header_just_below_a_cut_record_is_read_whole(tmp_path, lib):
    """Seed 4321 of the write fuzz: the record taken at open is cut off, and an object header
    ending at the new end of the file (a group created in the last session) was then read
    through a view of the file as large as it was before the cut (a short read)."""
    path = tmp_path / "f.h5"
    with lib.File(path, "w", libver="latest") as f:
        f.create_group("g").attrs.create("s", "x" * 8, dtype=lib.string_dtype("ascii"))
    with lib.File(path, "r+") as f:
        f.create_group("g/last")            # its header ends the file
        del f["g"].attrs["s"]               # the global heap (4 kB) freed: a record
    with lib.File(path, "r+") as f:
        f["g/last/link"] = lib.SoftLink("/g")
    with h5py.File(path, "r") as f:
        assert f["g/last"].get("link", getlink=True).path == "/g"
