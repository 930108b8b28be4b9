"""Crash safety of freeing dead global heap collections (purehep.write.gheap_release): a
writer rewriting variable-length values, replacing vlen attributes and deleting vlen datasets
(tests/gheap_crash_worker.py), killed with SIGKILL at a random moment, leaves a file h5py
opens with every value as the last completed flush committed it or as the flush in progress
would leave it: a collection is reused only once a commit no longer refers to it."""
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402
from modify_helpers import check, progress, saved_states  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _str(v):
    return v.decode() if isinstance(v, bytes) else v


def read_state(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out["/" + name] = [_str(v) for v in obj[()]]
            for a in obj.attrs:
                out[f"/{name}@{a}"] = [_str(v) for v in obj.attrs[a]]
        f.visititems(visit)
    return out


def trial(tmp_path, seed):
    sys.path.insert(0, HERE)
    import gheap_crash_worker as W
    rng = random.Random(seed)
    folder = tmp_path / f"t{seed}"
    folder.mkdir()
    path = str(folder / "f.h5")
    writer = rng.choice([h5py, purehep])
    with writer.File(path, "w", libver=rng.choice(["earliest", "latest"])) as f:
        state = W.base(f, random.Random(seed))
    for name in ("committed.json", "pending.json"):
        with open(folder / name, "w") as fh:
            json.dump(state, fh)
    steps = rng.randint(0, 14)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "gheap_crash_worker.py"),
                             path, str(folder), str(seed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300           # a guard against a hung worker only
    while progress(folder) < steps and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(rng.random() * 0.05)
    alive = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert alive, f"worker ended before the kill: {err.decode()[-2000:]}"
    problems = check(read_state(path), *saved_states(folder))
    assert not problems, (seed, writer.__name__, problems[:5])
    return progress(folder)


def test_gheap_crash_short(tmp_path):
    done = [trial(tmp_path, s) for s in range(3000, 3008)]
    assert max(done) > 2


@pytest.mark.slow
def test_gheap_crash_many(tmp_path):
    done = [trial(tmp_path, s) for s in range(4000, 4100)]
    assert max(done) > 2
