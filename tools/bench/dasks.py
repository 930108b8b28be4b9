"""Issue 19 benchmark: a dask sum over a 256 MiB gzip-compressed chunked dataset with the
threaded scheduler, purehep (purehep.dask.from_dataset) against h5py (dask.array.from_array
on an h5py dataset: h5py runs one call at a time under its global lock), in one run. Both
arrays have the same blocks (whole stored chunks, near dask's default block size)."""
import os

from .chunked import _filtered_file
from .common import best_of, report


def dask_sum():
    import dask.array as da
    import h5py

    import purehep.dask
    fname = _filtered_file("gzip4", compression="gzip", compression_opts=4)
    workers = os.cpu_count() or 1
    ours = purehep.dask.from_dataset(fname, "x", chunks=(8 << 20,))   # 32 MiB blocks
    rows = []
    with h5py.File(fname, "r") as f:
        theirs = da.from_array(f["x"], chunks=ours.chunks)
        expected = theirs.sum().compute(scheduler="threads", num_workers=workers)
        rows.append(("h5py", best_of(lambda: theirs.sum().compute(
            scheduler="threads", num_workers=workers), repeat=3)))
    # purehep's own decode pool (one thread per core by default) under dask's, and without
    single = purehep.dask.from_dataset(fname, "x", chunks=(8 << 20,), threads=1)
    for name, arr in (("purehep", ours), ("purehep threads=1", single)):
        assert arr.sum().compute(scheduler="threads") == expected
        rows.append((name, best_of(lambda: arr.sum().compute(
            scheduler="threads", num_workers=workers), repeat=3)))
    return report(f"dask sum, 256 MiB float32, gzip-4, 1 MiB chunks, 32 MiB blocks, "
                  f"threaded scheduler ({workers} workers)", rows)


ALL = [dask_sum]
