"""A small cross-section of the chunk and filter tests, run by `make test` a second time with
NUMBA_DISABLE_JIT=1: every kernel must also work as plain Python."""
import h5py
import numpy as np
import pytest

from purehep.kernels._jit import JIT_ENABLED  # noqa: F401  (reported by pytest -v runs)

from test_chunked import _sels, check
from test_filters import _create_nbit


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_indexes_and_filters(tmp_path, libver):
    p = tmp_path / "f.h5"
    a = np.arange(30 * 12, dtype="<i4").reshape(30, 12)
    with h5py.File(p, "w", libver=libver) as f:
        f.create_dataset("plain", data=a, chunks=(7, 5))
        f.create_dataset("gz", data=a, chunks=(7, 5), compression="gzip", shuffle=True,
                         fletcher32=True)
        f.create_dataset("lzf", data=a, chunks=(7, 5), compression="lzf")
        f.create_dataset("so", data=a, chunks=(7, 5), scaleoffset=0, fillvalue=3)
        f.create_dataset("sof", data=a / 7, chunks=(7, 5), scaleoffset=2)
        e = f.create_dataset("ea", shape=(0, 12), maxshape=(None, 12), dtype="<i4",
                             chunks=(2, 5), fillvalue=-1)
        e.resize((30, 12))
        e[3:25] = a[3:25]
        b = f.create_dataset("bt", shape=(30, 12), maxshape=(None, None), dtype="<i4",
                             chunks=(4, 4), compression="gzip")
        b[5:, 2:] = a[5:, 2:]
        f.create_dataset("paged", data=np.arange(1100 * 2), chunks=(2,))
    for name in ("plain", "gz", "lzf", "so", "sof", "ea", "bt"):
        check(p, name, _sels((30, 12)))
    check(p, "paged", [(slice(3, None, 11),)])


def test_nbit(tmp_path):
    p = tmp_path / "f.h5"
    vals = np.arange(60, dtype="i4").reshape(12, 5) * 7
    _create_nbit(p, "d", 11, 3, vals.shape, (5, 2), vals)
    from test_chunked import open_storage
    raw = open_storage(p, "d").read(None).view("<u4").astype(np.int64)
    np.testing.assert_array_equal(raw >> 3, vals)


def test_lzf_roundtrip():
    from purehep.filters import get_filter
    lzf = get_filter(32000)
    data = (np.arange(3000) % 97).astype("u1").tobytes()
    enc = lzf.encode(data, (), 1, len(data))
    assert bytes(lzf.decode(enc, (0, 0, len(data)), 1, len(data))) == data
