"""The versioned benchmark, side by side with versioned-hdf5 (h5py): a 1 M float64 dataset
(the package's default 4096-element chunks) committed 100 times, each version changing 10
random elements and appending 100; the same values on both sides, each side warmed first by
a small run of the same workload (imports, purehep's compiled kernels). Reports the total time,
the cost of a commit near versions 1, 40 and 100 (medians of 5), the file sizes and where the bytes go (raw_data rows,
hash-table rows, everything else)."""
import os
import statistics
import time

import numpy as np

from .common import path, report

N, COMMITS, CHANGES, APPENDS = 1_000_000, 100, 10, 100


def _edits(n=N, commits=COMMITS, seed=0):
    """(indices, values, appended values) of each commit after the first."""
    rng = np.random.default_rng(seed)
    size = n
    for _ in range(commits - 1):
        yield (rng.integers(0, size, CHANGES), rng.standard_normal(CHANGES),
               rng.standard_normal(APPENDS))
        size += APPENDS


def _run(mod, vf_class, filename, n=N, commits=COMMITS):
    """Commit times (s) of the whole workload written through ``mod`` and ``vf_class``."""
    times = []
    data = np.random.default_rng(1).standard_normal(n)
    with mod.File(filename, "w") as f:
        vf = vf_class(f)
        t0 = time.perf_counter()
        with vf.stage_version("v0") as g:
            g.create_dataset("x", data=data)
        times.append(time.perf_counter() - t0)
        for i, (where, values, appended) in enumerate(_edits(n, commits), 1):
            t0 = time.perf_counter()
            with vf.stage_version(f"v{i}") as g:
                x = g["x"]
                x[where] = values
                n = x.shape[0]
                x.resize((n + APPENDS,))
                x[n:] = appended
            times.append(time.perf_counter() - t0)
    return times


def _breakdown(filename):
    import h5py
    with h5py.File(filename, "r") as f:
        raw = f["_version_data/x/raw_data"]
        table = f["_version_data/x/hash_table"]
        return (raw.shape[0], raw.id.get_storage_size(), table.shape[0],
                table.id.get_storage_size())


def versioned_commits():
    import h5py
    import versioned_hdf5

    import purehep
    from purehep import versioned
    files = {"versioned-hdf5": path("versioned_package.h5"),
             "purehep": path("versioned_purehep.h5")}
    for mod, vf_class in ((h5py, versioned_hdf5.VersionedHDF5File),
                          (purehep, versioned.VersionedHDF5File)):     # warm: imports,
        _run(mod, vf_class, path("versioned_warm.h5"), 20_000, 5)    # compiled kernels
    runs = {"versioned-hdf5": _run(h5py, versioned_hdf5.VersionedHDF5File,
                                   files["versioned-hdf5"]),
            "purehep": _run(purehep, versioned.VersionedHDF5File, files["purehep"])}
    rows = report(f"versioned: {COMMITS} commits of {N:,} float64 ({CHANGES} changes + "
                  f"{APPENDS} appends each)",
                  [(name, sum(t)) for name, t in runs.items()], baseline="versioned-hdf5")
    for name, t in runs.items():
        size = os.path.getsize(files[name])
        rows_, raw_bytes, table_rows, table_bytes = _breakdown(files[name])
        at = {n: 1000 * statistics.median(t[max(1, n - 2):n + 3]) for n in (1, 40, 97)}
        print(f"  {name:<15} first commit {1000 * t[0]:6.1f} ms, the other {len(t) - 1} "
              f"{1000 * sum(t[1:]):7.1f} ms")
        print(f"  {name:<15} commit 1 {at[1]:6.1f} ms, 40 {at[40]:6.1f} ms, "
              f"100 {at[97]:6.1f} ms (medians of 5); file {size:,} B (raw_data {rows_:,} rows "
              f"{raw_bytes:,} B, hash_table {table_rows} rows {table_bytes:,} B, other "
              f"{size - raw_bytes - table_bytes:,} B)")
    return rows


ALL = [versioned_commits]
