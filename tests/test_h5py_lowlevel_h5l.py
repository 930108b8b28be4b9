"""purehep.h5l's LinkProxy (``group.id.links``, ``f.id.links``) side by side with h5py's:
existence, link information (type, creation order, name character set), soft and external
values, iteration and visits, creation and moving — in a file being written and in files
either library wrote, read back."""
import h5py
import numpy as np
import pytest

import purehep

NAMES = [b"g", b"g/d", b"g/soft", b"g/ext", "g/é".encode(), b"/g/d", b"nope", b"nope/x",
         b"g/soft/x", b"g/d/x"]


def _call(call):
    try:
        r = call()
    except Exception as e:              # noqa: BLE001 - the error is what is compared
        return type(e), str(e).split(" (")[-1] if isinstance(e, RuntimeError) else str(e)
    if hasattr(r, "corder_valid"):
        return r.type, r.corder_valid, r.corder, r.cset, r.u > 0
    return r


def _queries(f):
    grp = f["g"]                      # h5py's LinkProxy does not keep its group open
    L, g = f.id.links, grp.id.links
    out = [(n, _call(lambda: L.exists(n)), _call(lambda: L.get_info(n))) for n in NAMES]
    out += [_call(lambda: L.exists("g")), _call(lambda: L.get_val(b"g/soft")),
            _call(lambda: L.get_val(b"g/ext")), _call(lambda: L.get_val(b"g/d"))]
    out += [_call(lambda: g.get_info(n, index=1)) for n in (b".", b"", b"soft", b"g")]
    seen = []
    out.append(g.iterate(seen.append))
    out.append(g.iterate(lambda n: "stop" if n == b"ext" else None))
    out.append(g.iterate(lambda n, i: seen.append((n, i.type, i.cset)), info=True, idx=1))
    out.append(L.iterate(seen.append, obj_name=b"g", idx_type=1, order=1))
    out.append(L.visit(seen.append))
    out.append(L.visit(lambda n, i: seen.append((n, i.type)), info=True, obj_name=b"g"))
    out.append(L.visit(lambda n: n if n.endswith(b"soft") else None))
    plain = f["plain"]
    out += [_call(lambda: plain.id.links.iterate(print, **kw))
            for kw in (dict(idx_type=1), dict(idx_type=5), dict(order=7))]
    return out + seen


def _build(lib, path):
    with lib.File(path, "w", track_order=True) as f:
        g = f.create_group("g", track_order=True)
        g["d"] = np.arange(3)
        g["soft"] = lib.SoftLink("/g/d")
        g["ext"] = lib.ExternalLink("other.h5", "/x")
        g["é"] = 1
        f.create_group("plain")["z"] = 2
        live = _queries(f)
        L = f.id.links
        L.create_soft(b"g/s2", b"/g/d")
        L.create_external(b"e2", b"f.h5", b"/y")
        L.create_hard(b"h2", f["g"].id, b"d")
        L.move(b"h2", f["g"].id, b"h3")
        made = (f["g/h3"][()].tolist(), f.get("g/s2", getlink=True).path,
                f.get("e2", getlink=True).filename, sorted(f["g"]),
                _call(lambda: L.create_soft(b"g/s2", b"/x"))[0])
    return live, made


def test_link_proxy_matches_h5py(tmp_path):
    mine, theirs = _build(purehep, str(tmp_path / "p.h5")), _build(h5py, str(tmp_path / "h.h5"))
    assert mine == theirs
    for name in ("p.h5", "h.h5"):                   # each file, read by both
        with purehep.File(str(tmp_path / name), "r") as a, \
                h5py.File(str(tmp_path / name), "r") as b:
            assert _queries(a) == _queries(b)


@pytest.mark.parametrize("name", ["/Hello, ascii", "/unicode\u4500"])
def test_link_name_charset_matches_h5py(tmp_path, name):
    for lib in (purehep, h5py):
        with lib.File(str(tmp_path / f"{lib.__name__}.h5"), "w") as f:
            group = f.create_group(name)
            assert group.id.links.get_info(name.encode()).cset == \
                (lib.h5t.CSET_ASCII if name.isascii() else lib.h5t.CSET_UTF8)


def test_link_objects_are_read_only_as_h5py():
    for lib in (purehep, h5py):
        soft, ext = lib.SoftLink("/a"), lib.ExternalLink("f.h5", "/b")
        assert (soft._path, ext._path, ext._filename) == ("/a", "/b", "f.h5")
        for obj, attr in ((soft, "path"), (ext, "path"), (ext, "filename")):
            with pytest.raises(AttributeError):
                setattr(obj, attr, "x")
