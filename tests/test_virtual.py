"""Virtual datasets written with h5py's VirtualLayout read equal to h5py: same-file and
other-file sources, strided and unlimited mappings, printf-named sources, missing sources."""
import os

import h5py
import numpy as np
import pytest

import purehep
from compare import same_values


@pytest.fixture(params=["earliest", "latest"])
def vds_file(request, tmp_path):
    libver = request.param
    a, b = str(tmp_path / "a.h5"), str(tmp_path / "b.h5")
    with h5py.File(a, "w") as f:
        f["x"] = np.arange(20, dtype="i4")
        f.create_dataset("grow", data=np.arange(30, dtype="f8").reshape(3, 10),
                         maxshape=(3, None), chunks=(3, 4))
    with h5py.File(b, "w") as f:
        f["x"] = np.arange(100, 120, dtype=">i2")
    for i in range(3):
        with h5py.File(str(tmp_path / f"part{i}.h5"), "w") as f:
            f["data"] = np.full(5, i + 1, dtype="i4")
    path = str(tmp_path / "vds.h5")
    with h5py.File(path, "w", libver=(libver, "latest")) as f:
        f["local"] = np.arange(200, 210, dtype="i4")
        lay = h5py.VirtualLayout(shape=(6, 20), dtype="i4")
        lay[0] = h5py.VirtualSource(a, "x", shape=(20,))
        lay[1, ::2] = h5py.VirtualSource(a, "x", shape=(20,))[:10]
        lay[2, 5:15] = h5py.VirtualSource(".", "local", shape=(10,))
        lay[3] = h5py.VirtualSource("b.h5", "x", shape=(20,))          # relative name
        lay[4, :7] = h5py.VirtualSource("missing.h5", "x", shape=(7,))  # fill value
        lay[5, 3:8] = h5py.VirtualSource(a, "nothere", shape=(5,))
        f.create_virtual_dataset("v", lay, fillvalue=-1)
        unl = h5py.VirtualLayout(shape=(3, 10), maxshape=(3, None), dtype="f8")
        src = h5py.VirtualSource(a, "grow", shape=(3, 10), maxshape=(3, None))
        unl[:, 0:h5py.h5s.UNLIMITED] = src[:, 0:h5py.h5s.UNLIMITED]
        f.create_virtual_dataset("unlimited", unl, fillvalue=np.nan)
        _printf_vds(f, b"pattern", b"part%b.h5")
    return path, a


def _printf_vds(f, name, pattern):
    """A VDS whose unlimited selection maps block i to source file part<i>.h5 (low-level API:
    h5py's VirtualLayout has no printf-named sources)."""
    vspace = h5py.h5s.create_simple((15,), (h5py.h5s.UNLIMITED,))
    vspace.select_hyperslab((0,), (h5py.h5s.UNLIMITED,), stride=(5,), block=(5,))
    sspace = h5py.h5s.create_simple((5,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_fill_value(np.array(0, "i4"))
    dcpl.set_virtual(vspace, pattern, b"data", sspace)
    h5py.h5d.create(f.id, name, h5py.h5t.STD_I32LE, vspace, dcpl=dcpl).close()


def test_virtual_reads_equal_h5py(vds_file):
    path, _ = vds_file
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        for name in ["v", "unlimited", "pattern"]:
            assert p[name].is_virtual
            assert p[name].shape == h[name].shape and p[name].dtype == h[name].dtype
            same_values(h[name][()], p[name][()], name)
        same_values(h["v"][1:5, 2:17:3], p["v"][1:5, 2:17:3])
        same_values(h["v"][3, 4], p["v"][3, 4])
        assert len(p["v"].virtual_sources()) == len(h["v"].virtual_sources())


def test_unlimited_source_grows(vds_file):
    path, a = vds_file
    with h5py.File(a, "a") as f:
        f["grow"].resize((3, 14))
        f["grow"][:, 10:] = 7.0
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        assert p["unlimited"].shape == h["unlimited"].shape
        same_values(h["unlimited"][()], p["unlimited"][()])


def test_mapping_past_a_smaller_chunked_source_reads_its_fill_value(tmp_path):
    """A mapping whose source selection reaches past the chunked source's current extent
    (a source shrunk after it was mapped) reads the source's fill value there, as h5py
    does; purehep raised FormatError ('hyperslab exceeds dimension'). Found in versioned
    files (versioned fuzz, session 15)."""
    path = tmp_path / "clip.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("src", data=np.arange(4.0), maxshape=(None,), chunks=(2,),
                         fillvalue=7)
        f.create_dataset("src2", data=np.arange(12.0).reshape(4, 3), maxshape=(None, 3),
                         chunks=(2, 3))
        lay = h5py.VirtualLayout((10,), "f8")
        lay[0:10] = h5py.VirtualSource(".", "src", shape=(10,))[0:10]
        f.create_virtual_dataset("v", lay, fillvalue=-1)
        lay = h5py.VirtualLayout((4, 3), "f8")
        lay[0:2, :] = h5py.VirtualSource(".", "src2", shape=(8, 3))[3:5, :]
        lay[2:4, :] = h5py.VirtualSource(".", "src2", shape=(8, 3))[5:7, :]
        f.create_virtual_dataset("v2", lay, fillvalue=-1)
    keys = [(), (slice(2, 6),), (slice(5, 9, 2),)]     # (libhdf5 fails an index list here:
    with h5py.File(path, "r") as hf, purehep.File(path, "r") as pf:    # 'can't locate piece')
        for name in ("v", "v2"):
            for key in keys + ([(slice(1, 3), 1)] if name == "v2" else []):
                np.testing.assert_array_equal(pf[name][key], hf[name][key], f"{name}{key}")


def test_mappings_leading_back_to_their_dataset(tmp_path):
    """A virtual dataset mapped from itself, or two mapped from each other (a damaged or
    hostile file; libhdf5 recurses until the process dies): reading raises FormatError
    naming the dataset, and the rest of the file reads."""
    path = tmp_path / "cycle.h5"
    with h5py.File(path, "w", libver="latest") as f:
        f["plain"] = np.arange(3)
        for name, source in (("x", "x"), ("y1", "y2"), ("y2", "y1")):
            layout = h5py.VirtualLayout((4,), "i4")
            layout[:] = h5py.VirtualSource(".", source, (4,))
            f.create_virtual_dataset(name, layout, fillvalue=-1)
    with purehep.File(path, "r") as f:
        for name in ("x", "y1", "y2"):
            with pytest.raises(purehep.FormatError, match="lead back to itself") as err:
                f[name][()]
            assert isinstance(err.value, OSError) and err.value.offset is not None
        assert f["plain"][()].tolist() == [0, 1, 2]
