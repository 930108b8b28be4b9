"""A file opened again in the process that has it open, side by side with h5py: libhdf5
shares an open file between h5py's handles (each sees and makes the other's unflushed
changes, mode 'r+' whatever mode was asked for, the file closes with its last handle),
refuses 'w' (no truncating an open file) and other locking flags, and refuses writing to a
file open read-only."""
import h5py
import numpy as np
import pytest

import purehep


def _try(record, fn):
    try:
        out = fn()
    except OSError:
        record.append("OSError")
        return None
    record.append(("ok", out.mode) if hasattr(out, "mode") else ("ok", out))
    return out


def _writer_shared(mod, path):
    """Steps around a file open for writing; what each gave."""
    out = []
    f = mod.File(path, "w")
    f["a"] = np.arange(5)                       # not flushed: only the open file has it
    g = _try(out, lambda: mod.File(path, "r"))
    out.append(sorted(g))
    f["a"][0] = 99
    out.append(g["a"][...].tolist())            # the reader sees the writer's change
    h = _try(out, lambda: mod.File(path, "a"))
    h["c"] = 3
    out.append("c" in f)
    h.close()
    out.append(sorted(f))                       # still open after another handle closed
    for mode in ("r+", "w", "w-"):
        k = _try(out, lambda: mod.File(path, mode))
        if k is not None:
            k.close()
    _try(out, lambda: mod.File(path, "r", locking=False))
    d = g["a"]
    f.close()
    out.append(d[()].tolist())                  # g keeps the file open
    g["z"] = 1                                  # and writes to it (mode 'r+')
    g.close()
    with pytest.raises(Exception):
        d[()]
    with mod.File(path, "r") as k:
        out.append((k.mode, sorted(k), k["a"][()].tolist()))
    return out


def _reader_first(mod, path):
    out = []
    with mod.File(path, "w") as f:
        f["a"] = 1
    g = mod.File(path, "r")
    for mode in ("r", "r+", "a", "w"):
        k = _try(out, lambda: mod.File(path, mode))
        if k is not None:
            k.close()
    g.close()
    k = _try(out, lambda: mod.File(path, "a"))
    k.close()
    return out


@pytest.mark.parametrize("scenario", [_writer_shared, _reader_first])
def test_same_process_open_as_h5py(tmp_path, scenario):
    want = scenario(h5py, tmp_path / "h.h5")
    assert scenario(purehep, tmp_path / "p.h5") == want


@pytest.mark.parametrize("locking", [None, True, False, "best-effort"])
def test_locking_flags_must_match(tmp_path, locking):
    """Which locking values a second handle may be opened with, as h5py: None and
    "best-effort" are the same (libhdf5 2.0's default)."""
    got = {}
    for mod in (h5py, purehep):
        out = got[mod.__name__] = []
        with mod.File(tmp_path / f"{mod.__name__}.h5", "w", locking=locking):
            for other in (None, True, False, "best-effort"):
                k = _try(out, lambda: mod.File(tmp_path / f"{mod.__name__}.h5", "r",
                                               locking=other))
                if k is not None:
                    k.close()
    assert got["purehep"] == got["h5py"]


def test_collected_handles_close_the_file_once(tmp_path):
    """A handle collected unclosed lets go of the file; the last one commits it."""
    import gc
    path = tmp_path / "g.h5"
    f = purehep.File(path, "w")
    g = purehep.File(path, "r")
    g["x"] = np.arange(3)
    del g
    gc.collect()
    f["y"] = 2                      # f still holds it open
    del f
    gc.collect()
    with h5py.File(path, "r") as h:
        assert sorted(h) == ["x", "y"] and h["x"][()].tolist() == [0, 1, 2]
    purehep.File(path, "a").close()     # nothing of this process holds it any more


def test_file_image_bytes_still_read(tmp_path):
    """Bytes holding a NUL are the bytes of a file (purehep's in-memory reading), not a name."""
    path = tmp_path / "i.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(3)
    with purehep.File(path.read_bytes()) as f:
        assert f["x"][()].tolist() == [0, 1, 2]
    for cut in (b"\x01", b"\x89HDF", b"garbage"):      # no NUL byte, no such file: bytes
        with pytest.raises(purehep.PurehepError):
            purehep.File(cut)
    with purehep.File(tmp_path / "w.h5", "w"):     # with a file open for writing here too
        with purehep.File(path.read_bytes()) as f:
            assert f["x"][()].tolist() == [0, 1, 2]


@pytest.mark.parametrize("mod", [h5py, purehep])
def test_objects_link_across_handles(tmp_path, mod):
    """An object opened or made through one handle is linked through another handle of the
    same open file, as libhdf5 links it (purehep refused: another File object)."""
    p = tmp_path / f"{mod.__name__}.h5"
    with h5py.File(p, "w") as f:
        f["base"] = np.arange(3)
    f = mod.File(p, "a")
    g = mod.File(p, "a")
    g["hard"] = f["base"]
    anon = f.create_group(None)
    anon.attrs["k"] = 5
    g["anon"] = anon
    with mod.File(tmp_path / f"other_{mod.__name__}.h5", "w") as other:
        other["x"] = 1
        with pytest.raises(OSError):                  # another file: libhdf5's error
            g["other"] = other["x"]
    g.close()
    f.close()
    with h5py.File(p, "r") as h:
        assert sorted(h) == ["anon", "base", "hard"]
        assert h["hard"] == h["base"] and h["anon"].attrs["k"] == 5
        assert h5py.h5o.get_info(h["base"].id).rc == 2
