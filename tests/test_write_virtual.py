"""Writing virtual datasets (layout class 3, spec III.F) with h5py's API: the global heap
blocks purehep writes equal libhdf5's byte for byte for the same calls, and h5py, h5dump and
purehep read the values exactly."""
import os
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import purehep
from purehep.format.global_heap import get_object

H5DUMP = shutil.which("h5dump")


def _build(mod, f, other):
    """The same virtual datasets through h5py or purehep (``mod``); ``other`` is a file of
    sources beside ``f``, named relatively."""
    a = f.create_dataset("a", data=np.arange(40, dtype="<i4"))
    b = f.create_dataset("b", data=np.arange(100, 160, dtype="<f8").reshape(6, 10))
    c = f.create_dataset("g/c", data=np.arange(4 * 5 * 6, dtype="<i2").reshape(4, 5, 6))
    lay = mod.VirtualLayout((7, 10), "<f8")
    lay[0, :] = mod.VirtualSource(a)[0:20:2]                  # strided source
    lay[1:4, :] = mod.VirtualSource(b)[::2]                   # strided rows
    lay[4, 2:5] = mod.VirtualSource(b)[2, [1, 4, 7]]          # evenly spaced indices
    lay[5, [0, 1, 5, 9]] = mod.VirtualSource(a)[[3, 4, 6, 30]]  # irregular: a block list
    lay[6, 6:] = mod.VirtualSource("other.h5", "/x", shape=(8,))[4:]
    f.create_virtual_dataset("v", lay, fillvalue=-1.5)
    lay3 = mod.VirtualLayout((2, 5, 12), "<i2")
    lay3[:, :, :6] = mod.VirtualSource(c)[1::2]
    lay3[1, 1:3, 6:12] = mod.VirtualSource(c)[0, 1:3, :]    # 12 elements each side
    f.create_virtual_dataset("w", lay3)
    empty = mod.VirtualLayout((3,), "<u1")
    f.create_virtual_dataset("none", empty, fillvalue=7)


def _block(path, name):
    with purehep.File(path) as f:
        lay = f[name]._layout
        if lay.address is None:
            return None
        return bytes(get_object(f._ctx, lay.address, lay.virtual_index))


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_virtual_matches_h5py(tmp_path, libver):
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.arange(8.0) * 10
    cwd = os.getcwd()
    os.chdir(tmp_path)      # the relative source file name resolves as for libhdf5
    try:
        with h5py.File("ref.h5", "w", libver=libver) as f:
            _build(h5py, f, "other.h5")
        with purehep.File("mine.h5", "w", libver=libver) as f:
            _build(purehep, f, "other.h5")
            np.testing.assert_array_equal(f["v"][()], h5py.File("ref.h5")["v"][()])
        for name in ("v", "w", "none"):
            assert _block("mine.h5", name) == _block("ref.h5", name), name
        with h5py.File("ref.h5") as ref, h5py.File("mine.h5") as h, \
                purehep.File("mine.h5") as p:
            for name in ("v", "w", "none"):
                assert h[name].is_virtual and p[name].is_virtual
                assert h[name].fillvalue == ref[name].fillvalue
                np.testing.assert_array_equal(h[name][()], ref[name][()])
                np.testing.assert_array_equal(p[name][()], ref[name][()])
                assert [tuple(s)[1:3] for s in h[name].virtual_sources()] == \
                    [tuple(s)[1:3] for s in ref[name].virtual_sources()]
            assert h["v"][6, 6:].tolist() == [40.0, 50.0, 60.0, 70.0]
        if H5DUMP and libver == "earliest":
            run = subprocess.run([H5DUMP, "mine.h5"], capture_output=True)
            assert run.returncode == 0, run.stderr.decode()[-2000:]
    finally:
        os.chdir(cwd)


def test_virtual_source_from_path_and_maxshape(tmp_path):
    src = tmp_path / "src.h5"
    with h5py.File(src, "w") as f:
        f["d"] = np.arange(12, dtype="i8").reshape(3, 4)
    out = tmp_path / "v.h5"
    with purehep.File(out, "w") as f:
        lay = purehep.VirtualLayout((3, 8), "i8", maxshape=(3, 16))
        lay[:, :4] = purehep.VirtualSource(str(src), "d", shape=(3, 4))
        lay[:, 4:] = purehep.VirtualSource(str(src), "d", shape=(3, 4))
        f.create_virtual_dataset("v", lay)
    with h5py.File(out) as h:
        assert h["v"].maxshape == (3, 16)
        np.testing.assert_array_equal(h["v"][()], np.hstack([np.arange(12).reshape(3, 4)] * 2))


def test_virtual_errors(tmp_path):
    with purehep.File(tmp_path / "e.h5", "w") as f:
        a = f.create_dataset("a", data=np.arange(10))
        lay = purehep.VirtualLayout((5,), "i8")
        with pytest.raises(ValueError):
            lay[0:3] = purehep.VirtualSource(a)[0:4]          # 3 elements from 4
        with pytest.raises(RuntimeError):
            purehep.VirtualSource(a)[0:4][0:2]
        with pytest.raises(TypeError):
            lay[[3, 1]] = purehep.VirtualSource(a)[[0, 1]]
        with pytest.raises(TypeError):
            purehep.VirtualSource("x.h5", "d")                # no shape
        with pytest.raises(ValueError):
            lay[2:2] = purehep.VirtualSource(a)[0:0]


def test_virtual_in_modify_mode(tmp_path):
    p = tmp_path / "m.h5"
    with h5py.File(p, "w", libver="latest") as f:
        f["a"] = np.arange(6, dtype="u2")
    with purehep.File(p, "r+") as f:
        lay = purehep.VirtualLayout((2, 3), "u2")
        lay[1] = purehep.VirtualSource(f["a"])[3:]
        lay[0] = purehep.VirtualSource(f["a"])[:3]
        f.create_virtual_dataset("v", lay, fillvalue=9)
    with h5py.File(p) as h:
        assert h["v"].is_virtual
        assert h["v"][()].tolist() == [[0, 1, 2], [3, 4, 5]]
        assert h["v"].virtual_sources()[0].file_name == "."


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_virtual_sources_queries(tmp_path, libver):
    """virtual_sources() selections answer h5py's SpaceID queries as h5py does."""
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.arange(8.0)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with h5py.File("ref.h5", "w", libver=libver) as f:
            _build(h5py, f, "other.h5")
        with h5py.File("ref.h5") as h, purehep.File("ref.h5") as p:
            for name in ("v", "w"):
                for hs, ps in zip(h[name].virtual_sources(), p[name].virtual_sources()):
                    for hspace, pspace in ((hs.vspace, ps.vspace), (hs.src_space, ps.src_space)):
                        assert pspace.get_select_type() == hspace.get_select_type()
                        assert pspace.get_select_bounds() == hspace.get_select_bounds()
                        assert pspace.get_select_npoints() == hspace.get_select_npoints()
                        assert pspace.is_regular_hyperslab() == hspace.is_regular_hyperslab()
                        if hspace.is_regular_hyperslab():
                            assert pspace.get_regular_hyperslab() == \
                                hspace.get_regular_hyperslab()
    finally:
        os.chdir(cwd)
