"""Issue 19 benchmark: reading over HTTP with byte ranges (a local server standing in for an
object store, tools/rangeserver.py), purehep's URL reader against h5py and pyfive on an
fsspec file object: requests, bytes and time for a metadata walk and full chunked reads.

Run twice: as fast as the local server answers (well under a millisecond), and with 20 ms
added to every answer, about what a request to an object store takes; the request counts are
the same in both."""
import io
import time

import numpy as np

LATENCY = 0.02                              # an object store's time to first byte, roughly
GROUPS, PER_GROUP = 8, 3
SHAPE, CHUNKS = (1000, 500), (100, 100)     # 50 chunks of 40 KB (before gzip) per dataset


def _file_bytes():
    """A libver='earliest' file (pyfive reads only v1 B-tree chunk indexes): groups of
    gzip+shuffle chunked datasets, a contiguous one each, attributes."""
    import h5py
    rng = np.random.default_rng(19)
    buf = io.BytesIO()
    with h5py.File(buf, "w", libver="earliest") as f:
        for g in range(GROUPS):
            grp = f.create_group(f"run{g}")
            grp.attrs["index"] = g
            grp["times"] = np.arange(1000.0) * g
            for d in range(PER_GROUP):
                data = np.cumsum(rng.normal(size=SHAPE), axis=0).astype("f4")
                ds = grp.create_dataset(f"x{d}", data=data, chunks=CHUNKS, compression="gzip",
                                        shuffle=True)
                ds.attrs["units"] = "V"
    return buf.getvalue()


def _index_file_bytes():
    """One dataset of 2,000 gzip chunks of 400 bytes: its v1 B-tree's ~30 nodes lie spread
    through the file, between the chunks."""
    import h5py
    buf = io.BytesIO()
    with h5py.File(buf, "w", libver="earliest") as f:
        f.create_dataset("many", data=np.random.default_rng(2).random(200_000).astype("f4"),
                         chunks=(100,), compression="gzip")
    return buf.getvalue()


def _openers(url):
    """name -> function(work) running ``work(file)`` on the file opened by that reader."""
    import fsspec

    def with_purehep(work):
        import purehep
        with purehep.File(url) as f:
            return work(f)

    def with_fileobj(module):
        def run(work):
            mod = __import__(module)
            with fsspec.open(url, "rb") as fo, mod.File(fo, "r") as f:
                return work(f)
        return run

    return {"h5py": with_fileobj("h5py"), "pyfive": with_fileobj("pyfive"),
            "purehep": with_purehep}


def _walk(f):
    seen = []
    f.visititems(lambda name, obj: seen.append(
        (name, getattr(obj, "shape", None), dict(obj.attrs))))
    return len(seen)


def _read_one(f):
    return float(f["run0/x0"][:].sum())


def _read_many(f):
    return float(f["many"][:].sum())


def _read_all(f):
    return sum(float(f[f"run{g}/x{d}"][:].sum()) for g in range(GROUPS)
               for d in range(PER_GROUP))


def _measure(server, open_with, work, repeat=3):
    """(requests, bytes served, best seconds, result) of ``open_with(work)``."""
    best, counts, result = None, None, None
    for _ in range(repeat):
        server.reset()
        t0 = time.perf_counter()
        result = open_with(work)
        secs = time.perf_counter() - t0
        counts = (server.requests, server.bytes_served)
        best = secs if best is None else min(best, secs)
    return counts[0], counts[1], best, result


def http_reads():
    for latency in (0.0, LATENCY):
        _http_reads(latency)


def _http_reads(latency):
    from tools.rangeserver import RangeServer
    files = {"bench.h5": _file_bytes(), "index.h5": _index_file_bytes()}
    cases = [("bench.h5", "metadata walk (visititems + attrs)", _walk),
             ("bench.h5", "full read of one chunked dataset (50 chunks)", _read_one),
             ("bench.h5", f"full read of all {GROUPS * PER_GROUP} chunked datasets", _read_all),
             ("index.h5", "full read of a 2,000-chunk dataset", _read_many)]
    with RangeServer(files, latency) as server:
        print(f"\nover HTTP (local range server, {latency * 1000:.0f} ms added per request); "
              "h5py and pyfive on fsspec.open(url), purehep on the URL; "
              + ", ".join(f"{k} {len(v) / 1e6:.1f} MB" for k, v in files.items()))
        for fname, title, work in cases:
            print(f"  {title}")
            openers = _openers(server.url(fname))
            rows = {name: _measure(server, open_with, work, 3 if not latency else 1)
                    for name, open_with in openers.items()}
            results = {name: r[3] for name, r in rows.items()}
            assert len(set(results.values())) == 1, results    # all three read the same
            base = rows["h5py"][2]
            for name, (requests, nbytes, secs, _) in rows.items():
                print(f"    {name:<8} {requests:5d} requests {nbytes / 1e6:8.2f} MB "
                      f"{secs * 1000:8.1f} ms {secs / base:6.2f}x h5py time")


ALL = [http_reads]
