"""purehep.integrations.virtualizarr.PurehepParser against its oracles: h5py's values (read
back through Zarr from the ManifestStore, and through kerchunk references with fsspec) and
VirtualiZarr's own h5py-based HDFParser (manifests and Zarr metadata, value for value).

Differences from HDFParser that are HDFParser's mistakes, asserted as such below:
* an array with no stored chunk gets an empty manifest whose chunk grid HDFParser sizes as
  the array's shape; purehep sizes it as the chunk grid (ceil(shape / chunks));
* compact data: HDFParser gives no chunk (h5py has no offset for it), so the array reads
  as fill values; purehep points the one chunk at the bytes in the layout message;
* blosc: HDFParser passes the chunk's byte size (client data 3) as numcodecs' ``blocksize``
  (an encoding setting); purehep gives 0 (automatic), as the HDF5 blosc filter encodes;
  with PyTables' six client values HDFParser misreads clevel and compressor too;
* bzip2: HDFParser names imagecodecs_bz2, which Zarr v3 cannot load (it fails); purehep
  names numcodecs' BZ2, which decodes the filter's plain bzip2 stream;
* attributes: complex numbers and references (and, before VirtualiZarr 2.8.0, fixed-length
  string arrays) reach HDFParser's Zarr metadata as values JSON cannot hold; purehep gives
  lists of str (as 2.8.0 does) and leaves the others out with a PurehepWarning;
* a string dataset's _FillValue attribute: 2.5.1's HDFParser fails to encode it; purehep
  keeps the str, as 2.8.0 does.
Where HDFParser's store fails only when read (chunks that skipped a filter, unfiltered edge
chunks: zlib errors) or reads wrong values (space-padded strings keep their spaces; before
VirtualiZarr 2.7.2 compounds with big-endian members), purehep refuses at parse time, naming
the dataset.
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("virtualizarr")
zarr = pytest.importorskip("zarr")
h5py = pytest.importorskip("h5py")
obstore_store = pytest.importorskip("obstore.store")
from obspec_utils.registry import ObjectStoreRegistry  # noqa: E402
from virtualizarr.parsers import HDFParser  # noqa: E402

from purehep.errors import UnsupportedFeatureError  # noqa: E402
from purehep.integrations.virtualizarr import (  # noqa: E402
    BIG_ENDIAN_COMPOUNDS, TRIMS_OVERSIZED_CHUNKS, PurehepParser, _virtualizarr_release)

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus", "files")
NETCDF = ["hdf5-repo/tools/test/h5dump/testfiles/xml/test35.nc",
          "netcdf4-python/test/20171025_2056.Cloud_Top_Height.nc",
          "netcdf4-python/test/issue1152.nc", "netcdf4-python/test/issue671.nc",
          "netcdf4-python/test/issue672.nc", "netcdf4-python/test/test_gold.nc"]


# -- helpers -----------------------------------------------------------------------------
def _url(path):
    return "file://" + os.path.abspath(path)


def _parse(path, parser):
    return parser(_url(path), ObjectStoreRegistry({"file://": obstore_store.LocalStore()}))


def _arrays(store):
    """{path: ManifestArray} of a ManifestStore (its group is private in VirtualiZarr)."""
    out = {}

    def walk(group, prefix):
        out.update({prefix + k: a for k, a in group.arrays.items()})
        for k, sub in group.groups.items():
            walk(sub, prefix + k + "/")
    walk(store._group, "")
    return out


def _refs(manifest):
    grid = manifest.shape_chunk_grid
    return grid, ({} if 0 in grid else manifest.dict())


def _assert_same_values(z, h):
    assert z.shape == h.shape
    assert z.dtype.newbyteorder("<") == h.dtype.newbyteorder("<")   # Zarr gives native order
    if h.dtype.names:
        for name in h.dtype.names:
            _assert_same_values(z[name], h[name])
    else:
        assert np.array_equal(z, h, equal_nan=h.dtype.kind in "fc")


def _assert_values_as_h5py(store, path, group=None):
    """Every array of the store, read through Zarr, equals what h5py reads."""
    zgroup = zarr.open_group(store, mode="r", zarr_format=3)
    with h5py.File(path, "r") as f:
        for name in _arrays(store):
            _assert_same_values(np.asarray(zgroup[name][...]), f[group or "/"][name][()])


def _metadata(array):
    md = array.metadata.to_dict()
    md["attributes"] = json.dumps(md["attributes"], sort_keys=True)   # NaN == NaN
    for codec in md["codecs"]:
        if codec["name"] == "numcodecs.blosc":          # HDFParser's blocksize: see above
            codec["configuration"]["blocksize"] = 0
    return md


def _assert_as_hdfparser(path, **options):
    """Same arrays, Zarr metadata and manifests as HDFParser; values as h5py."""
    ours = _parse(path, PurehepParser(**options))
    theirs = _arrays(_parse(path, HDFParser(**options)))
    mine = _arrays(ours)
    assert sorted(mine) == sorted(theirs)
    with h5py.File(path, "r") as h:
        f = h[options.get("group") or "/"]
        for name, a in mine.items():
            b = theirs[name]
            assert _metadata(a) == _metadata(b), name
            grid, entries = _refs(a.manifest)
            their_grid, their_entries = _refs(b.manifest)
            if f[name].chunks is None and f[name].id.get_offset() is None and entries:
                # compact data: HDFParser has no chunk for it (see the module docstring)
                assert f[name].id.get_storage_size() and not their_entries
                [entry] = entries.values()
                assert entry["length"] == f[name].nbytes
            elif not their_entries:                       # nothing stored
                assert not entries and grid == tuple(
                    math.ceil(n / c) if c else 0 for n, c in zip(a.shape, a.metadata.chunks))
            else:
                assert (grid, entries) == (their_grid, their_entries), name
    _assert_values_as_h5py(ours, path, options.get("group"))
    return mine


# -- files written by h5py ---------------------------------------------------------------
@pytest.fixture(scope="module")
def kinds_file(tmp_path_factory):
    """One dataset per chunk index (spec IV.A.2.i / Appendix C), plus the other layouts."""
    path = tmp_path_factory.mktemp("vz") / "kinds.h5"
    a = np.arange(40 * 30, dtype="<i4").reshape(40, 30) % 997
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("fixed", data=a, chunks=(8, 7))
        f.create_dataset("extensible", data=a, chunks=(8, 7), maxshape=(None, 30))
        f.create_dataset("btree2", data=a, chunks=(8, 7), maxshape=(None, None))
        f.create_dataset("single", data=a, chunks=(40, 30), compression="gzip")
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((8, 7))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        h5py.h5d.create(f.id, b"implicit", h5py.h5t.STD_I32LE,
                        h5py.h5s.create_simple((40, 30)), dcpl=dcpl)
        f["implicit"][...] = a
        f.create_dataset("contiguous", data=a.astype(">f8") / 7)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I16BE, h5py.h5s.create_simple((3, 4)),
                        dcpl=dcpl)
        f["compact"][...] = np.arange(12).reshape(3, 4) - 5
    old = path.with_name("btree1.h5")
    with h5py.File(old, "w") as f:
        f.create_dataset("btree1", data=a, chunks=(8, 7), compression="gzip", shuffle=True)
    return path, old


def test_every_chunk_index(kinds_file):
    import purehep
    path, old = kinds_file
    with purehep.File(path) as f, purehep.File(old) as g:
        kinds = {f[n]._layout.index_name for n in ("fixed", "extensible", "btree2",
                                                    "single", "implicit")}
        kinds.add(g["btree1"]._layout.index_name)
    assert kinds == {"fixed array", "extensible array", "v2 B-tree", "single chunk",
                     "implicit", "v1 B-tree"}
    _assert_as_hdfparser(path)
    _assert_as_hdfparser(old)


def test_compact_data_points_into_the_layout_message(kinds_file):
    """The one chunk of compact data is the stored bytes, read back as h5py reads them
    (HDFParser leaves compact arrays without a chunk: they would read as fill values)."""
    path, _ = kinds_file
    entry = _arrays(_parse(path, PurehepParser()))["compact"].manifest.dict()["0.0"]
    raw = path.read_bytes()[entry["offset"]:entry["offset"] + entry["length"]]
    with h5py.File(path, "r") as f:
        assert raw == f["compact"][()].astype(">i2").tobytes()
    assert not _refs(_arrays(_parse(path, HDFParser()))["compact"].manifest)[1]


@pytest.fixture(scope="module")
def filters_file(tmp_path_factory):
    hdf5plugin = pytest.importorskip("hdf5plugin")
    path = tmp_path_factory.mktemp("vz") / "filters.h5"
    a = (np.arange(30 * 20).reshape(30, 20) // 7).astype("<i4")
    with h5py.File(path, "w") as f:
        f.create_dataset("gzip", data=a, chunks=(8, 7), compression="gzip", compression_opts=9)
        f.create_dataset("gzip_shuffle", data=a / 3, chunks=(8, 7), compression="gzip",
                         shuffle=True)
        f.create_dataset("shuffle_be", data=a.astype(">i8"), chunks=(8, 7), shuffle=True)
        f.create_dataset("fletcher32", data=a, chunks=(8, 7), fletcher32=True,
                         compression="gzip")
        f.create_dataset("zstd", data=a, chunks=(8, 7), **hdf5plugin.Zstd(clevel=3))
        for cname in ("lz4", "blosclz", "zstd", "zlib"):
            for shuffle in (hdf5plugin.Blosc.NOSHUFFLE, hdf5plugin.Blosc.SHUFFLE,
                            hdf5plugin.Blosc.BITSHUFFLE):
                f.create_dataset(f"blosc_{cname}_{shuffle}", data=a, chunks=(8, 7),
                                 **hdf5plugin.Blosc(cname=cname, clevel=5, shuffle=shuffle))
    return path


def test_filters_as_zarr_codecs(filters_file):
    arrays = _assert_as_hdfparser(filters_file)
    names = [c["name"] for c in arrays["fletcher32"].metadata.to_dict()["codecs"]]
    with h5py.File(filters_file, "r") as f:      # h5py puts fletcher32 last in the pipeline
        assert list(f["fletcher32"]._filters) == ["gzip", "fletcher32"]
    assert names == ["bytes", "numcodecs.zlib", "numcodecs.fletcher32"]
    assert arrays["shuffle_be"].metadata.to_dict()["codecs"][0] == {
        "name": "bytes", "configuration": {"endian": "big"}}


def test_pytables_blosc_client_data():
    """PyTables writes the blosc filter with six client values (no compressor code: blosclz,
    hdf5-blosc's default). HDFParser reads the last four as blocksize, clevel, shuffle and
    compressor, giving clevel 32768 and lz4 here; decoding is unaffected either way."""
    path = os.path.join(CORPUS, "pytables/tables/tests/blosc_bigendian.h5")
    if not os.path.exists(path):
        pytest.skip("corpus absent")
    store = _parse(path, PurehepParser())
    with h5py.File(path, "r") as f:
        assert f["i4"]._filters == {"32001": (3, 10, 4, 32768, 3, 1)}
    assert _arrays(store)["i4"].metadata.to_dict()["codecs"][1]["configuration"] == {
        "cname": "blosclz", "clevel": 3, "shuffle": 1, "blocksize": 0}
    _assert_values_as_h5py(store, path)


def test_bzip2_decodes(tmp_path):
    """bzip2 (307) maps to numcodecs' BZ2 (HDFParser names imagecodecs_bz2, which Zarr
    v3 does not know, and fails)."""
    hdf5plugin = pytest.importorskip("hdf5plugin")
    path = tmp_path / "bz2.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("bz2", data=np.arange(900.0).reshape(30, 30), chunks=(8, 7),
                         **hdf5plugin.BZip2())
    store = _parse(path, PurehepParser())
    assert _arrays(store)["bz2"].metadata.to_dict()["codecs"][1]["name"] == "numcodecs.bz2"
    _assert_values_as_h5py(store, path)


@pytest.fixture(scope="module")
def values_file(tmp_path_factory):
    """Fill values with unallocated chunks, several dtypes, scalars, empty arrays,
    attributes, subgroups."""
    path = tmp_path_factory.mktemp("vz") / "values.h5"
    a = np.arange(30 * 20).reshape(30, 20) % 251
    with h5py.File(path, "w", libver="latest") as f:
        d = f.create_dataset("sparse", shape=(40, 30), chunks=(8, 7), dtype="f4",
                             fillvalue=np.float32(2.5))
        d[0:8, 0:7] = 1
        d[30:40, 20:30] = 3
        d = f.create_dataset("sparse_be", shape=(20,), chunks=(4,), dtype=">i2", fillvalue=-7)
        d[5:9] = 11
        f.create_dataset("nothing_stored", shape=(10, 10), chunks=(3, 3), dtype="u8",
                         fillvalue=9)
        f.create_dataset("unallocated", shape=(5,), dtype="i8")
        f.create_dataset("empty", shape=(0, 5), dtype="u1", chunks=(4, 5), maxshape=(None, 5))
        f.create_dataset("empty_contiguous", shape=(0,), dtype="f4")
        b = np.arange(30, dtype="<i4").reshape(3, 10)
        f.create_dataset("oversized", data=b, chunks=(8, 4), maxshape=(None, 10))
        f.create_dataset("oversized_gzip", data=b, chunks=(8, 4), maxshape=(None, 10),
                         compression="gzip")
        f.create_dataset("oversized_inner", data=b, chunks=(2, 16), maxshape=(None, None))
        f.create_dataset("scalar", data=np.float64(3.5))
        for dtype in ("u1", "i2", ">u4", "<i8", "f2", ">f4", "c8", "?"):
            f.create_dataset(f"t_{np.dtype(dtype).str}", data=(a % 7).astype(dtype),
                             chunks=(8, 7))
        f.create_dataset("bytes", data=np.array([b"ab", b"cdefg", b""] * 4, "S5"), chunks=(5,))
        f.create_dataset("compound", data=np.array([(1, 2.5), (3, 4.5)],
                                                   dtype=[("x", "<i4"), ("y", "<f8")]),
                         chunks=(1,))
        f.create_dataset("enum", data=np.array([0, 1, 1], "u1"),
                         dtype=h5py.enum_dtype({"a": 0, "b": 1}, basetype="u1"))
        g = f.create_group("sub/deeper")
        g.create_dataset("x", data=np.arange(7.0), chunks=(3,), compression="gzip")
        g.attrs["title"] = np.bytes_(b"hello")
        f["sparse"].attrs.update({"units": "m", "vals": [1, 2, 3], "one": [4.5],
                                  "text": "caf\u00e9", "_FillValue": np.float32(2.5)})
    return path


def test_fill_values_dtypes_and_attributes(values_file):
    arrays = _assert_as_hdfparser(values_file)
    md = arrays["sparse"].metadata.to_dict()
    assert md["fill_value"] == 2.5 and md["attributes"]["vals"] == [1, 2, 3]
    with h5py.File(values_file, "r") as f:
        assert len(arrays["sparse"].manifest.dict()) == f["sparse"].id.get_num_chunks() == 7
    assert arrays["sub/deeper/x"].metadata.to_dict()["dimension_names"] == ("phony_dim_0",)
    # chunks longer than the array: cut to it from VirtualiZarr 2.7.0 when unfiltered and
    # along the first axis only
    trims = _virtualizarr_release() >= TRIMS_OVERSIZED_CHUNKS
    assert arrays["oversized"].metadata.chunks == ((3, 4) if trims else (8, 4))
    assert {e["length"] for e in arrays["oversized"].manifest.dict().values()} == {
        (3 if trims else 8) * 4 * 4}
    assert arrays["oversized_gzip"].metadata.chunks == (8, 4)
    assert arrays["oversized_inner"].metadata.chunks == (2, 16)


def test_attributes_json_cannot_hold(tmp_path):
    """Arrays of fixed-length strings become lists of str (HDFParser keeps a numpy array,
    which Zarr cannot serialize); complex values and references are left out, warned."""
    from purehep.errors import PurehepWarning
    path = tmp_path / "attrs.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=np.arange(3))
        d.attrs["names"] = np.array([b"ab", b"c"], "S2")
        d.attrs["z"] = np.complex64(1 + 2j)
        d.attrs["ref"] = f.ref
        d.attrs["ok"] = 1
    with pytest.warns(PurehepWarning, match="'z'"):
        arrays = _arrays(_parse(path, PurehepParser()))
    attrs = arrays["x"].metadata.to_dict()["attributes"]
    assert attrs == {"names": ["ab", "c"], "ok": 1}


def test_string_attributes(tmp_path):
    """A fixed-length string array attribute is UTF-8 decoded to a list of str, and a string
    dataset's _FillValue stays the decoded str (not encoded for the dtype), as HDFParser
    gives them in VirtualiZarr 2.8.0; 2.5.1's fails on both (UnicodeDecodeError, then
    TypeError from xarray's fill value coder)."""
    path = tmp_path / "strings.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("s", data=np.array([b"ab", b"c"], "S3"), fillvalue=b"zz")
        d.attrs["_FillValue"] = np.bytes_(b"zz")
        d.attrs["names"] = np.array(["caf\u00e9".encode(), b"x"], "S5")
    if _virtualizarr_release() >= (2, 8, 0):
        arrays = _assert_as_hdfparser(path)
    else:
        with pytest.raises((TypeError, ValueError)):
            _parse(path, HDFParser())
        store = _parse(path, PurehepParser())
        _assert_values_as_h5py(store, path)
        arrays = _arrays(store)
    assert arrays["s"].metadata.to_dict()["attributes"] == {"_FillValue": "zz",
                                                            "names": ["caf\u00e9", "x"]}


def test_group_and_drop_variables(values_file):
    _assert_as_hdfparser(values_file, group="sub/deeper")
    arrays = _assert_as_hdfparser(values_file, drop_variables=["sparse", "scalar"])
    assert "sparse" not in arrays and "sub/deeper/x" in arrays


def test_reads_through_any_obspec_store(values_file):
    """No local file needed: the bytes come from an in-memory object store."""
    store = obstore_store.MemoryStore()
    store.put("data/values.h5", values_file.read_bytes())
    registry = ObjectStoreRegistry({"memory://": store})
    manifest_store = PurehepParser()("memory:///data/values.h5", registry)
    _assert_values_as_h5py(manifest_store, values_file)


# -- what a chunk manifest cannot describe -------------------------------------------------
def _refuse(path, word):
    with pytest.raises(UnsupportedFeatureError, match=word):
        _parse(path, PurehepParser())


@pytest.mark.parametrize("name, options", [
    ("scaleoffset", {"scaleoffset": 2}),
    ("lzf", {"compression": "lzf"}),
    ("szip", {"compression": "szip"}),
    ("lz4", "LZ4"),
    ("bitshuffle", "Bitshuffle"),
])
def test_filters_without_codec_refused(tmp_path, name, options):
    if name == "szip" and not h5py.h5z.filter_avail(h5py.h5z.FILTER_SZIP):
        pytest.skip("this libhdf5 has no szip encoder")
    if isinstance(options, str):
        options = getattr(pytest.importorskip("hdf5plugin"), options)()
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(100.0), chunks=(10,), **options)
    _refuse(path, name)


def test_nbit_refused(tmp_path):
    path = tmp_path / "nbit.h5"
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((10,))
        dcpl.set_filter(h5py.h5z.FILTER_NBIT)
        h5py.h5d.create(f.id, b"x", h5py.h5t.STD_I32LE, h5py.h5s.create_simple((20,)),
                        dcpl=dcpl)
        f["x"][...] = np.arange(20)
    _refuse(path, "nbit")


def test_chunk_skipping_a_filter_refused(tmp_path):
    """blosc gives up on incompressible chunks (an optional filter: libhdf5 stores the
    chunk unfiltered and sets its filter mask), which no Zarr pipeline can follow."""
    hdf5plugin = pytest.importorskip("hdf5plugin")
    path = tmp_path / "mask.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.random.default_rng(0).integers(0, 2**31, (40, 30)),
                         chunks=(8, 7), **hdf5plugin.Blosc(cname="blosclz",
                                                           shuffle=hdf5plugin.Blosc.NOSHUFFLE))
        assert f["x"].id.get_chunk_info(0).filter_mask
    _refuse(path, "skips filters")


def test_types_zarr_would_misread_refused(tmp_path):
    path = tmp_path / "types.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("mixed_compound", data=np.zeros(3, [("a", ">i4"), ("b", "<f8")]))
    _refuse(path, "no exact Zarr v3 data type")
    with h5py.File(path, "w") as f:
        f.create_dataset("be_compound", data=np.array([(1, 2.5), (-5, 6.5)],
                                                      [("a", ">i4"), ("b", ">f8")]))
    if _virtualizarr_release() >= BIG_ENDIAN_COMPOUNDS:     # read as stored: big-endian
        _assert_as_hdfparser(path)
    else:
        _refuse(path, "no exact Zarr v3 data type")
    with h5py.File(path, "w") as f:
        f.create_dataset("vlen", data=["a", "bc"], dtype=h5py.string_dtype())
    _refuse(path, "variable-length")
    with h5py.File(path, "w") as f:
        tid = h5py.h5t.C_S1.copy()
        tid.set_size(6)
        tid.set_strpad(h5py.h5t.STR_SPACEPAD)
        ds = h5py.h5d.create(f.id, b"spaces", tid, h5py.h5s.create_simple((2,)))
        ds.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([b"ab", b"c"], "S6"), mtype=tid)
    _refuse(path, "converts on reading")
    with h5py.File(path, "w") as f:
        f.create_group("a/b")
        f["a/b/up"] = f["a"]
    _refuse(path, "cycle")
    with h5py.File(path, "w") as f:
        f["back\\slash"] = np.arange(3)
    _refuse(path, "no Zarr node name")


def test_offsets_absolute_past_a_user_block(tmp_path):
    """With a user block the base address is not 0: manifest offsets are file offsets."""
    path = tmp_path / "userblock.h5"
    with h5py.File(path, "w", userblock_size=512) as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I32LE, h5py.h5s.create_simple((5,)),
                        dcpl=dcpl)
        f["compact"][...] = np.arange(5) + 100
        f["contiguous"] = np.arange(6.0)
        f.create_dataset("chunked", data=np.arange(20), chunks=(6,), compression="gzip")
    _assert_as_hdfparser(path)


def test_get_offset_as_h5py(kinds_file):
    import purehep
    path, _ = kinds_file
    with purehep.File(path) as f, h5py.File(path, "r") as g:
        for name in g:
            assert f[name].id.get_offset() == g[name].id.get_offset(), name


# -- netCDF-4 files of the corpus, and kerchunk references -------------------------------
@pytest.mark.parametrize("name", NETCDF)
def test_netcdf_corpus_as_hdfparser(name):
    path = os.path.join(CORPUS, name)
    if not os.path.exists(path):
        pytest.skip("corpus absent")
    _assert_as_hdfparser(path)


@pytest.fixture(scope="module")
def netcdf_file(tmp_path_factory):
    netCDF4 = pytest.importorskip("netCDF4")
    path = tmp_path_factory.mktemp("vz") / "nc4.nc"
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("time", None)
        nc.createDimension("x", 12)
        nc.createDimension("nv", 2)
        t = nc.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        nc.createVariable("x", "i4", ("x",))[:] = np.arange(12) * 10
        v = nc.createVariable("temp", "f4", ("time", "x"), zlib=True, shuffle=True,
                              chunksizes=(2, 5), fill_value=np.float32(-999))
        v.long_name = "temperature"
        t[:] = np.arange(5.0)
        v[:] = np.arange(60, dtype="f4").reshape(5, 12) / 4
        v[1, 3] = np.ma.masked
        nc.createVariable("bounds", "f8", ("x", "nv"))[:] = np.arange(24.0).reshape(12, 2)
        nc.title = "purehep virtualizarr test"
    return path


def test_kerchunk_references(netcdf_file, tmp_path):
    """VirtualiZarr's kerchunk writer gives the same references for both parsers, and
    fsspec's reference filesystem reads them back as h5py reads the file."""
    pytest.importorskip("fsspec")
    import xarray as xr
    from virtualizarr import open_virtual_dataset
    arrays = _assert_as_hdfparser(netcdf_file)
    assert arrays["temp"].metadata.to_dict()["dimension_names"] == ("time", "x")
    registry = ObjectStoreRegistry({"file://": obstore_store.LocalStore()})
    refs = {}
    for parser in (PurehepParser(), HDFParser()):
        vds = open_virtual_dataset(_url(netcdf_file), registry=registry, parser=parser,
                                   loadable_variables=[])
        refs[type(parser).__name__] = vds.vz.to_kerchunk(format="dict")
    assert refs["PurehepParser"] == refs["HDFParser"]
    out = tmp_path / "refs.json"
    out.write_text(json.dumps(refs["PurehepParser"]))
    ds = xr.open_dataset("reference://", engine="zarr", decode_cf=False,
                         backend_kwargs={"consolidated": False, "storage_options": {"fo": str(out)}})
    with h5py.File(netcdf_file, "r") as f:
        assert set(ds.variables) == {"time", "x", "temp", "bounds"}
        for name, var in ds.variables.items():
            _assert_same_values(var.values, f[name][()])
        assert ds["temp"].attrs["long_name"] == "temperature"
        assert ds.attrs["title"] == "purehep virtualizarr test"


# -- the point of it all: no h5py -------------------------------------------------------
def test_works_without_h5py(values_file):
    """In a fresh interpreter where ``import h5py`` fails, the parser virtualizes the file
    and Zarr reads it back; the values match h5py's (read here, in this process)."""
    code = (
        "import sys, json; sys.modules['h5py'] = None\n"
        "import numpy as np, zarr\n"
        "from obspec_utils.registry import ObjectStoreRegistry\n"
        "from obstore.store import LocalStore\n"
        "from purehep.integrations.virtualizarr import PurehepParser\n"
        f"store = PurehepParser()({_url(values_file)!r}, "
        "ObjectStoreRegistry({'file://': LocalStore()}))\n"
        "g = zarr.open_group(store, mode='r', zarr_format=3)\n"
        "names = ['sparse', 'sparse_be', 't_<c8', 'sub/deeper/x', 'bytes']\n"
        "arrays = {n: np.asarray(g[n][...]) for n in names}\n"
        "print(json.dumps({n: [a.dtype.str, a.shape, a.tobytes().hex()] "
        "for n, a in arrays.items()}))\n"
        "assert 'h5py' not in [m for m in sys.modules if sys.modules[m] is not None]\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    with h5py.File(values_file, "r") as f:
        for name, (dtype, shape, hexed) in got.items():
            values = np.frombuffer(bytes.fromhex(hexed), dtype).reshape(shape)
            _assert_same_values(values, f[name][()])
