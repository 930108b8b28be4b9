"""Issue 2 benchmarks: contiguous read, metadata walk, cold start, virtual dataset reads."""
import numpy as np

from .common import best_of, cold, path, report


def contiguous_read():
    import h5py
    import purehep
    fname = path("contig256.h5")
    n = 256 * 1024 * 1024 // 8
    with h5py.File(fname, "w") as f:
        f["x"] = np.arange(n, dtype="f8")
    rows = []
    with h5py.File(fname, "r") as f:
        ds = f["x"]
        rows.append(("h5py", best_of(lambda: ds[()])))
    with purehep.File(fname) as f:
        ds = f["x"]
        rows.append(("purehep", best_of(lambda: ds[()])))
        rows.append(("purehep zero-copy", best_of(lambda: ds.read(copy=False))))
    try:
        import pyfive
        with pyfive.File(fname) as f:
            ds = f["x"]
            rows.append(("pyfive", best_of(lambda: ds[()])))
    except ImportError:
        rows.append(("pyfive", None))
    src = np.arange(n, dtype="f8")
    rows.append(("memcpy", best_of(lambda: src.copy())))
    return report("256 MiB contiguous float64, full read", rows)


def _many_file(libver):
    import h5py
    fname = path(f"many_{libver}.h5")
    with h5py.File(fname, "w", libver=(libver, "latest")) as f:
        for g in range(100):
            grp = f.create_group(f"g{g:03d}")
            grp.attrs["index"] = g
            for d in range(100):
                ds = grp.create_dataset(f"d{d:03d}", data=np.arange(4, dtype="i4"))
                ds.attrs["units"] = "m"
                ds.attrs["scale"] = 1.5
    return fname


def _walk(module, fname):
    def run():
        with module.File(fname, "r") as f:
            total = 0
            for gname in f:
                grp = f[gname]
                total += len(grp.attrs) and int(grp.attrs["index"] >= 0)
                for dname in grp:
                    ds = grp[dname]
                    for key in ds.attrs:
                        ds.attrs[key]
                        total += 1
        return total
    return run


def metadata_walk():
    import h5py
    import purehep
    out = []
    for libver in ("earliest", "latest"):
        fname = _many_file(libver)
        rows = [("h5py", best_of(_walk(h5py, fname), repeat=3)),
                ("purehep", best_of(_walk(purehep, fname), repeat=3))]
        try:
            import pyfive
            rows.append(("pyfive", best_of(_walk(pyfive, fname), repeat=3)))
        except ImportError:
            pass
        out += report(f"open + read every attribute, 10,000 datasets in 100 groups ({libver})", rows)
    return out


def cold_start():
    import h5py
    fname = path("small.h5")
    with h5py.File(fname, "w") as f:
        f["x"] = np.arange(100)
    rows = [
        ("h5py", cold(f"import h5py; f = h5py.File({fname!r}, 'r'); f['x'][()]")),
        ("purehep", cold(f"import purehep; f = purehep.File({fname!r}); f['x'][()]")),
        ("python -c pass", cold("pass")),
    ]
    import subprocess
    import sys
    loaded = subprocess.run(
        [sys.executable, "-c", f"import sys, purehep; f = purehep.File({fname!r}); f['x'][()]; "
         "print('numba' in sys.modules)"], capture_output=True, text=True).stdout.strip()
    print(f"  numba imported by a cold small read: {loaded}")
    return report("cold process: import, open a small file, read one dataset", rows)


def virtual_reads():
    """A 100 x 500 x 500 float32 virtual dataset over 100 sources of the same file: a slab
    of one source, one element of every source, and the whole."""
    import h5py
    fname = path("vds100.h5")
    with h5py.File(fname, "w") as f:
        layout = h5py.VirtualLayout((100, 500, 500), "f4")
        for i in range(100):
            layout[i] = h5py.VirtualSource(f.create_dataset(f"s{i}", data=np.full((500, 500), i,
                                                                                   "f4")))
        f.create_virtual_dataset("v", layout, fillvalue=-1)
    out = []
    for title, sel in (("a 10 x 500 slab", np.s_[5, 10:20, :]), ("a column through every "
                       "source", np.s_[:, 7, 3]), ("the whole", ())):
        rows = []
        for module in map(__import__, ("h5py", "purehep")):
            with module.File(fname, "r") as f:
                ds = f["v"]
                rows.append((module.__name__, best_of(lambda: ds[sel], repeat=3)))
        out += report(f"virtual dataset of 100 sources, {title}", rows)
    return out


ALL = [contiguous_read, metadata_walk, cold_start, virtual_reads]
