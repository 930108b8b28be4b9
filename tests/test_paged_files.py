"""Changing a file that uses paged aggregation (libhdf5's fs_strategy="page"): purehep keeps
its metadata and raw data in pages of their own kind, as libhdf5 does. libhdf5's page buffer
caches a page as metadata or as raw data; a page holding both (where purehep's allocations
used to land) made h5py read damaged object headers in a session with page buffering."""
import h5py
import numpy as np
import pytest

import purehep
from purehep.format.free_space import paged_aggregation

PAGE = 4096


def _paged_file(path, persist):
    with h5py.File(path, "w", fs_strategy="page", fs_persist=persist, fs_page_size=PAGE,
                   libver="latest") as f:
        f["a"] = np.arange(1000)
        f.create_group("g").attrs["x"] = 1
        del f["a"]
        f["b"] = np.arange(10)


def _change(path):
    with purehep.File(path, "a") as f:
        f["c"] = np.arange(3000.0)                                  # contiguous, > a page
        f.create_dataset("k", data=np.arange(500, dtype="i4"), chunks=(100,),
                         compression="gzip")
        f["s"] = np.array(["abc", "de" * 50], dtype=object)          # a global heap
        f["g"].attrs["y"] = "s"
        f.create_group("h").create_group("i").attrs["z"] = np.arange(40)
        del f["b"]


@pytest.mark.parametrize("persist", [False, True])
def test_changes_keep_pages_of_one_kind(tmp_path, persist):
    path = tmp_path / "p.h5"
    _paged_file(path, persist)
    _change(path)
    with purehep.File(path) as f:
        assert paged_aggregation(f._ctx, f._superblock.extension_address) == PAGE
        raw = [f["c"].id.get_offset()] + \
            [f["k"].id.get_chunk_info(i).byte_offset for i in range(5)]
    # libhdf5 with its page buffer, in one session: write, then read everything back
    with h5py.File(path, "a", page_buf_size=4 * PAGE) as f:
        f["d"] = np.arange(5)
        f["g"].attrs["w"] = 2.5
        got = (sorted(f), dict(f["g"].attrs), f["c"][-1], f["k"][()].sum(),
               list(f["s"].asstr()[()]), f["h/i"].attrs["z"].sum())
    want = (["c", "d", "g", "h", "k", "s"], {"x": 1, "y": "s", "w": 2.5}, 2999.0,
            np.arange(500).sum(), ["abc", "de" * 50], np.arange(40).sum())
    assert got == want
    with h5py.File(path, "r") as f:
        assert f["c"][()].tolist() == np.arange(3000.0).tolist()
        assert f["k"][()].tolist() == list(range(500))
    pages = {a // PAGE for a in raw}
    with open(path, "rb") as fh:
        data = fh.read()
    for p in pages:       # raw data pages hold no metadata signature purehep writes
        block = data[p * PAGE:(p + 1) * PAGE]
        assert not any(sig in block for sig in (b"OHDR", b"OCHK", b"TREE", b"BTHD", b"BTLF",
                                                b"FRHP", b"FHDB", b"HEAP", b"SNOD"))


def test_new_pages_at_page_boundaries(tmp_path):
    """purehep's new blocks of one kind share pages only with their kind; the file ends with
    whole pages."""
    from purehep.write.allocator import Allocator
    a = Allocator(10_000, page=PAGE)
    m1, r1, m2 = a.alloc(100), a.alloc_slot(50)[0], a.alloc(200)
    assert m1 == 3 * PAGE and r1 == 4 * PAGE and m2 == m1 + 100
    big = a.alloc_slot(PAGE + 1)[0]
    assert big % PAGE == 0 and a.eoa == big + 2 * PAGE
    assert a.alloc_slot(60)[0] == r1 + 50          # back in the raw page
    assert a.kinds == {3: "meta", 4: "raw", 5: "raw", 6: "raw"}

