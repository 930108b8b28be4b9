"""purehep.h5p's dataset creation and access lists (chunks, fill value, filters, chunk cache)
with purehep.h5d.create / open, side by side with h5py: the same calls on both libraries give
the same datasets and the same lists back."""
import importlib

import h5py
import numpy as np
import pytest

import purehep
from compare import outcome


def _mods(lib):
    return (importlib.import_module(f"{lib.__name__}.{m}") for m in ("h5p", "h5d", "h5t", "h5s"))


def _create(lib, path):
    """Datasets made with h5d.create and creation lists; their lists and values."""
    h5p, h5d, h5t, h5s = _mods(lib)
    out = {}
    with lib.File(path, "w") as f:
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_chunk((2,))
        dcpl.set_fill_time(h5d.FILL_TIME_NEVER)
        dcpl.set_fill_value(np.array([7]))
        dcpl.set_deflate(6)
        dcpl.set_shuffle()
        dcpl.set_fletcher32()
        out["list"] = (dcpl.get_chunk(), dcpl.get_nfilters(),
                       [dcpl.get_filter(i) for i in range(3)], dcpl.get_filter_by_id(1),
                       dcpl.fill_value_defined(), dcpl.get_layout())
        ds = lib.Dataset(h5d.create(f.id, b"x", h5t.IEEE_F64LE,
                                    h5s.create_simple((5,), (10,)), dcpl))
        ds[1:3] = [1, 2]
        compact = h5p.create(h5p.DATASET_CREATE)
        compact.set_layout(h5d.COMPACT)
        compact.set_fill_value(np.array([-3], "i2"))
        lib.Dataset(h5d.create(f.id, b"c", h5t.STD_I32BE, h5s.create_simple((3,)), compact))
        f.create_dataset("plain", (4,), dtype="i4")
    with lib.File(path, "r") as f:
        for name in ("x", "c", "plain"):
            ds, q = f[name], f[name].id.get_create_plist()
            fill = np.zeros(1, ds.dtype)
            q.get_fill_value(fill)
            chunk = q.get_chunk() if q.get_layout() == h5d.CHUNKED else None
            out[name] = (ds[()].tolist(), ds.dtype, ds.chunks, ds.maxshape, ds.compression,
                         ds.compression_opts, ds.shuffle, ds.fletcher32, ds.fillvalue,
                         chunk, q.get_layout(), q.get_fill_time(), q.fill_value_defined(),
                         fill.tolist(), [q.get_filter(i) for i in range(q.get_nfilters())])
    return out


def test_dataset_creation_lists_match_h5py(tmp_path):
    assert _create(purehep, str(tmp_path / "p.h5")) == _create(h5py, str(tmp_path / "h.h5"))


def _errors(lib):
    h5p, h5d, _, _ = _mods(lib)
    dcpl = h5p.create(h5p.DATASET_CREATE)
    out = []
    for call in (dcpl.get_chunk, lambda: dcpl.set_chunk((0, 2))):
        with pytest.raises(Exception) as info:
            call()
        out.append((info.type, str(info.value)))
    dcpl.set_deflate()
    dcpl.remove_filter(1)
    out.append((dcpl.get_nfilters(), dcpl.fill_value_defined(), dcpl.get_filter_by_id(1)))
    return out


def test_creation_list_errors_match_h5py():
    assert _errors(purehep) == _errors(h5py)


def _open(lib, path, tmp_path):
    h5p, h5d, _, _ = _mods(lib)
    prefix = str(tmp_path / "src").encode()
    with lib.File(path, "w") as f:
        f.create_dataset("d", (10,), chunks=(5,), dtype="f4")
    with lib.File(path, "r") as f:
        dapl = h5p.create(h5p.DATASET_ACCESS)
        dapl.set_chunk_cache(100, 2000, 0.5)
        dapl.set_virtual_prefix(prefix)
        did = h5d.open(f.id, b"d", dapl)
        acc = did.get_access_plist()
        return (type(did).__name__, isinstance(did, h5d.DatasetID), acc.get_chunk_cache(),
                acc.get_virtual_prefix() == prefix)


def test_open_with_access_list_matches_h5py(tmp_path):
    assert _open(purehep, str(tmp_path / "p.h5"), tmp_path) == \
        _open(h5py, str(tmp_path / "h.h5"), tmp_path)


def _never_filled(lib, path):
    out = []
    for layout in (dict(chunks=(2,)), {}, dict(chunks=(2,), maxshape=(None,))):
        with lib.File(path, "w") as f:
            ds = f.create_dataset("x", (5,), dtype="f8", fillvalue=7, fill_time="never",
                                  **layout)
            ds[1:3] = [1, 2]
            if "maxshape" in layout:
                ds.resize((8,))
                ds[7] = 1
            out.append(ds[:].tolist())
        with lib.File(path, "r") as f:
            out.append(f["x"][:].tolist())
    return out


def test_fill_time_never_leaves_zeros_as_h5py(tmp_path):
    """Regression: with fill_time 'never', the unwritten elements of written chunks and of
    contiguous data are zeros, not the fill value (libhdf5 does not fill them)."""
    assert _never_filled(purehep, str(tmp_path / "p.h5")) == \
        _never_filled(h5py, str(tmp_path / "h.h5"))


def _virtual(lib, tmp_path):
    """Virtual datasets made with set_virtual: blocks of sources (selected whole, or by a
    hyperslab beyond the extent of the dataspace given for the source, which the source
    has), and an unlimited strided mapping."""
    h5p, h5d, h5t, h5s = _mods(lib)
    for k in range(3):
        with lib.File(str(tmp_path / f"src{k}.h5"), "w") as f:
            f.create_dataset("data", data=np.full((2 + (k == 1), 4), k + 1, "i2"),
                             maxshape=(None, 4))
    out = []
    path = str(tmp_path / f"{lib.__name__}.h5")
    with lib.File(path, "w", libver="latest") as f:
        vspace = h5s.create_simple((6, 4))
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_fill_value(np.array([-1]))
        for k in range(3):
            src = h5s.create_simple((2, 4), (h5s.UNLIMITED, 4))
            if k == 1:
                src.select_hyperslab((0, 0), (1, 1), block=(3, 4))    # beyond (2, 4)
            vspace.select_hyperslab((2 * k, 0), (1, 1), block=(2 if k != 1 else 3, 4))
            if k == 2:
                vspace.select_hyperslab((4, 0), (1, 1), block=(2, 4))
            dcpl.set_virtual(vspace, str(tmp_path / f"src{k}.h5").encode(), b"data", src)
        out.append((dcpl.get_layout(), dcpl.get_virtual_count(),
                    [dcpl.get_virtual_dsetname(i) for i in range(3)],
                    dcpl.get_virtual_vspace(1).get_select_bounds()))
        h5d.create(f.id, b"v", h5t.STD_I16LE, vspace, dcpl)
        unl = h5s.create_simple((1, 4), (h5s.UNLIMITED, 4))
        unl.select_hyperslab((0, 0), (h5s.UNLIMITED, 1), stride=(3, 1), block=(1, 4))
        src = h5s.create_simple((2, 4), (h5s.UNLIMITED, 4))
        src.select_hyperslab((0, 0), (h5s.UNLIMITED, 1), block=(1, 4))
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_virtual(unl, str(tmp_path / "src0.h5").encode(), b"data", src)
        h5d.create(f.id, b"u", h5t.STD_I16LE, unl, dcpl)
    with lib.File(path, "r") as f:
        out += [(f[n].shape, f[n].maxshape, f[n].fillvalue, f[n][()].tolist()) for n in "vu"]
    plain = h5p.create(h5p.DATASET_CREATE)
    with pytest.raises(ValueError) as info:
        plain.get_virtual_count()
    return out + [str(info.value)]


def test_virtual_creation_lists_match_h5py(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "h").mkdir()
    assert _virtual(purehep, tmp_path / "p") == _virtual(h5py, tmp_path / "h")


def _io(lib, path):
    """DatasetID.read / write through dataspaces: all, hyperslabs (strided, in blocks,
    combined), none, memory selections, conversion, errors, set_extent."""
    h5s = lib.h5s
    out = []

    with lib.File(path, "w") as f:
        d = f.create_dataset("d", data=np.arange(20).reshape(4, 5), maxshape=(None, 5),
                             chunks=(2, 5))
        e = f.create_dataset("e", (6, 6), dtype="f4", chunks=(2, 2))
        i = d.id
        out.append((i.shape, i.rank, i.dtype))
        a = np.zeros((4, 5), "i8")
        i.read(h5s.ALL, h5s.ALL, a)
        fs = i.get_space()
        fs.select_hyperslab((1, 1), (2, 2))
        ms = h5s.create_simple((4,))
        b = np.zeros(4, "i8")
        i.read(ms, fs, b)
        ms2 = h5s.create_simple((2, 4))
        ms2.select_hyperslab((0, 1), (1, 2), block=(2, 1))
        c = np.full((2, 4), -1, "i8")
        i.read(ms2, fs, c)
        f4 = np.zeros(4, "f4")
        i.read(ms, fs, f4)
        out += [a.tolist(), b.tolist(), c.tolist(), f4.tolist()]
        ro = np.zeros((4, 5), "i8")
        ro.flags.writeable = False
        out += [outcome(lambda: i.read(h5s.create_simple((3,)), fs, np.zeros(3, "i8"))),
                outcome(lambda: i.read(h5s.ALL, h5s.ALL, np.zeros((4, 5), "i8")[:, ::2])),
                outcome(lambda: i.read(h5s.ALL, h5s.ALL, [0] * 20)),
                outcome(lambda: i.write(h5s.ALL, h5s.ALL, [1, 2])),
                outcome(lambda: i.write(h5s.ALL, h5s.ALL, np.zeros((4, 5), "i8")[:, ::2])),
                outcome(lambda: i.read(h5s.ALL, h5s.ALL, ro))]
        i.write(h5s.ALL, h5s.ALL, ro)
        i.write(ms, fs, np.array([100, 101, 102, 103]))
        out.append(d[()].tolist())
        x = np.zeros((4, 5), "i8")
        i.read(h5s.ALL, fs, x)
        fs3 = i.get_space()
        fs3.select_hyperslab((0, 0), (2, 2), stride=(2, 3), block=(1, 2))
        fs3.select_hyperslab((3, 4), (1, 1), op=h5s.SELECT_OR)
        y = np.zeros(9, "i8")
        i.read(h5s.create_simple((9,)), fs3, y)
        i.write(h5s.create_simple((9,)), fs3, -np.arange(9))
        out += [x.tolist(), y.tolist(), d[()].tolist()]
        es = e.id.get_space()
        es.select_hyperslab((1, 1), (2, 1), stride=(3, 1), block=(1, 3))
        e.id.write(h5s.create_simple((2, 3)), es, np.ones((2, 3), "f4"))
        out += [e.id.get_num_chunks(), e[()].tolist()]      # only the blocks are written
        fn, mn = i.get_space(), h5s.create_simple((3,))
        fn.select_none()
        mn.select_none()
        z = np.zeros(3, "i8")
        i.read(mn, fn, z)
        i.write(mn, fn, z)
        i.set_extent((6, 5))
        out += [z.tolist(), d.shape, i.shape]
    return out


def test_dataset_id_read_write_match_h5py(tmp_path):
    assert _io(purehep, str(tmp_path / "p.h5")) == _io(h5py, str(tmp_path / "h.h5"))
