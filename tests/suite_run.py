"""Another package's own test suite, run by pytest in a subprocess (niced, address space
capped at MEMORY_LIMIT), for tests/test_h5netcdf_suite.py and tests/test_xarray_suite.py."""
import os
import re
import resource
import subprocess
import sys
from xml.etree import ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_LIMIT = 4 << 30


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.nice(5)


def run_suite(where, plugin_dirs, args, timeout=1800):
    """(outcome counts, names of the failed tests, pytest's output) of ``pytest args`` run in
    the directory ``where`` with this checkout and ``plugin_dirs`` first on PYTHONPATH.
    Counts are keyed as pytest's summary line words them, in the singular for "error"."""
    report = os.path.join(where, "report.xml")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT, *plugin_dirs, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore",
         "--tb=line", f"--junitxml={report}", *args],
        cwd=where, env=env, capture_output=True, text=True, timeout=timeout,
        preexec_fn=_limit)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    counts = {"passed": 0, "failed": 0, "error": 0}
    counts.update({k.removesuffix("s") if k in ("errors", "warnings") else k: int(n)
                   for n, k in re.findall(r"(\d+) (\w+)", summary)})
    failed = {_name(case) for case in ElementTree.parse(report).getroot().iter("testcase")
              if any(c.tag in ("failure", "error") for c in case)}
    return counts, failed, proc.stdout


def _name(case):
    """A test's name, "Class::test" for a test method."""
    owner = case.get("classname").rpartition(".")[2]
    return f"{owner}::{case.get('name')}" if owner.startswith("Test") else case.get("name")
