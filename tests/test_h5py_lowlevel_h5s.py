"""purehep.h5s point selections (select_elements: order and repeats kept, appended and
prepended) and hyperslabs beyond the extent, side by side with h5py: the spaces' reports, reads
and writes through them with DatasetID.read / write, and region references of them."""
import h5py
import numpy as np

import purehep
from compare import outcome



def _points(lib, path):
    h5s = lib.h5s
    out = []
    s = h5s.create_simple((4, 5))
    s.select_elements([(3, 1), (0, 4), (3, 1)])
    out.append((s.get_select_type(), s.get_select_npoints(), s.get_select_elem_npoints(),
                s.get_select_elem_pointlist().tolist(), s.get_select_elem_pointlist().dtype,
                s.get_select_bounds()))
    s.select_elements([(1, 1)], h5s.SELECT_APPEND)
    out.append(s.get_select_elem_pointlist().tolist())
    s.select_elements([(2, 2)], h5s.SELECT_PREPEND)
    out += [s.get_select_elem_pointlist().tolist(), s.copy().get_select_elem_pointlist().tolist(),
            outcome(lambda: s.select_elements([(1,)])), outcome(s.get_select_hyper_nblocks),
            outcome(lambda: s.select_hyperslab((0, 0), (1, 1), op=h5s.SELECT_OR)),
            outcome(h5s.create_simple((3,)).get_select_elem_pointlist),
            (h5s.SELECT_APPEND, h5s.SELECT_PREPEND, h5s.SEL_POINTS)]
    s2 = h5s.create_simple((4, 5))
    s2.select_hyperslab((0, 0), (1, 1))
    s2.select_elements([(1, 1)], h5s.SELECT_APPEND)       # on a hyperslab: sets
    out.append((s2.get_select_type(), s2.get_select_elem_pointlist().tolist()))
    beyond = h5s.create_simple((2, 2))
    beyond.select_hyperslab((1, 1), (1, 1), block=(3, 3))   # accepted, as libhdf5 does
    out.append(beyond.get_select_type())
    with lib.File(path, "w") as f:
        d = f.create_dataset("d", data=np.arange(20).reshape(4, 5))
        fs = d.id.get_space()
        fs.select_elements([(3, 1), (0, 4), (3, 1), (1, 0)])
        a = np.zeros(4, "i8")
        d.id.read(h5s.create_simple((4,)), fs, a)
        ms = h5s.create_simple((2, 3))
        ms.select_elements([(1, 2), (0, 0), (0, 1), (1, 1)])
        b = np.full((2, 3), -1)
        d.id.read(ms, fs, b)
        out += [a.tolist(), b.tolist()]
        fs.select_elements([(3, 1), (0, 4), (1, 0), (2, 2)])
        d.id.write(h5s.create_simple((4,)), fs, np.array([-1, -2, -3, -4]))
        out.append(d[()].tolist())
        hs = d.id.get_space()
        hs.select_hyperslab((1, 1), (2, 2))
        d.id.write(ms, hs, np.arange(6).reshape(2, 3) * 10)
        out.append(d[()].tolist())
        ref = lib.h5r.create(f.id, b"d", lib.h5r.DATASET_REGION, fs)
        out.append(d[ref].tolist())
        f.attrs["ref"] = ref
    return out


def test_point_selections_match_h5py(tmp_path):
    assert _points(purehep, str(tmp_path / "p.h5")) == _points(h5py, str(tmp_path / "h.h5"))
    for name in ("p.h5", "h.h5"):           # each library's region reference, read by both
        with purehep.File(str(tmp_path / name), "r") as a, \
                h5py.File(str(tmp_path / name), "r") as b:
            assert a["d"][a.attrs["ref"]].tolist() == b["d"][b.attrs["ref"]].tolist()


def _spaces(lib, path):
    """Regular hyperslab queries, validity, shape comparison, extents changed in place, and
    the dataset calls around them (space status, flush, refresh)."""
    h5s, h5d = lib.h5s, lib.h5d
    s = h5s.create_simple((4, 5), (10, h5s.UNLIMITED))
    out = [s.is_simple(), s.select_valid()]
    s.select_hyperslab((1, 1), (2, 2), (2, 2), (1, 2))
    out += [s.is_regular_hyperslab(), s.get_regular_hyperslab(), s.select_valid()]
    s2 = h5s.create_simple((4, 5))
    s2.select_hyperslab((0, 0), (1, 1), block=(3, 3))
    s2.select_hyperslab((3, 3), (1, 1), op=h5s.SELECT_OR)
    joined = h5s.create_simple((3, 4))
    joined.select_hyperslab((0, 0), (1, 1), block=(1, 2))
    joined.select_hyperslab((0, 2), (1, 1), block=(1, 2), op=h5s.SELECT_OR)
    s3 = h5s.create_simple((4, 5))
    s3.select_hyperslab((2, 2), (1, 1), block=(3, 3))
    s4 = h5s.create_simple((4, 5))
    out += [s2.is_regular_hyperslab(), outcome(s2.get_regular_hyperslab),
            joined.is_regular_hyperslab(), joined.get_regular_hyperslab(), s3.select_valid(),
            outcome(h5s.create_simple((4,)).is_regular_hyperslab), outcome(s4.is_regular_hyperslab)]
    a, b = h5s.create_simple((3,)), h5s.create_simple((1, 3))
    c = h5s.create_simple((2, 2))
    c.select_hyperslab((0, 0), (1, 1), block=(1, 2))
    p1, p2 = h5s.create_simple((3, 4)), h5s.create_simple((2, 2))
    p1.select_elements([(0, 0), (2, 3)])
    p2.select_elements([(0, 0), (1, 1)])
    out += [a.select_shape_same(b), a.select_shape_same(c), p1.select_valid(),
            p1.select_shape_same(p2)]
    e = h5s.create_simple((2,))
    e.set_extent_simple((6, 7), (8, 9))
    out += [(e.shape, e.get_simple_extent_dims(True), e.get_select_npoints()),
            outcome(lambda: e.set_extent_simple((6,), (5,)))]
    e.set_extent_none()
    x = h5s.create_simple((2,))
    x.extent_copy(s)
    out += [(e.get_simple_extent_type(), e.shape, e.is_simple()),
            (x.shape, x.get_simple_extent_dims(True), x.get_select_type()),
            h5s.create(h5s.SCALAR).is_simple(),
            (h5d.SPACE_STATUS_NOT_ALLOCATED, h5d.SPACE_STATUS_PART_ALLOCATED,
             h5d.SPACE_STATUS_ALLOCATED), h5d.StoreInfo._fields]
    with lib.File(path, "w") as f:
        d = f.create_dataset("c", (10,), chunks=(2,), dtype="i4")
        out.append(d.id.get_space_status())
        d[0] = 1
        out.append(d.id.get_space_status())
        d[:] = 2
        g = f.create_dataset("g", (10,), dtype="i4")
        out += [d.id.get_space_status(), g.id.get_space_status()]
        g[0] = 1
        out.append(g.id.get_space_status())
        d.id.flush()
        d.id.refresh()
    with lib.File(path, "r") as f:
        out += [f[n].id.get_space_status() for n in ("c", "g")]
    return out


def test_space_queries_and_extents_match_h5py(tmp_path):
    assert _spaces(purehep, str(tmp_path / "p.h5")) == _spaces(h5py, str(tmp_path / "h.h5"))


def _special(lib):
    h5s = lib.h5s
    null, scalar, empty = h5s.create(h5s.NULL), h5s.create(h5s.SCALAR), h5s.create_simple((3,))
    empty.select_none()
    return [(null.get_select_type(), null.get_select_npoints(), null.get_select_bounds()),
            (scalar.get_select_type(), scalar.get_select_npoints(),
             outcome(scalar.get_select_bounds)),
            (empty.get_select_type(), empty.get_select_npoints(), empty.get_select_bounds())]


def test_null_scalar_and_empty_selections_match_h5py():
    assert _special(purehep) == _special(h5py)
