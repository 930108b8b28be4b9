"""Threads sharing a file open for writing (hl/serialize.py): as in h5py, whose calls all hold
its library lock, calls from many threads run one at a time, so nothing they do is lost.
Each case starts its threads together at a barrier, with the interpreter switching threads
every few microseconds, and then checks every object and value, read back by h5py after
close. (Before the lock, threads creating datasets in one group lost some of them silently:
h5py's own test_concurrent_dataset_creation.)"""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import purehep

h5py = pytest.importorskip("h5py")

THREADS, ROUNDS = 12, 3


@pytest.fixture(autouse=True)
def fast_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def together(work, n=THREADS):
    """Run ``work(i)`` for i < n in n threads started at once; re-raise the first error."""
    barrier = threading.Barrier(n)

    def task(i):
        barrier.wait()
        work(i)

    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(task, i) for i in range(n)]
    for f in futures:
        f.result()


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_datasets_groups_and_attributes_created_at_once(tmp_path, round_):
    path = tmp_path / "created.h5"
    with purehep.File(path, "w") as f:
        def work(i):
            g = f.require_group(f"g{i % 3}")
            for j in range(4):
                ds = g.create_dataset(f"d{i}_{j}", data=np.arange(10) + 100 * i + j)
                ds.attrs["who"] = i
                f.attrs[f"a{i}_{j}"] = j
            f.create_group(f"own{i}").create_dataset("x", (3,), "i4", fillvalue=i)
        together(work)
        assert len(f.attrs) == THREADS * 4
    with h5py.File(path, "r") as f:
        for i in range(THREADS):
            for j in range(4):
                ds = f[f"g{i % 3}/d{i}_{j}"]
                assert ds[()].tolist() == (np.arange(10) + 100 * i + j).tolist()
                assert ds.attrs["who"] == i and f.attrs[f"a{i}_{j}"] == j
            assert f[f"own{i}/x"][()].tolist() == [i] * 3
        assert sum(len(f[f"g{k}"]) for k in range(3)) == THREADS * 4


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_regions_of_one_dataset_written_at_once(tmp_path, round_):
    """As dask.array.store writes: each thread its own blocks of one chunked, compressed
    dataset (blocks across chunk boundaries, so threads share chunks), and one reading."""
    path = tmp_path / "regions.h5"
    n, block = 4000, 250
    expected = np.arange(n, dtype="f8") * 1.5
    with purehep.File(path, "w") as f:
        ds = f.create_dataset("x", (n,), "f8", chunks=(300,), compression="gzip",
                              fillvalue=-1)

        def work(i):
            for b in range(i, n // block, THREADS):
                ds[b * block:(b + 1) * block] = expected[b * block:(b + 1) * block]
                got = ds[b * block:(b + 1) * block]
                assert got.tolist() == expected[b * block:(b + 1) * block].tolist()
        together(work)
        assert ds[()].tolist() == expected.tolist()
    with h5py.File(path, "r") as f:
        assert f["x"][()].tolist() == expected.tolist()


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_resizes_appends_and_deletes_at_once(tmp_path, round_):
    path = tmp_path / "appends.h5"
    with purehep.File(path, "w") as f:
        log = f.create_dataset("log", (0,), "i8", maxshape=(None,), chunks=(8,))
        for i in range(THREADS):
            f[f"tmp{i}"] = np.zeros(5)

        def work(i):
            for j in range(5):
                with purehep.io.lock.writes:    # a sequence of calls made atomic by the caller
                    k = log.shape[0]
                    log.resize((k + 1,))
                    log[k] = 10 * i + j
            del f[f"tmp{i}"]
            f.attrs.create(f"n{i}", i)
        together(work)
        assert sorted(log[()].tolist()) == sorted(10 * i + j for i in range(THREADS)
                                                  for j in range(5))
    with h5py.File(path, "r") as f:
        assert sorted(f) == ["log"]
        assert sorted(f["log"][()].tolist()) == sorted(10 * i + j for i in range(THREADS)
                                                       for j in range(5))
        assert {k: int(v) for k, v in f.attrs.items()} == {f"n{i}": i for i in range(THREADS)}


def test_two_files_copied_into_each_other_at_once(tmp_path):
    """One lock for all files: copies A -> B and B -> A at once cannot deadlock."""
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    with purehep.File(a, "w") as fa, purehep.File(b, "w") as fb:
        fa["src"] = np.arange(5)
        fb["src"] = np.arange(5, 10)

        def work(i):
            for j in range(3):
                if i % 2:
                    fa.copy(fa["src"], fb, f"from_a_{i}_{j}")
                else:
                    fb.copy(fb["src"], fa, f"from_b_{i}_{j}")
        together(work, 6)
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        assert sorted(fb) == sorted(["src"] + [f"from_a_{i}_{j}" for i in (1, 3, 5)
                                               for j in range(3)])
        assert sorted(fa) == sorted(["src"] + [f"from_b_{i}_{j}" for i in (0, 2, 4)
                                               for j in range(3)])
        assert all(fb[k][()].tolist() == [0, 1, 2, 3, 4] for k in fb if k != "src")


def test_read_only_files_take_no_lock(tmp_path):
    """Reads of a read-only file run at once: a read goes on while another thread holds
    the write lock."""
    path = tmp_path / "ro.h5"
    with purehep.File(path, "w") as f:
        f["x"] = np.arange(10)
        f["x"].attrs["a"] = 1
    with purehep.File(path, "r") as f:
        got = []
        with purehep.io.lock.writes:
            t = threading.Thread(target=lambda: got.append((f["x"][2:4].tolist(),
                                                            int(f["x"].attrs["a"]),
                                                            f["x"].shape, list(f))))
            t.start()
            t.join(120)               # (a reader waiting for the lock would never end)
        assert not t.is_alive() and got == [([2, 3], 1, (10,), ["x"])]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_table_appends_at_once(tmp_path, round_):
    """HEP001 appends from many threads: each append is one call, so each thread's rows
    land whole (every column of a row from one append) and none is lost."""
    from purehep.table import create_table, open_table
    path = tmp_path / "table.h5"
    with purehep.File(path, "w") as f:
        create_table(f, "t", {"who": np.zeros(0, "i4"), "k": np.zeros(0, "i8")}, chunks=16)
        table = open_table(f["t"])
        table.create_search_index("k", "CHUNK_MINMAX")

        def work(i):
            for j in range(4):
                table.append({"who": np.full(3, i, "i4"), "k": 100 * i + 10 * j + np.arange(3)})
        together(work)
    with purehep.File(path, "r") as f:
        table = open_table(f["t"])
        who, k = table.read()["who"], table.read()["k"]
        assert len(who) == THREADS * 4 * 3
        assert (k // 100 == who).all()           # rows whole
        assert sorted(k.tolist()) == sorted(100 * i + 10 * j + m for i in range(THREADS)
                                            for j in range(4) for m in range(3))
        assert sorted(table.query("k >= 500", fields=["k"])["k"].tolist()) == \
            sorted(x for x in k.tolist() if x >= 500)
        assert not table.validate()
    with h5py.File(path, "r") as f:
        assert len(f["t/who"]) == THREADS * 12


def test_generators_release_the_lock_between_steps(tmp_path):
    """``struct_chunk_iter()`` and ``iter(ds)`` of a file open for writing hold the lock at
    each step only: between two steps another thread changes the file."""
    path = tmp_path / "gen.h5"
    with purehep.File(path, "w") as f:
        ds = f.create_dataset("x", (4, 4), "f8", chunks=(2, 2), sparse=True)
        ds.write_sparse(np.array([[0, 0], [3, 3]]), np.array([1.0, 2.0]))
        f["y"] = np.arange(3)
        chunks, values = ds.struct_chunk_iter(), iter(f["y"])
        first, v0 = next(chunks), next(values)
        t = threading.Thread(target=lambda: f.create_dataset("z", data=[7]))
        t.start()
        t.join(120)               # (a lock held across the yield: the thread never ends)
        assert not t.is_alive()
        assert {first.offset, *(c.offset for c in chunks)} == {(0, 0), (2, 2)}
        assert [v0, *values] == [0, 1, 2] and f["z"][()].tolist() == [7]


def test_warnings_point_at_the_callers_line(tmp_path):
    """The locking wrappers add frames: purehep's warnings still name the line that called
    purehep (as h5py's do), not a line of the wrappers."""
    import warnings
    with purehep.File(tmp_path / "w.h5", "w") as f:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            f.create_dataset("x", (3,)); line = sys._getframe().f_lineno   # noqa: E702
            ds = f.create_dataset("y", data=np.arange(3))
            f["x"].dims.create_scale(ds, "s"); line2 = sys._getframe().f_lineno   # noqa: E702
    assert [(w.filename, w.lineno) for w in got] == [(__file__, line), (__file__, line2)]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_direct_chunk_writes_at_once(tmp_path, round_):
    """h5py's pattern for parallel compression: threads compress chunks themselves and store
    them with ``ds.id.write_direct_chunk`` (low-level calls hold the lock as well)."""
    import zlib
    path = tmp_path / "direct.h5"
    n, chunk = 64, 100
    with purehep.File(path, "w") as f:
        ds = f.create_dataset("x", (n * chunk,), "i8", chunks=(chunk,), compression="gzip")

        def work(i):
            for c in range(i, n, THREADS):
                raw = np.arange(c * chunk, (c + 1) * chunk, dtype="i8").tobytes()
                ds.id.write_direct_chunk((c * chunk,), zlib.compress(raw))
        together(work)
    with h5py.File(path, "r") as f:
        assert f["x"][()].tolist() == list(range(n * chunk))
