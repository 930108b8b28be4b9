"""purehep.h5a side by side with h5py: attribute ids (name, storage size, read and write
through arrays), opening by name or position in name or creation order, existence, counts,
information (creation order as stored, compact and dense), iteration, renaming and deleting —
in a file being written and in files of both libraries read back."""
import h5py
import numpy as np
import pytest

import purehep


def _call(f):
    try:
        r = f()
    except Exception as e:              # noqa: BLE001 - the error is what is compared
        return type(e), "" if isinstance(e, KeyError) else str(e)
    if hasattr(r, "data_size"):
        return r.corder_valid, r.corder, r.cset, r.data_size
    return r


def _queries(lib, g, out):
    h5a, h5 = lib.h5a, lib.h5
    out += [_call(lambda: h5a.get_num_attrs(g.id))]
    out += [_call(lambda: h5a.exists(g.id, k)) for k in (b"a", b"b", "é".encode(), b"nope")]
    out += [_call(lambda: h5a.get_info(g.id, b"b")), _call(lambda: h5a.get_info(g.id, index=1)),
            _call(lambda: h5a.get_info(g.id, index=1, index_type=h5.INDEX_CRT_ORDER)),
            _call(lambda: h5a.open(g.id, index=0).name),
            _call(lambda: h5a.open(g.id, index=2, index_type=h5.INDEX_CRT_ORDER,
                                   order=h5.ITER_DEC).name),
            _call(lambda: h5a.open(g.id, b"nope")), _call(lambda: h5a.open(g.id, index=99)),
            _call(lambda: h5a.get_info(g.id, index=99))]
    seen = []
    out.append(h5a.iterate(g.id, seen.append))
    out.append(_call(lambda: h5a.iterate(g.id, lambda n, i: seen.append((n, i.corder_valid,
                                                                        i.corder)),
                                         info=True, index_type=h5.INDEX_CRT_ORDER)))
    out.append(h5a.iterate(g.id, lambda n: n if n == b"b" else None, index=1))
    out.append(seen)


def _attributes(lib, path, track_order, many):
    h5a = lib.h5a
    out = []
    with lib.File(path, "w") as f:
        g = f.create_group("g", track_order=track_order)
        g.attrs["b"] = np.arange(3)
        g.attrs["a"] = 1.5
        g.attrs["é"] = b"xyz"
        g.attrs["s"] = "text"
        for i in range(many):           # past 8 attributes: dense storage
            g.attrs[f"x{i:02d}"] = i
        aid = h5a.open(g.id, b"b")
        out.append((aid.name, aid.get_name(), aid.shape, aid.dtype, aid.get_storage_size(),
                    aid.get_space().get_simple_extent_dims(), h5a.get_info(aid).data_size))
        got = np.zeros(3, "i8"), np.zeros(3, "f4")
        for arr in got:
            aid.read(arr)
        out += [a.tolist() for a in got]
        out.append(_call(lambda: aid.read(np.zeros(6, "i8")[::2])))
        out.append(_call(lambda: aid.read([0, 0, 0])))
        aid.write(np.array([7, 8, 9]))
        out.append(g.attrs["b"].tolist())
        sid = h5a.open(g.id, b"s")
        out.append((sid.dtype, sid.get_storage_size()))
        _queries(lib, g, out)
        h5a.rename(g.id, b"a", b"a2")
        out.append(sorted(g.attrs))
        h5a.delete(g.id, b"a2")
        h5a.delete(g.id, index=0)
        out += [sorted(g.attrs), _call(lambda: h5a.delete(g.id, b"nope")),
                _call(lambda: h5a.delete(g.id, index=99))]
        f.create_dataset("d", data=[1]).attrs["x"] = 1
        out.append(h5a.exists(f.id, b"x", obj_name=b"d"))
        g.attrs["a"] = 3
        g.attrs["b"] = 4
    with lib.File(path, "r") as f:
        _queries(lib, f["g"], out)
    return out


@pytest.mark.parametrize("track_order", [False, True])
@pytest.mark.parametrize("many", [0, 12])
def test_h5a_matches_h5py(tmp_path, track_order, many):
    assert _attributes(purehep, str(tmp_path / "p.h5"), track_order, many) == \
        _attributes(h5py, str(tmp_path / "h.h5"), track_order, many)


@pytest.mark.parametrize("writer", ["h5py", "purehep"])
def test_attribute_creation_orders_of_either_library(tmp_path, writer):
    path = str(tmp_path / "f.h5")
    _attributes(h5py if writer == "h5py" else purehep, path, True, 12)
    with purehep.File(path, "r") as a, h5py.File(path, "r") as b:
        assert _queries(purehep, a["g"], []) == _queries(h5py, b["g"], [])
