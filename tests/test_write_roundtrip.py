"""Round-trip property: random trees written by purehep read back equal by h5py and purehep."""
import h5py
import numpy as np
from hypothesis import given, settings, HealthCheck, strategies as st
from hypothesis.extra import numpy as hnp

import purehep

DTYPES = st.sampled_from(["i1", "u2", "<i4", ">i8", "f4", ">f8", "c8", "?", "S3"])
NAMES = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)
ARRAYS = DTYPES.flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3,
                                                                   max_side=5)))
LEAF = st.tuples(st.just("dataset"), ARRAYS, st.sampled_from(["contiguous", "compact",
                                                               "chunked", "gzip"]))
TREE = st.recursive(LEAF, lambda kids: st.tuples(st.just("group"), st.dictionaries(
    NAMES, kids, max_size=4), st.booleans()), max_leaves=10)


def _write(group, name, item):
    if item[0] == "dataset":
        arr, layout = item[1], item[2]
        kw = {}
        if layout == "compact":
            kw["compact"] = True
        elif layout in ("chunked", "gzip") and arr.ndim:
            kw["chunks"] = tuple(max(1, s // 2) for s in arr.shape)
            if layout == "gzip":
                kw["compression"] = "gzip"
        ds = group.create_dataset(name, data=arr, **kw)
        ds.attrs["a"] = arr
        return
    g = group.create_group(name, track_order=item[2])
    for k, v in item[1].items():
        _write(g, k, v)


def _check(h, p, item, path):
    if item[0] == "dataset":
        arr = item[1]
        hv, pv = h[path][()], p[path][()]
        assert np.array_equal(np.asarray(hv), arr, equal_nan=arr.dtype.kind in "fc"), path
        assert np.array_equal(np.asarray(pv), arr, equal_nan=arr.dtype.kind in "fc"), path
        assert np.array_equal(np.asarray(h[path].attrs["a"]), arr,
                              equal_nan=arr.dtype.kind in "fc"), path
        return
    assert sorted(h[path]) == sorted(item[1]) == sorted(p[path]), path
    for k, v in item[1].items():
        _check(h, p, v, f"{path}/{k}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(tree=st.dictionaries(NAMES, TREE, min_size=1, max_size=4),
       libver=st.sampled_from(["earliest", "latest"]))
def test_random_trees(tmp_path, tree, libver):
    path = str(tmp_path / "r.h5")
    with purehep.File(path, "w", libver=libver) as f:
        for k, v in tree.items():
            _write(f, k, v)
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        for k, v in tree.items():
            _check(h, p, v, "/" + k)
