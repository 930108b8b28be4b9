"""Writing datasets stored in external files (External Data Files message, spec IV.A.2.h)
with h5py's ``external=``: the external files purehep writes equal libhdf5's for the same
calls, h5py reads the values and the slot list, and modify mode writes into them."""
import os

import h5py
import numpy as np
import pytest

import purehep


def _build(mod, f, pre):
    d = f.create_dataset("e", shape=(10,), dtype="<i4",
                         external=[(pre + "1.bin", 0, 16), (pre + "2.bin", 8, h5py.h5s.UNLIMITED)])
    d[...] = np.arange(10)
    d[3:5] = [-1, -2]
    f.create_dataset("u", data=np.arange(12.0).reshape(4, 3), external=pre + "3.bin")
    f.create_dataset("c", data=np.array([(1, 2.5)], dtype=[("a", "<u2"), ("b", ">f4")]),
                     external=[(pre + "4.bin", 100, 6)])


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_external_matches_h5py(tmp_path, monkeypatch, libver):
    monkeypatch.chdir(tmp_path)          # names are relative to the working directory
    with h5py.File("ref.h5", "w", libver=libver) as f:
        _build(h5py, f, "r")
    with purehep.File("mine.h5", "w", libver=libver) as f:
        _build(purehep, f, "m")
        assert f["e"][()].tolist() == [0, 1, 2, -1, -2, 5, 6, 7, 8, 9]
    for i in range(1, 5):
        assert (tmp_path / f"m{i}.bin").read_bytes() == (tmp_path / f"r{i}.bin").read_bytes()
    with h5py.File("ref.h5") as ref, h5py.File("mine.h5") as h, purehep.File("mine.h5") as p:
        for name in ("e", "u", "c"):
            np.testing.assert_array_equal(h[name][()], ref[name][()])
            np.testing.assert_array_equal(p[name][()], ref[name][()])
            assert [(n.replace("m", "r", 1), o, s) for n, o, s in h[name].external] == \
                list(ref[name].external)


def test_external_modify_mode(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with h5py.File("f.h5", "w") as f:
        f.create_dataset("e", data=np.arange(6, dtype="<i8"), external=[("a.bin", 0, 24),
                                                                        ("b.bin", 0, 24)])
    before = (tmp_path / "f.h5").read_bytes()
    with purehep.File("f.h5", "r+") as f:
        f["e"][2:5] = [20, 30, 40]
    assert (tmp_path / "f.h5").read_bytes() == before       # the data lives outside
    with h5py.File("f.h5") as h:
        assert h["e"][()].tolist() == [0, 1, 20, 30, 40, 5]


def test_external_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with purehep.File("f.h5", "w") as f:
        with pytest.raises(ValueError):
            f.create_dataset("a", shape=(10,), dtype="i4", chunks=(5,), external="x.bin")
        with pytest.raises(ValueError):
            f.create_dataset("b", shape=(10,), dtype="i4", external=[("x.bin", 0, 8)])
        with pytest.raises(ValueError):
            f.create_dataset("c", shape=(10,), dtype="i4",
                             external=[("x.bin", 0, h5py.h5s.UNLIMITED), ("y.bin", 0, 40)])
        with pytest.raises(TypeError):
            f.create_dataset("d", shape=(10,), dtype="i4", external=["x.bin"])
    assert not os.path.exists(tmp_path / "x.bin")


def _expandable(mod, tmp, name):
    """An external dataset extendible along its first dimension, and the maxshapes libhdf5
    refuses; what each gave."""
    out = []
    with mod.File(tmp / f"{name}.h5", "w") as f:
        d = f.create_dataset("x", (4, 3), "f4", maxshape=(None, 3), external=str(tmp / name))
        d[...] = np.arange(12).reshape(4, 3)
        out.append((d.chunks, d.shape, d.maxshape))
        for maxshape, external in [((4, None), str(tmp / f"{name}2")),
                                   ((None, 3), [(str(tmp / f"{name}3"), 0, 48)]),
                                   ((8, 3), [(str(tmp / f"{name}4"), 0, 48)])]:
            try:
                f.create_dataset(f"y{len(out)}", (4, 3), "f4", maxshape=maxshape,
                                 external=external)
                out.append("created")
            except (ValueError, OSError, TypeError) as e:
                out.append(type(e).__name__)
    with h5py.File(tmp / f"{name}.h5", "r") as f:     # read back by libhdf5 either way
        out.append((f["x"].maxshape, f["x"][()].tolist()))
    return out


def test_expandable_external_as_h5py(tmp_path):
    assert _expandable(purehep, tmp_path, "p") == _expandable(h5py, tmp_path, "h")
