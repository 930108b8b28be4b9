"""Thread safety of the read path: eight threads reading random selections of one freshly
opened dataset at once (as dask's threaded scheduler does), under each chunk index kind,
every result equal to h5py's read. Each round opens the file again, so the threads race
through the lazy steps too (storage objects, index decoding, lookups, the chunk cache)."""
import threading

import numpy as np
import pytest

import purehep

from index_kinds import KINDS, index_type, write

h5py = pytest.importorskip("h5py")

THREADS, ROUNDS, READS = 8, 3, 15


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("threads")
    out = {}
    for kind in KINDS:
        path = str(tmp / f"{kind}.h5")
        write(path, kind)
        with h5py.File(path, "r") as f:
            out[kind] = (path, f["x"][()])
    return out


@pytest.fixture
def fast_switching():
    """Threads switched every few microseconds (not every 5 ms): more interleavings."""
    import sys
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def _selection(rng, shape):
    """A random selection: a small box (the one-chunk fast path), a wide block (the thread
    pool path), a strided block, or a row."""
    kind = rng.integers(4)
    if kind == 3:
        return int(rng.integers(shape[0]))
    sel = []
    for n in shape:
        width = int(rng.integers(1, 8 if kind == 0 else n + 1))
        lo = int(rng.integers(0, n - width + 1))
        sel.append(slice(lo, lo + width, 3 if kind == 2 else None))
    return tuple(sel)


def _hammer(ds_of, shape, expected, seed):
    """Run THREADS readers at once (released together by a barrier); the errors they met."""
    barrier = threading.Barrier(THREADS)
    errors = []

    def reader(k):
        rng = np.random.default_rng(seed * 100 + k)
        try:
            barrier.wait()
            for _ in range(READS):
                sel = _selection(rng, shape)
                got = ds_of(k)[sel]
                if not np.array_equal(got, expected[sel]):
                    errors.append((sel, "differs from h5py's read"))
        except Exception as exc:  # noqa: BLE001 - reported by the test below
            errors.append((None, repr(exc)))

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.parametrize("kind", list(KINDS))
def test_threads_read_like_h5py(files, kind, fast_switching):
    path, expected = files[kind]
    # a small decoded-chunk cache (threads evict each other's chunks), the default, none
    for rnd, cache in enumerate((16 << 10, None, 0)[:ROUNDS]):
        with purehep.File(path, threads=2, rdcc_nbytes=cache) as f:
            shared = f["x"]
            assert index_type(shared) == KINDS[kind][3]
            # even threads share one Dataset object, odd ones open their own each read
            errors = _hammer(lambda k: shared if k % 2 == 0 else f["x"], expected.shape,
                             expected, rnd)
        assert errors == []
