"""Crash points: a commit stopped after each of its writes, one by one (issue 20).

A worker makes random changes (the crash test's operations: datasets created and deleted,
appends to an extensible-array / v1 B-tree dataset, chunk overwrites, attributes added and
deleted) in flushed steps on files h5py and purehep wrote (libver earliest and latest), then
one more step whose commit is stopped after its k-th write, for every k of that commit. After
each stop, h5py in a child process (it may crash on a bad file) must open the file and read
exactly the last committed state or, object by object, the new one. ``make test`` runs a
sample of the stop points; the slow marker runs every one of several workloads.
"""
import json
import os
import random
import shutil
import subprocess
import sys

import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402
from modify_helpers import check  # noqa: E402
from test_modify_crash import make_base  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
READ = """
import json, sys
sys.path.insert(0, {here!r})
from test_modify_crash import read_state
print(json.dumps(read_state(sys.argv[1])))
"""


def run_worker(path, folder, seed, steps, k, torn=False):
    """The worker's output; None when ``torn`` and its k+1-th write lies in one page."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.path.dirname(HERE)]))
    proc = subprocess.run([sys.executable, os.path.join(HERE, "crash_point_worker.py"), path,
                           folder, str(seed), str(steps), str(k)] + (["torn"] if torn else []),
                          capture_output=True, text=True, env=env, timeout=600)
    if torn and proc.returncode == 3:
        return None
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def h5py_state(path):
    """What h5py reads of ``path``, in a child process (a writer may still hold the file)."""
    env = dict(os.environ, HDF5_USE_FILE_LOCKING="FALSE")
    proc = subprocess.run([sys.executable, "-c", READ.format(here=HERE), path],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, f"h5py could not read the file: {proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


def sweep(tmp_path, seed, writer, libver, steps, sample=None, torn=False):
    base = tmp_path / f"base{seed}"
    base.mkdir()
    make_base(str(base / "f.h5"), str(base), writer, libver)
    probe = tmp_path / f"probe{seed}"
    shutil.copytree(base, probe)
    writes = int(run_worker(str(probe / "f.h5"), str(probe), seed, steps, -1).split()[-1])
    points = range(writes + 1)
    if sample is not None:
        points = sorted(random.Random(seed).sample(points, min(sample, writes + 1)))
    bad = []
    for k in points:
        case = tmp_path / f"s{seed}k{k}"
        shutil.copytree(base, case)
        if run_worker(str(case / "f.h5"), str(case), seed, steps, k, torn) is None:
            shutil.rmtree(case)
            continue
        with open(case / "committed.json") as fh:
            committed = json.load(fh)
        with open(case / "pending.json") as fh:
            pending = json.load(fh)
        problems = check(h5py_state(str(case / "f.h5")), committed, pending)
        if problems:
            bad.append((k, problems[:3]))
        shutil.rmtree(case)
    assert not bad, (seed, writer.__name__, libver, writes, bad[:3])
    return writes


@pytest.mark.parametrize("seed,writer,libver", [(11, purehep, "earliest"), (12, h5py, "latest")])
def test_crash_points_sample(tmp_path, seed, writer, libver):
    assert sweep(tmp_path, seed, writer, libver, steps=3, sample=6) > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(20, 28))
def test_crash_points_every_write(tmp_path, seed):
    writer = (h5py, purehep)[seed % 2]
    libver = ("earliest", "latest")[(seed // 2) % 2]
    sweep(tmp_path, seed, writer, libver, steps=2 + seed % 5)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [20, 21, 23, 25, 27, 57, 59, 61])
def test_torn_writes(tmp_path, seed):
    """Each write of the commit that crosses a system page boundary stopped at that boundary
    (what a SIGKILL during the write leaves). In-place patches are written a page at a time
    (FileSink.patch) and small metadata lies inside one page (write.allocator.PAGE_CONTAINED),
    so that no patch is cut; new structures and raw data, written before the commit refers
    to them, may be. Seed 61 appends to a dataset whose v1 chunk B-tree leaf (2096 bytes)
    spans two pages: written whole, a cut left its count new and its entries old, and h5py
    read other values."""
    writer = (h5py, purehep)[seed % 2]
    libver = ("earliest", "latest")[(seed // 2) % 2]
    sweep(tmp_path, seed, writer, libver, steps=2 + seed % 5, torn=True)


def test_small_metadata_inside_system_pages():
    """Metadata blocks of PAGE_CONTAINED bytes or less never span two system pages of the
    file (a user block shifting them included), whether taken from the end of the file, the
    free list or grown in place; raw data and bigger blocks are placed as before."""
    import random

    from purehep.write.allocator import PAGE_CONTAINED, SYSTEM_PAGE, Allocator
    for base in (0, 512):
        rng = random.Random(base)
        a = Allocator(100, base=base)
        live = []
        for _ in range(3000):
            r = rng.random()
            if r < 0.5:
                n = rng.randint(1, 1100)
                kind = rng.choice(["meta", "raw"])
                addr = a.alloc(n, kind=kind)
                if kind == "meta" and n <= PAGE_CONTAINED:
                    first, last = addr + base, addr + base + n - 1
                    assert first // SYSTEM_PAGE == last // SYSTEM_PAGE, (base, addr, n)
                live.append((addr, n))
            elif r < 0.6 and live:
                addr, n = live[-1]
                new = n + rng.randint(1, 300)
                if a.extend(addr, n, new):
                    if new <= PAGE_CONTAINED:
                        assert (addr + base) // SYSTEM_PAGE == \
                            (addr + base + new - 1) // SYSTEM_PAGE
                    live[-1] = (addr, new)
            elif r < 0.9 and live:
                a.release(*live.pop(rng.randrange(len(live))))
            else:
                a.commit()


def test_patch_writes_what_changes_a_page_at_a_time(tmp_path):
    """FileSink.patch writes only the bytes that differ, one write per system page, the last
    page first; nothing when nothing differs."""
    from purehep.io.sink import SYSTEM_PAGE, FileSink
    path = tmp_path / "p.bin"
    old = bytes(range(256)) * 40
    path.write_bytes(old)
    sink = FileSink(path, "r+")
    writes = []
    write = sink.write
    sink.write = lambda offset, data: writes.append((offset, bytes(data))) or write(offset, data)
    at = SYSTEM_PAGE - 100                           # a structure across the first boundary
    new = bytearray(old[at:at + 300])
    new[5] ^= 1                                      # its header, in the first page
    new[150] ^= 1                                    # an entry in the second page
    new[290] ^= 1
    sink.patch(at, new)
    assert writes == [(at + 150, bytes(new[150:291])), (at + 5, bytes(new[5:6]))]
    writes.clear()
    sink.patch(at, new)
    assert writes == []
    sink.patch(10, old[10:20] + b"tail")
    assert writes == [(20, b"tail")]
    writes.clear()
    end = len(old)
    sink.patch(end - 2, old[-2:] + b"more")          # past the file's end: all of it new
    assert writes == [(end, b"more")]
    sink.close()
    data = path.read_bytes()
    assert data[at:at + 300] == bytes(new) and data[20:24] == b"tail" and data[end:] == b"more"
