"""Random sequences of changes in 'r+' (no kill) never leave a file libhdf5 cannot read
(issue 20): the crash test's operations plus nested groups created and deleted (the sequence
that once made two groups share one local heap), on files h5py and purehep wrote, earliest
and latest; after every few flushes h5py, in a child process, reads exactly the state made,
and ``purehep check`` finds nothing wrong."""
import json
import os
import random
import subprocess
import sys

import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402
from modify_crash_worker import step_ops  # noqa: E402
from test_crash_points import h5py_state  # noqa: E402
from test_modify_crash import make_base  # noqa: E402


def group_ops(f, rng, step, groups):
    """Create a nested group or delete a group (with what it holds)."""
    if groups and rng.random() < 0.4:
        victim = rng.choice(sorted(groups))
        del f[victim]
        groups.difference_update({g for g in groups if g == victim or
                                  g.startswith(victim + "/")})
        return victim
    parent = rng.choice(sorted(groups) + ["/", "/many"])
    name = f"{parent.rstrip('/')}/g{step}"
    f.create_group(name)
    groups.add(name)
    return None


def run(tmp_path, seed, writer, libver, steps):
    rng = random.Random(seed)
    folder = tmp_path / f"r{seed}"
    folder.mkdir()
    path = str(folder / "f.h5")
    make_base(path, str(folder), writer, libver)
    with open(folder / "committed.json") as fh:
        state = json.load(fh)
    groups = set()
    with purehep.File(path, "r+") as f:
        for step in range(1, steps + 1):
            state = step_ops(f, rng, state, step)
            gone = group_ops(f, rng, step, groups)
            if gone:
                state = {k: v for k, v in state.items()
                         if not (k == gone or k.startswith(gone + "/") or
                                 k.startswith(gone + "@"))}
            f.flush()
            if step % 5 == 0 or step == steps:
                assert h5py_state(path) == state, (seed, step)
    out = subprocess.run([sys.executable, "-m", "purehep", "check", path],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "0 findings" in out.stdout, out.stdout[-2000:]


@pytest.mark.parametrize("seed,writer,libver", [(1, purehep, "earliest"), (2, h5py, "latest"),
                                                (3, h5py, "earliest")])
def test_random_changes_stay_readable(tmp_path, seed, writer, libver):
    run(tmp_path, seed, writer, libver, steps=15)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 140))
def test_random_changes_stay_readable_long(tmp_path, seed):
    run(tmp_path, seed, (h5py, purehep)[seed % 2], ("earliest", "latest")[(seed // 2) % 2],
        steps=60)
