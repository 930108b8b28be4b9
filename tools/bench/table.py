"""HEP001 table queries on 10 million rows: a selective predicate per search-index kind,
answered by a plain scan and with the index (build time reported alongside)."""
import time

import numpy as np

from .common import best_of, path, report

N_ROWS = 10_000_000
CHUNK = 1 << 16
CASES = [  # (column, KIND, query)
    ("ts", "chunk_minmax", "ts BETWEEN 5000000 AND 5001000"),
    ("x", "sorted_rows", "x BETWEEN 0.5 AND 0.5001"),
    ("cat", "bitmap", "cat = 7"),
    ("key", "chunk_bloom", "key = {key}"),
]


def _table_file():
    import purehep
    from purehep.table import create_table
    fname = path("table.h5")
    rng = np.random.default_rng(3)
    data = {"ts": np.arange(N_ROWS, dtype=np.int64), "x": rng.random(N_ROWS),
            "cat": rng.integers(0, 256, N_ROWS).astype(np.int16),
            "key": rng.integers(0, 2**62, N_ROWS)}
    with purehep.File(fname, "w") as f:
        create_table(f, "t", data, chunks=CHUNK)
    return fname, int(data["key"][N_ROWS // 3])


def selective_queries():
    import purehep
    from purehep.table import Table
    fname, key = _table_file()
    for column, kind, text in CASES:
        text = text.format(key=key)
        with purehep.File(fname, "r+") as f:
            t = Table(f["t"])
            t0 = time.perf_counter()
            t.create_search_index(column, kind)
            build = time.perf_counter() - t0
        with purehep.File(fname, "r") as f:
            scan, indexed = Table(f["t"], trust_indexes=False), Table(f["t"])
            hits = len(indexed.query(text))
            assert np.array_equal(scan.query(text), indexed.query(text))
            rows = [("scan", best_of(lambda: scan.query(text), repeat=3)),
                    (kind, best_of(lambda: indexed.query(text), repeat=3)),
                    (f"{kind} build", build)]
        report(f"{text!r} on {N_ROWS:,} rows ({hits} hits)", rows, baseline="scan")
        with purehep.File(fname, "r+") as f:
            Table(f["t"]).drop_search_index(column, kind)


ALL = [selective_queries]
