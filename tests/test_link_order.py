"""Link creation order of groups made on the way to a new object, as libhdf5 makes them: an
intermediate group tracks its links' creation order as its parent does (and not its
attributes'); the group create_dataset's path names is made by require_group (default
properties), as h5py makes it. Files written by purehep and by h5py are compared group by
group (names in iteration order, link and attribute order flags, header version), and a
group read from a file keeps its link order when purehep changes it."""
import h5py
import numpy as np
import pytest

import purehep


def _build(lib, path, libver, track):
    with lib.File(path, "w", libver=libver, track_order=track) as f:
        f["z"] = 1
        f.create_dataset("b/x/y", data=[1])             # b: intermediate, x: require_group
        f["a"] = 2
        f.create_group("c/d", track_order=True)          # c: intermediate
        f.create_group("c/d/e/f")                        # e: intermediate of a tracked group
        f["c/d/e/k"] = 1
        f["c/d/e/b"] = 2
        f["b/a"] = 3
        f["b/0"] = 4
        f["s/t/u"] = np.arange(3)                        # s, t: intermediate (a link's)
        f["s/t/b"] = 1
        f.create_group("n", track_order=False)
        f["n/q/w"] = 1
        f["n/q/a"] = 1
        f.create_virtual_dataset("v/w/x", h5py.VirtualLayout((2,), "i4") if lib is h5py
                                 else purehep.VirtualLayout((2,), "i4"))
        f["v/w/b"] = 1


def _groups(path):
    """{group name: (names in h5py's order, link order flags, attribute order flags,
    header version)}, read by h5py."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Group):
                plist = obj.id.get_create_plist()
                out[name] = (list(obj), plist.get_link_creation_order(),
                             plist.get_attr_creation_order(), h5py.h5o.get_info(obj.id).hdr.version)
        f.visititems(visit)
        out["/"] = list(f)
    return out


@pytest.mark.parametrize("track", [False, True])
@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_intermediate_groups_as_h5py(tmp_path, libver, track):
    _build(h5py, tmp_path / "h.h5", libver, track)
    _build(purehep, tmp_path / "p.h5", libver, track)
    assert _groups(tmp_path / "p.h5") == _groups(tmp_path / "h.h5")


@pytest.mark.parametrize("attrs_first", [False, True])
def test_modified_group_keeps_its_link_order(tmp_path, attrs_first):
    """A group tracking its links' order and not its attributes' (an intermediate group of
    libhdf5), changed by purehep: its links still list in creation order, before and after
    its attributes are read, and the new link is tracked."""
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", track_order=True) as f:
        f.create_group("h/i")
        f["h/z"] = 1
        f["h/a"] = 2
    with purehep.File(p, "r+") as f:
        if attrs_first:
            assert dict(f["h"].attrs) == {}
        assert list(f["h"]) == ["i", "z", "a"]
        f["h"].attrs["n"] = 1
        f["h/b"] = 3
        assert list(f["h"]) == ["i", "z", "a", "b"]
    with h5py.File(p, "r") as f:
        assert list(f["h"]) == ["i", "z", "a", "b"]
        assert f["h"].id.get_create_plist().get_link_creation_order() == 3
        assert f["h"].id.get_create_plist().get_attr_creation_order() == 0


def test_copy_keeps_both_orders(tmp_path):
    """Group.copy keeps a group's link and attribute order settings apart, as H5Ocopy."""
    p = tmp_path / "f.h5"
    for lib in (h5py, purehep):
        with lib.File(tmp_path / f"{lib.__name__}.h5", "w", track_order=True) as f:
            f.create_group("h/i")
            f["h/z"] = 1
            f["h/a"] = 2
            f.copy("h", "k")
            f["k"].attrs["b"] = 1
            f["k"].attrs["a"] = 1
    del p
    assert _groups(tmp_path / "purehep.h5") == _groups(tmp_path / "h5py.h5")
    with h5py.File(tmp_path / "purehep.h5") as f:
        assert list(f["k"].attrs) == ["a", "b"]
