"""purehep.h5g.get_objinfo (and h5py's ``obj._id``) side by side with h5py: object type, hard
link count, whether a modification time is kept, soft and external link lengths, objects
named by their ids or by names, in files of either header version, written and read back."""
import h5py
import numpy as np
import pytest

import purehep
from compare import outcome


def _stat(s):
    return (s.objno[0] > 0, s.nlink, s.type, s.mtime > 0, s.linklen)


def _objinfo(lib, path, libver):
    h5g = lib.h5g
    out = []
    with lib.File(path, "w", libver=libver) as f:
        d = f.create_dataset("d", data=[1], track_times=True)
        g = f.create_group("g")
        f["s"] = lib.SoftLink("/d")
        f["t"] = np.dtype("i4")
        f["e"] = lib.ExternalLink("missing.h5", "/abc")
        f["d2"] = d
        n = f.create_dataset("n", data=[1], track_times=False)
        for obj, name in ((d._id, b"."), (g.id, b"."), (f.id, b"d"), (f.id, b"s"),
                          (f.id, b"t"), (f["t"].id, b"."), (f.id, b"e"), (n.id, b"."),
                          (f._id, b".")):
            for follow in (True, False):
                try:
                    out.append(_stat(h5g.get_objinfo(obj, name, follow_link=follow)))
                except RuntimeError as e:
                    out.append(str(e).split(" (")[0])
        out.append(h5g.get_objinfo(d.id).objno == h5g.get_objinfo(f.id, b"d2").objno)
        with pytest.raises(RuntimeError) as info:
            h5g.get_objinfo(f.id, b"nope")
        out.append(str(info.value))
    with lib.File(path, "r") as f:
        out.append([_stat(f.id and lib.h5g.get_objinfo(f.id, n, follow_link=False))
                    for n in (b"d", b"g", b"s", b"e", b"t", b"n", b".")])
    return out


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_get_objinfo_matches_h5py(tmp_path, libver):
    assert _objinfo(purehep, str(tmp_path / "p.h5"), libver) == \
        _objinfo(h5py, str(tmp_path / "h.h5"), libver)


@pytest.mark.parametrize("writer", ["h5py", "purehep"])
def test_files_of_either_library_stat_alike(tmp_path, writer):
    path = str(tmp_path / "f.h5")
    _objinfo(h5py if writer == "h5py" else purehep, path, "latest")
    with purehep.File(path, "r") as a, h5py.File(path, "r") as b:
        for name in (b"d", b"g", b"t", b"n", b"d2"):
            sa, sb = purehep.h5g.get_objinfo(a.id, name), h5py.h5g.get_objinfo(b.id, name)
            assert _stat(sa) == _stat(sb), name
            assert sa.objno == sb.objno and (sa.mtime == sb.mtime), name



def test_create_dataset_like_keeps_time_tracking_and_order_as_h5py(tmp_path):
    """Regression: create_dataset_like takes the other dataset's track_times and attribute
    creation order, as h5py does (they were left at the defaults)."""
    for lib in (purehep, h5py):
        with lib.File(str(tmp_path / f"{lib.__name__}.h5"), "w") as f:
            for times, order in ((True, False), (False, True)):
                orig = f.create_dataset(f"o{times}", data=np.arange(3), track_times=times,
                                        track_order=order)
                like = f.create_dataset_like(f"l{times}", orig)
                stat = lib.h5g.get_objinfo(like._id)
                assert (stat.mtime > 0) is times, lib.__name__
                assert like.id.get_create_plist().get_attr_creation_order() == \
                    orig.id.get_create_plist().get_attr_creation_order()


def _groups(lib, path):
    h5g, h5p = lib.h5g, lib.h5p
    out = []

    with lib.File(path, "w") as f:
        gid = h5g.create(f.id, b"g")
        out += [type(gid).__name__, lib.Group(gid).name, outcome(lambda: h5g.create(f.id, b"g")),
                outcome(lambda: h5g.create(f.id, b"a/b"))]
        gcpl = h5p.create(h5p.GROUP_CREATE)
        gcpl.set_link_creation_order(h5p.CRT_ORDER_TRACKED | h5p.CRT_ORDER_INDEXED)
        ordered = lib.Group(h5g.create(f.id, b"ordered", gcpl=gcpl))
        ordered["z"], ordered["a"] = 1, 2
        out += [list(ordered), type(h5g.open(f.id, b"g")).__name__, h5g.open(f.id, b"g") == gid,
                outcome(lambda: h5g.open(f.id, b"nope")), outcome(lambda: h5g.open(f.id, b"ordered/z"))]
    with lib.File(path, "r") as f:
        out.append(list(f["ordered"]))
    return out


def test_h5g_create_open_match_h5py(tmp_path):
    assert _groups(purehep, str(tmp_path / "p.h5")) == _groups(h5py, str(tmp_path / "h.h5"))


def _intermediate(lib, path):
    h5p, h5d, h5g, h5t, h5s = lib.h5p, lib.h5d, lib.h5g, lib.h5t, lib.h5s
    lcpl = h5p.create(h5p.LINK_CREATE)
    out = [lcpl.get_create_intermediate_group()]
    with lib.File(path, "w") as f:
        for call in (lambda: h5d.create(f.id, b"a/b", h5t.STD_I32LE, h5s.create_simple((2,))),
                     lambda: h5g.create(f.id, b"x/y")):
            with pytest.raises(ValueError) as info:
                call()
            out.append(str(info.value))
        lcpl.set_create_intermediate_group(True)
        h5d.create(f.id, b"a/b", h5t.STD_I32LE, h5s.create_simple((2,)), lcpl=lcpl)
        h5g.create(f.id, b"x/y/z", lcpl=lcpl)
        out += [lcpl.get_create_intermediate_group(), list(f["a"]), list(f["x/y"])]
    return out


def test_link_creation_list_intermediate_groups_match_h5py(tmp_path):
    assert _intermediate(purehep, str(tmp_path / "p.h5")) == \
        _intermediate(h5py, str(tmp_path / "h.h5"))


def test_get_link_of_a_path_through_missing_groups_as_h5py(tmp_path):
    """Regression: get(..., getlink=True) of a path through missing groups (or through a
    dataset) gives the default, as h5py's, rather than raising KeyError."""
    for lib in (purehep, h5py):
        with lib.File(str(tmp_path / f"{lib.__name__}.h5"), "w") as f:
            f["a"] = 1
            f["s"] = lib.SoftLink("/nowhere")
            assert f.get("x/y/z", getlink=True) is None
            assert f.get("a/b", "default", getlink=True) == "default"
            assert type(f.get("s", getlink=True)).__name__ == "SoftLink"
            assert f.get("x/y", getlink=True, getclass=True) is None
