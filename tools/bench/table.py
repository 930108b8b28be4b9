"""HEP001 tables of 10 million rows: a selective predicate per search-index kind, answered
by a plain scan and with the index (build time reported alongside); appending 1 % more rows
to a table carrying all four index kinds. Issue 15's benchmark query on 20 million rows (a
time range plus an energy cut, 0.1 % of the rows) with each index kind, against h5py's full
scan, PyTables' CSI index and Parquet's filters (``hep_query``)."""
import os
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


HEP_ROWS = 20_000_000
HEP_KINDS = ("none", "chunk_minmax", "sorted_rows", "chunk_bloom")


def _hep_data():
    """Event times (increasing, random gaps) and energies; the query: 1 % of the time span
    and the energies above the 90th percentile, 0.1 % of the rows."""
    rng = np.random.default_rng(15)
    ts = np.cumsum(rng.integers(1, 100, HEP_ROWS)).astype(np.int64)
    energy = rng.exponential(10.0, HEP_ROWS).astype(np.float32)
    a, b = int(ts[HEP_ROWS // 2]), int(ts[HEP_ROWS // 2 + HEP_ROWS // 100])
    cut = float(np.float32(np.quantile(energy, 0.9)))
    return {"ts": ts, "energy": energy}, (a, b, cut)


def _hep_files():
    """{kind: HEP001 file with an index of that kind on ts ("none": no index)}, the
    PyTables file (CSI index on ts), the Parquet file and the query bounds; built once into
    the bench directory and reused."""
    import purehep
    from purehep.table import create_table
    data, bounds = _hep_data()
    files = {kind: path(f"hep_{HEP_ROWS}_{kind}.h5") for kind in HEP_KINDS}
    for kind, fname in files.items():
        if not os.path.exists(fname):
            with purehep.File(fname + ".tmp", "w") as f:
                t = create_table(f, "t", data, chunks=CHUNK)
                if kind != "none":
                    t.create_search_index("ts", kind)
            os.replace(fname + ".tmp", fname)
    tables_file, parquet_file = path(f"hep_{HEP_ROWS}_pytables.h5"), path(f"hep_{HEP_ROWS}.parquet")
    if not os.path.exists(tables_file):
        import tables
        with tables.open_file(tables_file + ".tmp", "w") as f:
            rec = np.empty(HEP_ROWS, dtype=[("ts", "<i8"), ("energy", "<f4")])
            rec["ts"], rec["energy"] = data["ts"], data["energy"]
            f.create_table("/", "t", rec, expectedrows=HEP_ROWS).cols.ts.create_csindex()
        os.replace(tables_file + ".tmp", tables_file)
    if not os.path.exists(parquet_file):
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.table(data), parquet_file + ".tmp", compression="none")
        os.replace(parquet_file + ".tmp", parquet_file)
    return files, tables_file, parquet_file, bounds


def hep_query():
    """Issue 15: the 20 M-row query, every index kind against h5py's scan, PyTables' CSI
    index and Parquet's filters; all answers checked equal to the scan's. Then the same
    query over half the table's time span, where no index may cost more than the scan."""
    import h5py
    files, tables_file, parquet_file, (a, b, cut) = _hep_files()
    _hep_case(files, tables_file, parquet_file, a, b, cut)
    with h5py.File(files["none"], "r") as g:        # half the table: no index may lose
        a, b = int(g["t/ts"][HEP_ROWS // 2]), int(g["t/ts"][-1]) + 1
    _hep_case(files, tables_file, parquet_file, a, b, cut)


def _hep_case(files, tables_file, parquet_file, a, b, cut):
    import h5py
    import pyarrow.parquet as pq
    import tables

    import purehep
    from purehep.table import Table
    text = f"ts >= {a} AND ts < {b} AND energy > {cut!r}"

    def scan():
        with h5py.File(files["none"], "r") as g:
            ts, energy = g["t/ts"][()], g["t/energy"][()]
        return np.flatnonzero((ts >= a) & (ts < b) & (energy > np.float32(cut)))
    want = scan()
    rows = [("h5py read + numpy scan", best_of(scan, repeat=5))]
    first = []
    for kind in HEP_KINDS:
        with purehep.File(files[kind], "r") as f:
            t = Table(f["t"])
            t0 = time.perf_counter()
            assert np.array_equal(t.query(text), want), kind
            first.append((f"purehep {kind}, 1st (verify)", time.perf_counter() - t0))
            rows.append((f"purehep {kind}", best_of(lambda: t.query(text), repeat=5, warmup=0)))
    rows.append(("purehep BITMAP", None))        # 20 M distinct times: no BITMAP is possible
    rows.extend(first)
    with tables.open_file(tables_file, "r") as f:
        cond = f"(ts >= {a}) & (ts < {b}) & (energy > {cut!r})"
        assert np.array_equal(f.root.t.get_where_list(cond, sort=True), want)
        rows.append(("PyTables CSI get_where_list", best_of(
            lambda: f.root.t.get_where_list(cond, sort=True), repeat=3)))
        rows.append(("PyTables CSI read_where", best_of(lambda: f.root.t.read_where(cond),
                                                        repeat=3)))
    filters = [("ts", ">=", a), ("ts", "<", b), ("energy", ">", np.float32(cut))]
    assert pq.read_table(parquet_file, filters=filters).num_rows == len(want)
    rows.append(("Parquet + filters", best_of(lambda: pq.read_table(parquet_file, filters=filters),
                                              repeat=3)))
    report(f"{text!r} on {HEP_ROWS:,} rows ({len(want):,} hits; purehep: row numbers, "
           f"default 'verify' mode: an index is checked against its column once the scans it "
           f"would have saved repay the check, the queries before it scanning; a fresh "
           f"table's first query as '1st' below)", rows,
           baseline="h5py read + numpy scan")


ALL = [selective_queries, table_append, hep_query]

if __name__ == "__main__":
    hep_query()
