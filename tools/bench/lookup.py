"""Issue 15: opening a chunked dataset and reading a little, for every chunk index kind and
several index sizes: open + 1,000 random 4-element reads (each inside one chunk of 16 int32),
h5py and purehep side by side, and the time per read against the number of chunks.

    python -m tools.bench.lookup [max chunks, default 1000000]
"""
import sys

import numpy as np

from .common import best_of, path, report

CHUNK = 16
WRITE_SLICE = 1 << 22
KINDS = ("btree1", "fixed_array", "extensible_array", "btree2", "implicit")


def index_file(kind, nchunks):
    """A file holding dataset "x": ``nchunks`` chunks of CHUNK int32, indexed by ``kind``."""
    import os

    import h5py
    fname = path(f"lookup_{kind}_{nchunks}.h5")
    if os.path.exists(fname):
        return fname
    n = nchunks * CHUNK
    data = np.arange(n, dtype="i4")
    tmp = fname + ".tmp"
    if kind == "implicit":     # early allocation, fixed size, no filters: the implicit index
        fid = h5py.h5f.create(tmp.encode(), h5py.h5f.ACC_TRUNC,
                              fapl=_fapl_latest(h5py))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((CHUNK,))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        dsid = h5py.h5d.create(fid, b"x", h5py.h5t.STD_I32LE, h5py.h5s.create_simple((n,)),
                               dcpl=dcpl)
        _write_slices(h5py.Dataset(dsid), data, False)
        del dsid
        fid.close()
    else:
        libver = "earliest" if kind == "btree1" else "latest"
        maxshape = {"btree1": (n,), "fixed_array": (n,), "extensible_array": (None,),
                    "btree2": (None, None)}[kind]
        two = kind == "btree2"
        with h5py.File(tmp, "w", libver=libver) as f:
            ds = f.create_dataset("x", shape=(n, 1) if two else (n,), dtype="i4",
                                  chunks=(CHUNK, 1) if two else (CHUNK,), maxshape=maxshape)
            _write_slices(ds, data, two)
    os.replace(tmp, fname)
    return fname


def _write_slices(ds, data, two):
    """``data`` into ``ds`` (a column of it when ``two``) in slices: the library's memory
    per write grows with the chunks it touches (gigabytes at 10 M chunks in one write)."""
    for a in range(0, len(data), WRITE_SLICE):
        part = data[a:a + WRITE_SLICE]
        ds[a:a + len(part)] = part.reshape(-1, 1) if two else part


def _fapl_latest(h5py):
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    return fapl


def _reads(module, fname, starts, two_d):
    def run():
        with module.File(fname, "r") as f:
            ds = f["x"]
            if two_d:
                for s in starts:
                    ds[s:s + 4, 0]
            else:
                for s in starts:
                    ds[s:s + 4]
    return run


def random_reads(max_chunks=1_000_000):
    import h5py
    import purehep
    rng = np.random.default_rng(5)
    sizes = [n for n in (10_000, 100_000, 1_000_000, 10_000_000) if n <= max_chunks]
    out = []
    for kind in KINDS:
        per_read = []
        for nchunks in sizes:
            fname = index_file(kind, nchunks)
            # 4 elements inside one chunk, anywhere in the dataset
            starts = rng.integers(0, nchunks, 1000) * CHUNK + rng.integers(0, CHUNK - 3, 1000)
            rows = [(m.__name__, best_of(_reads(m, fname, starts, kind == "btree2"), repeat=3))
                    for m in (h5py, purehep)]
            out += report(f"open + 1,000 random 4-element reads, {nchunks:,} chunks ({kind})",
                          rows)
            per_read.append(dict(rows)["purehep"] / 1000)
        print(f"  purehep time per read ({kind}), {sizes[0]:,} -> {sizes[-1]:,} chunks: "
              + " ".join(f"{t * 1e6:.1f}" for t in per_read)
              + f" us (max/min {max(per_read) / min(per_read):.2f})")
    return out


ALL = [random_reads]

if __name__ == "__main__":
    random_reads(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
