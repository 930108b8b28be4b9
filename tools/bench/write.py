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


ALL = [write_contiguous, write_gzip_shuffle]
