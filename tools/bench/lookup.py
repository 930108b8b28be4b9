"""Issue 15: opening a chunked dataset and reading a little, for every chunk index kind and
several index sizes: open + 1,000 random 4-element reads (each inside one chunk of 16 int32),
h5py and purehep side by side, and the time per read against the number of chunks.

Two regimes, each side by side with h5py:

- steady: best of 3 in a process whose lookup3 runs compiled, as in any process once it
  hashed enough metadata to repay compiling it (kernels/checksum.py), the file read
  through once before (in the page cache: the reference machine's cache holds about 2 GB
  and drops files within minutes, so a 10 M-chunk file read from disk would time the disk);
- fresh process: the first open + 1,000 reads of a new interpreter (median of 3
  interpreters), purehep hashing in plain Python until it has hashed enough.

    python -m tools.bench.lookup [max chunks, default 1000000]
"""
import sys

import numpy as np

from .common import best_of, path, report, run_python

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


def _cached(fname):
    """Read ``fname`` through, so that its pages are in the page cache."""
    with open(fname, "rb", buffering=0) as fh:
        while fh.read(1 << 24):
            pass


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


_FRESH = """
import time, numpy as np
t0 = time.perf_counter()
import {module} as m
starts = np.random.default_rng(5).integers(0, {nchunks}, 1000) * {chunk} + 1
with m.File({fname!r}, "r") as f:
    ds = f["x"]
    for s in starts.tolist():
        ds[s:s + 4{col}]
print(time.perf_counter() - t0)
"""


def _fresh(module, fname, nchunks, two_d):
    """Median seconds of 3 fresh interpreters importing ``module`` and doing the reads."""
    import statistics
    code = _FRESH.format(module=module, nchunks=nchunks, chunk=CHUNK, fname=fname,
                         col=", 0" if two_d else "")
    return statistics.median(float(run_python(code)[1]) for _ in range(3))


def random_reads(max_chunks=1_000_000):
    import h5py
    import purehep
    from purehep.kernels import checksum
    for _ in range(100):        # the steady state: lookup3 compiled, as it comes
        if checksum.lookup3_is_compiled():
            break
        checksum.lookup3(bytes(1 << 16))
    rng = np.random.default_rng(5)
    sizes = [n for n in (10_000, 100_000, 1_000_000, 10_000_000) if n <= max_chunks]
    out = []
    for kind in KINDS:
        per_read = {"h5py": [], "purehep": []}
        for nchunks in sizes:
            fname = index_file(kind, nchunks)
            # 4 elements inside one chunk, anywhere in the dataset
            starts = rng.integers(0, nchunks, 1000) * CHUNK + rng.integers(0, CHUNK - 3, 1000)
            _cached(fname)
            rows = [(m.__name__, best_of(_reads(m, fname, starts, kind == "btree2"), repeat=3))
                    for m in (h5py, purehep)]
            out += report(f"open + 1,000 random 4-element reads, {nchunks:,} chunks ({kind}), "
                          "steady", rows)
            for name, secs in rows:
                per_read[name].append(secs / 1000)
        for name, times in per_read.items():
            print(f"  {name} time per read ({kind}), {sizes[0]:,} -> {sizes[-1]:,} chunks: "
                  + " ".join(f"{t * 1e6:.1f}" for t in times)
                  + f" us (max/min {max(times) / min(times):.2f})")
    for kind in KINDS:
        for nchunks in sorted({sizes[0], sizes[-1]}):
            fname = index_file(kind, nchunks)
            _cached(fname)
            out += report(f"fresh process: import + open + 1,000 random 4-element reads, "
                          f"{nchunks:,} chunks ({kind})",
                          [(m, _fresh(m, fname, nchunks, kind == "btree2"))
                           for m in ("h5py", "purehep")])
    return out


ALL = [random_reads]

if __name__ == "__main__":
    random_reads(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
