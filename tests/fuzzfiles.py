"""Sample files for mutation fuzzing and checksum tests: every kind of structure purehep
reads, written by purehep and by h5py (libhdf5), earliest and latest formats."""
import h5py
import numpy as np

import purehep
from badinput import sparse_under_every_index


def _common_values():
    rng = np.random.default_rng(7)
    comp = np.dtype([("a", "<i2"), ("b", "<f8"), ("c", "S3"), ("d", "<u1", (2,))])
    c = np.zeros(4, comp)
    c["a"] = [1, -2, 3, 4]
    c["b"] = [0.5, 1.5, -2.0, 9.0]
    c["c"] = [b"x", b"yy", b"zzz", b""]
    c["d"] = [[1, 2], [3, 4], [5, 6], [7, 8]]
    return rng, c


def build_purehep_kinds(path, libver):
    """A purehep-written file holding every chunk index (fixed array with pages, extensible
    array with data block pages, v2 B-tree with internal nodes, single, implicit, v1 B-tree
    in the earliest format), sparse datasets under each index, virtual datasets, dense and
    creation-ordered groups and attributes, object and region references, compound, vlen,
    enum and array types, filters and fill values."""
    rng, comp = _common_values()
    with purehep.File(path, "w", libver=libver) as f:
        f.attrs["title"] = "kinds"
        f.attrs.create("names", ["a", "bb"], dtype=purehep.string_dtype())
        # chunk indexes
        f.create_dataset("fa_paged", data=np.arange(1100, dtype="i2"), chunks=(1,))
        f.create_dataset("ea", data=np.arange(1500, dtype="i1"), chunks=(1,),
                         maxshape=(None,))
        f.create_dataset("bt2", data=np.arange(1600, dtype="i4").reshape(40, 40), chunks=(2, 2),
                         maxshape=(None, None), compression="gzip", shuffle=True)
        f.create_dataset("single", data=np.arange(30.0), chunks=(30,), compression="gzip",
                         fletcher32=True)
        f.create_dataset("implicit", data=np.arange(64, dtype="u2").reshape(8, 8),
                         chunks=(4, 4), alloc_time="early")
        f.create_dataset("filled", shape=(100, 100), chunks=(10, 10), dtype="f4",
                         fillvalue=2.5)
        f.create_dataset("contig", data=rng.normal(size=(6, 5)))
        f.create_dataset("compact", data=np.arange(5), compact=True)
        f.create_dataset("scaleoff", data=np.arange(200, dtype="i4"), chunks=(50,),
                         scaleoffset=0)
        # types
        f["compound"] = comp
        f.create_dataset("vstr", data=["x", "yy", "zzz" * 30], dtype=purehep.string_dtype())
        vl = np.empty(3, object)
        vl[:] = [np.arange(3, dtype="i4"), np.arange(0, dtype="i4"), np.arange(7, dtype="i4")]
        f.create_dataset("vseq", data=vl, dtype=purehep.vlen_dtype(np.dtype("i4")))
        f.create_dataset("enum", data=np.array([0, 1, 1, 0], "u1"),
                         dtype=purehep.enum_dtype({"RED": 0, "GREEN": 1}, basetype="u1"))
        f.create_dataset("arr", shape=(3,), dtype=np.dtype(("<f4", (2, 2))))
        f["arr"][...] = np.arange(12, dtype="f4").reshape(3, 2, 2)
        f.create_dataset("cplx", data=np.arange(4) + 1j)
        f.create_dataset("boolean", data=np.array([True, False]))
        f.create_dataset("fstr", data=np.array([b"ab", b"cde"], "S5"))
        sparse_under_every_index(f)
        # virtual datasets
        a = f["contig"]
        lay = purehep.VirtualLayout((2, 5), "f8")
        lay[0] = purehep.VirtualSource(a)[0, :]
        lay[1, [1, 3, 4]] = purehep.VirtualSource(a)[2, [0, 2, 4]]
        f.create_virtual_dataset("vds", lay, fillvalue=-1)
        # groups: dense (many links, a fractal heap with indirect blocks), creation order
        g = f.create_group("dense", track_order=True)
        for i in range(120):
            g.create_group(f"member_with_a_longish_name_{i:04d}")
        g.attrs["big"] = np.arange(9000, dtype="i8")         # a huge fractal heap object
        for i in range(30):
            g.attrs[f"attr{i:02d}"] = np.arange(i % 5)
        small = f.create_group("small")
        small["soft"] = purehep.SoftLink("/contig")
        small["ext"] = purehep.ExternalLink("other.h5", "/x")
        small.attrs["s"] = "short"
        # references
        refs = f.create_dataset("refs", shape=(3,), dtype=purehep.ref_dtype)
        refs[0] = f["contig"].ref
        refs[1] = f["small"].ref
        refs[2] = f["compound"].ref
        rr = f.create_dataset("rrefs", shape=(2,), dtype=purehep.regionref_dtype)
        rr[0] = f["contig"].regionref[1:3, 2:4]
        rr[1] = f["fa_paged"].regionref[[1, 5, 9]]
        f["small"].attrs["ref"] = f["refs"].ref
        # dimension scales
        x = f.create_dataset("x", data=np.arange(6.0))
        x.make_scale("x")
        f["contig"].dims[0].attach_scale(x)
        f["contig"].dims[0].label = "rows"


def build_h5py_kinds(path, libver):
    """The libhdf5-written counterpart, plus what purehep does not write: a persistent
    free-space manager with sections (h5py cannot make shared object header messages: the
    corpus has those)."""
    rng, comp = _common_values()
    persist = {"fs_strategy": "fsm", "fs_persist": True} if libver == "latest" else {}
    with h5py.File(path, "w", libver=(libver, "latest"), **persist) as f:
        f.attrs["title"] = "kinds"
        f.attrs.create("names", ["a", "bb"], dtype=h5py.string_dtype())
        f.create_dataset("fa_paged", data=np.arange(1100, dtype="i2"), chunks=(1,))
        f.create_dataset("ea", data=np.arange(1500, dtype="i1"), chunks=(1,),
                         maxshape=(None,))
        f.create_dataset("bt2", data=np.arange(1600, dtype="i4").reshape(40, 40), chunks=(2, 2),
                         maxshape=(None, None), compression="gzip", shuffle=True)
        f.create_dataset("single", data=np.arange(30.0), chunks=(30,), compression="gzip",
                         fletcher32=True)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4, 4))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        sid = h5py.h5s.create_simple((8, 8))
        h5py.h5d.create(f.id, b"implicit", h5py.h5t.STD_U16LE, sid, dcpl=dcpl)
        f["implicit"][...] = np.arange(64, dtype="u2").reshape(8, 8)
        f.create_dataset("filled", shape=(100, 100), chunks=(10, 10), dtype="f4",
                         fillvalue=2.5)
        f.create_dataset("contig", data=rng.normal(size=(6, 5)))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I64LE, h5py.h5s.create_simple((5,)),
                        dcpl=dcpl)
        f["compact"][...] = np.arange(5)
        f.create_dataset("scaleoff", data=np.arange(200, dtype="i4"), chunks=(50,),
                         scaleoffset=0)
        f["compound"] = comp
        f.create_dataset("vstr", data=["x", "yy", "zzz" * 30], dtype=h5py.string_dtype())
        vl = np.empty(3, object)
        vl[:] = [np.arange(3, dtype="i4"), np.arange(0, dtype="i4"), np.arange(7, dtype="i4")]
        f.create_dataset("vseq", data=vl, dtype=h5py.vlen_dtype(np.dtype("i4")))
        f.create_dataset("enum", data=np.array([0, 1, 1, 0], "u1"),
                         dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1}, basetype="u1"))
        f.create_dataset("arr", shape=(3,), dtype=np.dtype(("<f4", (2, 2))))
        f["arr"][...] = np.arange(12, dtype="f4").reshape(3, 2, 2)
        f.create_dataset("cplx", data=np.arange(4) + 1j)
        f.create_dataset("fstr", data=np.array([b"ab", b"cde"], "S5"))
        lay = h5py.VirtualLayout((2, 5), "f8")
        lay[0] = h5py.VirtualSource(f["contig"])[0, :]
        lay[1, 1:4] = h5py.VirtualSource(f["contig"])[2, 0:3]
        f.create_virtual_dataset("vds", lay, fillvalue=-1)
        g = f.create_group("dense", track_order=True)
        for i in range(120):
            g.create_group(f"member_with_a_longish_name_{i:04d}")
        g.attrs["big"] = np.arange(9000, dtype="i8") if libver == "latest" else 1
        for i in range(30):
            g.attrs[f"attr{i:02d}"] = np.arange(i % 5)
        small = f.create_group("small")
        small["soft"] = h5py.SoftLink("/contig")
        small["ext"] = h5py.ExternalLink("other.h5", "/x")
        small.attrs["s"] = "short"
        refs = f.create_dataset("refs", shape=(3,), dtype=h5py.ref_dtype)
        refs[0] = f["contig"].ref
        refs[1] = f["small"].ref
        refs[2] = f["compound"].ref
        rr = f.create_dataset("rrefs", shape=(2,), dtype=h5py.regionref_dtype)
        rr[0] = f["contig"].regionref[1:3, 2:4]
        rr[1] = f["fa_paged"].regionref[[1, 5, 9]]
        small.attrs["ref"] = f["refs"].ref
        x = f.create_dataset("x", data=np.arange(6.0))
        x.make_scale("x")
        f["contig"].dims[0].attach_scale(x)
        # freed space for the free-space manager to record
        for i in range(4):
            f.create_dataset(f"gone{i}", data=np.arange(100 + i))
        for i in range(0, 4, 2):
            del f[f"gone{i}"]


def build_ea_pages(path, libver):
    """Extensible array data block pages: purehep writes them when the array's page bits are
    small (libhdf5 needs more than 131,000 chunks before its default parameters page)."""
    from purehep.write import policy
    saved = policy.EA_PARAMS
    policy.EA_PARAMS = dict(saved, page_bits=6)
    try:
        with purehep.File(path, "w", libver=libver) as f:
            f.create_dataset("ea", data=np.arange(1200, dtype="i2"), chunks=(1,),
                             maxshape=(None,))
    finally:
        policy.EA_PARAMS = saved


SAMPLES = {
    "purehep-latest": (build_purehep_kinds, "latest"),
    "purehep-earliest": (build_purehep_kinds, "earliest"),
    "h5py-latest": (build_h5py_kinds, "latest"),
    "h5py-earliest": (build_h5py_kinds, "earliest"),
    "purehep-ea-pages": (build_ea_pages, "latest"),
}


def build(name, path):
    builder, libver = SAMPLES[name]
    builder(str(path), libver)
    return str(path)
