"""Shared object header message table (spec III.I, IV.A.2.p) on the corpus files that use it.

h5py cannot create files with shared messages (no H5Pset_shared_mesg_* in its API), so these
tests read the HDF5 library's own test files and skip when the corpus is absent.
"""
import json
import os
import struct

import h5py
import pytest

from purehep.errors import ChecksumError, FormatError
from purehep.format import messages, sohm
from purehep.format.btree2 import SharedMessage
from purehep.format.context import Context, Cursor
from purehep.format.object_header import ObjectHeader
from purehep.format.superblock import Superblock
from purehep.io import open_source
from purehep.io.source import BytesSource

TSOHM = "files/hdf5-repo/tools/test/h5stat/testfiles/h5stat_tsohm.h5"
TSOHM_MANIFEST = "manifests/hdf5-repo/tools__test__h5stat__testfiles__h5stat_tsohm.h5.json"
ATTR_DSPACE = "files/hdf5-repo/tools/test/h5dump/testfiles/err_attr_dspace.h5"
NO_TYPES = "files/hdf5-repo/tools/test/h5format_convert/testfiles/h5fc_ext1_s.h5"


def open_ctx(path_or_bytes, **options):
    src = BytesSource(path_or_bytes) if isinstance(path_or_bytes, (bytes, bytearray)) \
        else open_source(path_or_bytes)
    return Superblock.find(src).context(src, **options)


def corpus_file(corpus_dir, rel):
    path = os.path.join(corpus_dir, rel)
    if not os.path.exists(path):
        pytest.skip(f"{rel} is not in the corpus")
    return path


def test_decode_table_message():
    ctx = Context(BytesSource(b""), 8, 8)
    body = bytes([0]) + struct.pack("<Q", 88) + bytes([3])
    msg = sohm.decode_table_message(Cursor(body, 0, "shared message table message", ctx))
    assert (msg.version, msg.table_address, msg.nindexes) == (0, 88, 3)
    with pytest.raises(FormatError):
        sohm.decode_table_message(Cursor(b"\x01" + body[1:], 0, "x", ctx))
    with pytest.raises(FormatError):
        sohm.decode_table_message(Cursor(body[:5], 0, "x", ctx))


def test_tsohm_btree_index(corpus_dir):
    path = corpus_file(corpus_dir, TSOHM)
    ctx = open_ctx(path)
    table = sohm.shared_message_table(ctx)
    assert sohm.shared_message_table(ctx) is table and ctx.sohm is table
    [index] = table.indexes
    assert index.index_type == sohm.INDEX_BTREE
    assert all(index.tracks(t) for t in (0x01, 0x03, 0x05, 0x0B, 0x0C))
    assert not index.tracks(0x08)
    [record] = table.records(index)
    assert isinstance(record, SharedMessage) and record.location == 0
    assert record.reference_count == 3
    body, offset = table.get(0x01, record.heap_id)
    assert record.hash == sohm.message_hash(0x01, body)
    raw = open(path, "rb").read()
    assert raw[offset:offset + len(body)] == body


def test_tsohm_shared_dataspaces_resolve(corpus_dir):
    path = corpus_file(corpus_dir, TSOHM)
    manifest = json.load(open(os.path.join(corpus_dir, TSOHM_MANIFEST)))
    ctx = open_ctx(path)
    objects = manifest["objects"]
    original = ObjectHeader.decode(ctx, objects["/dataset"]["addr"]).first(0x01)
    assert not original.shared
    resolved = 0
    for name in ("/dataset2", "/dataset3"):
        header = ObjectHeader.decode(ctx, objects[name]["addr"])
        raw = header.first(0x01)
        assert raw.shared
        body, _ = messages.resolve_shared(ctx, raw)
        assert bytes(body) == bytes(original.data)
        resolved += 1
    assert resolved == 2
    with h5py.File(path) as f:
        assert f["dataset2"].shape == f["dataset"].shape


def test_list_index(corpus_dir):
    path = corpus_file(corpus_dir, ATTR_DSPACE)
    ctx = open_ctx(path)
    table = sohm.shared_message_table(ctx)
    [index] = table.indexes
    assert index.index_type == sohm.INDEX_LIST and index.tracks(0x01)
    [record] = table.records(index)
    assert record.location == 0
    body, _ = table.get(0x01, record.heap_id)
    assert body[0] in (1, 2)                      # a dataspace message version
    assert record.hash == sohm.message_hash(0x01, body)
    with pytest.raises(FormatError):
        table.get(0x03, record.heap_id)           # no index tracks datatypes


def test_indexes_without_types(corpus_dir):
    ctx = open_ctx(corpus_file(corpus_dir, NO_TYPES))
    table = sohm.shared_message_table(ctx)
    assert len(table.indexes) == 4
    assert table.index_for(0x01) is None
    assert all(table.records(i) == [] for i in table.indexes)


def test_no_table(tmp_path):
    path = tmp_path / "plain.h5"
    with h5py.File(path, "w", libver="latest") as f:
        f["x"] = 1
    with pytest.raises(FormatError):
        sohm.shared_message_table(open_ctx(str(path)))


def _flip(raw, pos):
    data = bytearray(raw)
    data[pos] ^= 0x10
    return bytes(data)


def test_corrupt_table_and_list(corpus_dir):
    raw = open(corpus_file(corpus_dir, ATTR_DSPACE), "rb").read()
    ctx = open_ctx(raw)
    table = sohm.shared_message_table(ctx)
    index = table.indexes[0]
    with pytest.raises(ChecksumError) as e:
        sohm.shared_message_table(open_ctx(_flip(raw, table.address + 9)))
    assert e.value.structure == "shared object header message table"
    assert e.value.offset == table.address
    bad = open_ctx(_flip(raw, index.index_address + 6))
    with pytest.raises(ChecksumError) as e:
        t = sohm.shared_message_table(bad)
        t.records(t.indexes[0])
    assert e.value.structure == "shared message record list"
    assert e.value.offset == index.index_address
    with pytest.raises(FormatError):             # signature
        t = sohm.shared_message_table(open_ctx(_flip(raw, table.address)))


def test_corrupt_btree_index(corpus_dir):
    raw = open(corpus_file(corpus_dir, TSOHM), "rb").read()
    ctx = open_ctx(raw)
    index = sohm.shared_message_table(ctx).indexes[0]
    bad = open_ctx(_flip(raw, index.index_address + 7))
    with pytest.raises(ChecksumError) as e:
        t = sohm.shared_message_table(bad)
        t.records(t.indexes[0])
    assert e.value.structure == "v2 B-tree header" and e.value.offset == index.index_address
