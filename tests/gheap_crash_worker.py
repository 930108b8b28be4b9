"""Writer process of tests/test_global_heap_crash.py: variable-length values rewritten,
attributes of them replaced, datasets of them created and deleted, one flush per step (the
dead heap collections freed by purehep.write.gheap_release). Before each flush the state it
commits goes to ``pending.json``, after it to ``committed.json``, and the steps done to
``progress``; the parent kills this process and checks the file against the two states."""
import json
import os
import random
import sys

import numpy as np

import purehep
from modify_crash_worker import run


def strings(rng, n, tag):
    return [f"{tag}-{i}-" + "x" * rng.randint(0, 40) for i in range(n)]


def base(f, rng):
    """The objects every trial starts from (``f`` an h5py or purehep file); their state."""
    sdt = f.__class__.__module__.startswith("h5py") and __import__("h5py").string_dtype() \
        or purehep.string_dtype()
    state = {}
    for name, n in (("v", 300), ("w", 200)):
        vals = strings(rng, n, name)
        f.create_dataset(name, data=np.array(vals, dtype=object), dtype=sdt)
        state["/" + name] = vals
    g = f.create_group("g")
    for name in ("va", "vk"):
        vals = strings(rng, 30, name)
        g.attrs[name] = np.array(vals, dtype=sdt)
        state["/g@" + name] = vals
    return state


def step_ops(f, rng, state, step):
    new = dict(state)
    touched = set()
    sdt = purehep.string_dtype()
    for j in range(rng.randint(1, 4)):
        op = rng.choice(["rewrite", "part", "attr", "create", "delete", "delattr"])
        if op == "rewrite" and "/v" not in touched:
            touched.add("/v")
            vals = strings(rng, 300, f"v{step}")
            f["v"][...] = np.array(vals, dtype=object)
            new["/v"] = vals
        elif op == "part" and "/w" not in touched:
            touched.add("/w")
            a = rng.randint(0, 150)
            vals = strings(rng, 50, f"w{step}")
            f["w"][a:a + 50] = np.array(vals, dtype=object)
            cur = list(new["/w"])
            cur[a:a + 50] = vals
            new["/w"] = cur
        elif op == "attr":
            key = f"/g@a{rng.randint(0, 3)}"
            if key in touched:
                continue
            touched.add(key)
            vals = strings(rng, rng.randint(1, 40), f"a{step}")
            f["g"].attrs[key.split("@")[1]] = np.array(vals, dtype=sdt)
            new[key] = vals
        elif op == "create":
            name = f"/g/s{step}_{j}"
            vals = strings(rng, rng.randint(1, 200), name)
            f.create_dataset(name, data=np.array(vals, dtype=object), dtype=sdt)
            new[name] = vals
        elif op == "delete":
            cands = sorted(k for k in new if k.startswith("/g/s") and k not in touched)
            if cands:
                k = rng.choice(cands)
                touched.add(k)
                del f[k]
                del new[k]
        elif op == "delattr":
            cands = sorted(k for k in new if k.startswith("/g@a") and k not in touched)
            if cands:
                k = rng.choice(cands)
                touched.add(k)
                del f["g"].attrs[k.split("@")[1]]
                del new[k]
    return new


def main(path, folder, seed):
    rng = random.Random(seed * 7 + 1)
    with open(os.path.join(folder, "committed.json")) as fh:
        state = json.load(fh)

    def reopen(f):              # (sessions too: the free space record, a new tail)
        f.close()
        return purehep.File(path, "a")
    run(purehep.File(path, "a"), folder, rng, state, step_ops, reopen)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
