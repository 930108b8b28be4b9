"""Writer process of the crash test: random modifications, one flush per step, in 'a' mode
on a base file, or in 'w' mode on a new file (the base objects written and flushed first).

Before each flush the state the flush will commit is written to ``pending.json``; after it,
to ``committed.json`` (each by atomic rename), and the number of steps done to ``progress``.
The parent kills this process once it has made the progress it waits for, and checks the
file against the two states.
"""
import json
import os
import random
import sys

import numpy as np

import purehep

GROUPS = ["/", "/grp", "/many"]


def save(folder, name, state):
    tmp = os.path.join(folder, name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(state, fh)
    os.replace(tmp, os.path.join(folder, name))


def new_file(path, folder, libver):
    """'w' mode: the base objects of the 'a' trials, written and flushed in the new file."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_modify_crash import base_objects
    f = purehep.File(path, "w", libver=libver)
    state = base_objects(f)
    save(folder, "pending.json", state)
    f.flush()
    save(folder, "committed.json", state)
    save(folder, "progress", 0)
    return f, state


def step_ops(f, rng, state, step):
    """One step's random operations on ``f``; returns the state they lead to."""
    new = dict(state)
    touched = set()
    for j in range(rng.randint(1, 4)):
        op = rng.choice(["create", "create", "append", "overwrite", "attr", "delete",
                         "delattr"])
        if op == "create":
            grp = rng.choice(GROUPS)
            name = f"{grp.rstrip('/')}/s{step}_{j}"
            data = np.arange(rng.randint(8, 50), dtype="i4") + step
            kw = {"chunks": (8,), "compression": "gzip"} if rng.random() < 0.5 else {}
            f.create_dataset(name, data=data, **kw)
            new[name] = data.tolist()
        elif op == "append" and "/ea" not in touched:
            touched.add("/ea")
            d = f["ea"]
            n = d.shape[0]
            k = rng.randint(1, 300)
            d.resize((n + k,))
            vals = np.arange(n, n + k, dtype="f8") * 0.5
            d[n:n + k] = vals
            new["/ea"] = state["/ea"] + vals.tolist()
        elif op == "overwrite" and "/gz" not in touched:
            touched.add("/gz")
            a = rng.randint(0, 90)
            vals = np.full(10, float(step), "f4")
            f["gz"][a:a + 10] = vals
            cur = list(new["/gz"])
            cur[a:a + 10] = vals.tolist()
            new["/gz"] = cur
        elif op == "attr":
            obj = rng.choice(["/", "/grp", "/ea"])
            key = f"{obj}@a{rng.randint(0, 12)}"
            if key in touched:
                continue
            touched.add(key)
            f[obj].attrs[key.split("@")[1]] = step
            new[key] = step
        elif op == "delete":
            cands = [k for k in new if "@" not in k and "/s" in k and k not in touched]
            if cands:
                k = rng.choice(sorted(cands))
                touched.add(k)
                del f[k]
                del new[k]
        elif op == "delattr":
            cands = [k for k in new if "@" in k and k not in touched]
            if cands:
                k = rng.choice(sorted(cands))
                touched.add(k)
                obj, name = k.split("@")
                del f[obj].attrs[name]
                del new[k]
    return new


def main(path, folder, seed, mode="a", libver="earliest"):
    rng = random.Random(seed)
    if mode == "w":
        f, state = new_file(path, folder, libver)
    else:
        with open(os.path.join(folder, "committed.json")) as fh:
            state = json.load(fh)
        f = purehep.File(path, "a")
    run(f, folder, rng, state, step_ops)


def run(f, folder, rng, state, step, reopen=None):
    """Steps for ever: ``step(f, rng, state, n)`` gives the state the next flush commits,
    saved as pending before the flush and as committed after; every ``reopen`` steps the
    file is closed and opened again (``reopen(f)`` gives the new one)."""
    n = 0
    while True:
        n += 1
        new = step(f, rng, state, n)
        save(folder, "pending.json", new)
        f.flush()
        save(folder, "committed.json", new)
        save(folder, "progress", n)
        state = new
        if reopen is not None and n % 5 == 0:     # sessions too: the free space record
            f = reopen(f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:])
