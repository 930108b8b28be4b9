"""Issue 15: queries through a 2005 "High Level Indexing" index (purehep.index) of 1,000,000
records selecting ~0.1 %, against reading the key columns and scanning them with numpy
(purehep and h5py reads side by side). "first call" opens the index and loads its sorted keys;
"warm" is a later query on the same open index.

    python -m tools.bench index_query
"""
import os

import numpy as np

from .common import best_of, path, report

N_RECORDS = 1_000_000
RUNS = 1000                  # one run = 0.1 % of the records
QUERIES = [  # (query, the fields a scan reads, the scan's mask)
    ("run == 417", ["run"], lambda c: c["run"] == 417),
    ("run == 417 AND energy > 0.5", ["run", "energy"],
     lambda c: (c["run"] == 417) & (c["energy"] > 0.5)),
    ("run BETWEEN 417 AND 418 AND event < 500000", ["run", "event"],
     lambda c: (c["run"] >= 417) & (c["run"] <= 418) & (c["event"] < 500000)),
]


def index_file():
    """A file with dataset "hits" and index "by_run" (keys run, event; extra energy; element
    targets into "hits"), built once and reused."""
    import purehep
    from purehep.index import create_index
    fname = path(f"index2005_{N_RECORDS}.h5")
    if os.path.exists(fname):
        return fname
    rng = np.random.default_rng(5)
    table = {"run": rng.integers(0, RUNS, N_RECORDS).astype(np.int32),
             "event": rng.permutation(N_RECORDS).astype(np.int64),
             "energy": rng.random(N_RECORDS), "hit": np.arange(N_RECORDS)[:, None]}
    with purehep.File(fname + ".tmp", "w") as f:
        hits = f.create_dataset("hits", data=np.zeros(N_RECORDS, "f4"))
        create_index(f, "by_run", table, keys=["run", "event"], target="hit",
                     target_type="element", target_dataset=hits)
    os.replace(fname + ".tmp", fname)
    return fname


def index_query():
    import h5py

    import purehep
    from purehep.index import open_index
    fname = index_file()
    with purehep.File(fname, "r") as f, h5py.File(fname, "r") as g:
        warm = open_index(f, "by_run")
        for text, names, mask in QUERIES:
            def scan(ds):
                return np.flatnonzero(mask(ds.fields(names)[...]))
            want = scan(g["by_run"])
            assert np.array_equal(warm.query(text), want)
            assert np.array_equal(scan(f["by_run"]), want)
            rows = [("purehep read + scan", best_of(lambda: scan(f["by_run"]), repeat=3)),
                    ("h5py read + scan", best_of(lambda: scan(g["by_run"]), repeat=3)),
                    ("index, first call", best_of(lambda: open_index(f, "by_run").query(text),
                                                  repeat=3, warmup=0)),
                    ("index, warm", best_of(lambda: warm.query(text), repeat=20)),
                    ("index warm + targets", best_of(lambda: warm.targets(warm.query(text)),
                                                     repeat=5))]
            report(f"{text!r} on {N_RECORDS:,} index records ({len(want)} hits)", rows,
                   baseline="purehep read + scan")


ALL = [index_query]

if __name__ == "__main__":
    index_query()
