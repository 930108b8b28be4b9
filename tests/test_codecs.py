"""Symmetric codecs: for every format/ structure with an encoder, decode(encode(x)) == x; for
structures read from h5py-written files, encode(decode(bytes)) == bytes where the encoding is
canonical (one way to write the value). Hypothesis drives datatypes, dataspaces and
selections."""
import struct

import h5py
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import purehep
from purehep.format import (btree1, btree2, checksum, extensible_array, fixed_array,
                            fractal_heap, global_heap, local_heap, object_header, selection as S,
                            superblock as SB, symbol_table)
from purehep.format import messages as M
from purehep.format.context import Context, Cursor
from purehep.format.messages import (attribute_info, dataspace as DS, datatype as DT,
                                     fill_value as FV, filter_pipeline as FP, group_info,
                                     layout as L, link as LK, link_info, simple)
from purehep.io.source import BytesSource

CTX = Context(None)


def cur(data, ctx=CTX):
    return Cursor(bytes(data), 0, "test", ctx)


class Image:
    """A growing file image with an allocator, for structures that live at addresses."""

    def __init__(self, start=64, so=8, sl=8):
        self.buf = bytearray(start)
        self.so, self.sl = so, sl

    def alloc(self, n):
        a = len(self.buf)
        self.buf += bytes(n)
        return a

    def put(self, addr, data):
        self.buf[addr:addr + len(data)] = data

    def put_all(self, blocks):
        for a, d in blocks:
            self.put(a, d)

    def ctx(self):
        return Context(BytesSource(bytes(self.buf)), self.so, self.sl)


# --- dataspace -------------------------------------------------------------------------------

dims = st.integers(0, 2 ** 40)
spaces = st.one_of(
    st.builds(lambda v: DS.Dataspace(DS.SCALAR, (), (), v), st.sampled_from((1, 2))),
    st.just(DS.Dataspace(DS.NULL, None, None, 2)),
    st.lists(st.tuples(dims, st.one_of(st.none(), dims)), min_size=1, max_size=6).flatmap(
        lambda ds: st.builds(lambda v: DS.Dataspace(
            DS.SIMPLE, tuple(d for d, _ in ds),
            tuple(None if m is None else max(m, d) for d, m in ds), v),
            st.sampled_from((1, 2)))))


@given(spaces)
def test_dataspace_round_trip(space):
    data = DS.encode(space, CTX)
    assert DS.decode(cur(data)) == space
    assert DS.encode(DS.decode(cur(data)), CTX) == data


# --- datatype --------------------------------------------------------------------------------

atomic = st.sampled_from(["<i1", "<u1", "<i2", ">u2", "<i4", ">i4", "<u8", ">i8", "<f2",
                          "<f4", ">f4", "<f8", ">f8", "S1", "S7", "V5", "?"])
base_dtypes = st.one_of(atomic.map(np.dtype),
                        st.sampled_from([purehep.string_dtype(), purehep.string_dtype("ascii"),
                                         purehep.vlen_dtype("i4"),
                                         purehep.enum_dtype({"a": 0, "b": 7}, "i2"),
                                         np.dtype("c8"), np.dtype(">c16")]))


def _compound(members):
    names = [f"m{i}" for i in range(len(members))]
    return np.dtype(list(zip(names, members)))


dtypes = st.recursive(
    base_dtypes,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4).map(_compound),
        st.tuples(atomic.map(np.dtype), st.lists(st.integers(1, 4), min_size=1, max_size=3))
        .map(lambda t: np.dtype((t[0], tuple(t[1]))))),
    max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(dtypes, st.booleans())
def test_datatype_round_trip(dt, latest):
    """encode_dtype -> decode gives the dtype back; decode -> encode reproduces the bytes."""
    data = DT.encode_dtype(dt, CTX, latest)
    t = DT.decode(cur(data))
    assert DT.encode_dtype(t.dtype, CTX, latest) == data
    if dt.kind != "O" and dt.names is None and dt.metadata is None:
        assert t.dtype == dt


# --- selections ------------------------------------------------------------------------------

def _arr(xs):
    return np.asarray(xs, np.int64)


@st.composite
def selections(draw):
    rank = draw(st.integers(1, 4))
    kind = draw(st.sampled_from(["none", "all", "points1", "points2", "blocks1", "blocks3",
                                 "regular2", "regular3"]))
    if kind in ("none", "all"):
        return S.Selection(S.NONE if kind == "none" else S.ALL, 1, rank)
    big = draw(st.sampled_from([2 ** 8 - 1, 2 ** 16 - 1, 2 ** 31 - 1, 2 ** 40]))
    coord = st.integers(0, big if kind[-1] != "1" else 2 ** 31 - 1)
    if kind.startswith("points"):
        pts = draw(st.lists(st.lists(coord, min_size=rank, max_size=rank), max_size=6))
        pts = _arr(pts).reshape(-1, rank)
        v = int(kind[-1])
        enc = S.encode_size_for(pts) if v == 2 else 4
        return S.Selection(S.POINTS, v, rank, points=pts, encode_size=enc)
    if kind.startswith("blocks"):
        starts = draw(st.lists(st.lists(coord, min_size=rank, max_size=rank), max_size=5))
        blocks = np.array([[s, [x + 3 for x in s]] for s in starts], np.int64).reshape(-1, 2, rank)
        v = int(kind[-1])
        enc = S.encode_size_for(blocks) if v == 3 else 4
        return S.Selection(S.HYPERSLABS, v, rank, blocks=blocks, encode_size=enc)
    small = st.integers(0, 1000)
    start = _arr(draw(st.lists(small, min_size=rank, max_size=rank)))
    stride = _arr(draw(st.lists(st.integers(1, 50), min_size=rank, max_size=rank)))
    count = _arr(draw(st.lists(st.integers(1, 20), min_size=rank, max_size=rank)))
    block = np.minimum(stride, _arr(draw(st.lists(st.integers(1, 50), min_size=rank,
                                                  max_size=rank))))
    if draw(st.booleans()):
        count[0] = S.UNLIMITED
    v = int(kind[-1])
    enc = 8 if v == 2 else S.encode_size_for(np.concatenate([start, stride, count, block]))
    return S.Selection(S.HYPERSLABS, v, rank, start=start, stride=stride, count=count,
                       block=block, encode_size=enc)


@settings(max_examples=200, deadline=None)
@given(selections())
def test_selection_round_trip(sel):
    data = S.encode(sel)
    back = S.decode(cur(data), sel.rank if sel.kind in (S.NONE, S.ALL) else None)
    assert back == sel
    assert S.encode(back) == data


# --- messages --------------------------------------------------------------------------------

LAYOUTS = [
    L.Layout(3, L.CONTIGUOUS, address=4096, size=800),
    L.Layout(3, L.COMPACT, compact_data=b"0123456789"),
    L.Layout(3, L.CHUNKED, address=1000, chunk_shape=(4, 5), element_size=8),
    L.Layout(4, L.CHUNKED, address=1000, chunk_shape=(4, 5), element_size=8,
             index_type=L.SINGLE, index_info={"filtered_size": 77, "filter_mask": 2},
             flags=L.SINGLE_INDEX_WITH_FILTER),
    L.Layout(4, L.CHUNKED, address=1000, chunk_shape=(4,), element_size=2,
             index_type=L.IMPLICIT),
    L.Layout(4, L.CHUNKED, address=1000, chunk_shape=(4, 3), element_size=4,
             index_type=L.FIXED_ARRAY, index_info={"page_bits": 10}),
    L.Layout(4, L.CHUNKED, address=1000, chunk_shape=(4, 3), element_size=4,
             index_type=L.EXTENSIBLE_ARRAY,
             index_info={"max_bits": 32, "index_elements": 4, "min_pointers": 4,
                         "min_elements": 16, "page_bits": 10}),
    L.Layout(4, L.CHUNKED, address=1000, chunk_shape=(4, 3), element_size=4,
             index_type=L.BTREE2,
             index_info={"node_size": 2048, "split_percent": 100, "merge_percent": 40}),
]


def _layouts_from_files(tmp_path):
    """Layout messages of datasets h5py writes (all index types), as raw bodies."""
    path = str(tmp_path / "layouts.h5")
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("contig", data=np.arange(10))
        f.create_dataset("single", data=np.arange(10), chunks=(10,))
        f.create_dataset("single_gz", data=np.arange(10), chunks=(10,), compression="gzip")
        f.create_dataset("implicit", data=np.arange(10), chunks=(5,))
        f.create_dataset("fixed", data=np.arange(100).reshape(10, 10), chunks=(3, 3),
                         maxshape=(20, 10))
        f.create_dataset("earray", data=np.arange(10), chunks=(3,), maxshape=(None,))
        f.create_dataset("btree2", data=np.arange(100).reshape(10, 10), chunks=(3, 3),
                         maxshape=(None, None))
    with h5py.File(str(tmp_path / "old.h5"), "w") as f:
        f.create_dataset("btree1", data=np.arange(10), chunks=(3,))
    return [path, str(tmp_path / "old.h5")]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda x: f"v{x.version}-{x.index_name}"
                         if x.layout_class == L.CHUNKED else f"v{x.version}-{x.layout_class}")
def test_layout_round_trip(layout):
    data = L.encode(layout, CTX)
    back = L.decode(cur(data))
    assert back == layout
    assert L.encode(back, CTX) == data


def test_layout_structured_round_trip():
    lay = L.Layout(5, L.STRUCTURED, address=4096, chunk_shape=(10, 8), element_size=4,
                   index_type=L.FIXED_ARRAY, index_info={"page_bits": 10},
                   struct_type=L.STRUCT_SPARSE, offset_size=8, nsections=2,
                   metadata_sections=(0,))
    data = L.encode(lay, CTX)
    back = L.decode(cur(data))
    assert L.encode(back, CTX) == data
    assert (back.layout_class, back.chunk_shape, back.nsections, back.struct_type) == \
        (L.STRUCTURED, (10, 8), 2, L.STRUCT_SPARSE)


def test_small_messages_round_trip():
    fp = FP.FilterPipeline(2, (FP.FilterInfo(1, 0, "", (4,)),
                               FP.FilterInfo(2, 1, "", (8,)),
                               FP.FilterInfo(32015, 1, "zstd", (3,))))
    data = FP.encode(fp)
    assert FP.encode(FP.decode(cur(data))) == data
    gi = group_info.GroupInfo()
    assert group_info.decode(cur(group_info.encode(gi))) == gi
    for li in (link_info.LinkInfo(True, True, 5, 100, 200, 300),
               link_info.LinkInfo(False, False, None, None, None, None)):
        assert link_info.decode(cur(link_info.encode(li, CTX))) == li
    for ai in (attribute_info.AttributeInfo(True, True, 7, 100, 200, 300),
               attribute_info.AttributeInfo(False, False, None, 100, 200, None)):
        assert attribute_info.decode(cur(attribute_info.encode(ai, CTX))) == ai
    for link in (LK.Link("hard", LK.HARD, address=4096),
                 LK.Link("h\u00e9", LK.HARD, address=8, creation_order=3, charset=1),
                 LK.Link("soft", LK.SOFT, target="/a/b"),
                 LK.Link("ext", LK.EXTERNAL, target="/x", filename="f.h5")):
        data = LK.encode(link, CTX)
        assert LK.decode(cur(data)) == link
        assert LK.encode(LK.decode(cur(data)), CTX) == data


@pytest.mark.parametrize("fill", [FV.FillValue(3, b"\x01\x02\x03\x04", 1, 2, True),
                                  FV.FillValue(3, None, 2, 0, False),
                                  FV.FillValue(3, None, 3, 1, True),
                                  FV.FillValue(2, b"\x07" * 8, 2, 2, True),
                                  FV.FillValue(2, None, 1, 0, False)])
def test_fill_value_round_trip(fill):
    data = FV.encode(fill)
    assert FV.decode(cur(data)) == fill
    assert FV.encode(FV.decode(cur(data))) == data


def test_h5py_messages_re_encode(tmp_path):
    """Messages libhdf5 wrote: dataspace, datatype, layout and filter pipeline bodies decode
    and encode back to the same bytes (their encodings are canonical)."""
    checked = {}
    for path in _layouts_from_files(tmp_path):
        src = BytesSource(open(path, "rb").read())
        sb = SB.Superblock.find(src)
        ctx = Context(src, sb.sizeof_offsets, sb.sizeof_lengths)
        with h5py.File(path, "r") as h:
            addrs = {n: h[n].id.get_info().addr if hasattr(h[n].id, "get_info") else
                     h5py.h5o.get_info(h[n].id).addr for n in h}
        for name, addr in addrs.items():
            oh = object_header.ObjectHeader.decode(ctx, addr)
            for m in oh.messages:
                body = bytes(m.data)
                c = Cursor(body, 0, "msg", ctx)
                if m.type == 0x01:
                    enc = DS.encode(DS.decode(c), ctx)
                    assert body[:len(enc)] == enc, name
                elif m.type == 0x08:
                    lay = L.decode(c)
                    if lay.version > 4:     # purehep writes versions 3 and 4 (and 5 for class 4)
                        continue
                    enc = L.encode(lay, ctx)
                    assert body[:len(enc)] == enc, name
                    assert L.decode(Cursor(enc, 0, "", ctx)) == lay
                elif m.type == 0x0B:
                    enc = FP.encode(FP.decode(c))
                    assert body[:len(enc)] == enc, name
                else:
                    continue
                checked[m.type] = checked.get(m.type, 0) + 1
    assert set(checked) >= {0x01, 0x08, 0x0B}


# --- level 0/1 structures ----------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("so", [4, 8])
def test_superblock_round_trip(version, so):
    ctx = Context(None, so, 8)
    data = SB.encode_superblock(ctx, version, 123456, 96, 136 if version < 2 else None,
                                680 if version < 2 else None)
    assert len(data) == SB.superblock_size(version, ctx)
    sb = SB.Superblock.decode(BytesSource(data + bytes(64)), 0)
    assert (sb.version, sb.sizeof_offsets, sb.eof_address, sb.root_address) == \
        (version, so, 123456, 96)
    if version < 2:
        assert (sb.root_entry.header_address, sb.group_leaf_k, sb.group_internal_k) == \
            (96, 4, 16)
    kw = dict(root_btree=sb.root_entry.btree_address if version < 2 else None,
              root_heap=sb.root_entry.heap_address if version < 2 else None)
    assert SB.encode_superblock(ctx, sb.version, sb.eof_address, sb.root_address,
                                **kw) == data


def test_superblock_h5py_re_encodes(tmp_path):
    for libver, version in (("earliest", 0), ("latest", 3)):
        path = str(tmp_path / f"{libver}.h5")
        with h5py.File(path, "w", libver=libver) as f:
            f["x"] = 1
        raw = open(path, "rb").read()
        sb = SB.Superblock.decode(BytesSource(raw), 0)
        assert sb.version == version
        ctx = Context(None, sb.sizeof_offsets, sb.sizeof_lengths)
        kw = {}
        if version < 2:
            kw = dict(root_btree=sb.root_entry.btree_address,
                      root_heap=sb.root_entry.heap_address)
        enc = SB.encode_superblock(ctx, version, sb.eof_address, sb.root_address, **kw)
        assert raw[:len(enc)] == enc


@pytest.mark.parametrize("version", [1, 2])
def test_object_header_round_trip(version):
    msgs = [(0x01, 0, DS.encode(DS.Dataspace(DS.SIMPLE, (3, 4), (None, 4)), CTX)),
            (0x03, 1, DT.encode_dtype(np.dtype("<f8"), CTX)),
            (0x08, 0, L.encode(L.Layout(3, L.CONTIGUOUS, address=4096, size=96), CTX))]
    img = Image()
    if version == 1:
        data = object_header.encode_v1(msgs, refcount=2, room=40)
    else:
        data = object_header.encode_v2([m + (i,) for i, m in enumerate(msgs)], track_order=True,
                                       times=(1, 2, 3, 4), room=40)
    addr = img.alloc(len(data) + 16)
    img.put(addr, data)
    oh = object_header.ObjectHeader.decode(img.ctx(), addr)
    got = [(m.type, m.flags, bytes(m.data)[:len(d)]) for m, (_, _, d) in
           zip([m for m in oh.messages if m.type != 0], msgs)]
    assert got == [(t, f, d) for t, f, d in msgs]
    if version == 2:
        assert [m.creation_order for m in oh.messages if m.type != 0] == [0, 1, 2]


def test_object_header_continuation():
    """A v2 header whose continuation message points to an OCHK block holding more
    messages; both decode as one message list."""
    img = Image()
    more = [(0x0C, 0, b"attribute-ish" + bytes(3))]
    chunk = b"OCHK" + b"".join(struct.pack("<BHB", t, len(d), f) + d for t, f, d in more)
    chunk += struct.pack("<I", checksum.lookup3(chunk))
    caddr = img.alloc(len(chunk))
    img.put(caddr, chunk)
    cont = simple.encode_continuation(simple.Continuation(caddr, len(chunk)), CTX)
    assert simple.encode_continuation(M.decode_body(CTX, 0x10, cont, 0), CTX) == cont
    data = object_header.encode_v2([(0x10, 0, cont)])
    addr = img.alloc(len(data))
    img.put(addr, data)
    oh = object_header.ObjectHeader.decode(img.ctx(), addr)
    types = [m.type for m in oh.messages]
    assert 0x0C in types and 0x10 in types


def test_local_heap_round_trip():
    img = Image()
    data, offsets = local_heap.heap_data([b"alpha", b"b", b"gamma"])
    daddr = img.alloc(len(data))
    img.put(daddr, data)
    haddr = img.alloc(local_heap.header_size(CTX))
    header = local_heap.encode(CTX, len(data), daddr)
    img.put(haddr, header)
    heap = local_heap.LocalHeap.decode(img.ctx(), haddr)
    for name, off in offsets.items():
        assert heap.string(off) == name
    free = None if heap.free_list_offset in (None, local_heap.FREE_NULL) else \
        heap.free_list_offset
    assert local_heap.encode(CTX, heap.data_size, heap.data_address, free) == header


def test_global_heap_round_trip():
    objs = [b"", b"x", b"hello world", bytes(range(200))]
    data = global_heap.encode(CTX, objs)
    img = Image()
    addr = img.alloc(len(data))
    img.put(addr, data)
    gh = global_heap.GlobalHeap.decode(img.ctx(), addr)
    assert [bytes(gh.get(i + 1)) for i in range(len(objs))] == objs
    assert global_heap.encode(CTX, [bytes(gh.get(i + 1)) for i in range(len(objs))],
                              gh.size) == data


def test_symbol_table_node_round_trip():
    entries = [SB.encode_symbol_table_entry(CTX, 8 * i, 1000 + i) for i in range(5)]
    entries.append(SB.encode_symbol_table_entry(CTX, 48, 2000, 3000, 4000))
    entries.append(SB.encode_symbol_table_entry(CTX, 56, None, soft_link_offset=24))
    data = symbol_table.encode_node(CTX, entries, 4)
    img = Image()
    addr = img.alloc(len(data))
    img.put(addr, data)
    node = symbol_table.decode_node(img.ctx(), addr)
    re = [SB.encode_symbol_table_entry(CTX, e.name_offset, e.header_address,
                                       *((e.btree_address, e.heap_address)
                                         if e.cache_type == 1 else ()),
                                       **({"soft_link_offset": e.soft_link_offset}
                                          if e.cache_type == 2 else {}))
          for e in node]
    assert symbol_table.encode_node(CTX, re, 4) == data


@pytest.mark.parametrize("node_type", [0, 1])
def test_btree1_node_round_trip(node_type):
    k = 4
    if node_type == 0:
        ks = CTX.sizeof_lengths
        keys = [int(8 * i).to_bytes(ks, "little") for i in range(4)]
    else:
        ks = 8 + 8 * 3
        keys = [struct.pack("<II3Q", 100 + i, 0, 10 * i, 0, 0) for i in range(4)]
    data = btree1.encode_node(CTX, node_type, 0, keys, [500, 600, 700], 10, None, ks, k)
    img = Image()
    addr = img.alloc(len(data))
    img.put(addr, data)
    node = btree1.decode_node(img.ctx(), addr, node_type, None if node_type == 0 else 3)
    assert (node.level, node.nentries, node.left, node.right) == (0, 3, 10, None)
    assert node.children(CTX) == [500, 600, 700]
    keys_back = [bytes(r[:ks]) for r in node.entries] + [bytes(node.last_key)]
    assert btree1.encode_node(CTX, node_type, node.level, keys_back, node.children(CTX),
                              node.left, node.right, ks, k) == data


@pytest.mark.parametrize("n", [1, 5, 300, 3000])
def test_btree2_round_trip(n):
    """Type 5 (link names) trees of several depths: records come back in order, and the tree
    re-encodes to the same blocks."""
    recs = sorted((btree2.LinkName(h, struct.pack("<Q", i)[:7]) for i, h in
                   enumerate(np.random.default_rng(n).integers(0, 2 ** 32, n).tolist())),
                  key=lambda r: r.hash)
    enc = [btree2.encode_record(5, r, CTX) for r in recs]
    img = Image()
    addr, blocks = btree2.encode_tree(CTX, 5, enc, 11, img.alloc, node_size=512)
    img.put_all(blocks)
    tree = btree2.BTree2.decode(img.ctx(), addr)
    got = list(tree.records())
    assert got == recs
    img2 = Image()
    addr2, blocks2 = btree2.encode_tree(CTX, 5, [btree2.encode_record(5, r, CTX) for r in got],
                                        11, img2.alloc, node_size=512)
    assert (addr2, blocks2) == (addr, blocks)


def test_fractal_heap_round_trip():
    objs = [bytes([i % 251]) * (1 + (i * 37) % 300) for i in range(40)]
    img = Image()
    out = fractal_heap.encode_heap(CTX, objs, img.alloc)
    addr, blocks, ids = out[0], out[1], out[2]
    img.put_all(blocks)
    heap = fractal_heap.FractalHeap.decode(img.ctx(), addr)
    assert [bytes(heap.get(i)[0]) for i in ids] == objs


@pytest.mark.parametrize("n,page_bits,version", [(7, 10, 0), (1000, 4, 0), (33, 3, 1)])
def test_fixed_array_round_trip(n, page_bits, version):
    es = 8
    elements = [struct.pack("<Q", 1000 + i if i % 3 else 2 ** 64 - 1) for i in range(n)]
    img = Image()
    haddr, blocks = fixed_array.encode(CTX, elements, es, 0, page_bits, img.alloc, version)
    img.put_all(blocks)
    ctx = img.ctx()
    hdr, raw = fixed_array.read_elements(ctx, haddr)
    assert hdr.encode(ctx) == bytes(img.buf[haddr:haddr + hdr.size(ctx)])
    assert fixed_array.FixedArrayHeader.decode(ctx, haddr) == hdr
    assert [bytes(r) for r in raw] == elements
    img2 = Image()
    assert fixed_array.encode(CTX, [bytes(r) for r in raw], es, 0, page_bits, img2.alloc,
                              version) == (haddr, blocks)


@pytest.mark.parametrize("total,page_bits", [(3, 10), (60, 10), (2000, 6)])
def test_extensible_array_round_trip(total, page_bits):
    params = dict(max_bits=32, index_elements=4, min_elements=16, min_pointers=4,
                  page_bits=page_bits)
    by = {i: 5000 + i for i in range(total) if i % 5 != 2}
    by[total - 1] = 1

    def element(rec):
        return CTX.pack_address(rec)

    img = Image()
    haddr, blocks = extensible_array.encode(CTX, by, element, 8, 0, img.alloc, **params)
    img.put_all(blocks)
    ctx = img.ctx()
    hdr, index, raw = extensible_array.read_elements(ctx, haddr)
    assert hdr.max_index_set == total
    assert hdr.encode(ctx) == bytes(img.buf[haddr:haddr + hdr.size(ctx)])
    back = {int(i): int.from_bytes(bytes(r), "little") for i, r in zip(index, raw)}
    assert {i: v for i, v in back.items() if v != CTX.undefined} == by
    img2 = Image()
    again = {i: v for i, v in back.items() if v != CTX.undefined}
    assert extensible_array.encode(CTX, again, element, 8, 0, img2.alloc,
                                   **params) == (haddr, blocks)


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_cursor_cstring(kind):
    """C strings read in place (bytes) or through growing windows (other buffers): long
    strings, strings ending at a window's edge, a limit, and no terminator."""
    for text in (b"", b"a", b"x" * 63, b"y" * 64, b"z" * 1000):
        buf = kind(b"pre" + text + b"\0tail\0" + b"q" * 300)
        cur = Cursor(buf, 100, "test")
        cur.skip(3)
        assert cur.cstring() == text and cur.pos == 4 + len(text)
        assert cur.cstring() == b"tail"
    cur = Cursor(kind(b"abc\0"), 0, "test")
    with pytest.raises(purehep.TruncatedError):
        cur.cstring(limit=3)
    assert cur.cstring(limit=4) == b"abc"
    with pytest.raises(purehep.TruncatedError) as err:
        Cursor(kind(b"k" * 500), 100, "test").cstring()
    assert err.value.offset == 100
