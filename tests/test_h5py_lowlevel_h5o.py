"""purehep.h5i and purehep.h5o side by side with h5py: identifiers' types, names and files;
object information (type, hard links, attributes, kept times), opening, hard linking, copying
(with an object copy list), existence and visits — in a file being written and read back."""
import h5py
import numpy as np
import pytest

import purehep


def _call(call):
    try:
        r = call()
    except Exception as e:              # noqa: BLE001 - the error is what is compared
        return type(e), "" if isinstance(e, KeyError) else str(e).split(" (")[0]
    if hasattr(r, "rc"):
        return (r.type, r.rc, r.num_attrs, r.addr > 0, r.fileno > 0,
                [t > 0 for t in (r.atime, r.mtime, r.ctime, r.btime)])
    return r


def _objects(lib, path, libver):
    h5i, h5o, h5p, h5s = lib.h5i, lib.h5o, lib.h5p, lib.h5s
    out = []
    with lib.File(path, "w", libver=libver) as f:
        g = f.create_group("g")
        d = g.create_dataset("d", data=[1, 2], track_times=True)
        f["t"] = np.dtype("i4")
        f["d2"] = d
        g["soft"] = lib.SoftLink("/g/d")
        g["dangling"] = lib.SoftLink("/nowhere")
        d.attrs["a"], d.attrs["b"] = 1, 2
        ids = (f.id, g.id, d.id, f["t"].id, d.attrs.get_id("a"))
        out += [(h5i.get_name(i), h5i.get_type(i), h5i.get_file_id(i) == f.id) for i in ids]
        out += [h5i.get_name(lib.h5t.STD_I32LE), h5i.get_type(lib.h5t.STD_I32LE),
                h5i.get_type(h5s.create_simple((2,))),
                h5i.get_type(h5p.create(h5p.DATASET_CREATE))]
        queries = ((d.id, None), (f.id, b"g"), (f.id, b"g/d"), (f.id, b"t"), (g.id, b"."),
                   (f["t"].id, None), (f.id, b"nope"))
        out += [_call(lambda: h5o.get_info(o, n) if n else h5o.get_info(o)) for o, n in queries]
        h5o.link(d.id, f.id, b"d3")
        out.append((f["d3"][()].tolist(), h5o.get_info(d.id).rc, _call(
            lambda: h5o.link(d.id, f.id, b"d3"))))
        h5o.copy(f.id, b"g", f.id, b"gcopy")
        copypl = h5p.create(h5p.OBJECT_COPY)
        copypl.set_copy_object(h5o.COPY_SHALLOW_HIERARCHY_FLAG | h5o.COPY_WITHOUT_ATTR_FLAG)
        h5o.copy(f.id, b"g/d", f.id, b"bare", copypl)
        out.append((sorted(f["gcopy"]), f["gcopy/d"][()].tolist(), len(f["gcopy/d"].attrs),
                    len(f["bare"].attrs), copypl.get_copy_object(),
                    _call(lambda: h5o.copy(f.id, b"g", f.id, b"gcopy"))))
        out += [_call(lambda: type(h5o.open(f.id, n)).__name__) for n in (b"g", b"g/d", b"t",
                                                                          b"nope")]
        out.append(h5o.open(f.id, b"g") == g.id)
        out += [_call(lambda: h5o.exists_by_name(f.id, n))
                for n in (b"g/d", b"nope", b"g/soft", b"g/dangling", b"nope/x")]
    with lib.File(path, "r") as f:
        seen = []
        out.append(h5o.visit(f.id, seen.append))
        out.append(h5o.visit(f.id, lambda n, i: seen.append((n, i.type, i.rc)), info=True))
        out.append(h5o.visit(f.id, lambda n: n if n.endswith(b"d") else None, obj_name=b"g"))
        out.append(seen)
        out += [_call(lambda: h5o.get_info(f.id, n)) for n in (b"g/d", b"d3", b"t")]
    return out


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_h5i_h5o_match_h5py(tmp_path, libver):
    assert _objects(purehep, str(tmp_path / "p.h5"), libver) == \
        _objects(h5py, str(tmp_path / "h.h5"), libver)
