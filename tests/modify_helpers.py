"""Shared by the modify-mode tests: base files, the operations applied with h5py and with
purehep, a full dump of a file (read with h5py) to compare them, and the crash tests' check
of a file against the states its writer saved."""
import json

import numpy as np

import h5py


def make_base(path, writer, libver):
    """A file with every kind of group, attribute storage and chunk index."""
    kw = {"libver": libver} if libver else {}
    with writer.File(path, "w", **kw) as f:
        f.attrs["title"] = "base"
        f.attrs["n"] = np.int32(7)
        f.create_dataset("contig", data=np.arange(20, dtype="i4"))
        f.create_dataset("compact", data=np.arange(6, dtype="f8"), **(
            {"compact": True} if writer.__name__ == "purehep" else {}))
        f.create_dataset("gz", data=np.arange(1000, dtype="f4").reshape(100, 10),
                         chunks=(10, 10), compression="gzip")
        f.create_dataset("ea", data=np.arange(300, dtype="i8"), chunks=(64,), maxshape=(None,))
        f.create_dataset("bt2", data=np.arange(64, dtype="i2").reshape(8, 8), chunks=(4, 4),
                         maxshape=(None, None))
        f.create_dataset("vlen", data=np.array(["a", "bb", "ccc"], dtype=object),
                         dtype=h5py.string_dtype() if writer is h5py else
                         __import__("purehep").string_dtype())
        small = f.create_group("small")
        small["x"] = np.arange(3)
        small.attrs["a1"] = 1.5
        big = f.create_group("big")
        for i in range(12):
            big.create_dataset(f"d{i:02d}", data=np.full(4, i, "u1"))
        many = big["d00"]
        for i in range(10):
            many.attrs[f"attr{i}"] = np.arange(i + 1)
        f["soft"] = writer.SoftLink("/small/x")
        f["ext"] = writer.ExternalLink("other.h5", "/y")
        ordered = f.create_group("ordered", track_order=True)
        for name in ("z", "b", "m"):
            ordered.create_group(name)
        ordered.attrs["second"] = 2
        ordered.attrs["first"] = 1


def operations(f, mod):
    """The same modifications, for an h5py or a purehep file (``mod`` is the module)."""
    f.attrs["title"] = "changed"                       # modify
    del f.attrs["n"]                                    # delete
    f.attrs["added"] = np.arange(5.0)
    f.attrs["s"] = "text"
    f["small"].attrs["a1"] = np.float64(2.5)
    for i in range(9):                                  # compact -> dense (v2 headers)
        f["small"].attrs[f"more{i}"] = i
    d = f["big/d00"]
    for i in range(6):                                  # dense -> fewer
        del d.attrs[f"attr{i}"]
    d.attrs["attr9"] = "replaced"
    # new objects in every kind of group
    f.create_group("newgroup").create_dataset("inner", data=np.arange(7))
    f["small"].create_dataset("y", data=np.ones((2, 2)))
    for i in range(8):                                  # compact links -> dense
        f["small"].create_group(f"g{i}")
    f["big"].create_dataset("d99", data=np.arange(3))
    f["big/sub/deeper"] = np.arange(2.0)
    f["ordered"].create_group("a")
    f["ordered"].attrs["third"] = 3
    f["small/soft2"] = mod.SoftLink("/contig")
    f["small/ext2"] = mod.ExternalLink("other.h5", "/z")
    f["alias"] = f["contig"]                            # a second hard link
    # data
    f["contig"][5:10] = -1
    f["gz"][0:15, 2] = 99.0
    ea = f["ea"]
    ea.resize((450,))
    ea[300:450] = np.arange(150) + 10000
    bt = f["bt2"]
    bt.resize((12, 10))
    bt[8:12, :] = 7
    # delete
    del f["big/d05"]
    del f["small/x"]


def dump(path):
    """Everything in a file as plain Python values (read with h5py)."""
    out = {}

    def attrs(obj):
        res = {}
        for k in obj.attrs:
            v = obj.attrs[k]
            res[k] = v.tolist() if isinstance(v, np.ndarray) else v
        return res

    with h5py.File(path, "r") as f:
        out["/"] = ("group", attrs(f))

        def visit(name, link):
            if isinstance(link, h5py.SoftLink):
                out[name] = ("soft", link.path)
                return
            if isinstance(link, h5py.ExternalLink):
                out[name] = ("external", link.filename, link.path)
                return
            obj = f[name]
            if isinstance(obj, h5py.Dataset):
                v = obj[()]
                out[name] = ("dataset", str(obj.dtype), obj.shape, obj.maxshape,
                             v.tolist() if isinstance(v, np.ndarray) else v, attrs(obj))
            else:
                out[name] = ("group", attrs(obj))

        f.visititems_links(visit)
    return out


MISSING = object()


def saved_states(folder):
    """(committed, pending): the states a crash test's writer saved in ``folder``."""
    out = []
    for name in ("committed.json", "pending.json"):
        with open(folder / name) as fh:
            out.append(json.load(fh))
    return out


def check(found, committed, pending):
    """Every object of ``found`` (a file's state) is as the last flush committed it, or as
    the flush in progress would leave it."""
    problems = []
    for key in set(committed) | set(pending) | set(found):
        have = found.get(key, MISSING)
        allowed = [committed.get(key, MISSING), pending.get(key, MISSING)]
        if not any(have == a if a is not MISSING else have is MISSING for a in allowed):
            problems.append((key, str(have)[:80], [str(a)[:80] for a in allowed]))
    return problems


def progress(folder):
    try:
        with open(folder / "progress") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return -1
