"""Unlimited virtual dataset mappings written by purehep (``layout[a:UNLIMITED] =
source[b:UNLIMITED]``, h5py's form): stored as libhdf5 stores them (version 2 regular
hyperslabs with an UNLIMITED count), read by h5py as by purehep, and the virtual extent
following the sources as they grow, in every mode."""
import h5py
import numpy as np
import pytest

import purehep
from purehep.hl.vds import hyperslab_dims


def _write(lib, path, src_path):
    with lib.File(src_path, "w") as f:
        f.create_dataset("a", data=np.arange(30).reshape(10, 3), maxshape=(None, 3),
                         chunks=(4, 3), fillvalue=-1)
    with lib.File(path, "w") as f:
        layout = lib.VirtualLayout((10, 2), "i8", maxshape=(None, 2), filename=None)
        src = lib.VirtualSource(src_path, "a", shape=(10, 3), maxshape=(None, 3))
        layout[:lib.UNLIMITED, 0] = src[:lib.UNLIMITED, 2]
        layout[0:lib.UNLIMITED:2, 1] = src[:lib.UNLIMITED, 0]
        f.create_virtual_dataset("v", layout, fillvalue=-5)


def _mappings(lib, path):
    with purehep.File(path) as f:
        st = f["v"]._storage
        return [[(s.kind, s.version, None if s.count is None else s.count.tolist(),
                  None if s.stride is None else s.stride.tolist())
                 for s in (m.virtual_selection, m.source_selection)] for m in st.mappings]


@pytest.mark.parametrize("writer", [h5py, purehep])
def test_unlimited_mappings_read_alike(tmp_path, writer):
    path, src = tmp_path / "v.h5", tmp_path / "s.h5"
    _write(writer, str(path), str(src))
    with h5py.File(path) as h, purehep.File(path) as p:
        assert p["v"].shape == h["v"].shape == (19, 2)
        np.testing.assert_array_equal(p["v"][...], h["v"][...])
    with h5py.File(src, "a") as f:            # the source grows: so does the view
        f["a"].resize(14, axis=0)
        f["a"][10:] = np.arange(100, 112).reshape(4, 3)
    with h5py.File(path) as h, purehep.File(path) as p:
        assert p["v"].shape == h["v"].shape == (27, 2)
        np.testing.assert_array_equal(p["v"][...], h["v"][...])
        np.testing.assert_array_equal(p["v"][3:20, 1], h["v"][3:20, 1])


def test_stored_as_libhdf5_stores_them(tmp_path):
    _write(h5py, str(tmp_path / "h.h5"), str(tmp_path / "s.h5"))
    _write(purehep, str(tmp_path / "p.h5"), str(tmp_path / "s2.h5"))
    assert _mappings(purehep, tmp_path / "p.h5") == _mappings(h5py, tmp_path / "h.h5")


def test_shape_follows_sources_in_write_mode(tmp_path):
    path = tmp_path / "r.h5"
    with purehep.File(path, "w") as f:
        s = f.create_dataset("s", data=np.arange(20).reshape(10, 2), maxshape=(None, 2),
                             chunks=(10, 1), fillvalue=-1)
        layout = purehep.VirtualLayout((10, 1), int, maxshape=(None, 1))
        layout[:purehep.UNLIMITED, 0] = purehep.VirtualSource(s)[:purehep.UNLIMITED, 1]
        f.create_virtual_dataset("v", layout)
    with purehep.File(path, "a") as f:
        f["s"].resize(20, axis=0)
        assert f["v"].shape == (20, 1)
        assert f["v"][10:, 0].tolist() == [-1] * 10
        f["s"][10:, 1] = 0
        assert f["v"][8:12, 0].tolist() == [17, 19, 0, 0]


def test_unlimited_selection_checks():
    dims, _, count = hyperslab_dims((10, 3), (slice(2, purehep.UNLIMITED, 3), 1))
    assert dims[0] == (2, 3, -1, 1) and count is None
    layout = purehep.VirtualLayout((10,), "i4", maxshape=(None,))
    src = purehep.VirtualSource("x.h5", "a", shape=(10,), maxshape=(None,))
    with pytest.raises(ValueError, match="different number"):
        layout[:purehep.UNLIMITED] = src[0:10]
    with pytest.raises(ValueError, match="different number"):
        layout[0:5] = src[:purehep.UNLIMITED]
    with pytest.raises(TypeError):
        layout[..., :purehep.UNLIMITED] = src[:purehep.UNLIMITED]
