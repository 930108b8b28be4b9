"""The raw data of a dataset created and unlinked in one session, before anything was flushed,
is free again at once (libhdf5 frees an object when its last link and last open handle go):
a dataset replaced in a loop takes its predecessor's place, so the file stays as small as
h5py's. An open handle keeps the unlinked dataset's data, for linking it again as h5py
allows; hard links elsewhere keep it too. Files are read back by h5py."""
import os

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402

N = 50_000                   # float64: 400 kB a dataset


def _replace_in_loop(lib, path, times, **kw):
    with lib.File(path, "w") as f:
        for i in range(times):
            if "x" in f:
                del f["x"]
            f.create_dataset("x", data=np.arange(N, dtype="f8") + i, **kw)
    return os.path.getsize(path)


@pytest.mark.parametrize("kw", [{}, {"chunks": (5000,)}, {"chunks": (5000,), "compression": "gzip"},
                                {"chunks": (5000,), "maxshape": (None,)}])
def test_dataset_replaced_in_a_loop_reuses_its_space(tmp_path, kw):
    ours = _replace_in_loop(purehep, tmp_path / "p.h5", 20, **kw)
    theirs = _replace_in_loop(h5py, tmp_path / "h.h5", 20, **kw)
    once = _replace_in_loop(purehep, tmp_path / "once.h5", 1, **kw)
    assert ours <= max(1.25 * theirs, once + 64 * 1024), (ours, theirs, once)
    with h5py.File(tmp_path / "p.h5") as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(N, dtype="f8") + 19)


def test_sparse_dataset_replaced_in_a_loop_reuses_its_space(tmp_path):
    def run(times):
        path = tmp_path / f"s{times}.h5"
        with purehep.File(path, "w") as f:
            for i in range(times):
                if "s" in f:
                    del f["s"]
                ds = f.create_dataset("s", (2000, 2000), "f8", chunks=(500, 500), sparse=True)
                ds[::7, ::3] = i + 1.0
        return os.path.getsize(path)
    assert run(10) < run(1) + 256 * 1024


def test_an_open_handle_keeps_an_unlinked_dataset(tmp_path):
    """h5py: an unlinked dataset stays while open, and can be linked again."""
    for lib in (purehep, h5py):
        path = tmp_path / f"{lib.__name__}.h5"
        with lib.File(path, "w") as f:
            d = f.create_dataset("x", data=np.arange(N, dtype="f8"))
            del f["x"]
            for i in range(3):                # space that would be reused if it were free
                f[f"y{i}"] = np.full(N, -1.0 - i)
            f["again"] = d
            f.flush()
            f["z"] = np.full(N, 5.0)
        with h5py.File(path) as f:
            np.testing.assert_array_equal(f["again"][...], np.arange(N, dtype="f8"))
            for i in range(3):
                np.testing.assert_array_equal(f[f"y{i}"][...], np.full(N, -1.0 - i))
            np.testing.assert_array_equal(f["z"][...], np.full(N, 5.0))


def test_a_closed_handle_lets_the_space_go(tmp_path):
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        for i in range(10):
            d = f.create_dataset(f"x{i}", data=np.arange(N, dtype="f8"))
            del f[f"x{i}"]
            del d
        f["last"] = np.arange(N, dtype="f8")
    assert os.path.getsize(path) < 2.5 * N * 8
    with h5py.File(path) as f:
        assert list(f) == ["last"]
        np.testing.assert_array_equal(f["last"][...], np.arange(N, dtype="f8"))


def test_members_of_an_unlinked_group_linked_elsewhere_stay(tmp_path):
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        g = f.create_group("g")
        g["a"] = np.arange(N, dtype="f8")
        g["b"] = np.ones(N)
        f["keep"] = g["a"]
        del g
        del f["g"]
        for i in range(3):
            f[f"y{i}"] = np.full(N, 7.0 + i)
    with h5py.File(path) as f:
        assert sorted(f) == ["keep", "y0", "y1", "y2"]
        np.testing.assert_array_equal(f["keep"][...], np.arange(N, dtype="f8"))
        for i in range(3):
            np.testing.assert_array_equal(f[f"y{i}"][...], np.full(N, 7.0 + i))
    assert os.path.getsize(path) < 5.5 * N * 8


def test_chunks_cut_off_by_a_resize_are_reused(tmp_path):
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        d = f.create_dataset("x", (0,), "f8", chunks=(5000,), maxshape=(None,))
        for i in range(10):
            d.resize((N,))
            d[...] = np.arange(N, dtype="f8") + i
            d.resize((5000,))
    with h5py.File(path) as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(5000, dtype="f8") + 9)
    assert os.path.getsize(path) < 2.5 * N * 8


def _h5py_objects(path):
    with h5py.File(path) as f:
        found = {}
        f.visititems(lambda name, obj: found.setdefault(
            name, obj[...].tolist() if isinstance(obj, h5py.Dataset) else None))
        return found


@pytest.mark.parametrize("flush", [False, True])
def test_an_unlinked_open_dataset_reads_as_in_h5py(tmp_path, flush):
    """The idiom ``old = f[name]; del f[name]; f[name] = f(old[...])``, on a dataset of the
    file and on one made in the session, with the file flushed between or not; the handle
    still reads, and the file ends as h5py's, with nothing of the old dataset left."""
    got = {}
    for lib in (purehep, h5py):
        path = tmp_path / f"{lib.__name__}.h5"
        with lib.File(path, "w") as f:
            f["data"] = np.arange(N, dtype="f8")
            f["data"].attrs["unit"] = "m"
        with lib.File(path, "a") as f:
            f["new"] = np.ones(N)
            for name in ("data", "new"):
                old = f[name]
                del f[name]
                if flush:
                    f.flush()
                f[name] = old[...] * 2
                assert old.attrs.get("unit") == ("m" if name == "data" else None)
                assert old[-1] == (N - 1 if name == "data" else 1.0)
                del old
                f.flush()
        got[lib] = (_h5py_objects(path), os.path.getsize(path))
    assert got[purehep][0] == got[h5py][0]
    # (purehep reuses a committed dataset's space only once the commit that drops it is
    # written: one more dataset's worth here)
    assert got[purehep][1] <= got[h5py][1] + N * 8 + 64 * 1024, (got[purehep][1], got[h5py][1])


def test_an_open_group_unlinked_keeps_its_members_until_closed(tmp_path):
    for lib in (purehep, h5py):
        path = tmp_path / f"{lib.__name__}.h5"
        with lib.File(path, "w") as f:
            g = f.create_group("g")
            g["a"] = np.arange(10)
            f.flush()
            del f["g"]
            f.flush()
            assert g["a"][3] == 3 and list(g) == ["a"]
            f["back"] = g
            del g
        with h5py.File(path) as f:
            assert list(f) == ["back"] and f["back/a"][...].tolist() == list(range(10))


def test_an_unlinked_dataset_goes_when_its_handle_does(tmp_path):
    """Closed (its last handle dropped) while the file is open, the unlinked dataset is
    deleted at the next flush: its space is reused and the file has no trace of it."""
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        f["x"] = np.arange(N, dtype="f8")
        f.flush()
        for i in range(6):
            d = f["x"]
            del f["x"]
            f.flush()
            f["x"] = d[...] + 1
            del d
            f.flush()
    assert _h5py_objects(path) == {"x": (np.arange(N, dtype="f8") + 6).tolist()}
    assert os.path.getsize(path) < 3.5 * N * 8


def test_a_reference_to_a_deleted_object_is_written_null(tmp_path):
    """A reference kept to an object deleted since (no handle open) is written as a null
    reference; the flush succeeds and keeps the rest (h5py writes the freed address, which a
    later object may take)."""
    path = tmp_path / "p.h5"
    with purehep.File(path, "w") as f:
        f["keep"] = np.arange(5)
        x = f.create_dataset("x", data=np.arange(30).reshape(5, 6))
        refs = (x.ref, x.regionref[1:3, 2])
        del x
        del f["x"]
        f.attrs["r"] = refs[0]
        f.create_dataset("rr", (1,), dtype=purehep.regionref_dtype)[0] = refs[1]
        f["other"] = np.ones(3)
    with h5py.File(path) as f:
        assert sorted(f) == ["keep", "other", "rr"]
        assert not f.attrs["r"] and not f["rr"][0]
        assert f["keep"][...].tolist() == list(range(5))


# -- compressed chunks rewritten, across sessions (purehep.write.free_list, size classes) ----
M = 100_000                  # float64 in 10 gzip chunks of about 75 kB (random values)


def _rewrite_sessions(lib, path, sessions, seed=0):
    """A gzip dataset created with zeros, then written whole once per session; the file's
    size after each session."""
    with lib.File(path, "w") as f:
        f.create_dataset("x", data=np.zeros(M), chunks=(M // 10,), compression="gzip")
    sizes = []
    for s in range(sessions):
        with lib.File(path, "a") as f:
            f["x"][...] = np.random.default_rng(seed + s).random(M)
        sizes.append(os.path.getsize(path))
    return sizes


def test_compressed_chunks_written_over_once_take_their_size(tmp_path):
    """A chunk that grew from its zero-filled version to its data is given no room to grow
    (it was replaced, not appended to), and what is left of its slot is freed at close: one
    session that writes the whole dataset leaves a file of h5py's size, not twice it."""
    ours = _rewrite_sessions(purehep, tmp_path / "p.h5", 1)[-1]
    theirs = _rewrite_sessions(h5py, tmp_path / "h.h5", 1)[-1]
    assert ours <= 1.05 * theirs, (ours, theirs)
    with h5py.File(tmp_path / "p.h5") as f:
        np.testing.assert_array_equal(f["x"][...], np.random.default_rng(0).random(M))


@pytest.mark.parametrize("seed", [0, 100])
def test_compressed_chunks_rewritten_every_session_stay_near_two_generations(tmp_path, seed):
    """Each session's chunks cannot go where the last commit's are (the crash-safety rule:
    two generations are the floor, twice the stored data) but go where the generation
    before them was: the slots of chunks whose size changes are of a size class (a few bytes
    more or less fit), their unused ends come back at close, best fit keeps the big holes for
    big chunks. The file grew to 2.35-2.68 MB (3.5 times the data); it stays within 1.25
    times the floor now. h5py's is 0.99 MB after 5 sessions but keeps growing (libhdf5
    forgets free space at close): 1.9 MB after 10."""
    sizes = _rewrite_sessions(purehep, tmp_path / "p.h5", 10, seed)
    theirs = _rewrite_sessions(h5py, tmp_path / "h.h5", 5, seed)[-1]
    with h5py.File(tmp_path / "p.h5") as f:
        x = f["x"]
        stored = sum(x.id.get_chunk_info(i).size for i in range(x.id.get_num_chunks()))
        np.testing.assert_array_equal(x[...], np.random.default_rng(seed + 9).random(M))
    assert max(sizes) <= 1.25 * 2 * stored + 16384, (sizes, stored)
    assert sizes[4] <= 1.8 * theirs, (sizes, theirs)


def test_free_list_best_fit_and_index():
    """The free list's size index matches its blocks after random frees and takes; a
    request gets the smallest block that holds it (the lowest of equal ones)."""
    import random

    from purehep.write.free_list import FreeList
    rng = random.Random(5)
    fl, live, end = FreeList(), [], 0
    for _ in range(2000):
        if live and rng.random() < 0.5:
            a, n = live.pop(rng.randrange(len(live)))
            fl.add(a, n)
        else:
            n = rng.randint(1, 300)
            got = next(fl.fitting(n), None)
            fits = [(s, a) for a, s in fl if s >= n]
            assert got == (min(fits)[1], min(fits)[0]) if fits else got is None
            if got is None:
                live.append((end, n))
                end += n
            else:
                fl.take(got[0], got[0], n)
                live.append((got[0], n))
        blocks = list(fl)
        assert sorted(blocks) == blocks
        assert all(a + s < b for (a, s), (b, _) in zip(blocks, blocks[1:]))   # merged
        assert fl.sizes == sorted((s, a) for a, s in blocks)
        assert not any(fl.overlaps(a, n) for a, n in live)


def _groups_with_flushes(lib, path):
    with lib.File(path, "w") as f:
        for i in range(200):
            name = f"g{i % 7}"
            if name in f:
                del f[name]
            else:
                g = f.create_group(name)
                g["v"] = np.arange(1000) + i
                g.attrs["t"] = i
            if i % 10 == 0:
                f.flush()
    return os.path.getsize(path)


def test_groups_created_and_deleted_between_flushes(tmp_path):
    """Between two flushes, the groups the last one wrote and this interval deletes still
    hold their space (the crash-safety floor: the file reaches 1.5 times h5py's by the
    second flush); it was 1.86 times h5py's with first fit, 1.73 with best fit."""
    ours = _groups_with_flushes(purehep, tmp_path / "p.h5")
    theirs = _groups_with_flushes(h5py, tmp_path / "h.h5")
    assert ours <= 1.8 * theirs, (ours, theirs)
    with h5py.File(tmp_path / "p.h5") as f:
        for name in f:
            t = int(f[name].attrs["t"])
            np.testing.assert_array_equal(f[name]["v"][...], np.arange(1000) + t)


def test_chunk_appended_to_at_every_commit_reuses_its_slots(tmp_path):
    """A compressed chunk a little longer at every flush (rows appended: +1.2 % a flush at
    40 KB, as versioned-hdf5's hash table grows by a few rows a commit) moves at every flush
    (the last commit's version stays until the next is on disk) but is given room to grow:
    the slot freed a flush before holds the version after next, so that few slots serve
    all versions. With growth under a 64th taken for noise, no room was given and every
    version took a new slot, leaving holes its longer versions could not use."""
    rng = np.random.default_rng(1)
    slots = set()
    with purehep.File(tmp_path / "g.h5", "w") as f:
        d = f.create_dataset("h", (4096, 8), "f8", chunks=(4096, 8), compression="gzip")
        d[:600] = rng.random((600, 8))
        for k in range(80):
            d[600 + 8 * k:608 + 8 * k] = rng.random((8, 8))
            f.flush()
            slots.add(d.id.get_chunk_info(0).byte_offset)
        want = d[...]
    with h5py.File(tmp_path / "g.h5") as f:
        np.testing.assert_array_equal(f["h"][...], want)
    assert len(slots) <= 20, len(slots)


def _group_deleted_after_a_stage(lib, path):
    """A group made and staged (a read stages the session), then given new members (one a
    group holding a dataset moved from elsewhere), then deleted with them."""
    with lib.File(path, "w") as f:
        f.create_dataset("a/x", data=np.arange(3))
        f.create_dataset("a/y", data=np.arange(4))
    with lib.File(path, "r+") as f:
        t = f.create_group("t")
        t.create_dataset("n", data=np.arange(5))
        f["t/n"][()]
        t.create_dataset("m", data=np.arange(6))
        t.create_group("g")
        f.move("a/x", "t/g/x")
        del f["t"]
        f.create_dataset("b", data=np.arange(7))


def test_group_deleted_with_members_new_since_the_last_stage(tmp_path):
    """Deleting a staged group with members new since the stage raised AttributeError at the
    next stage (the never-staged members were taken for stored objects to free)."""
    for lib in (purehep, h5py):
        _group_deleted_after_a_stage(lib, tmp_path / f"{lib.__name__}.h5")
    listing = []
    for lib in (purehep, h5py):
        with h5py.File(tmp_path / f"{lib.__name__}.h5", "r") as f:
            found = {}
            f.visititems(lambda name, obj: found.__setitem__(
                name, obj[()].tolist() if isinstance(obj, h5py.Dataset) else None))
            listing.append(found)
    assert listing[0] == listing[1] == {"a": None, "a/y": [0, 1, 2, 3], "b": list(range(7))}
