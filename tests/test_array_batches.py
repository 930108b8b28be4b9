"""Batched checksum verification of array chunk indexes (format.checksum.Batches): while
lookup3 runs as plain Python, the pages of a fixed array, the data blocks of an extensible
array's super block and the pages of its data blocks are verified together with the one
asked for. A batch fails only for the structure asked for, as libhdf5 fails only when it
loads a damaged page: a damaged structure read along in a batch is left out, and fails (with
its structure and offset) when a chunk it indexes is read. Here the cost model is patched so
that every miss loads its whole group."""
import h5py
import numpy as np
import pytest

import purehep
from purehep.format import checksum, extensible_array, fixed_array
from purehep.write import policy

from test_chunked import open_storage


@pytest.fixture
def batching(monkeypatch):
    """lookup3 as if plain Python, and a batch always cheaper than one more structure."""
    monkeypatch.setattr(checksum, "lookup3_is_compiled", lambda: False)
    monkeypatch.setattr(checksum, "batch_seconds", lambda m, n: 1.0 if m == 1 else 0.5)


def _damaged(p, offsets):
    """The file's bytes with one byte flipped at each absolute offset."""
    data = bytearray(p.read_bytes())
    for off in offsets:
        data[off] ^= 0xFF
    return bytes(data)


def test_fixed_array_batch_fails_only_for_the_damaged_page(tmp_path, batching):
    p = tmp_path / "f.h5"
    values = np.arange(9000, dtype="<i4") * 7
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=values, chunks=(1,))
    st = open_storage(p, "x")
    arr = fixed_array.Elements(st.ctx, st.layout.address)
    assert (arr.npages, arr.full) == (9, 8)
    page3 = st.ctx.absolute(arr._page_address(3))
    with purehep.File(_damaged(p, [page3 + 40])) as f:
        st = f["x"]._storage.chunked
        arr = fixed_array.Elements(st.ctx, st.layout.address)
        arr.block(5)                       # a batch of the 8 full pages: page 3 left out
        assert sorted(arr._pages) == [0, 1, 2, 4, 5, 6, 7]
        pn = arr.page_n
        assert f["x"][5:9].tolist() == values[5:9].tolist()
        assert f["x"][7 * pn + 3] == values[7 * pn + 3]
        assert f["x"][8 * pn + 3] == values[8 * pn + 3]        # the last, partial page
        with pytest.raises(purehep.ChecksumError) as e:
            f["x"][3 * pn + 10]
        assert (e.value.structure, e.value.offset) == ("fixed array data block page", page3)
        assert f["x"][2 * pn:2 * pn + 3].tolist() == values[2 * pn:2 * pn + 3].tolist()


def test_fixed_array_damaged_page_asked_for_fails(tmp_path, batching):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=np.arange(9000, dtype="<i4"), chunks=(1,))
    st = open_storage(p, "x")
    arr = fixed_array.Elements(st.ctx, st.layout.address)
    page3 = st.ctx.absolute(arr._page_address(3))
    with purehep.File(_damaged(p, [page3 + arr.page_bytes - 2])) as f:     # its checksum
        with pytest.raises(purehep.ChecksumError) as e:
            f["x"][3 * arr.page_n + 10]
        assert (e.value.structure, e.value.offset) == ("fixed array data block page", page3)


def test_extensible_array_data_block_batch(tmp_path, batching):
    """Unpaged data blocks of one super block: one damaged in its elements, one in its
    signature; the others read along with the first one asked for."""
    p = tmp_path / "e.h5"
    values = np.arange(40000, dtype="<i4") * 3
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=values, chunks=(1,), maxshape=(None,))
    st = open_storage(p, "x")
    arr = extensible_array.Elements(st.ctx, st.layout.address)
    s = 10
    nd, ne, start = arr.sblocks[s]
    assert arr.header.data_block_layout(st.ctx, ne)[1] == 0          # not paged
    addrs = arr._secondary_block(s, nd, ne)[1]
    first = arr.header.index_elements + start
    bad_sum, bad_sig = st.ctx.absolute(addrs[5]), st.ctx.absolute(addrs[7])
    with purehep.File(_damaged(p, [bad_sum + 100, bad_sig])) as f:
        st = f["x"]._storage.chunked
        arr = extensible_array.Elements(st.ctx, st.layout.address)
        arr.block(first + 2 * ne)
        got = sorted((k - first) // ne for k in arr._blocks)
        assert got == [k for k in range(nd) if first + k * ne < 40000 and k not in (5, 7)]
        for k in (0, 2, 4, 6, 8):
            i = first + k * ne + 17
            assert f["x"][i] == values[i]
        with pytest.raises(purehep.ChecksumError) as e:
            f["x"][first + 5 * ne + 1]
        assert (e.value.structure, e.value.offset) == ("extensible array data block", bad_sum)
        with pytest.raises(purehep.FormatError, match="extensible array data block"):
            f["x"][first + 7 * ne + 1]


def test_extensible_array_page_batch(tmp_path, batching, monkeypatch):
    """Paged data blocks (pages of 64 elements, written by purehep): a super block's pages
    read together; a damaged page, and the pages of a data block whose own prefix is
    damaged, fail when asked for only. h5py reads the undamaged file alike."""
    monkeypatch.setitem(policy.EA_PARAMS, "page_bits", 6)
    p = tmp_path / "e.h5"
    values = np.arange(3000, dtype="<i4") * 5 + 1
    with purehep.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=values, chunks=(1,), maxshape=(None,))
    with h5py.File(p, "r") as f:
        assert f["x"][()].tolist() == values.tolist()
    st = open_storage(p, "x")
    arr = extensible_array.Elements(st.ctx, st.layout.address)
    s = 7
    nd, ne, start = arr.sblocks[s]
    prefix, npages = arr.header.data_block_layout(st.ctx, ne)[:2]
    assert npages == 4 and nd == 8
    addrs = arr._secondary_block(s, nd, ne)[1]
    first = arr.header.index_elements + start

    def page(k, q):
        return st.ctx.absolute(addrs[k] + prefix + 4 + q * arr.page_bytes)

    bad_page, bad_block = page(1, 2), st.ctx.absolute(addrs[3])
    with purehep.File(_damaged(p, [bad_page + 8, bad_block + 1])) as f:
        st = f["x"]._storage.chunked
        arr = extensible_array.Elements(st.ctx, st.layout.address)
        arr.block(first + 10)
        pn = arr.page_n
        loaded = {((k - first) // ne, (k - first) % ne // pn) for k in arr._blocks}
        everything = {(k, q) for k in range(nd) for q in range(npages)
                      if first + k * ne + q * pn < 3000}
        assert loaded == everything - {(1, 2)} - {(3, q) for q in range(npages)}
        for k, q in sorted(everything - {(1, 2), (3, 0), (3, 1), (3, 2), (3, 3)}):
            i = first + k * ne + q * pn + 5
            assert f["x"][i] == values[i]
        with pytest.raises(purehep.ChecksumError) as e:
            f["x"][first + ne + 2 * pn + 1]
        assert (e.value.structure, e.value.offset) == ("extensible array data block page",
                                                       bad_page)
        with pytest.raises(purehep.FormatError, match="extensible array data block"):
            f["x"][first + 3 * ne + 1]


@pytest.mark.parametrize("kind", ["fixed", "extensible"])
def test_batched_reads_match_h5py(tmp_path, batching, kind):
    """Random small reads with every miss loading its group, against h5py."""
    p = tmp_path / "r.h5"
    rng = np.random.default_rng(3)
    values = rng.integers(-10**6, 10**6, 50000).astype("<i4")
    with h5py.File(p, "w", libver="latest") as f:
        f.create_dataset("x", data=values, chunks=(2,),
                         maxshape=(None,) if kind == "extensible" else None)
    with purehep.File(p) as f:
        for a in rng.integers(0, 49990, 300).tolist():
            assert f["x"][a:a + 5].tolist() == values[a:a + 5].tolist()
