"""Crash safety of the writer: a writer killed with SIGKILL at random moments, in 'a' mode on
an existing file or in 'w' mode on a new one, leaves a file h5py opens, with everything the
last completed flush committed (objects of the flush in progress are either old or new, each
whole). The kill comes after the worker reports a random number of flushes done, plus a
random delay inside the next step: no assertion depends on how fast the machine is."""
import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402
from modify_helpers import check, progress, saved_states  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def base_objects(f):
    """The objects every trial starts from, written into ``f``; their state."""
    f.create_dataset("ea", data=np.arange(10, dtype="f8") * 0.5, chunks=(16,),
                     maxshape=(None,))
    f.create_dataset("gz", data=np.arange(100, dtype="f4"), chunks=(10,),
                     compression="gzip")
    f.create_group("grp").attrs["a0"] = 0
    many = f.create_group("many")
    for i in range(10):
        many.create_dataset(f"m{i}", data=np.arange(3, dtype="i4") + i)
    state = {"/ea": (np.arange(10) * 0.5).tolist(), "/gz": list(range(100)), "/grp@a0": 0}
    for i in range(10):
        state[f"/many/m{i}"] = (np.arange(3) + i).tolist()
    return state


def make_base(path, folder, writer, libver):
    with writer.File(path, "w", libver=libver) as f:
        state = base_objects(f)
    for name in ("committed.json", "pending.json"):
        with open(os.path.join(folder, name), "w") as fh:
            json.dump(state, fh)


def read_state(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            key = "/" + name
            if isinstance(obj, h5py.Dataset):
                out[key] = obj[()].tolist()
            for a in obj.attrs:
                out[f"{key}@{a}"] = obj.attrs[a].item()
        f.visititems(visit)
        for a in f.attrs:
            out[f"/@{a}"] = f.attrs[a].item()
    return out


def trial(tmp_path, seed, mode):
    rng = random.Random(seed)
    folder = tmp_path / f"t{seed}{mode}"
    folder.mkdir()
    path = str(folder / "f.h5")
    writer = rng.choice([h5py, purehep])
    libver = rng.choice(["earliest", "latest"])
    if mode == "a":
        make_base(path, str(folder), writer, libver)
    else:
        for name in ("committed.json", "pending.json"):
            with open(folder / name, "w") as fh:
                json.dump({}, fh)
    steps = rng.randint(0, 12)                  # flushes to wait for before the kill
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "modify_crash_worker.py"),
                             path, str(folder), str(seed), mode, libver],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300           # a guard against a hung worker only
    while progress(folder) < steps and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(rng.random() * 0.05)             # somewhere inside the next step
    alive = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert alive, f"worker ended before the kill: {err.decode()[-2000:]}"
    if not os.path.exists(path):                # killed before 'w' created the file
        return 0
    problems = check(read_state(path), *saved_states(folder))
    assert not problems, (seed, writer.__name__, libver, problems[:5])
    return progress(folder)


def _run(tmp_path, trials, first_seed, mode):
    done = [trial(tmp_path, s, mode) for s in range(first_seed, first_seed + trials)]
    assert max(done) > 2           # the workers got some steps done


@pytest.mark.parametrize("mode", ["a", "w"])
def test_crash_short(tmp_path, mode):
    _run(tmp_path, 6, 1000, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["a", "w"])
def test_crash_many(tmp_path, mode):
    _run(tmp_path, 150, 2000, mode)     # 300 trials in all
