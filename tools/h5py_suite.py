"""Run h5py's own high-level test suite against purehep through a name shim.

The tests shipped inside the installed h5py wheel (``h5py/tests``) are copied into a temporary
directory, beside a package named ``h5py`` that re-exports purehep's h5py-like API. pytest runs
there in subprocesses (memory-capped, with a timeout), so ``import h5py`` in the tests finds the
shim; a guard plugin records any module of the real h5py that gets imported (none may).

purehep has part of h5py's low-level layer (purehep.h5, h5a, h5d, h5ds, h5f, h5g, h5i, h5l,
h5o, h5p, h5s, h5t, h5z, and ``phil``, h5py's ``_objects`` lock: FROM_PUREHEP); the shim's modules of that layer
and h5py's private modules (``h5py._hl.*``, …) offer those names and a placeholder for every
other one, which raises ``ShimUnavailable`` when used (names h5py also exports publicly
resolve to purehep's).
A test failing through one of them, or whose source uses the low-level API (``h5py.h5*``,
``.id.`` internals) or private names, is counted as low-level / private rather than as a
purehep failure.

    python -m tools.h5py_suite [--json OUT] [--jobs 2] [--oracle] [-k EXPR] [--failures]

``--oracle`` runs the same tests with the real h5py (no shim) and compares: the summary then
gives how many of the tests h5py passes purehep passes, with and without the low-level ones.
"""
import argparse
import ast
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT = 4 << 30
TEST_TIMEOUT = 30          # seconds for one test (pytest-timeout): a hang fails that test
LOWLEVEL = ("h5", "h5a", "h5d", "h5ds", "h5f", "h5fd", "h5g", "h5i", "h5l", "h5o", "h5p", "h5pl",
            "h5r", "h5s", "h5t", "h5z", "h5py_warnings")
PRIVATE = ("_objects", "_selector", "_errors", "_conv", "_proxy", "utils", "_hl",
           "_hl.base", "_hl.files", "_hl.compat", "_hl.vds", "_hl.selections", "_hl.selections2",
           "_hl.dataset", "_hl.group", "_hl.filters", "_hl.dims", "_hl.attrs", "_hl.datatype")
# modules purehep does offer, in part (the rest of their names are placeholders)
FROM_PUREHEP = {"h5ds": "purehep.h5ds", "_objects": "purehep.io.lock",
                "h5py_warnings": "purehep.h5py_warnings", "h5p": "purehep.h5p",
                "h5d": "purehep.h5d", "h5f": "purehep.h5f", "h5z": "purehep.h5z",
                "h5": "purehep.h5", "h5t": "purehep.h5t", "h5s": "purehep.h5s",
                "h5a": "purehep.h5a", "h5r": "purehep.h5r", "h5l": "purehep.h5l",
                "h5g": "purehep.h5g", "h5i": "purehep.h5i", "h5o": "purehep.h5o"}
# the HDF5 release whose behaviour purehep follows: its oracle (h5py 3.16 over libhdf5 2.0.0)
SHIM_HDF5_VERSION = (2, 0, 0)
SHIM_H5PY_VERSION = "3.16.0"

SHIM_UNAVAILABLE = '''"""Placeholders for what purehep does not offer (tools/h5py_suite.py)."""


class ShimUnavailable(NotImplementedError):
    pass


class Placeholder:
    """A name of h5py's low-level layer or private internals: any use raises ShimUnavailable."""

    def __init__(self, qualname, kind):
        object.__setattr__(self, "_qualname", qualname)
        object.__setattr__(self, "_kind", kind)

    def _fail(self, *args, **kwargs):
        raise ShimUnavailable(f"H5PY-SHIM[{self._kind}] {self._qualname} is not provided by "
                              f"purehep")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{self._qualname}.{name}", self._kind)

    __call__ = __setattr__ = __getitem__ = __setitem__ = __iter__ = __len__ = _fail
    __enter__ = __exit__ = __bool__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __int__ = __index__ = __mro_entries__ = __instancecheck__ = _fail

    def __repr__(self):
        return f"<H5PY-SHIM placeholder {self._qualname}>"


def module_getattr(modname, kind, public=(), values=None):
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        if values and name in values:
            return values[name]
        if name in public:
            import h5py
            return getattr(h5py, name)
        return Placeholder(f"{modname}.{name}", kind)
    return __getattr__
'''

SHIM_INIT = f'''"""h5py name shim over purehep's h5py-like API (tools/h5py_suite.py)."""
import importlib as _importlib

import purehep as _purehep
from purehep import *  # noqa: F401,F403
from purehep import dtypes as _dtypes, reference as _reference

for _name in dir(_dtypes) + dir(_reference):
    if not _name.startswith("_") and _name not in ("np", "namedtuple"):
        globals()[_name] = getattr(_dtypes, _name, None) or getattr(_reference, _name)

_SUBMODULES = {sorted(LOWLEVEL + PRIVATE + ("version",))!r}


def __getattr__(name):
    if name in _SUBMODULES:
        return _importlib.import_module(f"{{__name__}}.{{name}}")
    if name == "filters":  # h5py.filters: purehep.filters (encode, decode)
        return _importlib.import_module("purehep.filters")
    if not name.startswith("__"):
        try:
            return getattr(_purehep, name)
        except AttributeError:
            pass
    raise AttributeError(f"module 'h5py' (purehep shim) has no attribute {{name!r}}")
'''

SHIM_VERSION = f'''"""Versions of the shim: purehep follows h5py {SHIM_H5PY_VERSION} over libhdf5
{".".join(map(str, SHIM_HDF5_VERSION))} (its test oracle)."""
import purehep as _purehep

version = {SHIM_H5PY_VERSION!r}
version_tuple = tuple(int(x) for x in version.split(".")) + ("", "", "")[:0]
hdf5_version_tuple = {SHIM_HDF5_VERSION!r}
hdf5_version = ".".join(map(str, hdf5_version_tuple))
hdf5_built_version_tuple = hdf5_version_tuple
api_version_tuple = (1, 8)
api_version = "1.8"
purehep_version = _purehep.__version__
'''

# whole modules of h5py's low-level layer left out unless --all: none of their tests can pass
# here, and they cost most of the run (each of their tests starts a Python process). With
# --oracle their tests count as low-level failures.
NOT_RUN = {"test_h5pl.py": "h5py.h5pl plugin search paths",
           "test_h5z.py": "h5py.h5z filter registration"}
# private names with a plain meaning for purehep (it reads and writes virtual datasets)
# and of its file system (h5py's filename_encode is os.fsencode on POSIX; its product of a
# shape is math.prod); it has no 'direct' file driver
PRIVATE_VALUES = {"_hl.vds": {"vds_support": True}, "_hl.files": {"direct_vfd": False}}
PRIVATE_CODE = {"_hl.compat": "from os import fsencode as filename_encode  # noqa: F401\n",
                "_hl.base": "from math import prod as product  # noqa: F401\n"}
# names h5py's private modules share with its public API
PUBLIC_IN_PRIVATE = ("Empty", "is_hdf5", "MultiBlockSlice", "File", "Group", "Dataset",
                     "Datatype", "AttributeManager", "HardLink", "SoftLink", "ExternalLink")

GUARD_PLUGIN = '''"""pytest plugin of the h5py shim run: outcomes as JSON lines (one per report,
written as they come, so a run cut short keeps what it did), and a guard on the real h5py."""
import json
import os
import sys

SHIM = os.environ["H5PY_SHIM_DIR"]
_out = open(os.environ["H5PY_SUITE_OUT"], "w", buffering=1)


def _emit(**record):
    _out.write(json.dumps(record) + "\\n")


def pytest_runtest_logstart(nodeid, location):
    _emit(nodeid=nodeid, when="start", outcome="", xfail=False, longrepr="")


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _emit(nodeid=report.nodeid, when=report.when, outcome=report.outcome,
              xfail=hasattr(report, "wasxfail"), seconds=round(report.duration, 2),
              longrepr=(report.longreprtext or "")[-3000:] if report.outcome != "passed" else "")


def pytest_collectreport(report):
    if report.outcome != "passed":
        _emit(nodeid=report.nodeid, when="collect", outcome="error", xfail=False,
              longrepr=(report.longreprtext or "")[-3000:])


def pytest_sessionfinish(session, exitstatus):
    foreign = sorted({m for m, mod in list(sys.modules.items())
                      if (m == "h5py" or m.startswith("h5py."))
                      and getattr(mod, "__file__", None)
                      and not os.path.realpath(mod.__file__).startswith(os.path.realpath(SHIM))})
    _emit(nodeid="", when="finish", outcome=str(int(exitstatus)), xfail=False,
          longrepr=json.dumps(foreign))
'''

LOW_SRC = re.compile(r"\bh5py\.h5[a-z]*\b|\b(from (h5py|\.\.) import .*\bh5[a-z]*)|"
                     r"\bh5(a|d|ds|f|fd|g|i|l|o|p|pl|r|s|t|z)\.[A-Za-z_]|\.id\b(?!\s*==)|\bh5\.|"
                     r"\bgetattr\(h5[a-z]*,")
PRIVATE_SRC = re.compile(r"\bh5py\._|\b(?<!self)\._(?!_)[a-z]\w*|\bphil\b|_fast_reader|"
                         r"is_empty_dataspace|\bproduct\(|filename_encode|direct_vfd|_drivers|"
                         r"make_fapl|\bsel2?\.|Selector\b")
LOW_ERR = re.compile(r"H5PY-SHIM\[low-level\]|'(DatasetID|GroupID|FileID|TypeID|AttrID)' "
                     r"object has no attribute|object has no attribute 'id'")
PRIVATE_ERR = re.compile(r"H5PY-SHIM\[private\]")


def tests_dir():
    """``h5py/tests`` of the installed wheel, found without importing h5py."""
    import importlib.util
    spec = importlib.util.find_spec("h5py")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("h5py is not installed: it is the oracle of this runner")
    return Path(list(spec.submodule_search_locations)[0]) / "tests"


def build_shim(dest):
    """The ``h5py`` shim package with h5py's tests inside it; returns the package dir."""
    pkg = Path(dest) / "h5py"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(SHIM_INIT)
    (pkg / "_unavailable.py").write_text(SHIM_UNAVAILABLE)
    (pkg / "version.py").write_text(SHIM_VERSION)
    for names, kind in ((LOWLEVEL, "low-level"), (PRIVATE, "private")):
        for name in names:
            parts = name.split(".")
            target = pkg.joinpath(*parts[:-1], parts[-1] + ".py")
            if name == "_hl":
                target = pkg / "_hl" / "__init__.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            offered = FROM_PUREHEP.get(name)
            target.write_text(
                PRIVATE_CODE.get(name, "") +
                (f"from {offered} import *  # noqa: F401,F403\n" if offered else "") +
                "from h5py._unavailable import module_getattr\n"
                f"__getattr__ = module_getattr(__name__, {kind!r}, {PUBLIC_IN_PRIVATE!r}, "
                f"{PRIVATE_VALUES.get(name)!r})\n")
    shutil.copytree(tests_dir(), pkg / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (Path(dest) / "plugin").mkdir()
    (Path(dest) / "plugin" / "h5py_suite_guard.py").write_text(GUARD_PLUGIN)
    (Path(dest) / "pytest.ini").write_text("[pytest]\n")
    return pkg


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.nice(5)


def _chunks(files, jobs):
    """Test files in ``jobs`` groups of similar size (largest first, greedy)."""
    groups = [[0, []] for _ in range(jobs)]
    for f in sorted(files, key=lambda p: -p.stat().st_size):
        g = min(groups, key=lambda g: g[0])
        g[0] += f.stat().st_size
        g[1].append(f)
    return [g[1] for g in groups if g[1]]


def run_pytest(base, files, *, oracle, timeout, keyword=None, jobs=2):
    """Run pytest on ``files`` (paths under ``base``) in ``jobs`` parallel subprocesses."""
    env = dict(os.environ)
    shim_dir = str(base)
    env["H5PY_SHIM_DIR"] = shim_dir if not oracle else str(tests_dir().parent)
    env["PYTHONPATH"] = os.pathsep.join(
        ([] if oracle else [shim_dir]) + [str(ROOT), str(Path(base) / "plugin")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the installed h5py
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    procs = []
    for i, group in enumerate(_chunks(files, jobs)):
        out = Path(base) / f"result-{'oracle' if oracle else 'shim'}-{i}.jsonl"
        rootdir = tests_dir().parent.parent if oracle else base
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "h5py_suite_guard", "-c", str(Path(base) / "pytest.ini"),
               "--rootdir", str(rootdir), "-o", "addopts=", "--tb=short", "-rN", "--no-header",
               "--continue-on-collection-errors",
               "--timeout", str(TEST_TIMEOUT), "--timeout-method", "signal",
               *map(str, group)]
        if keyword:
            cmd += ["-k", keyword]
        env_i = dict(env, H5PY_SUITE_OUT=str(out))
        procs.append((subprocess.Popen(cmd, cwd=base, env=env_i, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, preexec_fn=_limit_memory), out))
    records, foreign, problems = [], set(), []
    deadline = time.monotonic() + timeout
    for proc, out in procs:
        try:
            proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            problems.append(f"timeout after {timeout} s: {out.name}")
    for proc, out in procs:
        lines = [json.loads(ln) for ln in out.read_text().splitlines()] if out.exists() else []
        finish = [r for r in lines if r["when"] == "finish"]
        if not finish:
            problems.append(f"pytest exited {proc.returncode} before the end of {out.name}")
        for r in finish:
            foreign.update(json.loads(r["longrepr"]))
        started = [r["nodeid"] for r in lines if r["when"] == "start"]
        done = {r["nodeid"] for r in lines if r["when"] not in ("start", "finish")}
        for nodeid in started:
            if nodeid not in done:   # running when the run was cut short
                lines.append(dict(nodeid=nodeid, when="call", outcome="failed", xfail=False,
                                  longrepr="E   run cut short (timeout) during this test"))
        records += [r for r in lines if r["when"] not in ("start", "finish")]
    return records, sorted(foreign), problems


def _short_id(nodeid):
    return nodeid.split("tests/", 1)[-1]


def _test_sources(test_root):
    """Source text of each test function, with its class's setUp, by short node id stem."""
    sources = {}
    for path in sorted(test_root.rglob("test_*.py")):
        rel = str(path.relative_to(test_root))
        text = path.read_text()
        tree = ast.parse(text)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                setup = "".join(ast.get_source_segment(text, n) or "" for n in node.body
                                if isinstance(n, ast.FunctionDef)
                                and n.name in ("setUp", "setUpClass"))
                for n in node.body:
                    if isinstance(n, ast.FunctionDef) and n.name.startswith("test"):
                        sources[f"{rel}::{node.name}::{n.name}"] = \
                            setup + (ast.get_source_segment(text, n) or "")
            elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                sources[f"{rel}::{node.name}"] = ast.get_source_segment(text, node) or ""
    return sources


def _source_of(sources, sid):
    src = sources.get(sid.split("[", 1)[0], "")
    # common.py's assertNumpyBehavior reads through h5py's private dset._fast_reader too
    if src.count("assertNumpyBehavior(") > src.count("skip_fast_reader=True"):
        src += "\n_fast_reader"
    return src


def _error_line(longrepr):
    lines = [ln for ln in longrepr.splitlines() if ln.startswith("E ")]
    return lines[-1][1:].strip()[:200] if lines else longrepr.strip().splitlines()[-1][:200] \
        if longrepr.strip() else ""


def outcomes(records):
    """One outcome per test: passed / failed / error / skipped (xfail counts as skipped)."""
    result = {}
    for r in records:
        sid = _short_id(r["nodeid"])
        if r["when"] == "collect":
            result[sid] = ("error", r["longrepr"])
            continue
        if r["outcome"] == "skipped":
            state = "skipped"
        elif r["outcome"] == "failed":
            state = "failed" if r["when"] == "call" else "error"
        else:
            state = "passed"
        old = result.get(sid)
        if old is None or old[0] in ("passed", "skipped") or state in ("failed", "error") \
                and old[0] not in ("failed", "error"):
            result[sid] = (state, r["longrepr"])
    return result


def summarize(result, sources, oracle=None, not_run=()):
    if oracle is not None:
        for sid in oracle:
            module = sid.split("::", 1)[0]
            if module in not_run and sid not in result:
                result[sid] = ("error", f"E   H5PY-SHIM[low-level] not run: {NOT_RUN[module]}")
        # a module that failed to import: its tests (known from h5py's run) count as errors
        for sid in set(oracle) - set(result):
            module = sid.split("::", 1)[0]
            result[sid] = ("error", result.get(module, ("error", "not collected"))[1])
        for module in [sid for sid in result if "::" not in sid and
                       any(o.startswith(sid + "::") for o in oracle)]:
            del result[module]
    counts = Counter(state for state, _ in result.values())
    bad = {sid: lr for sid, (state, lr) in result.items() if state in ("failed", "error")}
    low, private, causes = set(), set(), Counter()
    for sid, lr in bad.items():
        src = _source_of(sources, sid)
        if LOW_ERR.search(lr) or LOW_SRC.search(src):
            low.add(sid)
        elif PRIVATE_ERR.search(lr) or PRIVATE_SRC.search(src):
            private.add(sid)
        else:
            causes[re.sub(r"0x[0-9a-f]+|'[^']*'|\d+", "…", _error_line(lr))[:120]] += 1
    summary = {"total": len(result), "passed": counts["passed"], "failed": counts["failed"],
               "errors": counts["error"], "skipped": counts["skipped"],
               "failures_low_level": len(low), "failures_private": len(private),
               "top_causes": causes.most_common(40),
               "failing": {sid: _error_line(bad[sid]) for sid in sorted(bad)}}
    if oracle is not None:
        ok = {sid for sid, (state, _) in oracle.items() if state == "passed"}
        # high-level: neither the test's source nor its failure here (a module-level use, a
        # helper of common.py) touches the low-level layer or private internals
        hl = {sid for sid in ok
              if not LOW_SRC.search(_source_of(sources, sid))
              and not PRIVATE_SRC.search(_source_of(sources, sid))
              and sid not in low and sid not in private}
        passed = {sid for sid, (state, _) in result.items() if state == "passed"}
        summary["oracle"] = {"total": len(oracle), "passed": len(ok),
                             "shim_passed_of_oracle_passed": len(passed & ok),
                             "high_level_oracle_passed": len(hl),
                             "shim_passed_of_high_level": len(passed & hl),
                             "high_level_failing": sorted(hl - passed)}
    return summary


def run_suite(*, jobs=2, timeout=900, keyword=None, oracle=False, workdir=None,
              oracle_json=None, save_oracle=None, run_all=False):
    """Build the shim, run the suite (and the oracle if asked), return the summary dict."""
    base = Path(workdir or tempfile.mkdtemp(prefix="h5py-suite-"))
    try:
        pkg = build_shim(base)
        not_run = () if run_all else tuple(NOT_RUN)
        files = sorted(p for p in (pkg / "tests").rglob("test_*.py")
                       if str(p.relative_to(pkg / "tests")) not in not_run)
        t0 = time.monotonic()
        records, foreign, problems = run_pytest(base, files, oracle=False, timeout=timeout,
                                                keyword=keyword, jobs=jobs)
        elapsed = time.monotonic() - t0
        sources = _test_sources(pkg / "tests")
        oracle_result = None
        if oracle_json:
            saved = json.loads(Path(oracle_json).read_text())["outcomes"]
            oracle_result = {k: tuple(v) for k, v in saved.items()}
        elif oracle:
            orig = sorted(tests_dir().rglob("test_*.py"))
            orecords, _, oproblems = run_pytest(base, orig, oracle=True, timeout=timeout,
                                                keyword=keyword, jobs=jobs)
            problems += [f"oracle: {p}" for p in oproblems]
            oracle_result = outcomes(orecords)
            if save_oracle:
                Path(save_oracle).write_text(json.dumps({"outcomes": oracle_result}))
        summary = summarize(outcomes(records), sources, oracle_result, not_run)
        summary.update(not_run=list(not_run), seconds=round(elapsed, 1),
                       foreign_h5py_modules=foreign,
                       problems=problems, shim_hdf5_version=list(SHIM_HDF5_VERSION))
        return summary
    finally:
        if workdir is None:
            shutil.rmtree(base, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("-k", dest="keyword")
    ap.add_argument("--oracle", action="store_true", help="also run with the real h5py")
    ap.add_argument("--save-oracle", help="with --oracle: keep h5py's outcomes in this file")
    ap.add_argument("--oracle-json", help="h5py's outcomes from an earlier --save-oracle")
    ap.add_argument("--all", action="store_true",
                    help="run the low-level modules left out by default too (NOT_RUN)")
    ap.add_argument("--failures", action="store_true", help="list every failing test")
    ap.add_argument("--keep", help="build and keep the shim in this (new) directory")
    args = ap.parse_args(argv)
    s = run_suite(jobs=args.jobs, timeout=args.timeout, keyword=args.keyword,
                  oracle=args.oracle, workdir=args.keep, oracle_json=args.oracle_json,
                  save_oracle=args.save_oracle, run_all=args.all)
    if args.json:
        Path(args.json).write_text(json.dumps(s, indent=1))
    print(f"h5py suite on purehep: {s['passed']} passed, {s['failed']} failed, "
          f"{s['errors']} errors, {s['skipped']} skipped of {s['total']} "
          f"({s['seconds']} s); failures via the low-level layer {s['failures_low_level']}, "
          f"private internals {s['failures_private']}"
          + (f"; not run: {', '.join(s['not_run'])}" if s["not_run"] else ""))
    if "oracle" in s:
        o = s["oracle"]
        print(f"h5py passes {o['passed']} of {o['total']}; purehep passes "
              f"{o['shim_passed_of_oracle_passed']} of them, and "
              f"{o['shim_passed_of_high_level']} of the {o['high_level_oracle_passed']} "
              f"that use neither the low-level layer nor private internals")
    for cause, n in s["top_causes"]:
        print(f"{n:4d}  {cause}")
    if args.failures:
        for sid, err in s["failing"].items():
            print(f"{sid}: {err}")
    for p in s["problems"]:
        print("PROBLEM:", p)
    if s["foreign_h5py_modules"]:
        print("REAL h5py IMPORTED:", s["foreign_h5py_modules"])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
