"""Space of a chunk rewritten larger again and again (a compressed chunk appended to), against
libhdf5 doing the same through h5py: the file stays within a stated bound of libhdf5's size,
the values are h5py's, and the file on disk between two commits reads as the last commit."""
import os
import shutil

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

import purehep  # noqa: E402

CASES = [(16384, 300), (4096, 80), (65536, 2000)]     # (chunk, elements appended per step)


def _steps(step, steps, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 1000, step) for _ in range(steps)]


def _grow(mod, path, chunk, parts, after_step):
    """A gzip dataset of one growing chunk (and a small contiguous one beside it) appended to
    ``parts`` one by one; ``after_step(f, d, n)`` after each (flush, or read back)."""
    with mod.File(path, "w") as f:
        d = f.create_dataset("x", shape=(0,), maxshape=(None,), chunks=(chunk,), dtype="i8",
                             compression="gzip")
        f.create_dataset("y", data=np.arange(10))
        for part in parts:
            n = d.shape[0]
            d.resize((n + len(part),))
            d[n:] = part
            after_step(f, d, n)
    return os.path.getsize(path)


def _values_and_chunk(path):
    with h5py.File(path, "r") as f:
        return f["x"][()], f["x"].id.get_storage_size()


def _flush(f, d, n):
    f.flush()


def _read_back(f, d, n):
    assert d[n] is not None     # a read after a write stages the changes (no commit)


@pytest.mark.parametrize("chunk,step", CASES)
def test_flush_per_step(tmp_path, chunk, step):
    """A commit per step. The new copy of the chunk cannot go over the one the last commit
    refers to, and the copy freed before that is (by the growth) possibly too small for it:
    the chunk may end up after two freed slots, each the chunk and its room to grow (an
    eighth of it or twice its growth, here a 40th: at most half the chunk), where libhdf5
    writes over the old copy (not crash-safe). Before chunks had room to grow, the file held
    a freed copy per step or two (several times libhdf5's size)."""
    parts = _steps(step, 40)
    ref = _grow(h5py, tmp_path / "h5py.h5", chunk, parts, _flush)
    size = _grow(purehep, tmp_path / "purehep.h5", chunk, parts, _flush)
    values, stored = _values_and_chunk(tmp_path / "purehep.h5")
    np.testing.assert_array_equal(values, _values_and_chunk(tmp_path / "h5py.h5")[0])
    assert values.size == 40 * step
    assert size <= ref + 3 * stored


@pytest.mark.parametrize("chunk,step", CASES)
def test_stage_per_step(tmp_path, chunk, step):
    """One commit at close, each step staged by a read: the chunk, in space no commit refers
    to, is written over where it stands, growing there while the space after it is free; only
    its room to grow (an eighth of it or twice its growth, here a 40th) is more than libhdf5
    writes."""
    parts = _steps(step, 40)
    ref = _grow(h5py, tmp_path / "h5py.h5", chunk, parts, _read_back)
    size = _grow(purehep, tmp_path / "purehep.h5", chunk, parts, _read_back)
    values, stored = _values_and_chunk(tmp_path / "purehep.h5")
    np.testing.assert_array_equal(values, _values_and_chunk(tmp_path / "h5py.h5")[0])
    assert size <= ref + stored // 4 + 8


def test_disk_between_commits_reads_as_last_commit(tmp_path):
    """Chunks rewritten in place (their space allocated since the last commit) never touch
    what the last commit refers to: a copy of the file taken at any point between two commits
    (a crash there) reads, through libhdf5, as the last commit."""
    path = tmp_path / "f.h5"
    parts = _steps(700, 24, seed=1)
    committed = np.zeros(0, "i8")
    with purehep.File(path, "w") as f:
        d = f.create_dataset("x", shape=(0,), maxshape=(None,), chunks=(8192,), dtype="i8",
                             compression="gzip")
        for i, part in enumerate(parts):
            n = d.shape[0]
            d.resize((n + len(part),))
            d[n:] = part
            assert d[n] == part[0]                 # staged, not committed
            crash = tmp_path / f"crash{i}.h5"
            shutil.copyfile(path, crash)
            if committed.size:
                np.testing.assert_array_equal(_values_and_chunk(crash)[0], committed)
            os.remove(crash)
            if i % 4 == 3:
                f.flush()
                committed = d[()]
    np.testing.assert_array_equal(_values_and_chunk(path)[0], np.concatenate(parts))
