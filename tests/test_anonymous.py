"""Anonymous objects, as h5py has them: ``create_group(None)`` and ``create_dataset(None,
...)`` make objects with no link (name None, "(anonymous)" in their repr, no parent) that can
be read, written and given members and attributes, and linked later (``f[name] = obj``).
The same operations are done by h5py and by purehep and must give the same observations;
h5py then reads both files and must find the same objects, values and object reference
counts (spec IV.A.1, IV.A.2.w). An object never linked is not in the file purehep writes
(libhdf5 2.0 deletes it at close too: its count is 0)."""
import os
import subprocess
import sys

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402

LIBVERS = ["earliest", "latest"]


def _rc(obj):
    return h5py.h5o.get_info(obj.id).rc


def _try(fn):
    try:
        return fn()
    except Exception as exc:          # the error as the observation (type and message)
        return type(exc).__name__, str(exc)


def _session(f, lib):
    """Anonymous objects made, used and (some) linked; returns what the library shows."""
    out = []
    f["t"] = np.dtype("<i2")
    g = f.create_group(None)
    d = f.create_dataset(None, (4,), "i4")
    out += [g.name, repr(g), d.name, repr(d), _try(lambda: g.parent), _try(lambda: d.parent)]
    d[...] = [1, 2, 3, 4]
    d.attrs["x"] = 5
    out += [d[...].tolist(), int(d.attrs["x"])]
    sub = g.create_group("sub")
    dd = g.create_dataset("a/dd", data=[1.5, 2.5])
    g.attrs["ga"] = "text"
    out += [sub.name, repr(sub), dd.name, repr(dd), _try(lambda: dd.parent), sorted(g),
            g["a/dd"].name, g["a"].name, repr(g["/"]), dd[...].tolist(), g.attrs["ga"]]
    out += [repr(f[g.ref]), repr(f[d.ref])]
    names = []
    g.visititems(lambda name, obj: names.append((name, obj.name)))
    out.append(names)
    typed = f.create_dataset(None, (3,), dtype=f["t"])
    typed[...] = 7
    z = f.create_dataset(None, data=np.arange(20).reshape(4, 5), chunks=(2, 2),
                         maxshape=(None, 5), compression="gzip")
    z.resize((6, 5))
    z[4:] = 9
    out += [repr(typed), typed[...].tolist(), z[...].tolist(), z.name]
    f.flush()                         # staged and committed while anonymous
    d[1] = 20
    g.attrs["after"] = [1, 2]
    out.append(d[...].tolist())
    f["name"] = d
    f["g"] = g
    f["also"] = g
    f["nested/typed"] = typed
    out += [d.name, g.name, sub.name, dd.name, typed.name, repr(d), repr(g),
            repr(d.parent), repr(g["sub"].parent), d[...].tolist(), dict(d.attrs)]
    inner = f.create_group(None)
    inner["z"] = z                    # linked only from an anonymous group, never linked
    orphan = f.create_dataset(None, data=np.arange(3))
    out += [repr(orphan), orphan[...].tolist(), inner.name, z.name]
    return out


def _observe(path):
    """What h5py reads: every object once with its values, attributes and reference
    count."""
    out = {}
    with h5py.File(path, "r") as f:
        def each(name, obj):
            entry = {"rc": _rc(obj), "attrs": {k: repr(v) for k, v in obj.attrs.items()},
                     "kind": type(obj).__name__}
            if isinstance(obj, h5py.Dataset):
                entry["value"] = obj[...].tolist()
                entry["committed"] = obj.id.get_type().committed()
            out[name] = entry
        f.visititems(each)
        out["/"] = {"rc": _rc(f), "links": sorted(f)}
    return out


@pytest.mark.parametrize("libver", LIBVERS)
def test_like_h5py(tmp_path, libver):
    seen, files = {}, {}
    for lib in (h5py, purehep):
        files[lib] = tmp_path / f"{lib.__name__}.h5"
        with lib.File(files[lib], "w", libver=libver) as f:
            seen[lib] = _session(f, lib)
    assert seen[purehep] == seen[h5py]
    found = _observe(files[purehep])
    assert found == _observe(files[h5py])
    assert found["name"]["rc"] == found["nested/typed"]["rc"] == 1
    assert found["also"]["rc"] == 2 and found["t"]["rc"] == 2
    assert "z" not in str(sorted(found))
    out = subprocess.run([sys.executable, "-m", "purehep", "check", str(files[purehep])],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "0 findings" in out.stdout, out.stdout[-2000:]


@pytest.mark.parametrize("libver", LIBVERS)
def test_modify_existing(tmp_path, libver):
    """Anonymous objects in a file opened with mode 'a' (written by h5py)."""
    seen, files = {}, {}
    for lib in (h5py, purehep):
        files[lib] = path = tmp_path / f"{lib.__name__}.h5"
        with h5py.File(path, "w", libver=libver) as f:
            f["old/x"] = np.arange(5)
            f["t"] = np.dtype("<f4")
        with lib.File(path, "a") as f:
            a = f.create_dataset(None, (2,), dtype=f["t"])
            a[...] = [0.5, 1.5]
            b = f.create_group(None, track_order=True)
            b["y"] = np.arange(3)
            seen[lib] = [a[...].tolist(), repr(a), repr(b), b["y"].name, a.name]
            f["old/a"] = a
            f.flush()
            f["old/b"] = b
            f.create_dataset(None, (2,), dtype=f["t"])      # never linked
            seen[lib] += [a.name, b.name, b["y"].name, repr(b["y"].parent)]
    assert seen[purehep] == seen[h5py]
    assert _observe(files[purehep]) == _observe(files[h5py])


def test_linked_before_staged(tmp_path):
    """Linked before anything is read: written once, counted once."""
    path = tmp_path / "f.h5"
    with purehep.File(path, "w") as f:
        d = f.create_dataset(None, data=np.arange(4))
        g = f.create_group(None)
        f["d"] = d
        f["g"] = g
        g["self_d"] = d
    with h5py.File(path, "r") as f:
        assert _rc(f["d"]) == 2 and _rc(f["g"]) == 1
        assert f["g/self_d"][...].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("flush", [False, True])
def test_never_linked_not_kept(tmp_path, flush):
    """Objects that end the session unlinked are not in the file: their space is freed, and
    here (nothing after them) the file is the size of an empty one."""
    empty = tmp_path / "empty.h5"
    with purehep.File(empty, "w"):
        pass
    path = tmp_path / "f.h5"
    with purehep.File(path, "w") as f:
        g = f.create_group(None)
        g["x"] = np.arange(100)
        g.attrs["a"] = 1
        assert g["x"][5] == 5
        if flush:
            f.flush()
        f.create_dataset(None, data=np.arange(50), chunks=(10,))
    assert os.path.getsize(path) == os.path.getsize(empty)
    with h5py.File(path, "r") as f:
        assert list(f) == [] and _rc(f) == 1


def test_names_as_links_change(tmp_path):
    """The first link made with an object opened with no path gives it its name; a link
    removed takes it away (another path is searched for); a link added and removed before
    the session stages leaves the object anonymous."""
    seen = {}
    for lib in (h5py, purehep):
        with lib.File(tmp_path / f"{lib.__name__}.h5", "w") as f:
            d = f.create_dataset(None, data=[1, 2])
            f["x"] = d
            out = [d.name]
            del f["x"]
            out += [d.name, d[...].tolist()]
            f["y"] = d
            out.append(d.name)
            g = f.create_group(None)
            s = g.create_group("s")
            f["k"] = s
            f["k2"] = s
            out.append(s.name)
            f["g"] = g
            out += [g.name, s.name, f[s.ref].name, g["s"].name]
            del f["k"]
            out += [s.name, g.name]
            x = f.create_dataset("plain", data=1)
            f["other"] = x
            out.append(x.name)
            seen[lib] = out
    assert seen[purehep] == seen[h5py]
    with h5py.File(tmp_path / "purehep.h5", "r") as f:
        assert _rc(f["y"]) == 1 and _rc(f["g/s"]) == 2


def test_read_only(tmp_path):
    path = tmp_path / "f.h5"
    with h5py.File(path, "w"):
        pass
    with purehep.File(path, "r") as f:
        with pytest.raises((ValueError, RuntimeError)):
            f.create_group(None)
        with pytest.raises((ValueError, RuntimeError)):
            f.create_dataset(None, (2,), "i4")
