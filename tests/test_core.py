"""The core reader against h5py: groups, links, attributes and non-chunked datasets written by
h5py for every libver, compared object by object."""
import os

import h5py
import numpy as np
import pytest

import purehep
from compare import same_tree, same_values

LIBVERS = ["earliest", "v108", "v110", "latest"]


def build(path, libver, userblock=0):
    kw = {"userblock_size": userblock} if userblock else {}
    with h5py.File(path, "w", libver=(libver, "latest"), **kw) as f:
        f.attrs["title"] = "core sample"
        f.attrs["version"] = np.int32(3)
        f.attrs["pi"] = np.float64(np.pi)
        f.attrs["vec"] = np.arange(5, dtype=np.int16)
        f.attrs["fixed"] = np.bytes_(b"fixed string")
        f.attrs.create("utf8", "gr\u00fc\u00dfe", dtype=h5py.string_dtype("utf-8"))
        f.attrs.create("strs", ["a", "bb", "ccc"], dtype=h5py.string_dtype())
        f.attrs["empty"] = h5py.Empty("f4")
        f.attrs["comp"] = np.array([(1, 2.5), (3, 4.5)], dtype=[("a", "i4"), ("b", "f8")])
        f.attrs["matrix"] = np.arange(12.0).reshape(3, 4)
        g = f.create_group("group/nested/deep")
        g.attrs["depth"] = 3
        many = f.create_group("many")
        for i in range(40):
            many.create_group(f"member{i:03d}")
        for i in range(30):
            many.attrs[f"attr{i:02d}"] = i
        big = f.create_group("bigattr")
        if libver != "earliest":  # libhdf5 keeps attributes > 64 KiB in dense storage only
            big.attrs["big"] = np.arange(20000, dtype="f8")
        ordered = f.create_group("ordered", track_order=True)
        for name in ["zeta", "alpha", "mid", "beta"]:
            ordered.create_group(name)
        for name in ["z", "a", "m"]:
            ordered.attrs[name] = name
        bigorder = f.create_group("bigorder", track_order=True)
        for i in range(20):
            bigorder[f"d{19 - i}"] = np.arange(i)
        f["contig"] = np.arange(100, dtype="<f8").reshape(10, 10)
        f["bigend"] = np.arange(24, dtype=">i4").reshape(2, 3, 4)
        f.create_dataset("compact", data=np.arange(10, dtype="u2"), dcpl=_compact_dcpl())
        ext = os.path.join(os.path.dirname(path), "external.bin")
        with open(ext, "wb") as fh:
            fh.write(b"\0" * 16 + np.arange(12, dtype="<i4").tobytes())
        f.create_dataset("external", shape=(3, 4), dtype="<i4",
                         external=[("external.bin", 16, 24), ("external.bin", 40, 24)])
        f.create_dataset("unalloc", shape=(5, 6), dtype="i8", fillvalue=-7)
        f.create_dataset("unalloc0", shape=(4,), dtype="f4")
        f["scalar"] = np.float32(2.5)
        f["scalar_str"] = b"bytes"
        f.create_dataset("null", data=h5py.Empty("i4"))
        f.create_dataset("vlen_str", data=["x", "yy", "zzz"], dtype=h5py.string_dtype())
        f.create_dataset("vlen_ascii", data=[b"x", b"yy"], dtype=h5py.string_dtype("ascii"))
        f.create_dataset("fixed_str", data=np.array([b"ab", b"cde"], dtype="S4"))
        f.create_dataset("vlen_int", data=np.array([np.arange(3), np.arange(5)], dtype=object),
                         dtype=h5py.vlen_dtype("i4"))
        f["compound"] = np.array([(1, 2.0, b"x"), (3, 4.0, b"yz")],
                                 dtype=[("i", "i4"), ("f", "f8"), ("s", "S3")])
        f["enum"] = np.array([0, 1, 2, 1], dtype=h5py.enum_dtype({"R": 0, "G": 1, "B": 2}, "u1"))
        f["bool"] = np.array([True, False, True])
        f["complex"] = np.array([1 + 2j, 3 - 4j])
        f["half"] = np.arange(6, dtype="f2")
        f["array_t"] = np.zeros(3, dtype=("i4", (2, 2)))
        f["named"] = np.dtype([("x", "f4"), ("y", "f4")])
        f.create_dataset("uses_named", data=np.zeros(3, dtype=[("x", "f4"), ("y", "f4")]),
                         dtype=f["named"])
        f["hard_again"] = f["contig"]
        f["soft"] = h5py.SoftLink("/group/nested")
        f["dangling"] = h5py.SoftLink("/nowhere")
        f["ext"] = h5py.ExternalLink("other.h5", "/target")
        f["gr\u00fc\u00df"] = np.arange(3)
        refs = f.create_dataset("refs", (2,), dtype=h5py.ref_dtype)
        refs[0] = f["contig"].ref
        refs[1] = f["group"].ref
        rr = f.create_dataset("regrefs", (2,), dtype=h5py.regionref_dtype)
        rr[0] = f["contig"].regionref[1:3, 2:5]
        rr[1] = f["contig"].regionref[[0, 4], 1]
    with h5py.File(os.path.join(os.path.dirname(path), "other.h5"), "w") as o:
        o["target"] = np.arange(4)


def _compact_dcpl():
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    return dcpl


@pytest.fixture(params=LIBVERS)
def sample(request, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # libhdf5 finds external raw data files from the cwd
    path = str(tmp_path / f"core_{request.param}.h5")
    build(path, request.param)
    return path


def test_whole_tree_equals_h5py(sample):
    with h5py.File(sample, "r") as h, purehep.File(sample) as p:
        assert same_tree(h, p) > 40


def test_slices_and_elements(sample):
    with h5py.File(sample, "r") as h, purehep.File(sample) as p:
        for name in ["contig", "bigend", "compact", "unalloc", "external"]:
            hd, pd = h[name], p[name]
            for sel in [(0,), (slice(1, 4),), (slice(None, None, 3),), (Ellipsis, 1),
                        (-1,), ([0, 2, 3],), (slice(0, 0),)]:
                try:
                    expected = hd[sel]
                except (TypeError, ValueError, IndexError, OSError):
                    continue
                same_values(expected, pd[sel], f"{name}{sel}")
        same_values(h["contig"][3, 4], p["contig"][3, 4])
        same_values(h["contig"][1:7:2, ::3], p["contig"][1:7:2, ::3])
        mask = h["contig"][()] > 50
        same_values(h["contig"][mask], p["contig"][mask])
        same_values(h["compound"]["f"], p["compound"]["f"])
        same_values(h["compound"].fields(["i", "s"])[1:], p["compound"].fields(["i", "s"])[1:])
        same_values(h["scalar"][()], p["scalar"][()])
        same_values(h["scalar"][...], p["scalar"][...])
        same_values(h["vlen_str"].asstr()[()], p["vlen_str"].asstr()[()])
        same_values(h["contig"].astype("i2")[2:4], p["contig"].astype("i2")[2:4])


def test_links_and_references(sample):
    with h5py.File(sample, "r") as h, purehep.File(sample) as p:
        assert isinstance(p.get("soft", getlink=True), purehep.SoftLink)
        assert p.get("soft", getlink=True).path == "/group/nested"
        ext = p.get("ext", getlink=True)
        assert (ext.filename, ext.path) == ("other.h5", "/target")
        assert list(p["ext"][()]) == [0, 1, 2, 3]
        for name in ("dangling", "soft", "group/nested/deep", "nowhere", "dangling/x",
                     "soft/deep", "/", "", "ext", "group//nested/"):
            assert (name in p) == (name in h), name   # a dangling soft link is "in" (h5py)
        assert p.get("dangling") is None
        with pytest.raises(KeyError):
            p["nowhere"]
        assert p["soft/deep"].attrs["depth"] == 3
        refs = p["refs"][()]
        assert p[refs[0]].name == h[h["refs"][0]].name
        assert p[refs[1]].name == "/group"
        for i in range(2):
            same_values(h["contig"][h["regrefs"][i]], p["contig"][p["regrefs"][i]])
        assert p["group"]["nested"].parent.name == "/group"
        assert p["/group/nested/deep"].file is p


def test_visit_order_matches_h5py(sample):
    with h5py.File(sample, "r") as h, purehep.File(sample) as p:
        hn, pn = [], []
        h.visit(hn.append)
        p.visit(pn.append)
        assert hn == pn
        hl, pl = [], []
        h.visit_links(hl.append)
        p.visit_links(pl.append)
        assert hl == pl


def test_dataset_properties(sample):
    with h5py.File(sample, "r") as h, purehep.File(sample) as p:
        for name in ["contig", "unalloc", "scalar", "compact", "null"]:
            hd, pd = h[name], p[name]
            assert (hd.shape, hd.dtype, hd.ndim, hd.size, hd.maxshape, hd.chunks) == \
                   (pd.shape, pd.dtype, pd.ndim, pd.size, pd.maxshape, pd.chunks)
            same_values(hd.fillvalue, pd.fillvalue)
        assert len(p["contig"]) == 10
        assert [r.tolist() for r in p["contig"]][3] == h["contig"][3].tolist()
        out = np.empty((10, 10))
        p["contig"].read_direct(out)
        assert np.array_equal(out, h["contig"][()])
        view = p["contig"].read(copy=False)
        assert not view.flags.writeable and np.array_equal(view, h["contig"][()])


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_userblock(tmp_path, libver):
    path = str(tmp_path / "ub.h5")
    build(path, libver, userblock=1024)
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        assert p.userblock_size == 1024
        same_tree(h, p)


def test_file_like_and_callable(sample):
    data = open(sample, "rb").read()
    with h5py.File(sample, "r") as h:
        with open(sample, "rb") as fh, purehep.File(fh) as p:
            same_tree(h, p)
        calls = []

        def reader(offset, size):
            calls.append(size)
            return data[offset:offset + size]
        with purehep.File(reader, size=len(data)) as p:
            same_values(h["contig"][()], p["contig"][()])
        assert calls
        with purehep.File(data) as p:
            same_values(h["bigend"][()], p["bigend"][()])
