"""Issue 15 benchmarks, each in fresh processes side by side with h5py: a cold process reading
a small gzip + shuffle chunked dataset (numba cache warm, and empty), the ``purehep`` command
on a small file, purehep with numpy as its only package (256 MiB gzip + shuffle read and
write, a 10,000-object metadata walk) and the peak RSS of a 256 MiB gzip + shuffle write."""
import os
import statistics
import tempfile

import numpy as np

from .common import path, report, run_python

MIB = 1 << 20


def _median(code, repeat=5, **kw):
    run_python(code, **kw)                       # warm-up: bytecode, caches
    return statistics.median(run_python(code, **kw)[0] for _ in range(repeat))


def cold_chunked():
    import h5py
    fname = path("small_gzip_shuffle.h5")
    with h5py.File(fname, "w") as f:
        f.create_dataset("x", data=np.arange(10000, dtype="f4"), chunks=(1000,),
                         compression="gzip", shuffle=True)
    read = "f = {m}.File({p!r}, 'r'); f['x'][()]; f['x'][10:20]"
    rows = [("h5py", _median("import h5py; " + read.format(m="h5py", p=fname))),
            ("purehep", _median("import purehep; " + read.format(m="purehep", p=fname)))]
    with tempfile.TemporaryDirectory() as empty:
        rows.append(("purehep, empty numba cache",
                     _median("import purehep; " + read.format(m="purehep", p=fname),
                             env={"NUMBA_CACHE_DIR": empty})))
    rows.append(("python -c pass", _median("pass")))
    _, loaded = run_python("import sys, purehep; " + read.format(m="purehep", p=fname)
                           + "; print('numba' in sys.modules)")
    print(f"  numba imported by a cold small chunked read: {loaded.strip()}")
    return report("cold process: import, open, read a 10,000-element gzip + shuffle chunked "
                  "dataset", rows)


def cli_small_file():
    import h5py
    fname = path("cli_small.h5")
    with h5py.File(fname, "w") as f:
        f.create_dataset("x", data=np.arange(2000, dtype="f4").reshape(40, 50), chunks=(10, 10),
                         compression="gzip", shuffle=True)
        f.create_group("g").attrs["a"] = 1
    rows = [(f"purehep {cmd}", _median(f"import sys; sys.argv = ['purehep', {cmd!r}, {fname!r}]"
                                       "; from purehep.cli import main; main()"))
            for cmd in ("ls", "check", "inspect", "dump")]
    rows.append(("python -c pass", _median("pass")))
    return report(f"purehep command on a small file ({os.path.getsize(fname)} bytes), wall "
                  "time of the process", rows, baseline="python -c pass")


def _gzip_file():
    from .chunked import _filtered_file
    return _filtered_file("gzip4_shuffle", compression="gzip", compression_opts=4, shuffle=True)


def numpy_only():
    """purehep in a Python where only numpy imports (numba, isal, deflate, zstandard, mmh3
    hidden) against h5py, each timed inside its own fresh process (best of 3)."""
    from .core import _many_file
    from .write import _data
    from .chunked import _filtered_file
    gz = _gzip_file()
    lzf = _filtered_file("lzf_16", mib=16, compression="lzf")
    many = _many_file("latest")
    data_file = path("write_src.npy")
    np.save(data_file, _data())
    timer = ("import time\n{setup}\nbest = 1e9\nfor _ in range({n}):\n"
             "    t0 = time.perf_counter()\n{body}\n"
             "    best = min(best, time.perf_counter() - t0)\nprint(best)\n")
    cases = {
        "256 MiB gzip-4 + shuffle read": (
            "f = M.File({gz!r}, 'r'); ds = f['x']", "    ds[()]", 3),
        "16 MiB lzf read (h5py's filter)": (
            "f = M.File({lzf!r}, 'r'); ds = f['x']", "    ds[()]", 3),
        "256 MiB gzip-4 + shuffle write": (
            f"import numpy as np; data = np.load({data_file!r})",
            f"    with M.File({path('w_numpy_only.h5')!r}, 'w') as f:\n"
            "        f.create_dataset('x', data=data, chunks=(256, 1024), compression='gzip',"
            " compression_opts=4, shuffle=True)", 1),
        "10,000-object metadata walk (latest)": (
            "", "    with M.File({many!r}, 'r') as f:\n        for g in f:\n"
            "            grp = f[g]; grp.attrs['index']\n            for d in grp:\n"
            "                ds = grp[d]\n                for k in ds.attrs: ds.attrs[k]", 3),
    }
    out = []
    for title, (setup, body, n) in cases.items():
        rows = []
        for mod, only in (("h5py", False), ("purehep", True)):
            code = f"import {mod} as M\n" + timer.format(
                setup=setup.format(gz=gz, lzf=lzf), n=n, body=body.format(many=many))
            rows.append((mod + (" (numpy only)" if only else ""),
                         float(run_python(code, numpy_only=only)[1])))
        out += report(f"numpy only: {title}", rows)
    return out


def write_peak_rss():
    from .write import _data
    data_file = path("write_src.npy")
    if not os.path.exists(data_file):
        np.save(data_file, _data())
    # VmHWM (kiB), not ru_maxrss: a forked child's ru_maxrss starts at its parent's
    hwm = "int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])"
    code = ("import numpy as np, {m} as M\n"
            f"data = np.load({data_file!r})\n"
            f"base = {hwm}\n"
            "with M.File({p!r}, 'w') as f:\n"
            "    f.create_dataset('x', data=data, chunks=(256, 1024), compression='gzip',"
            " compression_opts=4, shuffle=True)\n"
            f"print({hwm}, base)\n")
    print(f"\npeak RSS of a {_data().nbytes // MIB} MiB gzip-4 + shuffle write (the data "
          "loaded first)")
    peaks = {}
    for mod in ("h5py", "purehep"):
        peak, base = map(int, run_python(code.format(m=mod, p=path(f"rss_{mod}.h5")))[1].split())
        peaks[mod] = peak
        print(f"  {mod:<10} peak {peak / 1024:7.0f} MiB (data loaded: {base / 1024:.0f} MiB)")
    print(f"  purehep/h5py peak: {peaks['purehep'] / peaks['h5py']:.2f}x")


ALL = [cold_chunked, cli_small_file, numpy_only, write_peak_rss]
