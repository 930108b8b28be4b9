"""purehep.dask: datasets as dask arrays and HEP001 tables as dask dataframes, computed with
the threaded scheduler and on a two-process distributed cluster (one per module), against
numpy reads by h5py and pandas. Integer-valued data, so sums and means compare exactly
whatever order dask sums in."""
import os
import subprocess
import sys

import numpy as np
import pytest

import purehep

from index_kinds import KINDS, index_type, write

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
h5py = pytest.importorskip("h5py")
import purehep.dask as pdask  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N_ROWS, TABLE_CHUNK = 20_000, 1000


@pytest.fixture(scope="module", autouse=True)
def shared_files_closed():
    """The files purehep.dask opened in this process are closed after the module."""
    yield
    pdask.close_files()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """{kind: (path, values as h5py reads them)}."""
    tmp = tmp_path_factory.mktemp("dask")
    out = {}
    for k, kind in enumerate(KINDS):
        path = str(tmp / f"{kind}.h5")
        write(path, kind, seed=k)
        with h5py.File(path, "r") as f:
            out[kind] = (path, f["x"][()])
    return out


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    """(path, the table as a pandas DataFrame): columns hits (int32, rising through the
    rows, so CHUNK_MINMAX rules chunks out), energy = hits / 4 (exact float sums) and a
    categorical; a CHUNK_MINMAX index on energy."""
    from purehep.table import create_table
    rng = np.random.default_rng(7)
    hits = (np.arange(N_ROWS) * 40 // N_ROWS + rng.integers(0, 3, N_ROWS)).astype(np.int32)
    frame = pd.DataFrame({"hits": hits, "energy": hits / 4.0,
                          "kind": pd.Categorical(rng.choice(["e", "mu", "tau"], N_ROWS))})
    path = str(tmp_path_factory.mktemp("dask_table") / "table.h5")
    with purehep.File(path, "w") as f:
        table = create_table(f, "events", frame, chunks=TABLE_CHUNK, compression="gzip")
        table.create_search_index("energy", "CHUNK_MINMAX")
    with purehep.File(path) as f:
        from purehep.table import Table
        whole = Table(f["events"]).to_pandas()
    pd.testing.assert_frame_equal(whole, frame)      # the table holds the frame
    return path, frame


@pytest.fixture(scope="module")
def client():
    """One distributed cluster for the module: two worker processes. Workers are spawned
    with this process's sys.path, so they import the purehep under test."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  memory_limit="1GiB", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def test_import_purehep_imports_no_dask():
    code = "import sys, purehep; assert 'dask' not in sys.modules; " \
           "assert purehep.dask.read_table; import purehep.dask; purehep.dask.from_dataset"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


@pytest.mark.parametrize("kind", list(KINDS))
def test_threaded_from_dataset(files, kind):
    path, expected = files[kind]
    arr = pdask.from_dataset(path, "x", chunks=(500, 3))
    with purehep.File(path) as f:
        stored = f["x"].chunks
        assert index_type(f["x"]) == KINDS[kind][3]
    if stored:      # blocks are whole stored chunks (the last of each dimension may be short)
        for blocks, c in zip(arr.chunks, stored):
            assert all(b % c == 0 for b in blocks[:-1])
    assert np.array_equal(arr.compute(scheduler="threads", num_workers=4), expected)
    assert arr.sum().compute(scheduler="threads") == expected.sum()


def test_from_array_on_a_dataset(files):
    path, expected = files["btree2"]
    with purehep.File(path) as f:
        ds = f["x"]
        arr = da.from_array(ds, chunks=ds.chunks)
        assert np.array_equal(arr.compute(scheduler="threads"), expected)
        assert arr[100:2000:3, 1:].sum().compute(scheduler="threads") == \
            expected[100:2000:3, 1:].sum()


def test_many_files_concatenated(tmp_path):
    parts = []
    for k in range(3):       # an Arkouda-style locale set
        parts.append(write(str(tmp_path / f"set_LOCALE{k:04d}"), "fixed_array", seed=10 + k))
    arr = pdask.from_dataset(str(tmp_path / "set_LOCALE*"), "x")
    assert arr.shape == (9000, 7)
    assert np.array_equal(arr.compute(scheduler="threads"), np.concatenate(parts))
    listed = pdask.from_dataset([str(tmp_path / "set_LOCALE0002"),
                                 str(tmp_path / "set_LOCALE0000")], "x")
    assert np.array_equal(listed.compute(), np.concatenate([parts[2], parts[0]]))


def test_read_table_threaded(table_file):
    path, frame = table_file
    ddf = pdask.read_table(path, "events", rows_per_partition=2500)
    assert ddf.npartitions == 7          # 2,500 rows rounded up to 3 chunks of 1,000
    pd.testing.assert_frame_equal(ddf.compute(scheduler="threads"), frame)
    cols = pdask.read_table(path, "events", columns=["energy"], rows_per_partition=1000)
    pd.testing.assert_frame_equal(cols.compute(scheduler="threads"), frame[["energy"]])


def test_read_table_filter_prunes_and_is_exact(table_file):
    path, frame = table_file
    for text, mask in (("energy > 7.5", frame.energy > 7.5),
                       ("hits <= 3 OR energy >= 9.5", (frame.hits <= 3) | (frame.energy >= 9.5)),
                       ("kind = 'mu' AND energy < 2", (frame.kind == "mu") & (frame.energy < 2))):
        ddf = pdask.read_table(path, "events", filter=text, rows_per_partition=1000)
        pd.testing.assert_frame_equal(ddf.compute(scheduler="threads"), frame[mask])
    # the index rules out the chunks below energy 7.5 before anything is read
    kept = pdask.read_table(path, "events", filter="energy > 7.5", rows_per_partition=1000)
    minmax = frame.energy.groupby(np.arange(N_ROWS) // TABLE_CHUNK).max()
    assert kept.npartitions == int((minmax > 7.5).sum()) < N_ROWS // TABLE_CHUNK
    ignored = pdask.read_table(path, "events", filter="energy > 7.5", indexes="ignore",
                               rows_per_partition=1000)
    assert ignored.npartitions == N_ROWS // TABLE_CHUNK
    assert len(pdask.read_table(path, "events", filter="energy > 1000").compute()) == 0


def test_read_table_big_endian_columns(tmp_path):
    """Partitions of big-endian columns are native (pandas' concat of the partitions raised
    "Big-endian buffer not supported" with a categorical beside them)."""
    from purehep.table import create_table
    n = 501
    kind = pd.Categorical(np.where(np.arange(n) % 3, "a", "b"))
    path = str(tmp_path / "be.h5")
    with purehep.File(path, "w") as f:
        create_table(f, "t", {"x": np.arange(n, dtype=">i4"), "kind": kind}, chunks=100)
    ddf = pdask.read_table(path, "t", filter="x >= 10", rows_per_partition=100)
    frame = pd.DataFrame({"x": np.arange(n, dtype=np.int32), "kind": kind})
    pd.testing.assert_frame_equal(ddf.compute(scheduler="sync"), frame[frame.x >= 10])


def test_distributed_datasets(client, files):
    worker_purehep = client.run(lambda: purehep.__file__)
    assert all(p == purehep.__file__ for p in worker_purehep.values())
    arrays = {kind: pdask.from_dataset(path, "x", chunks=(640, 5)) for kind, (path, _)
              in files.items()}
    sums, means = client.compute([[a.sum() for a in arrays.values()],
                                  [a.mean() for a in arrays.values()]], sync=True)
    for kind, s, m in zip(arrays, sums, means):
        expected = files[kind][1]
        assert s == expected.sum() and m == expected.mean(), kind
    with purehep.File(files["extensible_array"][0]) as f:     # a Dataset itself, pickled
        ds = f["x"]
        total = client.compute(da.from_array(ds, chunks=ds.chunks).sum(), sync=True)
    assert total == files["extensible_array"][1].sum()


def test_distributed_table(client, table_file):
    path, frame = table_file
    ddf = pdask.read_table(path, "events", rows_per_partition=4000)
    hot = pdask.read_table(path, "events", filter="energy > 6", rows_per_partition=1000)
    total, mean, count, hot_frame = client.compute(
        [ddf.hits.sum(), ddf.energy.mean(), hot.energy.count(), hot], sync=True)
    assert total == frame.hits.sum() and mean == frame.energy.mean()
    assert count == int((frame.energy > 6).sum())
    pd.testing.assert_frame_equal(hot_frame, frame[frame.energy > 6])
