"""A table of writes ``ds[selection] = values`` run on h5py and on purehep: for each dataset
(rank, layout, dtype), selection (simple: integers, slices, MultiBlockSlices; fancy: an index
list or a boolean array on one axis; points: a boolean mask of the dataset's shape; compound
fields) and shape of the values, both must raise the same exception type with the same
message, or write the same values (h5py checks the shape as h5py._hl.selections says: simple
selections broadcast from the last dimension, extra leading dimensions of length 1 are
dropped; fancy selections take exactly their shape; points as many values in any shape).

Left out, where h5py misbehaves: values with no elements into a selection with some (h5py's
write reads past the values: garbage, or a crash for object types; purehep raises its
TypeError), values broadcast along a MultiBlockSlice of blocks longer than one (h5py's
broadcast tiles it with blocks of one at the stride: other elements written, or OSError), and
a scalar into a fancy selection of several dimensions, which h5py refuses unless the
dataset's chunks hold the selection (an artefact of the size of h5py's buffer): purehep
fills it, as numpy does.
"""
import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402

SHAPES = {0: (), 1: (10,), 2: (4, 5), 3: (2, 3, 4)}
VALUE_SHAPES = [(), (0,), (1,), (2,), (3,), (4,), (5,), (10,), (1, 1), (2, 1), (1, 2), (2, 2),
                (4, 5), (1, 5), (4, 1), (5, 4), (1, 4, 5), (1, 2, 2), (2, 3, 4), (1, 10), (7,),
                (1, 3, 4), (2, 1, 4)]
DTYPES = {
    "i4": lambda lib: np.dtype("i4"),
    "vstr": lambda lib: lib.string_dtype(),
    "compound": lambda lib: np.dtype([("a", "i4"), ("b", "f8")]),
    "compound_vstr": lambda lib: np.dtype([("a", "i4"), ("s", lib.string_dtype())]),
    "array": lambda lib: np.dtype(("i4", (2,))),
    "fixed_str": lambda lib: np.dtype("S3"),
    "sequence": lambda lib: lib.vlen_dtype(np.dtype("i4")),
    "field": lambda lib: np.dtype([("a", "i4"), ("b", "f8")]),
}


def selections(lib, rank):
    mbs = lib.MultiBlockSlice
    if rank == 0:
        return {"()": (), "...": (Ellipsis,)}
    if rank == 1:
        return {"()": (), "...": (Ellipsis,), "0": (0,), "1:4": np.s_[1:4,], "::2": np.s_[::2,],
                "0:0": np.s_[0:0,], "8:12": np.s_[8:12,], "list": ([0, 2, 5],),
                "list1": ([3],), "mask": (np.arange(10) > 5,),
                "no_points": (np.zeros(10, bool),),
                "mbs_blocks": (mbs(start=1, count=2, stride=4, block=2),),
                "mbs": (mbs(start=0, count=3, stride=3, block=1),)}
    if rank == 2:
        return {"...": (Ellipsis,), "0": (0,), "0,:": np.s_[0, :], ":,1": np.s_[:, 1],
                "1:3,2:4": np.s_[1:3, 2:4], "...,0": np.s_[..., 0],
                "list,2:4": np.s_[[1, 3], 2:4], "list,2": np.s_[[1, 3], 2],
                "1,list": np.s_[1, [0, 2]], ":,list": np.s_[:, [0, 1, 4]], "list": ([0, 2],),
                "bool_axis": (np.array([True, False, True, True]),),
                "mask": (np.arange(20).reshape(4, 5) % 3 == 0,),
                "no_points": (np.zeros((4, 5), bool),),
                "mbs,:": np.s_[mbs(start=0, count=2, stride=2, block=1), :],
                "mbs_blocks,1": np.s_[mbs(start=0, count=2, stride=2, block=2), 1],
                "1:3,list": np.s_[1:3, [1, 2]], "list1,:": np.s_[[2], :]}
    return {"...": (Ellipsis,), "0": (0,), "0,1": np.s_[0, 1], ":,1,:": np.s_[:, 1, :],
            "list,:,1": np.s_[[0, 1], :, 1], ":,list,0:2": np.s_[:, [0, 2], 0:2],
            "1,::2,list": np.s_[1, ::2, [0, 3]],
            "1,::2,bool_axis": np.s_[1, ::2, np.array([True, False, False, True])],
            "mask": (np.arange(24).reshape(2, 3, 4) % 5 == 0,)}


def values(kind, dtype, shape):
    n = int(np.prod(shape))
    counting = np.arange(n).reshape(shape) + 1
    if kind in ("i4", "field"):
        return counting.astype("i4")
    if kind == "array":
        return np.arange(2 * n, dtype="i4").reshape(shape + (2,)) + 1
    if kind == "sequence":       # sequences of two along the last axis
        return np.arange(2 * n, dtype="i4").reshape(shape + (2,)) + 1
    if kind == "fixed_str":
        return np.array([b"x%d" % (i % 10) for i in range(n)], "S3").reshape(shape)
    if kind == "vstr":
        out = np.empty(shape, object)
        out.reshape(-1)[:] = [f"s{i}" for i in range(n)]
        return out
    out = np.zeros(shape, dtype)
    out["a"] = counting
    out[dtype.names[1]] = 0.5 if kind == "compound" else "q"
    return out


def _plain(arr):
    arr = np.asarray(arr)           # (a scalar dataset's value: bytes, a record)
    return [repr(x) for x in np.ravel(arr)] if arr.dtype.hasobject else arr.tolist()


def write(lib, fh, kind, rank, chunked, sel_name, shape, spread=None):
    """Write the values of ``shape`` (broadcast to ``spread``, if given) into a new
    dataset: ("ok", its values after) or ("raise", type name, message)."""
    dtype = DTYPES[kind](lib)        # (a new name: libhdf5 reuses a deleted one's space,
    ds = fh.create_dataset(str(len(fh)), SHAPES[rank], dtype,      # unfilled, for contiguous
                           chunks=True if chunked else None)       # data written in part)
    sel = selections(lib, rank)[sel_name]
    val = values(kind, dtype, shape)
    if spread is not None:
        val = np.broadcast_to(val, spread)
    try:
        ds[sel + (("a",) if kind == "field" else ())] = val
    except Exception as e:          # noqa: BLE001 - the exception is the outcome compared
        return "raise", type(e).__name__, str(e)
    return "ok", _plain(ds[()])


def _h5py_misbehaves(kind, sel_name, shape, selected):
    """Values of no elements into a selection of some, or broadcast along blocks: cases
    left out (see the module's docstring); one sequence is of shape (1,) to h5py."""
    whole = ((4,), (1, 4)) if kind == "sequence" else ((), (4,), (1, 4))
    return (0 in shape and selected) or ("mbs_blocks" in sel_name and shape not in whole)


CASES = [(kind, rank, chunked) for kind in DTYPES for rank in SHAPES for chunked in (0, 1)
         if rank or not chunked]
REFUSED_SCALAR = ("raise", "TypeError", "Broadcasting is not supported for complex selections")


@pytest.mark.parametrize("kind,rank,chunked", CASES)
def test_write_shapes_as_h5py(tmp_path, kind, rank, chunked):
    wrong = []
    with h5py.File(tmp_path / "h.h5", "w") as fh, purehep.File(tmp_path / "p.h5", "w") as fp:
        for sel_name in selections(h5py, rank):
            target = np.zeros(SHAPES[rank])[selections(h5py, rank)[sel_name]].shape \
                if "mbs" not in sel_name else (1,)
            for shape in VALUE_SHAPES:
                got = write(purehep, fp, kind, rank, chunked, sel_name, shape)
                if _h5py_misbehaves(kind, sel_name, shape, np.prod(target)):
                    if 0 in shape:
                        assert got[:2] == ("raise", "TypeError"), (sel_name, shape, got)
                    continue
                expected = write(h5py, fh, kind, rank, chunked, sel_name, shape)
                if expected == REFUSED_SCALAR and shape == () and kind != "sequence":
                    expected = write(h5py, fh, kind, rank, chunked, sel_name, shape,
                                     spread=target)      # h5py writes the scalar spread out
                if got != expected:
                    wrong.append((sel_name, shape, expected, got))
    assert not wrong, "\n".join(map(str, wrong[:10])) + f"\n({len(wrong)} cases)"
