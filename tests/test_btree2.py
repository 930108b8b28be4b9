"""Version 2 B-trees (spec III.A.2): name/creation-order indexes and chunk indexes vs h5py."""
import random

import h5py
import numpy as np
import pytest

from purehep.errors import ChecksumError, FormatError, PurehepError
from purehep.format import checksum
from purehep.format.btree2 import (RECORD_TYPES, BTree2, Chunk, ChunkRecordContext, LinkName,
                                   limit_enc_size)
from purehep.format.context import Cursor
from purehep.format.fractal_heap import FractalHeap
from purehep.format.object_header import ObjectHeader
from purehep.format.superblock import Superblock
from purehep.io import open_source
from purehep.io.source import BytesSource

LINK_INFO, LINK, LAYOUT, ATTR_INFO = 0x02, 0x06, 0x08, 0x15


def open_ctx(path_or_bytes, **options):
    src = BytesSource(path_or_bytes) if isinstance(path_or_bytes, (bytes, bytearray)) \
        else open_source(path_or_bytes)
    return Superblock.find(src).context(src, **options)


def link_name(body):
    flags = body[1]
    pos = 2 + (1 if flags & 0x08 else 0) + (8 if flags & 0x04 else 0) + (1 if flags & 0x10 else 0)
    width = 1 << (flags & 3)
    n = int.from_bytes(body[pos:pos + width], "little")
    return bytes(body[pos + width:pos + width + n])


def attr_name(body):
    n = int.from_bytes(body[2:4], "little")
    pos = 8 + (1 if body[0] == 3 else 0)
    return bytes(body[pos:pos + n]).split(b"\0")[0]


def child(ctx, name):
    """Object header of a root member (root links are compact in these files)."""
    root = ObjectHeader.decode(ctx, ctx.superblock.root_address)
    for raw in root.find(LINK):
        body = raw.data
        if link_name(body) == name.encode():
            return ObjectHeader.decode(ctx, int.from_bytes(body[-8:], "little"))
    raise KeyError(name)


def info(ctx, name, mtype):
    raw = child(ctx, name).first(mtype)
    cur = Cursor(raw.data, raw.offset, "info", ctx)
    cur.u8()
    flags = cur.u8()
    if flags & 1:
        cur.skip(8 if mtype == LINK_INFO else 2)
    heap, name_index = cur.address(), cur.address()
    return heap, name_index, (cur.address() if flags & 2 else None)


def chunk_btree_address(ctx, name):
    """(B-tree address, rank) from a version 4 chunked layout with a v2 B-tree index."""
    raw = child(ctx, name).first(LAYOUT)
    cur = Cursor(raw.data, raw.offset, "layout", ctx)
    assert cur.u8() in (4, 5) and cur.u8() == 2      # v5: libhdf5 2.0, filtered
    cur.u8()
    ndims, width = cur.u8(), cur.u8()
    cur.skip(ndims * width)
    assert cur.u8() == 5                    # v2 B-tree chunk index
    cur.skip(6)
    return cur.address(), ndims - 1


SIZES = {"g10": 10, "g100": 100, "g5000": 5000}


@pytest.fixture(scope="module")
def btree_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bt2") / "btrees.h5"
    with h5py.File(path, "w", libver="latest") as f:
        for name, n in SIZES.items():
            g = f.create_group(name, track_order=(name == "g5000"))
            for i in range(n):
                g[f"link{(i * 7919) % n}"] = h5py.SoftLink("/x")
        d = f.create_dataset("attrs", data=0, track_order=True)
        for i in range(300):
            d.attrs[f"a{(i * 31) % 300}"] = i
        plain = f.create_dataset("chunks", shape=(40, 60), maxshape=(None, None), chunks=(4, 5),
                                 dtype="i4")
        plain[:, :] = np.arange(2400).reshape(40, 60)
        packed = f.create_dataset("zchunks", shape=(30, 20, 10), maxshape=(None, None, 10),
                                  chunks=(3, 2, 5), dtype="f8", compression="gzip")
        packed[:15, :, :] = 1.5                 # chunk rows 5-9 left unallocated
    return str(path)


# --- name and creation-order indexes ------------------------------------------------------------

@pytest.mark.parametrize("group", sorted(SIZES))
def test_name_index_records(btree_file, group):
    ctx = open_ctx(btree_file)
    heap_addr, index, _ = info(ctx, group, LINK_INFO)
    tree = BTree2.decode(ctx, index)
    heap = FractalHeap.decode(ctx, heap_addr)
    assert tree.type == 5 and len(tree) == SIZES[group]
    assert tree.depth == {"g10": 0, "g100": 1, "g5000": 2}[group]
    records = list(tree.records())
    assert len(records) == tree.total_records
    assert all(isinstance(r, LinkName) for r in records)
    hashes = [r.hash for r in records]
    assert hashes == sorted(hashes)
    names = []
    for r in records:
        name = link_name(heap.get(r.heap_id)[0])
        assert r.hash == checksum.lookup3(name)
        names.append(name.decode())
    with h5py.File(btree_file) as f:
        assert sorted(names) == sorted(f[group])
    for name in names[::max(1, len(names) // 40)]:
        found = tree.find(name)
        assert found and any(link_name(heap.get(r.heap_id)[0]) == name.encode() for r in found)
    assert all(r.hash == checksum.lookup3(b"absent!") for r in tree.find(b"absent!"))


def test_leaf_record_bytes(btree_file):
    ctx = open_ctx(btree_file)
    tree = BTree2.decode(ctx, info(ctx, "g5000", LINK_INFO)[1])
    parts = list(tree.leaf_record_bytes())
    assert all(p.dtype == np.uint8 and p.shape[1] == 11 for p in parts)
    table = tree.record_bytes()
    assert table.shape == (5000, 11)
    hashes = table[:, :4].copy().view("<u4").ravel()
    assert list(hashes) == [r.hash for r in tree.records()]


def test_link_creation_order_index(btree_file):
    ctx = open_ctx(btree_file)
    heap_addr, _, order_index = info(ctx, "g5000", LINK_INFO)
    tree = BTree2.decode(ctx, order_index)
    heap = FractalHeap.decode(ctx, heap_addr)
    assert tree.type == 6 and tree.depth >= 1
    records = list(tree.records())
    assert [r.creation_order for r in records] == list(range(5000))
    with h5py.File(btree_file) as f:
        expected = list(f["g5000"])
    assert [link_name(heap.get(r.heap_id)[0]).decode() for r in records] == expected
    [r] = tree.find(1234)
    assert link_name(heap.get(r.heap_id)[0]).decode() == expected[1234]
    assert tree.find(99999) == []


def test_attribute_indexes(btree_file):
    ctx = open_ctx(btree_file)
    heap_addr, name_index, order_index = info(ctx, "attrs", ATTR_INFO)
    heap = FractalHeap.decode(ctx, heap_addr)
    by_name = BTree2.decode(ctx, name_index)
    by_order = BTree2.decode(ctx, order_index)
    assert (by_name.type, by_order.type) == (8, 9)
    names = {attr_name(heap.get(r.heap_id)[0]) for r in by_name.records()}
    ordered = [attr_name(heap.get(r.heap_id)[0]).decode() for r in by_order.records()]
    with h5py.File(btree_file) as f:
        assert ordered == list(f["attrs"].attrs)
    assert names == {n.encode() for n in ordered}
    for name in ("a0", "a299", "a150"):
        [r] = by_name.find(name)
        assert attr_name(heap.get(r.heap_id)[0]) == name.encode()
        assert r.hash == checksum.lookup3(name.encode())


# --- chunk records (types 10 and 11) -------------------------------------------------------------

def test_unfiltered_chunk_records(btree_file):
    ctx = open_ctx(btree_file)
    addr, rank = chunk_btree_address(ctx, "chunks")
    tree = BTree2.decode(ctx, addr, record_context=ChunkRecordContext(rank))
    assert tree.type == 10 and rank == 2
    records = list(tree.records())
    assert len(records) == 10 * 12
    assert {r.scaled_offsets for r in records} == {(i, j) for i in range(10) for j in range(12)}
    assert all(isinstance(r, Chunk) and r.size is None for r in records)
    keys = [r.scaled_offsets for r in records]
    assert keys == sorted(keys)
    raw = open(btree_file, "rb").read()
    r = tree.find((3, 7))[0]
    block = np.frombuffer(raw[r.address:r.address + 80], "<i4").reshape(4, 5)
    assert (block == np.arange(2400).reshape(40, 60)[12:16, 35:40]).all()
    table = tree.record_bytes()
    assert table.shape == (120, 8 + 16)
    # without a context, type 10 derives the rank from the record size
    assert list(BTree2.decode(ctx, addr).records()) == records


def test_filtered_chunk_records(btree_file):
    ctx = open_ctx(btree_file)
    addr, rank = chunk_btree_address(ctx, "zchunks")
    tree = BTree2.decode(ctx, addr, record_context={"ndims": rank})
    assert tree.type == 11 and rank == 3
    records = list(tree.records())
    expected = {(i, j, k) for i in range(5) for j in range(10) for k in range(2)}
    assert [r.scaled_offsets for r in records] == sorted(expected)
    assert tree.total_records == len(expected)
    assert all(r.size > 0 and r.filter_mask == 0 for r in records)
    import zlib
    raw = open(btree_file, "rb").read()
    r = records[0]
    data = np.frombuffer(zlib.decompress(raw[r.address:r.address + r.size]), "<f8")
    assert data.size == 3 * 2 * 5
    assert tree.record_context.chunk_size_len == tree.record_size - 8 - 4 - 8 * 3
    with pytest.raises(FormatError):
        list(BTree2.decode(ctx, addr).records())       # type 11 needs the rank


# --- arithmetic and record table -----------------------------------------------------------------

def test_limit_enc_size_and_table():
    assert [limit_enc_size(n) for n in (1, 255, 256, 65535, 65536)] == [1, 1, 2, 2, 3]
    assert set(RECORD_TYPES) == set(range(1, 14))      # 12/13: structured chunks


# --- corruption ------------------------------------------------------------------------------------

def _flip(raw, pos):
    data = bytearray(raw)
    data[pos] ^= 0x21
    return bytes(data)


def test_corrupt_nodes(btree_file):
    raw = open(btree_file, "rb").read()
    ctx = open_ctx(raw)
    index = info(ctx, "g100", LINK_INFO)[1]
    tree = BTree2.decode(ctx, index)
    assert tree.depth == 1
    leaf_addr = tree._read_node(tree.root_address, tree.root_nrecords, 1)[1][0][0]
    cases = [(index + 8, "v2 B-tree header", index),
             (tree.root_address + 10, "v2 B-tree internal node", tree.root_address),
             (leaf_addr + 20, "v2 B-tree leaf node", leaf_addr)]
    for pos, structure, where in cases:
        c = open_ctx(_flip(raw, pos))
        with pytest.raises(ChecksumError) as e:
            list(BTree2.decode(c, index).records())
        assert e.value.structure == structure and e.value.offset == where
    c = open_ctx(_flip(raw, leaf_addr))                      # signature
    with pytest.raises(FormatError) as e:
        list(BTree2.decode(c, index).records())
    assert e.value.offset == leaf_addr


def test_random_flips_raise_only_purehep_errors(btree_file):
    raw = open(btree_file, "rb").read()
    ctx = open_ctx(raw)
    index = info(ctx, "g100", LINK_INFO)[1]
    tree = BTree2.decode(ctx, index)
    nodes = [index, tree.root_address] + [c[0] for c in
                                          tree._read_node(tree.root_address, tree.root_nrecords,
                                                          1)[1]]
    rng = random.Random(99)
    for _ in range(300):
        data = bytearray(raw)
        data[rng.choice(nodes) + rng.randrange(64)] ^= 1 << rng.randrange(8)
        c = open_ctx(bytes(data), verify_checksums=False)
        try:
            t = BTree2.decode(c, index)
            list(t.records())
            t.find(b"link5")
        except PurehepError:
            pass
