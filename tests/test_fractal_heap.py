"""Fractal heaps (spec III.G) and the dense link/attribute glue, against files h5py writes."""
import copy
import random
import struct
import zlib

import h5py
import numpy as np
import pytest

from purehep.errors import ChecksumError, FormatError, PurehepError, TruncatedError
from purehep.format import checksum
from purehep.format.context import Cursor
from purehep.format.dense_storage import (attribute_message_name, dense_lookup, dense_messages,
                                          link_message_name)
from purehep.format.fractal_heap import FractalHeap
from purehep.format.object_header import ObjectHeader
from purehep.format.superblock import Superblock
from purehep.io import open_source
from purehep.io.source import BytesSource

LINK_INFO, LINK, ATTR_INFO = 0x02, 0x06, 0x15


# --- minimal helpers (kept local: they parse only what these tests need) ---------------------

def open_ctx(path_or_bytes, **options):
    src = BytesSource(path_or_bytes) if isinstance(path_or_bytes, (bytes, bytearray)) \
        else open_source(path_or_bytes)
    sb = Superblock.find(src)
    return sb.context(src, **options)


def parse_link(body, ctx):
    """(name, address or None) of a link message body."""
    cur = Cursor(body, 0, "link message", ctx)
    cur.u8()
    flags = cur.u8()
    ltype = cur.u8() if flags & 0x08 else 0
    if flags & 0x04:
        cur.u64()
    if flags & 0x10:
        cur.u8()
    name = bytes(cur.bytes(cur.uint(1 << (flags & 3))))
    return name, (cur.address() if ltype == 0 else None)


def parse_info(raw, ctx, kind):
    """(heap, name index, order index) addresses of a Link Info / Attribute Info message."""
    cur = Cursor(raw.data, raw.offset, "info message", ctx)
    cur.u8()
    flags = cur.u8()
    if kind == LINK_INFO:
        if flags & 1:
            cur.u64()
    elif flags & 1:
        cur.u16()
    heap, name = cur.address(), cur.address()
    order = cur.address() if flags & 2 else None
    return heap, name, order


def header_of(ctx, path):
    """Object header at ``path``, following compact links (the test files keep the parents
    of what they test compact)."""
    header = ObjectHeader.decode(ctx, ctx.superblock.root_address)
    for part in [p for p in path.split("/") if p]:
        for raw in header.find(LINK):
            name, addr = parse_link(raw.data, ctx)
            if name == part.encode():
                header = ObjectHeader.decode(ctx, addr)
                break
        else:
            info = header.first(LINK_INFO)
            heap, index, _ = parse_info(info, ctx, LINK_INFO)
            body, _ = dense_lookup(ctx, heap, index, part.encode(), 5)
            header = ObjectHeader.decode(ctx, parse_link(body, ctx)[1])
    return header


def dense_links(ctx, path):
    return parse_info(header_of(ctx, path).first(LINK_INFO), ctx, LINK_INFO)


def dense_attrs(ctx, path):
    return parse_info(header_of(ctx, path).first(ATTR_INFO), ctx, ATTR_INFO)


# --- fixtures ---------------------------------------------------------------------------------

SIZES = (10, 100, 5000)
BIG = np.arange(20000, dtype="<f8")          # 160 000 bytes: a huge heap object


@pytest.fixture(scope="module")
def groups_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("fh") / "groups.h5"
    with h5py.File(path, "w", libver="latest") as f:
        for n in SIZES:
            g = f.create_group(f"g{n}")
            for i in range(n):
                g.create_group(f"member_{(i * 7919) % n:05d}")
        g = f.create_group("ordered", track_order=True)
        for i in range(300):
            g[f"z{(i * 37) % 300}"] = h5py.SoftLink("/nowhere")
        g = f.create_group("long")          # > 512 KiB of links: child indirect blocks
        for i in range(3000):
            g[f"{i:05d}" + "x" * 240] = h5py.SoftLink("/" + "y" * 60)
        d = f.create_dataset("d", data=1)
        for i in range(60):
            d.attrs[f"attr{(i * 13) % 60}"] = np.arange(i + 1)
        d.attrs["big"] = BIG
        o = f.create_dataset("o", data=2, track_order=True)
        for i in range(40):
            o.attrs[f"k{39 - i}"] = i
        s = f.create_dataset("single", data=3)
        s.attrs["huge"] = BIG          # one attribute too large for the header: dense + huge
    return str(path)


# --- dense links ------------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
def test_dense_links_match_h5py(groups_file, n):
    ctx = open_ctx(groups_file)
    heap_addr, name_index, order_index = dense_links(ctx, f"g{n}")
    assert order_index is None
    bodies = dense_messages(ctx, heap_addr, name_index)
    names = sorted(parse_link(b, ctx)[0].decode() for b, _ in bodies)
    with h5py.File(groups_file) as f:
        assert names == list(f[f"g{n}"])
    heap = FractalHeap.decode(ctx, heap_addr)
    assert heap.managed_objects == n and heap.huge_objects == 0
    assert heap.heap_id_length == 7
    assert FractalHeap.decode(ctx, heap_addr) is heap          # cached on the context
    # offsets point at the bodies in the file
    raw = open(groups_file, "rb").read()
    for body, offset in bodies[:50]:
        assert raw[offset:offset + len(body)] == body


def test_sort_by_name_and_lookup(groups_file):
    ctx = open_ctx(groups_file)
    heap_addr, name_index, _ = dense_links(ctx, "g100")
    bodies = dense_messages(ctx, heap_addr, name_index, sort_by_name=True)
    with h5py.File(groups_file) as f:
        expected = list(f["g100"])
    assert [link_message_name(b).decode() for b, _ in bodies] == expected
    for name in expected[::7]:
        body, offset = dense_lookup(ctx, heap_addr, name_index, name, 5)
        assert parse_link(body, ctx)[0] == name.encode()
    assert dense_lookup(ctx, heap_addr, name_index, b"member_99999", 5) is None
    assert dense_lookup(ctx, heap_addr, name_index, "nope", 5) is None


def test_creation_order(groups_file):
    ctx = open_ctx(groups_file)
    heap_addr, name_index, order_index = dense_links(ctx, "ordered")
    assert order_index is not None
    bodies = dense_messages(ctx, heap_addr, name_index, order_index, by_creation_order=True)
    with h5py.File(groups_file) as f:
        assert [link_message_name(b).decode() for b, _ in bodies] == list(f["ordered"])


def test_indirect_blocks_with_children(groups_file):
    ctx = open_ctx(groups_file)
    heap_addr, name_index, _ = dense_links(ctx, "long")
    heap = FractalHeap.decode(ctx, heap_addr)
    assert heap.current_root_rows > heap.max_direct_rows       # rows of child indirect blocks
    blocks = list(heap.iter_direct_blocks())
    offsets = [b.block_offset for b in blocks]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    assert len(heap._iblocks) > 1
    assert sum(b.size for b in blocks) <= heap.managed_space
    names = sorted(link_message_name(b) for b, _ in dense_messages(ctx, heap_addr, name_index))
    with h5py.File(groups_file) as f:
        assert [n.decode() for n in names] == list(f["long"])
    assert [o for o, _ in heap.iter_managed()] == offsets


# --- dense attributes, huge objects -----------------------------------------------------------

def test_dense_attributes_and_huge_object(groups_file):
    ctx = open_ctx(groups_file)
    heap_addr, name_index, order_index = dense_attrs(ctx, "d")
    heap = FractalHeap.decode(ctx, heap_addr)
    assert heap.heap_id_length == 8 and heap.huge_objects == 1
    assert not heap.huge_ids_direct and heap.huge_id_size == 7
    bodies = dense_messages(ctx, heap_addr, name_index, order_index)
    names = sorted(attribute_message_name(b).decode() for b, _ in bodies)
    with h5py.File(groups_file) as f:
        assert names == sorted(f["d"].attrs)
    body, offset = dense_lookup(ctx, heap_addr, name_index, b"big", 8)
    assert body.endswith(BIG.tobytes())
    raw = open(groups_file, "rb").read()
    assert raw[offset:offset + len(body)] == body
    tree = heap.huge_btree()
    assert tree.type == 1 and tree.total_records == 1


def test_single_huge_attribute(groups_file):
    ctx = open_ctx(groups_file)
    heap_addr, name_index, _ = dense_attrs(ctx, "single")
    [(body, _)] = dense_messages(ctx, heap_addr, name_index)
    assert attribute_message_name(body) == b"huge" and body.endswith(BIG.tobytes())


def test_attribute_creation_order(groups_file):
    ctx = open_ctx(groups_file)
    heap_addr, name_index, order_index = dense_attrs(ctx, "o")
    assert order_index is not None
    bodies = dense_messages(ctx, heap_addr, name_index, order_index, by_creation_order=True)
    with h5py.File(groups_file) as f:
        assert [attribute_message_name(b).decode() for b, _ in bodies] == list(f["o"].attrs)


# --- heap IDs not produced by h5py: tiny, extended tiny, direct huge --------------------------

def test_tiny_ids(groups_file):
    ctx = open_ctx(groups_file)
    heap = FractalHeap.decode(ctx, dense_links(ctx, "g10")[0])
    assert not heap.tiny_extended and heap.tiny_max_length == 6
    assert heap.get(bytes([0x20 | 4]) + b"hello\0")[0] == b"hello"
    assert heap.get(bytes([0x20 | 0]) + b"x" * 6, id_offset=100) == (b"x", 101)
    with pytest.raises(FormatError):
        heap.get(bytes([0x20 | 9]) + b"x" * 6)               # 10 bytes in a 7-byte ID
    ext = copy.copy(heap)
    ext.heap_id_length, ext.tiny_extended = 40, True
    payload = bytes(range(30))
    assert ext.get(bytes([0x20 | (29 >> 8), 29 & 0xFF]) + payload + b"\0" * 8)[0] == payload


def test_direct_huge_ids(groups_file):
    ctx = open_ctx(groups_file)
    heap = FractalHeap.decode(ctx, dense_links(ctx, "g10")[0])
    direct = copy.copy(heap)
    direct.huge_ids_direct, direct.heap_id_length = True, 17
    raw = open(groups_file, "rb").read()
    hid = bytes([0x10]) + struct.pack("<QQ", 0, 8)
    assert direct.get(hid) == (raw[:8], 0)
    with pytest.raises(TruncatedError):
        direct.get(bytes([0x10]) + struct.pack("<QQ", len(raw) - 4, 8))


def test_bad_ids(groups_file):
    ctx = open_ctx(groups_file)
    heap = FractalHeap.decode(ctx, dense_links(ctx, "g100")[0])
    for bad in (b"", bytes([0x40]) + b"\0" * 6, bytes([0x30]) + b"\0" * 6,
                bytes([0x00]) + (heap.managed_space + 5).to_bytes(4, "little") + b"\x10\0",
                bytes([0x00, 0x01, 0, 0, 0, 0x10, 0]),        # offset inside the block prefix
                bytes([0x00, 0, 0, 0, 0, 0, 0])):             # zero length
        with pytest.raises(FormatError):
            heap.get(bad)
    with pytest.raises(FormatError):
        heap.get(bytes([0x00, 0x01]))                          # truncated managed ID


# --- corruption -------------------------------------------------------------------------------

def _flip(raw, pos):
    data = bytearray(raw)
    data[pos] ^= 0x5A
    return bytes(data)


def test_corrupt_header_direct_and_indirect_blocks(groups_file):
    raw = open(groups_file, "rb").read()
    ctx = open_ctx(raw)
    heap_addr, name_index, _ = dense_links(ctx, "long")
    heap = FractalHeap.decode(ctx, heap_addr)
    assert heap.checksum_direct_blocks
    block = next(heap.iter_direct_blocks())
    iblock = heap.indirect_block(heap.root_block_address, heap.current_root_rows, 0)
    cases = [(heap_addr + 30, "fractal heap header", heap_addr),
             (block.address + block.size // 2, "fractal heap direct block", block.address),
             (iblock.address + 40, "fractal heap indirect block", iblock.address)]
    for pos, structure, where in cases:
        ctx2 = open_ctx(_flip(raw, pos))
        with pytest.raises(ChecksumError) as e:
            dense_messages(ctx2, heap_addr, name_index)
        assert e.value.structure == structure and e.value.offset == where


def test_truncated_file(groups_file):
    raw = open(groups_file, "rb").read()
    ctx = open_ctx(raw)
    heap_addr, name_index, _ = dense_links(ctx, "long")
    heap = FractalHeap.decode(ctx, heap_addr)
    last = max(b.address for b in heap.iter_direct_blocks())
    cut = open_ctx(raw[:last + 100], verify_checksums=False)
    cut.superblock = ctx.superblock
    with pytest.raises(TruncatedError):
        dense_messages(cut, heap_addr, name_index)


def test_random_flips_raise_only_purehep_errors(groups_file):
    raw = open(groups_file, "rb").read()
    ctx = open_ctx(raw)
    heap_addr, name_index, _ = dense_links(ctx, "g100")
    heap = FractalHeap.decode(ctx, heap_addr)
    regions = [(heap_addr, 150)] + [(b.address, 64) for b in heap.iter_direct_blocks()]
    rng = random.Random(1234)
    for _ in range(300):
        start, n = rng.choice(regions)
        data = bytearray(raw)
        data[start + rng.randrange(n)] ^= 1 << rng.randrange(8)
        c = open_ctx(bytes(data), verify_checksums=False)
        try:
            dense_messages(c, heap_addr, name_index)
        except PurehepError:
            pass


# --- a filtered heap, built by hand (h5py cannot ask for one) --------------------------------

def _filtered_heap_file():
    """A file image: 8-byte superblock area, then a deflate-filtered heap with a root direct
    block holding b'hello world' at heap offset 22 (prefix 5 + 8 + 4 + 4 checksum = 21...)."""
    so = sl = 8
    start, width, max_direct, max_bits = 512, 4, 65536, 32
    pipeline = bytes([2, 1]) + struct.pack("<HHH", 1, 0, 1) + struct.pack("<I", 6)
    header_addr, block_addr = 64, 1024
    off_size = 4
    prefix = 4 + 1 + so + off_size + 4
    obj = b"hello world"
    block = bytearray(start)
    block[0:5] = b"FHDB\0"
    block[5:13] = struct.pack("<Q", header_addr)
    block[13:17] = struct.pack("<I", 0)
    block[prefix:prefix + len(obj)] = obj
    block[17:21] = struct.pack("<I", checksum.lookup3(bytes(block)))
    packed = zlib.compress(bytes(block))
    hdr = bytearray(b"FRHP\0")
    hdr += struct.pack("<HHB", 7, len(pipeline), 0x02)
    hdr += struct.pack("<I", 4096) + struct.pack("<Q", 0) + b"\xff" * so
    hdr += struct.pack("<Q", 0) + b"\xff" * so
    hdr += struct.pack("<8Q", start, start, start, 1, 0, 0, 0, 0)
    hdr += struct.pack("<H", width) + struct.pack("<QQ", start, max_direct)
    hdr += struct.pack("<HH", max_bits, 1) + struct.pack("<Q", block_addr) + struct.pack("<H", 0)
    hdr += struct.pack("<QI", len(packed), 0) + pipeline
    hdr += struct.pack("<I", checksum.lookup3(bytes(hdr)))
    image = bytearray(block_addr + len(packed))
    image[header_addr:header_addr + len(hdr)] = hdr
    image[block_addr:] = packed
    heap_id = bytes([0]) + struct.pack("<I", prefix) + struct.pack("<H", len(obj))
    return bytes(image), header_addr, heap_id, obj


def _deflate_only(data, filters, filter_mask, element_size, chunk_nbytes, where=(None, None)):
    assert [f.id for f in filters] == [1] and filter_mask == 0
    try:
        return zlib.decompress(data)
    except zlib.error as e:
        raise FormatError(str(e), *where) from None


@pytest.mark.parametrize("pipeline", ["stand-in", "purehep.filters"])
def test_filtered_root_direct_block(pipeline, monkeypatch):
    from purehep.format.context import Context
    import purehep.filters
    if pipeline == "stand-in":
        monkeypatch.setattr(purehep.filters, "decode_pipeline", _deflate_only, raising=False)
    else:
        try:
            purehep.filters.get_filter(1, None)
        except Exception as e:          # the filters package is still being written
            pytest.skip(f"purehep.filters cannot decode deflate yet: {e!r}")
    image, addr, heap_id, obj = _filtered_heap_file()
    ctx = Context(BytesSource(image))
    heap = FractalHeap.decode(ctx, addr)
    assert heap.filtered and heap.root_filtered_size > 0
    assert heap.get(heap_id)[0] == obj
    corrupt = bytearray(image)
    corrupt[-3] ^= 0xFF
    with pytest.raises(PurehepError):
        FractalHeap.decode(Context(BytesSource(bytes(corrupt))), addr).get(heap_id)
