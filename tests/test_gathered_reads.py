"""Unfiltered chunked reads of files on disk (chunks/read.py ``_copy_gathered``): chunks
read straight into the output where runs of them lie side by side in the file and in the
output, the rest gathered by coalesced reads (``ByteSource.gather``) into a scratch buffer
batch by batch; compared with h5py for chunks stored in order and shuffled, whole and
partial chunks, one and two threads, and with a file in memory (the buffer itself)."""
import h5py
import numpy as np
import pytest

import purehep
from purehep.chunks import read as chunk_read
from purehep.io.source import BytesSource, FileSource

SHAPES = {  # name: shape, chunks
    "line": ((10_000,), (64,)),
    "rows": ((300, 40), (16, 40)),          # chunks span whole rows: whole runs of the output
    "tiles": ((300, 40), (16, 16)),         # partial rows: gathered
    "cube": ((20, 17, 13), (4, 17, 13)),
}
KEYS = [(), (slice(5, 250),), (slice(None, None, 3),), (slice(17, 18),), ([1, 2, 9, 19],),
        (slice(0, 160), slice(None)), (slice(3, 200), slice(2, 30)), (Ellipsis, 5)]


def _write(path, shuffled):
    rng = np.random.default_rng(7)
    with h5py.File(path, "w") as f:
        for name, (shape, chunks) in SHAPES.items():
            data = rng.integers(0, 1 << 30, shape).astype("i4")
            ds = f.create_dataset(name, shape, "i4", chunks=chunks)
            grid = [range(0, n, c) for n, c in zip(shape, chunks)]
            boxes = [tuple(slice(o, o + c) for o, c in zip(origin, chunks))
                     for origin in np.stack(np.meshgrid(*grid, indexing="ij"), -1)
                     .reshape(-1, len(shape))]
            if shuffled:       # chunks stored out of order: short runs in the file
                boxes = [boxes[i] for i in rng.permutation(len(boxes))]
            for box in boxes:
                ds[box] = data[box]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("driver", [None, "core"])
@pytest.mark.parametrize("shuffled", [False, True])
def test_unfiltered_reads_match_h5py(tmp_path, monkeypatch, shuffled, driver, threads):
    monkeypatch.setattr(chunk_read, "GATHER_BATCH", 5 * 256)     # batches of a few chunks
    monkeypatch.setattr(chunk_read, "IN_PLACE_BYTES", 2 * 256)   # runs of two chunks on
    p = tmp_path / "f.h5"
    _write(p, shuffled)
    with h5py.File(p, "r") as ref, purehep.File(p, "r", driver=driver, threads=threads) as f:
        for name, (shape, _) in SHAPES.items():
            for key in KEYS:
                if len([k for k in key if k is not Ellipsis]) > len(shape):
                    continue
                exp = ref[name][key]
                got = f[name][key]
                np.testing.assert_array_equal(got, exp, err_msg=f"{name}{key}")
                assert got.dtype == exp.dtype


def test_gather_coalesces_and_matches_the_buffer(tmp_path):
    """Ranges in any order, overlapping, adjacent, within GATHER_GAP of each other and far
    apart: the gathered bytes at each position are the file's."""
    raw = np.random.default_rng(3).integers(0, 256, 1 << 20).astype(np.uint8).tobytes()
    p = tmp_path / "b.bin"
    p.write_bytes(raw)
    offsets = np.array([500_000, 10, 12, 100, 100, 4200, 9000, 1_000_000, 0, 700_000])
    sizes = np.array([4096, 50, 50, 0, 300, 100, 48_000, 48_576, 1, 1])
    src = FileSource(p)
    try:
        for scratch in (None, np.empty(1 << 20, np.uint8), np.empty(10, np.uint8)):
            buf, pos = src.gather(offsets, sizes, "ranges", scratch)
            assert not buf.flags.writeable
            assert buf.nbytes < 120_000          # near ranges shared one read, far ones not
            for o, n, q in zip(offsets, sizes, pos):
                assert buf[q:q + n].tobytes() == raw[o:o + n]
        mem, at = BytesSource(raw).gather(offsets, sizes)
        assert (at == offsets).all() and mem.nbytes == len(raw) and not mem.flags.writeable
        with pytest.raises(purehep.TruncatedError, match="ranges"):
            src.gather([len(raw) - 10], [11], "ranges")
    finally:
        src.close()


def test_gathered_lends_one_spare_at_a_time(tmp_path, monkeypatch):
    """FileSource.gathered reads into the process's spare buffer, lent to one caller at a
    time (a caller meanwhile gets another), kept up to SPARE_BYTES, and lent again to the
    next file (as libhdf5's free lists keep freed blocks)."""
    from purehep.io import source
    monkeypatch.setattr(source, "_spare", [])
    raw = bytes(range(256)) * 64
    p = tmp_path / "b.bin"
    p.write_bytes(raw)
    src = FileSource(p)
    try:
        with src.gathered([100, 5000], [10, 20]) as (a, pos_a):
            with src.gathered([7], [3]) as (b, pos_b):     # while the spare is lent
                assert not np.shares_memory(a, b)
                assert b[pos_b[0]:pos_b[0] + 3].tobytes() == raw[7:10]
            assert a[pos_a[1]:pos_a[1] + 20].tobytes() == raw[5000:5020]
        kept, = source._spare
        assert len(kept) >= a.nbytes
        with src.gathered([0], [8]) as (c, _):
            assert np.shares_memory(c, kept)                # lent again
        monkeypatch.setattr(source, "SPARE_BYTES", 100)
        with src.gathered([0], [1000]):
            pass
        assert source._spare == [kept]                      # a bigger one is not kept
    finally:
        src.close()
    other = FileSource(p)
    try:
        with other.gathered([0], [8]) as (d, _):
            assert np.shares_memory(d, kept)                # another file borrows it
            assert d[:8].tobytes() == raw[:8]
    finally:
        other.close()


def test_file_source_without_pread(tmp_path):
    """Where the platform has no preadv (Windows), FileSource seeks and reads under a lock
    (and says threads cannot read at once): the same bytes, and a short read is a
    TruncatedError."""
    import threading
    raw = np.random.default_rng(4).integers(0, 256, 300_000).astype(np.uint8).tobytes()
    p = tmp_path / "b.bin"
    p.write_bytes(raw)
    src = FileSource(p)
    assert src.parallel_reads is True
    src._seek_lock = threading.Lock()
    try:
        assert src.parallel_reads is False
        assert bytes(src.read(1000, 5000)) == raw[1000:6000]
        out = np.empty(70_000, np.uint8)
        src.readinto(200_000, out)
        assert out.tobytes() == raw[200_000:270_000]
        buf, pos = src.gather([10, 250_000], [5, 100])
        assert buf[pos[1]:pos[1] + 100].tobytes() == raw[250_000:250_100]
        with open(p, "r+b") as fh:      # shortened by another writer
            fh.truncate(100_000)
        with pytest.raises(purehep.TruncatedError, match="ended"):
            src.read(90_000, 20_000)
    finally:
        src.close()
