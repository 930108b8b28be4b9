"""Small reads inside one unfiltered chunk read just the box's bytes when they are one run
of the chunk (chunks/read.py ``box_reader``): every box shape against h5py, with
unallocated chunks, a user block, files read through the map and by pread, and a chunk
address past the end of the file."""
import h5py
import numpy as np
import pytest

import purehep

SHAPES = {   # name: (shape, chunks, maxshape)
    "r1": ((997,), (16,), None),
    "r2": ((61, 37), (8, 5), (None, None)),
    "r2_col": ((200, 1), (16, 1), (None, None)),
    "r3": ((13, 11, 9), (4, 3, 9), None),
}


def _write(path, libver, userblock):
    rng = np.random.default_rng(3)
    out = {}
    kw = dict(userblock_size=512) if userblock else {}
    with h5py.File(path, "w", libver=libver, **kw) as f:
        for name, (shape, chunks, maxshape) in SHAPES.items():
            data = rng.integers(-10**6, 10**6, shape).astype("<i4")
            ds = f.create_dataset(name, shape=shape, chunks=chunks, dtype="<i4", fillvalue=-9,
                                  maxshape=maxshape)
            cut = shape[0] // 3
            ds[:cut] = data[:cut]            # a band of chunks left unallocated
            ds[2 * cut:] = data[2 * cut:]
            out[name] = data
    return out


def _boxes(shape, chunks, rng, n=150):
    """Boxes inside one chunk (slices, ints mixed) in every placement."""
    for _ in range(n):
        key = []
        for dim, c in zip(shape, chunks):
            p = int(rng.integers(0, -(-dim // c)))
            lo = p * c + int(rng.integers(0, c))
            hi = min(dim, p * c + c)
            if lo >= hi:
                lo = hi - 1
            kind = rng.integers(0, 3)
            key.append(lo if kind == 0 else slice(lo, int(rng.integers(lo + 1, hi + 1)))
                       if kind == 1 else slice(p * c, hi))
        yield tuple(key)


@pytest.mark.parametrize("libver", ["earliest", "latest"])
@pytest.mark.parametrize("userblock", [False, True])
@pytest.mark.parametrize("driver", [None, "core"])      # read by pread, or in memory
def test_boxes_in_one_chunk_match_h5py(tmp_path, libver, userblock, driver):
    p = tmp_path / "f.h5"
    _write(p, libver, userblock)
    rng = np.random.default_rng(5)
    with h5py.File(p, "r") as ref, purehep.File(p, "r", driver=driver) as f:
        for name, (shape, chunks, _) in SHAPES.items():
            ds, want = f[name], ref[name]
            for key in _boxes(shape, chunks, rng):
                got = ds[key]
                exp = want[key]
                assert isinstance(got, np.ndarray) == isinstance(exp, np.ndarray), key
                np.testing.assert_array_equal(got, exp, err_msg=f"{name}{key}")
                if isinstance(got, np.ndarray):
                    assert got.shape == exp.shape and got.dtype == exp.dtype
                    assert got.flags.writeable


def test_chunk_address_past_the_end(tmp_path):
    p = tmp_path / "f.h5"
    with h5py.File(p, "w", libver="earliest") as f:
        f.create_dataset("x", data=np.arange(64, dtype="<i4"), chunks=(16,))
        off = f["x"].id.get_chunk_info(1).byte_offset
    size = p.stat().st_size
    raw = bytearray(p.read_bytes())
    # the B-tree leaf's child address of chunk 1 made to point past the end of the file
    at = raw.find(off.to_bytes(8, "little"))
    assert at > 0
    raw[at:at + 8] = (size + 4096).to_bytes(8, "little")
    p.write_bytes(bytes(raw))
    with purehep.File(p, "r") as f:
        np.testing.assert_array_equal(f["x"][0:4], np.arange(4))
        with pytest.raises(purehep.errors.PurehepError) as err:
            f["x"][17:20]
        assert isinstance(err.value, OSError)
