"""``Dataset.id`` chunk queries and direct chunk I/O, and ``Dataset.iter_chunks``, compared
with h5py's DatasetID (get_num_chunks, get_chunk_info, get_chunk_info_by_coord, chunk_iter,
read_direct_chunk, write_direct_chunk) and ChunkIterator."""
import zlib

import h5py
import numpy as np
import pytest

import purehep


def _info(i):
    return (tuple(i.chunk_offset), i.filter_mask, i.byte_offset, i.size)


@pytest.mark.parametrize("libver", ["earliest", "latest"])
@pytest.mark.parametrize("kw", [{}, {"compression": "gzip", "shuffle": True},
                                {"maxshape": (None, 7)}])
def test_chunk_queries_match_h5py(tmp_path, libver, kw):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver=libver, userblock_size=512) as f:
        d = f.create_dataset("d", shape=(20, 7), dtype="<i4", chunks=(6, 3), fillvalue=-1, **kw)
        d[0:12, :] = np.arange(84).reshape(12, 7)
        d[18:, 6] = 5
    with h5py.File(p) as h, purehep.File(p) as f:
        hid, pid = h["d"].id, f["d"].id
        n = hid.get_num_chunks()
        assert pid.get_num_chunks() == n
        ref = [_info(hid.get_chunk_info(i)) for i in range(n)]
        assert sorted(_info(pid.get_chunk_info(i)) for i in range(n)) == sorted(ref)
        seen = []
        pid.chunk_iter(lambda i: seen.append(_info(i)))
        assert sorted(seen) == sorted(ref)
        for coord in [(0, 0), (7, 4), (13, 1), (19, 6)]:
            mine, theirs = pid.get_chunk_info_by_coord(coord), hid.get_chunk_info_by_coord(
                tuple(c - c % s for c, s in zip(coord, (6, 3))))
            assert mine.byte_offset == theirs.byte_offset and mine.size == theirs.size
            if theirs.byte_offset is not None:
                assert pid.read_direct_chunk(mine.chunk_offset) == \
                    hid.read_direct_chunk(mine.chunk_offset)
        assert pid.get_storage_size() == hid.get_storage_size()
        assert list(f["d"].iter_chunks()) == list(h["d"].iter_chunks())
        sel = (slice(5, 17), slice(2, 6))
        assert list(f["d"].iter_chunks(sel)) == list(h["d"].iter_chunks(sel))
        assert list(f["d"].iter_chunks((3, slice(1, 7)))) == \
            list(h["d"].iter_chunks((3, slice(1, 7))))
        with pytest.raises(ValueError):
            pid.read_direct_chunk((1, 0))            # not the start of a chunk


def test_write_direct_chunk(tmp_path):
    p = tmp_path / "w.h5"
    raw = np.arange(16, dtype="<u2").reshape(4, 4)
    with purehep.File(p, "w", libver="latest") as f:
        d = f.create_dataset("z", shape=(8, 8), dtype="<u2", chunks=(4, 4), compression="gzip")
        d.id.write_direct_chunk((4, 0), zlib.compress(raw.tobytes()))
        d.id.write_direct_chunk((0, 4), raw.tobytes(), filter_mask=1)     # gzip skipped
        u = f.create_dataset("u", shape=(4, 4), dtype="<u2", chunks=(2, 2))
        u.id.write_direct_chunk((2, 2), raw[:2, :2].copy().tobytes())
        with pytest.raises(ValueError):
            d.id.write_direct_chunk((3, 0), b"")
    with h5py.File(p) as h:
        np.testing.assert_array_equal(h["z"][4:, :4], raw)
        np.testing.assert_array_equal(h["z"][:4, 4:], raw)
        assert h["z"][0, 0] == 0 and h["z"].id.get_num_chunks() == 2
        assert h["z"].id.read_direct_chunk((0, 4))[0] == 1
        np.testing.assert_array_equal(h["u"][2:, 2:], raw[:2, :2])
    with purehep.File(p, "r+") as f:                     # modify mode replaces a chunk
        f["z"].id.write_direct_chunk((4, 0), zlib.compress((raw * 2).tobytes()))
    with h5py.File(p) as h:
        np.testing.assert_array_equal(h["z"][4:, :4], raw * 2)


def test_not_chunked(tmp_path):
    p = tmp_path / "c.h5"
    with h5py.File(p, "w") as f:
        f["c"] = np.arange(5)
    with purehep.File(p) as f:
        with pytest.raises(TypeError):
            f["c"].id.get_num_chunks()
        with pytest.raises(TypeError):
            list(f["c"].iter_chunks())
        assert f["c"].id.get_storage_size() == 40


def _out_errors(lib, path):
    out = []
    with lib.File(path, "w") as f:
        d = f.create_dataset("x", data=np.arange(16).reshape(4, 4), chunks=(4, 4))
        for buf in (bytes(128), np.empty((4, 4, 2), "i8")[:, :, ::2], bytearray(64),
                    np.empty((4, 4), "i8"), np.empty(16, "i8"), np.empty(128, "i1"),
                    np.empty(16, "f8"), np.empty(16, "c")):
            with pytest.raises(Exception) as info:
                d.id.read_direct_chunk((0, 0), out=buf)
            out.append((info.type, str(info.value)))
        for buf in (np.empty(256, "u1"), bytearray(128), np.empty(128, "?")):
            mask, got = d.id.read_direct_chunk((0, 0), out=buf)
            out.append((mask, type(got), bytes(got), got.format, len(got)))
    return out


def test_read_direct_chunk_out_buffers_as_h5py(tmp_path):
    """``out`` buffers: h5py's errors for those its unsigned char buffer refuses, and the
    chunk's bytes as a memoryview of the buffer."""
    assert _out_errors(purehep, tmp_path / "p.h5") == _out_errors(h5py, tmp_path / "h.h5")
