"""HEP001 tables of 10 million rows: a selective predicate per search-index kind, answered
by a plain scan and with the index (build time reported alongside); appending 1 % more rows
to a table carrying all four index kinds."""
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


def table_append():
    """Append 1 % more rows to a table with all four index kinds, against rebuilding them."""
    import purehep
    from purehep.table import Table
    fname, _ = _table_file()
    with purehep.File(fname, "r+") as f:
        t = Table(f["t"])
        for column, kind, _ in CASES:
            t.create_search_index(column, kind)
    rng = np.random.default_rng(4)
    extra = N_ROWS // 100
    more = {"ts": np.arange(N_ROWS, N_ROWS + extra, dtype=np.int64), "x": rng.random(extra),
            "cat": rng.integers(0, 256, extra).astype(np.int16),
            "key": rng.integers(0, 2**62, extra)}
    t0 = time.perf_counter()
    with purehep.File(fname, "r+") as f:
        Table(f["t"]).append(more)
    append = time.perf_counter() - t0
    t0 = time.perf_counter()
    with purehep.File(fname, "r+") as f:
        Table(f["t"]).refresh_search_indexes()
    rebuild = time.perf_counter() - t0
    with purehep.File(fname, "r") as f:
        assert Table(f["t"]).validate(verify_indexes=True) == []
    report(f"append {extra:,} rows to {N_ROWS:,} rows with four search indexes",
           [("rebuild indexes", rebuild), ("append + update", append)], baseline="rebuild indexes")


ALL = [selective_queries, table_append]
