"""Shared machinery for the bad-input tests: build sample files, walk everything in a file, and
check that damage only ever raises purehep errors, within time and memory bounds."""
import signal
import tracemalloc

import h5py
import numpy as np

import purehep

MAX_READ = 1 << 22  # read whole datasets up to 4 MiB, a corner of larger ones


def build_sample(path, libver):
    with h5py.File(path, "w", libver=(libver, "latest")) as f:
        f.attrs["title"] = "fuzz"
        f.attrs.create("names", ["a", "bb"], dtype=h5py.string_dtype())
        g = f.create_group("g")
        for i in range(12):
            g.attrs[f"a{i}"] = np.arange(i)
            g.create_group(f"sub{i}")
        f["contig"] = np.arange(64, dtype="f8").reshape(8, 8)
        f.create_dataset("chunked", data=np.arange(400, dtype="i4").reshape(20, 20), chunks=(5, 5),
                         compression="gzip", shuffle=True, fletcher32=True)
        f.create_dataset("grow", data=np.arange(50), chunks=(8,), maxshape=(None,))
        f.create_dataset("vlen", data=["x", "yy", "zzz"], dtype=h5py.string_dtype())
        f["compound"] = np.zeros(3, dtype=[("a", "i2"), ("b", "f4")])
        f["soft"] = h5py.SoftLink("/g/sub1")


def sparse_under_every_index(f):
    """A 40 x 40 sparse dataset ``sp_<index>`` under each chunk index, five elements defined."""
    for idx, maxshape in (("fixed_array", None), ("extensible_array", (None, 40)),
                          ("btree2", (None, None)), ("single", None)):
        chunks = (40, 40) if idx == "single" else (8, 8)
        kw = {} if idx == "single" else {"chunk_index": idx}
        ds = f.create_dataset(f"sp_{idx}", shape=(40, 40), dtype="f8", chunks=chunks,
                              sparse=True, maxshape=maxshape,
                              compression="gzip" if idx != "btree2" else None, **kw)
        ds[3, 4] = 1.5
        ds[20:23, 7] = 2.0
        ds[39, 39] = 3.0


def build_purehep_sample(path, libver):
    """What purehep writes that libhdf5 does not: sparse datasets under every chunk index,
    virtual datasets with regular and irregular mappings, dimension scales, compact data."""
    with purehep.File(path, "w", libver=libver) as f:
        sparse_under_every_index(f)
        a = f.create_dataset("a", data=np.arange(20, dtype="i4"))
        lay = purehep.VirtualLayout((2, 10), "i4")
        lay[0] = purehep.VirtualSource(a)[0:20:2]
        lay[1, [1, 3, 4]] = purehep.VirtualSource(a)[[0, 5, 7]]
        f.create_virtual_dataset("v", lay, fillvalue=-1)
        x = f.create_dataset("x", data=np.arange(10.0))
        x.make_scale("x")
        d = f.create_dataset("d", data=np.arange(10.0))
        d.dims[0].attach_scale(x)
        d.dims[0].label = "lbl"
        f.create_dataset("c", data=np.arange(5), compact=True)


def walk(f):
    """Touch every object, link, attribute and (bounded) data in an open file."""
    def visit(name, obj):
        for key in obj.attrs:
            obj.attrs[key]
        if isinstance(obj, purehep.Dataset):
            if obj.shape is None or obj.nbytes <= MAX_READ:
                obj[()]
            else:
                obj[tuple(slice(0, 2) for _ in obj.shape)]
            if obj.shape and obj.size:         # the small-read path and the chunk queries
                obj[tuple(n - 1 for n in obj.shape)]
                obj[tuple(slice(n // 2, n // 2 + 3) for n in obj.shape)]
                if obj.is_sparse:
                    list(obj.struct_chunk_iter())
                elif obj.chunks is not None and not obj.is_virtual:
                    obj.id.chunk_iter(lambda info: None)
    f.visititems(visit)
    for key in f.attrs:
        f.attrs[key]
    f.visit_links(lambda name: f.get(name, getlink=True))


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def warm_up(data):
    """Compile (or load) the kernels outside the timed cases: the lookup3 kernel that long
    metadata walks switch to (numba's, loaded with numba's registries), then a walk of the
    intact file."""
    from purehep.kernels import checksum
    checksum._load()
    with purehep.File(bytes(data)) as f:
        walk(f)


def check_damaged(data, seconds=30, max_bytes=None):
    """Open and walk damaged file bytes: succeed or raise a purehep error; never anything
    else, never longer than ``seconds``, never allocating more than ``max_bytes``."""
    max_bytes = max_bytes if max_bytes is not None else 16 * len(data) + (8 << 20)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    tracemalloc.start()
    try:
        with purehep.File(bytes(data)) as f:
            walk(f)
        outcome = "ok"
    except purehep.PurehepError as exc:
        outcome = type(exc).__name__
    except KeyError:
        outcome = "KeyError"  # a damaged link name: h5py's answer for a missing member
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert peak <= max_bytes, f"allocated {peak} bytes for a {len(data)}-byte file"
    return outcome
