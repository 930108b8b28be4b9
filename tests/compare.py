"""Compare what purehep reads with what h5py reads, object by object, exactly."""
import h5py
import numpy as np

import purehep


def same_values(a, b, path=""):
    """Assert two values read by h5py (a) and purehep (b) are equal, NaNs and all."""
    if isinstance(a, h5py.Empty):
        assert isinstance(b, purehep.Empty), path
        assert a.dtype == b.dtype, path
        return
    if isinstance(a, (h5py.Reference, h5py.RegionReference)) or type(a).__name__ == "RefMark":
        assert bool(a) == bool(b), path
        return
    if isinstance(a, (str, bytes)):
        assert type(a) is type(b) and a == b, (path, a, b)
        return
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    assert a_arr.shape == b_arr.shape, (path, a_arr.shape, b_arr.shape)
    if isinstance(a, np.generic) or isinstance(b, np.generic):
        assert type(a) is type(b) or a_arr.dtype == b_arr.dtype, (path, type(a), type(b))
    if a_arr.dtype == object:
        for x, y in zip(a_arr.reshape(-1), b_arr.reshape(-1)):
            same_values(x, y, path)
        return
    assert a_arr.dtype == b_arr.dtype, (path, a_arr.dtype, b_arr.dtype)
    if a_arr.dtype.names:
        for name in a_arr.dtype.names:
            same_values(a_arr[name], b_arr[name], f"{path}.{name}")
        return
    if a_arr.dtype.subdtype is not None or a_arr.dtype.kind == "V":
        assert a_arr.tobytes() == b_arr.tobytes(), path
        return
    if a_arr.dtype.kind in "fc":
        assert np.array_equal(a_arr, b_arr, equal_nan=True), path
    else:
        assert np.array_equal(a_arr, b_arr), path


def same_attrs(h, p, path):
    assert list(h.attrs.keys()) == list(p.attrs.keys()), path
    for name in h.attrs:
        try:
            hv = h.attrs[name]
        except (OSError, TypeError, ValueError):  # h5py cannot read it: purehep need not either
            continue
        same_values(hv, p.attrs[name], f"{path}@{name}")


def same_dataset(h, p, path, data=True):
    assert h.shape == p.shape, path
    assert h.dtype == p.dtype, (path, h.dtype, p.dtype)
    assert h.maxshape == p.maxshape, path
    assert h.chunks == p.chunks, path
    for prop in ("compression", "compression_opts", "shuffle", "fletcher32", "scaleoffset"):
        assert getattr(h, prop) == getattr(p, prop), (path, prop)
    if data:
        try:
            expected = h[()]
        except (OSError, TypeError, ValueError):
            return False
        same_values(expected, p[()], path)
    return True


def same_tree(h, p, path="/", data=True, seen=None):
    """Walk h5py group ``h`` and purehep group ``p`` together; returns objects compared."""
    seen = set() if seen is None else seen
    count = 0
    assert list(h.keys()) == list(p.keys()), path
    same_attrs(h, p, path)
    for name in h:
        hl = h.get(name, getlink=True)
        pl = p.get(name, getlink=True)
        assert type(hl).__name__ == type(pl).__name__, (path, name)
        if isinstance(hl, h5py.SoftLink):
            assert hl.path == pl.path
        if isinstance(hl, h5py.ExternalLink):
            assert (hl.filename, hl.path) == (pl.filename, pl.path)
        if not isinstance(hl, h5py.HardLink):
            continue
        ho, po = h[name], p[name]
        sub = f"{path.rstrip('/')}/{name}"
        assert ho.name == po.name, sub
        if isinstance(ho, h5py.Group):
            assert isinstance(po, purehep.Group), sub
            if (id(p.file), po.addr) in seen:
                continue
            seen.add((id(p.file), po.addr))
            count += same_tree(ho, po, sub, data, seen)
        elif isinstance(ho, h5py.Dataset):
            assert isinstance(po, purehep.Dataset), sub
            same_dataset(ho, po, sub, data)
            same_attrs(ho, po, sub)
        else:
            assert isinstance(po, purehep.Datatype), sub
            assert ho.dtype == po.dtype, sub
            same_attrs(ho, po, sub)
        count += 1
    return count


def outcome(f):
    """``f()``'s result, or the type and message of the exception it raised: what a
    side-by-side test compares between h5py and purehep."""
    try:
        return f()
    except Exception as e:              # noqa: BLE001 - the error is what is compared
        return type(e), str(e)
