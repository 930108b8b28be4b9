"""Timing helpers shared by the benchmarks."""
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.environ.get("PUREHEP_BENCH_DIR") or os.path.join(tempfile.gettempdir(), "purehep-bench")


def path(name):
    os.makedirs(BENCH_DIR, exist_ok=True)
    return os.path.join(BENCH_DIR, name)


def best_of(fn, repeat=5, warmup=1):
    """Best wall time of ``fn()`` over ``repeat`` runs (after ``warmup`` runs)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def cold(code, repeat=5):
    """Median wall time of a fresh Python process running ``code``, with bytecode caching on
    (as users have it: pip precompiles installed packages, an editable install caches on first
    import) and one warm-up run to fill the caches."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# a fresh Python's first statements that make it numpy-only: every module that is neither
# standard library nor numpy nor purehep fails to import, as if nothing else were installed
NUMPY_ONLY = """
import importlib.abc, sys
class _NumpyOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in ("numpy", "purehep") or top[:1] == "_":
            return None
        raise ModuleNotFoundError(f"No module named {name!r} (numpy-only run)", name=name)
sys.meta_path.insert(0, _NumpyOnly())
"""


def run_python(code, numpy_only=False, env=None):
    """(seconds, stdout) of a fresh Python running ``code`` from the repository root."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    full = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    full.update(env or {})
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", (NUMPY_ONLY if numpy_only else "") + code],
                         capture_output=True, text=True, cwd=root, env=full)
    secs = time.perf_counter() - t0
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return secs, out.stdout


def report(title, rows, baseline="h5py"):
    """Print rows of (name, seconds) with the ratio to the baseline's time."""
    base = dict(rows).get(baseline)
    print(f"\n{title}")
    for name, secs in rows:
        if secs is None:
            print(f"  {name:<28} n/a")
            continue
        ratio = f"{secs / base:6.2f}x {baseline} time" if base else ""
        print(f"  {name:<28} {secs * 1000:9.1f} ms  {ratio}")
    return rows
