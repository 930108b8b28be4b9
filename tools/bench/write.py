"""Writing benchmarks, side by side with h5py: 256 MiB float32 contiguous, and chunked
gzip-4 + shuffle (purehep compresses chunks on a thread pool); file sizes compared."""
import os

import numpy as np

from .common import best_of, path, report

MIB = 1024 * 1024


def _data(nbytes=256 * MIB):
    n = nbytes // 4
    rng = np.random.default_rng(0)
    # compressible but not trivial: a smooth signal with noise in the low bits
    x = np.sin(np.arange(n, dtype=np.float32) / 1000.0) * 100
    return (x + rng.integers(0, 4, n).astype(np.float32)).reshape(-1, 1024)


def _run(title, kwargs, repeat):
    import h5py
    import purehep
    data = _data()
    hp, pp = path("w_h5py.h5"), path("w_purehep.h5")

    def with_h5py():
        with h5py.File(hp, "w") as f:
            f.create_dataset("x", data=data, **kwargs)

    def with_purehep():
        with purehep.File(pp, "w") as f:
            f.create_dataset("x", data=data, **kwargs)

    rows = report(f"{title} ({data.nbytes // MIB} MiB)",
                  [("h5py", best_of(with_h5py, repeat, 1)),
                   ("purehep", best_of(with_purehep, repeat, 1))])
    hs, ps = os.path.getsize(hp), os.path.getsize(pp)
    t = dict(rows)
    print(f"  throughput purehep/h5py: {t['h5py'] / t['purehep']:.2f}x; file sizes "
          f"h5py {hs} purehep {ps} ({100 * (ps - hs) / hs:+.3f}%)")
    return rows


def write_contiguous():
    return _run("write float32 contiguous", {}, 3)


def write_gzip_shuffle():
    return _run("write float32 chunked gzip-4 + shuffle", dict(
        chunks=(256, 1024), compression="gzip", compression_opts=4, shuffle=True), 1)


def _many(module, fname, n, flush_every):
    """``n`` datasets of 100 float64 created in one session, each read back at once (its
    header, layout and first element: purehep stages the session's changes first), or
    with a flush every ``flush_every``."""
    arr = np.arange(100, dtype="f8")

    def run():
        with module.File(fname, "w") as f:
            for i in range(n):
                ds = f.create_dataset(f"d{i}", data=arr)
                if flush_every:
                    if i % flush_every == 0:
                        f.flush()
                else:
                    ds[0]
    return run


def many_objects(sizes=(1000, 4000)):
    """Creating many datasets in one session with reads or flushes in between, h5py and
    purehep side by side (best of 3): each read of an object changed since the last stage
    stages the session's changes, so the cost of a stage must not grow with the objects
    in the file."""
    import h5py
    import purehep
    out = []
    for n in sizes:
        for what, every in (("each read back at once", 0), ("a flush every 10", 10)):
            out += report(f"{n:,} datasets created, {what}",
                          [(m.__name__, best_of(_many(m, path(f"many_{m.__name__}.h5"), n, every),
                                                repeat=3))
                           for m in (h5py, purehep)])
    return out


ALL = [write_contiguous, write_gzip_shuffle, many_objects]
