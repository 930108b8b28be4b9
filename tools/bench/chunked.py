"""Issue 3 benchmarks: chunked reads against h5py (and pyfive), in one run."""
import tracemalloc

import numpy as np

from .common import best_of, path, report

N_SMALL = 20_000_000  # int32 elements in 64-element chunks: ~312k chunks


def _filtered_file(name, mib=256, **filters):
    import h5py
    fname = path(f"{name}.h5")
    n = mib * 1024 * 1024 // 4
    rng = np.random.default_rng(1)
    data = np.cumsum(rng.normal(size=n)).astype("f4")  # compressible, not trivial
    with h5py.File(fname, "w") as f:
        f.create_dataset("x", data=data, chunks=(262144,), **filters)  # 1 MiB chunks
    return fname


def _full_read(fname, name="x", modules=("h5py", "purehep", "pyfive")):
    rows = []
    for mod in modules:
        try:
            module = __import__(mod)
            if mod == "h5py":
                import hdf5plugin  # noqa: F401  (zstd for h5py)
        except ImportError:
            rows.append((mod, None))
            continue
        try:
            with module.File(fname, "r") as f:
                ds = f[name]
                rows.append((mod, best_of(lambda: ds[()], repeat=3)))
        except Exception as exc:  # noqa: BLE001 - a peer that cannot read it is reported
            print(f"  {mod}: {type(exc).__name__}: {str(exc)[:80]}")
            rows.append((mod, None))
    return rows


def gzip_shuffle():
    fname = _filtered_file("gzip4_shuffle", compression="gzip", compression_opts=4, shuffle=True)
    return report("256 MiB float32, gzip-4 + shuffle, 1 MiB chunks, full read",
                  _full_read(fname))


def zstd_shuffle():
    import hdf5plugin
    fname = _filtered_file("zstd_shuffle", shuffle=True, **hdf5plugin.Zstd(clevel=3))
    return report("256 MiB float32, zstd + shuffle, 1 MiB chunks, full read",
                  _full_read(fname, modules=("h5py", "purehep")))


def _index_file(kind):
    import h5py
    fname = path(f"idx_{kind}.h5")
    data = np.arange(N_SMALL, dtype="i4")
    if kind == "btree1":
        with h5py.File(fname, "w", libver="earliest") as f:
            f.create_dataset("x", data=data, chunks=(64,))
        return fname
    maxshape = {"fixed_array": (N_SMALL,), "extensible_array": (None,),
                "btree2": (None, None)}[kind]
    with h5py.File(fname, "w", libver="latest") as f:
        if kind == "btree2":
            f.create_dataset("x", data=data.reshape(-1, 1), chunks=(64, 1), maxshape=maxshape)
        else:
            f.create_dataset("x", data=data, chunks=(64,), maxshape=maxshape)
    return fname


def small_chunks():
    rng = np.random.default_rng(2)
    out = []
    for kind in ("btree1", "fixed_array", "extensible_array", "btree2"):
        fname = _index_file(kind)
        peers = ("h5py", "purehep") + (("pyfive",) if kind == "btree1" else ())  # pyfive: v1 only
        rows = _full_read(fname, modules=peers)
        out += report(f"20 M int32 in 64-element chunks ({kind}), full read", rows)
        starts = rng.integers(0, N_SMALL - 10, 1000)
        rows = []
        for module in map(__import__, peers):
            with module.File(fname, "r") as f:
                ds = f["x"]
                if ds.ndim == 2:
                    rows.append((module.__name__,
                                 best_of(lambda: [ds[s:s + 10, 0] for s in starts], repeat=3)))
                else:
                    rows.append((module.__name__,
                                 best_of(lambda: [ds[s:s + 10] for s in starts], repeat=3)))
        out += report(f"  1,000 random 10-element reads ({kind})", rows)
    return out


def row_by_row():
    """Reads that stay inside one compressed chunk (the decoded-chunk cache), and reads that
    open the dataset again each time (``f[name][i]``: the kept index)."""
    import h5py
    fname = path("rows_gzip.h5")
    rng = np.random.default_rng(3)
    with h5py.File(fname, "w") as f:
        f.create_dataset("x", data=np.cumsum(rng.normal(size=(10000, 100)), 0).astype("f4"),
                         chunks=(100, 100), compression="gzip", shuffle=True)
    rows = []
    for module in map(__import__, ("h5py", "purehep")):
        with module.File(fname, "r") as f:
            ds = f["x"]
            rows.append((module.__name__, best_of(lambda: [ds[i] for i in range(2000)], repeat=3)))
    out = report("2,000 row reads ds[i], 10,000 x 100 float32, gzip + shuffle, 100 x 100 chunks",
                 rows)
    fname = _index_file("btree1")
    rows = []
    for module in map(__import__, ("h5py", "purehep")):
        with module.File(fname, "r") as f:
            rows.append((module.__name__,
                         best_of(lambda: [f["x"][i] for i in range(0, 20_000_000, 100_000)],
                                 repeat=3)))
    return out + report("200 reads f['x'][i] (opened each time), 312 k chunks, v1 B-tree", rows)


def peak_memory():
    import h5py
    import purehep
    fname = _filtered_file("gzip4_shuffle", compression="gzip", compression_opts=4, shuffle=True)
    print("\npeak memory of a full read / output size (tracemalloc: numpy buffers)")
    for module in (h5py, purehep):
        with module.File(fname, "r") as f:
            ds = f["x"]
            ds[:10]  # the index and kernels are loaded, as in steady use
            tracemalloc.start()
            arr = ds[()]
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(f"  {module.__name__:<10} {peak / arr.nbytes:5.2f}x")


ALL = [gzip_shuffle, zstd_shuffle, small_chunks, row_by_row, peak_memory]
