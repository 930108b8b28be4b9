"""Format codecs of sparse storage: the formats-notes §1.3 test vector (H5Sencode image +
lookup3 checksum), layout message v5 class 4, filter pipeline v3, v2 B-tree records 12/13,
refusal of implicit / v1 B-tree indexes, HDF5 2.0's v5 class 2 dispatch, and files mixing
sparse and ordinary datasets in h5py."""
import numpy as np
import pytest

import purehep
from purehep.errors import FormatError
from purehep.format import btree2, checksum, selection as S
from purehep.format.context import Context, Cursor
from purehep.format.messages import layout as L, struct_pipeline as SP, filter_pipeline as FP
from purehep.format import sparse_sections

CTX = Context(None)
VECTOR_1_3 = bytes.fromhex(
    "010008" "18000000" "01010100" "00000000" "0500000000000000" "0500000000000000"
    "02000000" "01000000" "00000000" "10000000" "01000000" "01000000" "01000000" "03000000")
VECTOR_ALL = bytes.fromhex(
    "010008" "18000000" "01010100" "00000000" "0500000000000000" "0500000000000000"
    "03000000" "01000000" "00000000" "00000000")


def test_test_vector_byte_for_byte():
    sel = S.Selection(S.HYPERSLABS, 1, 1, blocks=np.array([[[1], [3]]]))
    img = S.encode_image((5,), sel)
    assert img == VECTOR_1_3
    assert checksum.lookup3(img).to_bytes(4, "little") == bytes.fromhex("9bf20893")
    assert S.encode_image((5,), S.Selection(S.ALL, 1, 1)) == VECTOR_ALL
    assert checksum.lookup3(VECTOR_ALL).to_bytes(4, "little") == bytes.fromhex("d2eaa31b")
    sel2, lin = sparse_sections.decode_section0(VECTOR_1_3, (5,))
    assert lin.tolist() == [1, 2, 3] and sel2 == sel
    _, lin = sparse_sections.decode_section0(VECTOR_ALL, (5,))
    assert lin.tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("index,info", [
    (L.SINGLE, {"chunk_size": 300, "offsets": (120,)}),
    (L.FIXED_ARRAY, {"page_bits": 10}),
    (L.EXTENSIBLE_ARRAY, {"max_bits": 32, "index_elements": 4, "min_pointers": 4,
                          "min_elements": 16, "page_bits": 10}),
    (L.BTREE2, {"node_size": 2048, "split_percent": 100, "merge_percent": 40})])
@pytest.mark.parametrize("filtered", [False, True])
def test_layout_roundtrip(index, info, filtered):
    info = dict(info)
    flags = 0
    if index == L.SINGLE and filtered:
        flags = L.SINGLE_INDEX_WITH_FILTER
        info.update(unfiltered_sizes=(130, 400), filter_masks=(0, 1))
    lay = L.Layout(5, L.STRUCTURED, address=4096, chunk_shape=(10, 300), element_size=8,
                   flags=flags, index_type=index, index_info=info, struct_type=1,
                   offset_size=8, nsections=2, metadata_sections=(0,))
    raw = L.encode(lay, CTX)
    assert raw[:3] == bytes((5, 4, 0)) and raw[3:5] == b"\x01\x00"
    back = L.decode(Cursor(raw, 0, "layout", CTX))
    assert back == lay and back.sparse


def test_layout_refuses_implicit_and_btree1():
    for it in (L.BTREE1, L.IMPLICIT):
        lay = L.Layout(5, L.STRUCTURED, address=1, chunk_shape=(4,), element_size=8,
                       index_type=L.SINGLE, index_info={"chunk_size": 1, "offsets": (0,)},
                       struct_type=1, offset_size=8, nsections=2, metadata_sections=(0,))
        raw = bytearray(L.encode(lay, CTX))
        pos = 3 + 2 + 3 + 2 * 1 + 3 + 1   # index type byte (dims encoded in 1 byte)
        assert raw[pos] == L.SINGLE
        raw[pos] = it
        with pytest.raises(FormatError, match="not allowed for structured chunks"):
            L.decode(Cursor(bytes(raw), 0, "layout", CTX))
        with pytest.raises(ValueError):
            L.encode(L.Layout(5, L.STRUCTURED, chunk_shape=(4,), element_size=8,
                              index_type=it, struct_type=1, nsections=2), CTX)


def test_create_refuses_implicit(tmp_path):
    with purehep.File(tmp_path / "x.h5", "w") as f:
        with pytest.raises(ValueError, match="implicit"):
            f.create_dataset("s", (4,), "f8", sparse=True, chunk_index="implicit")


@pytest.mark.parametrize("maxshape,ok", [((8, 8), False), ((None, 8), False),
                                          ((None, None), True)])
def test_btree2_index_needs_two_unlimited_dimensions(tmp_path, maxshape, ok):
    """B-tree types 12/13 index datasets "with more than one dimension of unlimited extent"
    (sparse RFC 4.4): chunk_index="btree2" is refused for other extents, at the call."""
    with purehep.File(tmp_path / "x.h5", "w", libver="latest") as f:
        if ok:
            f.create_dataset("s", (8, 8), "f8", chunks=(4, 4), maxshape=maxshape, sparse=True,
                             chunk_index="btree2")
        else:
            with pytest.raises(ValueError, match="more than one unlimited"):
                f.create_dataset("s", (8, 8), "f8", chunks=(4, 4), maxshape=maxshape,
                                 sparse=True, chunk_index="btree2")


SIGNATURES = {b"BTHD": 1, b"FAHD": 1, b"FADB": 1, b"EAHD": 0, b"EAIB": 0}


@pytest.mark.parametrize("name", ["btree2_plain_points.h5", "btree2_gzip_hyperslab.h5",
                                  "fixed_array_gzip_points.h5",
                                  "extensible_array_plain_hyperslab.h5"])
def test_index_block_versions_0_and_1_read(tmp_path, name):
    """The prototype writes v2 B-tree and fixed array headers version 1, the 2025 RFC text
    says 0: purehep writes what the README (decision 10) says and reads both: the file with
    every index header/block version flipped (checksums recomputed) reads the same."""
    import os
    src = os.path.join(os.path.dirname(__file__), "..", "spec-fixtures", "sparse", name)
    buf = bytearray(open(src, "rb").read())
    flipped = 0
    for sig, written in SIGNATURES.items():
        pos = buf.find(sig)
        while pos >= 0:
            assert buf[pos + 4] == written, (sig, buf[pos + 4])
            end = next(e for e in range(pos + 8, min(len(buf) - 3, pos + 4096))
                       if checksum.lookup3(bytes(buf[pos:e])) ==
                       int.from_bytes(buf[e:e + 4], "little"))
            buf[pos + 4] = 1 - written
            buf[end:end + 4] = checksum.lookup3(bytes(buf[pos:end])).to_bytes(4, "little")
            flipped += 1
            pos = buf.find(sig, end)
    assert flipped
    dst = tmp_path / name
    dst.write_bytes(bytes(buf))
    with purehep.File(src) as a, purehep.File(dst) as b:
        np.testing.assert_array_equal(a["data"][...], b["data"][...])
        np.testing.assert_array_equal(a["data"].read_sparse()[0], b["data"].read_sparse()[0])


def test_v5_class2_still_reads():
    lay = L.Layout(4, L.CHUNKED, address=100, chunk_shape=(4,), element_size=8,
                   index_type=L.FIXED_ARRAY, index_info={"page_bits": 10})
    raw = bytearray(L.encode(lay, CTX))
    raw[0] = 5
    back = L.decode(Cursor(bytes(raw), 0, "layout", CTX))
    assert back.layout_class == L.CHUNKED and back.wide_chunk_sizes


def test_pipeline_v3_roundtrip():
    gz = FP.FilterInfo(1, 1, "", (4,))
    sh = FP.FilterInfo(2, 1, "", (8,))
    named = FP.FilterInfo(32015, 1, "zstd", (3,))
    pipe = SP.StructuredFilterPipeline(3, ((0, (gz,)), (1, (sh, gz, named))))
    raw = SP.encode(pipe)
    assert raw[:2] == bytes((3, 2)) and raw[2:4] == bytes((0, 1))
    back = FP.decode(Cursor(raw, 0, "pipeline", CTX))
    assert back.section(0) == (gz,) and back.section(1)[:2] == (sh, gz)
    assert back.section(1)[2].id == 32015 and back.section(1)[2].name == "zstd"


@pytest.mark.parametrize("btype", [12, 13])
def test_btree2_structured_records(btype):
    rctx = btree2.ChunkRecordContext(2, 3, 2)
    rec = btree2.StructuredChunk(4096, 777, (1, 2), (99,), (103, 700) if btype == 13 else None,
                                 (0, 2) if btype == 13 else None)
    raw = btree2.encode_record(btype, rec, CTX, rctx)
    assert len(raw) == btree2.RECORD_TYPES[btype].size(CTX, rctx)
    back = btree2.RECORD_TYPES[btype].decode(Cursor(raw, 0, "rec", CTX), rctx)
    assert back == rec


def test_encoding_choice_is_smallest():
    dims = (16, 16)
    full = np.arange(256)
    assert sparse_sections.choose(full, dims).kind == S.ALL
    m = np.zeros(dims, bool)
    m[2:14:3, 1:5] = True
    sel = sparse_sections.choose(np.flatnonzero(m), dims)
    assert sel.regular and sel.version == 3
    m = np.zeros(dims, bool)
    m[0:8, 0:8] = True
    m[8:16, 0] = True
    sel = sparse_sections.choose(np.flatnonzero(m), dims)
    assert sel.kind == S.HYPERSLABS and not sel.regular and len(sel.blocks) == 2
    sel = sparse_sections.choose(np.array([3, 77, 200]), dims)
    assert sel.kind == S.POINTS and sel.encode_size == 2


def test_h5py_opens_mixed_file(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "mixed.h5"
    with purehep.File(path, "w", libver="latest") as f:
        f.attrs["title"] = "mixed"
        s = f.create_dataset("sparse", (100, 100), "f8", chunks=(10, 10), sparse=True)
        s[5, 7] = 1.5
        g = f.create_group("g")
        g.create_dataset("dense", data=np.arange(12).reshape(3, 4))
        g.create_dataset("chunked", data=np.arange(100.0), chunks=(10,), compression="gzip")
        g.create_dataset("s2", (10,), "i4", chunks=(5,), sparse=True,
                         section_filters={1: "gzip"})
    with h5py.File(path, "r") as f:
        assert f.attrs["title"] == "mixed"
        np.testing.assert_array_equal(f["g/dense"][...], np.arange(12).reshape(3, 4))
        np.testing.assert_array_equal(f["g/chunked"][...], np.arange(100.0))
        for name in ("sparse", "g/s2"):
            with pytest.raises(Exception):
                f[name][...]
        assert set(f) == {"sparse", "g"} and set(f["g"]) == {"dense", "chunked", "s2"}
    with purehep.File(path) as f:
        assert f["sparse"][5, 7] == 1.5 and f["sparse"].nnz == 1
