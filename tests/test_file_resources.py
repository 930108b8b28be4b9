"""A closed file holds nothing of the operating system's: no memory map and no descriptor,
while the values read from it, and the (closed) objects that gave them, are still alive —
as with h5py, whose arrays are copies and whose closed objects keep no file open."""
import gc
import os

import h5py
import numpy as np
import pytest

import purehep


def _held(prefix):
    """Maps and descriptors of this process on files whose path starts with ``prefix``."""
    held = [line.split()[-1] for line in open("/proc/self/maps") if prefix in line]
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(prefix):
            held.append("fd " + target)
    return held


@pytest.fixture
def files(tmp_path):
    latest, earliest = tmp_path / "latest.h5", tmp_path / "earliest.h5"
    with h5py.File(latest, "w", libver="latest") as f:
        f["contiguous"] = np.arange(1000.0)
        f.create_dataset("gzip", data=np.arange(10000.0), chunks=(100,), compression="gzip",
                         shuffle=True)
        f.create_dataset("plain", data=np.arange(10000.0), chunks=(100,))
        f.create_dataset("fixed", data=np.arange(10000.0), chunks=(10,), maxshape=(10000,))
        f.create_dataset("ext", data=np.arange(10000.0), chunks=(10,), maxshape=(None,))
        f.create_dataset("bt2", data=np.arange(10000.0).reshape(100, 100), chunks=(10, 10),
                         maxshape=(None, None))
        f["strings"] = np.array(["a", "bb", "ccc"], dtype=h5py.string_dtype())
        f["compound"] = np.array([(1, 2.0)], dtype=[("x", "i4"), ("y", "f8")])
        f["compact"] = np.arange(10)
        f.create_group("g/h").attrs["ref"] = f["contiguous"].ref
        f.attrs["a"] = np.arange(5)
        f.attrs["s"] = "hello"
    with h5py.File(earliest, "w", libver="earliest") as f:
        f.create_dataset("btree1", data=np.arange(10000.0), chunks=(100,))
        f.attrs["x"] = 1
    return tmp_path, (latest, earliest)


def _read_everything(f, keep):
    def visit(name, obj):
        keep.append(obj)
        keep.extend(obj.attrs[k] for k in obj.attrs)
        if isinstance(obj, purehep.Dataset):
            keep.append(obj[()])
            if obj.shape:
                keep.extend([obj[:3], obj[0]])
    f.visititems(visit)
    keep.extend(f.attrs[k] for k in f.attrs)
    keep.append(f)


def test_closed_read_file_holds_no_map_or_descriptor(files):
    tmp, paths = files
    keep = []
    for p in paths:
        with purehep.File(p) as f:
            _read_everything(f, keep)
            assert _held(str(tmp))          # open: the map and the descriptor are there
    with purehep.File(paths[0]) as f:
        keep.append(f["gzip"][()])
    gc.collect()
    assert _held(str(tmp)) == []
    with h5py.File(paths[0]) as f:          # what was read is still right
        np.testing.assert_array_equal(keep[-1][()], f["gzip"][()])


def test_closed_write_file_holds_no_map_or_descriptor(files):
    tmp, paths = files
    keep = []
    with purehep.File(paths[0], "a") as f:
        _read_everything(f, keep)
        f["new"] = np.arange(5)
        f["gzip"][:10] = -1
        keep.append(f["new"][()])
    with purehep.File(tmp / "new.h5", "w") as f:
        f.create_dataset("x", data=np.arange(100.0), chunks=(10,), compression="gzip")
        keep.append(f["x"][:5])
    gc.collect()
    assert _held(str(tmp)) == []
    with h5py.File(paths[0]) as f:
        np.testing.assert_array_equal(f["gzip"][:12], [-1] * 10 + [10, 11])
        np.testing.assert_array_equal(f["new"][()], np.arange(5))


def test_kept_datasets_hold_few_chunk_caches(tmp_path):
    """Reading one dataset after another keeps decoded chunks of only a few of them (h5py
    frees a dataset's chunk cache with the dataset); the dataset in use keeps its own."""
    from purehep.hl.files import KEPT_CACHES
    p = tmp_path / "many.h5"
    data = np.arange(8 * 4096, dtype="f8")
    with h5py.File(p, "w") as f:
        for i in range(40):
            f.create_dataset(f"d{i}", data=data + i, chunks=(4096,), compression="gzip")
    budget = 64 << 10
    with purehep.File(p, rdcc_nbytes=budget) as f:
        for i in range(40):
            ds = f[f"d{i}"]
            for k in range(8):          # one element per chunk: each chunk decoded and kept
                assert ds[k * 4096 + 1] == data[k * 4096 + 1] + i
            held = [s.chunked.cache.used for s in f._stores.values()]
            assert held[-1] > 0
            assert sum(held[:-1]) <= KEPT_CACHES * budget
        for k in range(8):              # what was emptied reads again, equal
            assert f["d0"][k * 4096 + 1] == data[k * 4096 + 1]
