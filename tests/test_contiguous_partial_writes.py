"""Partial writes to a contiguous dataset of a file on disk (write/storage.py
``ContiguousStore``): only the rows the selection touches are read, changed and written
back, in blocks of WINDOW_BYTES for a slice of rows, with no memory map of the file (whose
pages past the end of a file another process shortened would kill the process); compared
with h5py making the same writes, for ints, negative ints, slices with steps,
index lists, boolean masks and Ellipsis (negative steps, which h5py refuses, by
``row_window`` alone)."""
import h5py
import numpy as np
import pytest

import purehep
from purehep.write import storage


def _index(rng, n):
    kind = rng.integers(0, 5)
    if kind == 0:
        return int(rng.integers(-n, n))
    if kind == 1:
        a, b = sorted(rng.integers(0, n + 1, 2))
        return slice(int(a), int(b) if b > a else int(a) + 1, int(rng.integers(1, 4)))
    if kind == 2:
        return sorted(set(rng.integers(0, n, int(rng.integers(1, 4))).tolist()))
    if kind == 3:
        mask = rng.random(n) < 0.4
        mask[int(rng.integers(0, n))] = True
        return mask
    return slice(None)


def _writes(rng, shape):
    for _ in range(12):
        rank = int(rng.integers(1, len(shape) + 1))
        key = tuple(_index(rng, n) for n in shape[:rank])
        if sum(isinstance(k, (list, np.ndarray)) for k in key) > 1:
            key = key[:1]          # (h5py takes one index list per selection)
        if rng.random() < 0.15:
            key = (Ellipsis,) + key[1:]
        yield key


@pytest.mark.parametrize("dtype", ["i8", "(2,)i4"])      # an array type: its dimensions last
@pytest.mark.parametrize("window", [1 << 20, 40])        # one block, and blocks of a row
@pytest.mark.parametrize("shape", [(17,), (9, 5), (6, 4, 3)])
def test_partial_writes_as_h5py(tmp_path, monkeypatch, shape, window, dtype):
    monkeypatch.setattr(storage, "WINDOW_BYTES", window)
    rng = np.random.default_rng(len(shape) * 7 + window)
    keys = list(_writes(rng, shape))
    dt = np.dtype(dtype)
    for lib in (h5py, purehep):
        with lib.File(tmp_path / f"{lib.__name__}.h5", "w") as f:
            f.create_dataset("x", shape, dt)[...] = np.arange(
                np.prod(shape + dt.shape), dtype=dt.base).reshape(shape + dt.shape)
        with lib.File(tmp_path / f"{lib.__name__}.h5", "r+") as f:
            ds = f["x"]
            for i, key in enumerate(keys):
                target = np.empty(shape)[key].shape + dt.shape
                value = (np.arange(int(np.prod(target))) + 1000 * (i + 1)).reshape(target) \
                    .astype(dt.base)
                ds[key] = value
    with h5py.File(tmp_path / "h5py.h5") as a, h5py.File(tmp_path / "purehep.h5") as b:
        np.testing.assert_array_equal(b["x"][()], a["x"][()])


def test_row_window():
    shape = (10, 3)
    for args in [(3,), (-2,), (slice(2, 8, 3),), (slice(8, 1, -2),), (slice(None, None, -1),),
                 ([7, 2, 2, 9],), ([-1, 0],), (np.array([False] * 4 + [True] * 3 + [False] * 3),),
                 (slice(4, 6), 1), (Ellipsis, 1), ([1, 2], [0, 2])]:
        lo, hi, local = storage.row_window(args, shape)
        full = np.arange(30).reshape(shape)
        np.testing.assert_array_equal(full[lo:hi][local], full[args], err_msg=repr(args))
        assert (lo, hi) == (0, 10) or args[0] is not Ellipsis
