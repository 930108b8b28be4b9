"""Compounds whose members take another size in the file than in numpy (variable-length
strings and sequences, region references; nested and in arrays), laid out as h5py and
libhdf5 lay them out (format/messages/compound_layout.py): random compounds with member
offsets out of order, gaps and larger itemsizes, aligned structs, written by purehep and by
h5py; the datatype messages agree member by member (order, offset, size) and h5py reads the
same values from both files."""
import h5py
import numpy as np
import pytest

import purehep


def _member(rng, lib, depth):
    kind = rng.integers(0, 7 if depth < 2 else 5)
    if kind == 0:
        return lib.string_dtype()
    if kind == 1:
        return lib.vlen_dtype(np.dtype(["u1", "<i4", "<f8"][rng.integers(0, 3)]))
    if kind == 2:
        return np.dtype(["u1", "<i2", "<i4", "<f8", "S3"][rng.integers(0, 5)])
    if kind == 3:
        return lib.regionref_dtype
    if kind == 4:
        return lib.ref_dtype
    if kind == 5:
        return np.dtype((lib.string_dtype(), (2,)))
    return _compound(rng, lib, depth + 1)


def _compound(rng, lib, depth=0):
    n = int(rng.integers(1, 5))
    names = [f"m{i}" for i in range(n)]
    formats = [_member(rng, lib, depth) for _ in range(n)]
    if rng.random() < 0.3:
        return np.dtype(list(zip(names, formats)), align=bool(rng.random() < 0.5))
    offsets, at = [], 0
    for f in formats:
        at += int(rng.integers(0, 9))
        offsets.append(at)
        at += np.dtype(f).itemsize
    order = rng.permutation(n)        # names not in offset order
    return np.dtype({"names": [names[i] for i in order], "formats": [formats[i] for i in order],
                     "offsets": [offsets[i] for i in order],
                     "itemsize": at + int(rng.integers(0, 9))})


def _layout(t):
    return (t.size, [(m.name, m.offset, m.type.size, _layout(m.type) if m.type.members else None)
                     for m in t.members])


def _values(rng, dt, f):
    """Values of ``dt`` (references to ``f``'s group "g")."""
    out = np.zeros(2, dt)
    for name in dt.names:
        sub = dt.fields[name][0]
        meta = sub.metadata or {}
        if sub.names is not None:
            out[name] = _values(rng, sub, f)
        elif "vlen" in meta and meta["vlen"] is str:
            out[name] = ["é" * int(rng.integers(0, 4)), "x"]
        elif "vlen" in meta:
            out[name] = [np.arange(int(rng.integers(0, 4)), dtype=meta["vlen"]),
                         np.arange(2, dtype=meta["vlen"])]
        elif "ref" in meta:
            ref = f["g"].regionref[1:3] if meta["ref"] is not h5py.Reference and \
                "Region" in str(meta["ref"]) else f["g"].ref
            out[name] = [ref, ref]
        elif sub.subdtype is not None:
            for i in range(2):
                out[name][i] = ["a", "bc"]
        else:
            out[name] = [1, 2] if sub.kind != "S" else [b"ab", b"c"]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_compounds_as_h5py(tmp_path, seed):
    layouts, outcomes = [], []
    for lib in (h5py, purehep):
        rng = np.random.default_rng(seed)
        dt = _compound(rng, lib)
        p = tmp_path / f"{lib.__name__}.h5"
        try:
            with lib.File(p, "w") as f:
                f.create_dataset("g", data=np.arange(5))
                f.create_dataset("x", data=_values(rng, dt, f))
            outcomes.append("written")
        except TypeError:
            outcomes.append("TypeError")
            continue
        with purehep.File(p) as f:
            layouts.append(_layout(f["x"]._type))
    assert outcomes[0] == outcomes[1]
    if outcomes[0] == "TypeError":
        return
    assert layouts[0] == layouts[1]
    with h5py.File(tmp_path / "h5py.h5") as a, h5py.File(tmp_path / "purehep.h5") as b:
        assert repr(a["x"][()]) == repr(b["x"][()])
