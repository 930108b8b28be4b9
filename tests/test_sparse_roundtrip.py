"""Sparse datasets written and read back by purehep: random shapes (1-4-D), chunk shapes,
densities, dtypes, chunk indexes and filters (LZF, gzip, zstd, shuffle, per section or for
both sections) (hypothesis; a few dozen examples here, many more under the slow marker)."""
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st, HealthCheck

import purehep
from purehep.format.messages import layout as L

DTYPES = [np.dtype("i1"), np.dtype("<u2"), np.dtype("<i8"), np.dtype("<f4"), np.dtype(">f8"),
          np.dtype([("a", "<i4"), ("b", "<f8")])]
# create_dataset keywords: the predefined filters (both sections) or per-section pipelines
FILTERS = [{}, {"compression": "gzip"}, {"compression": "lzf"}, {"compression": "zstd"},
           {"shuffle": True}, {"compression": "lzf", "shuffle": True},
           {"compression": "gzip", "shuffle": True},
           {"section_filters": {0: "gzip"}},
           {"section_filters": {0: "lzf", 1: {"compression": "lzf", "shuffle": True}}},
           {"section_filters": {1: {"compression": "gzip", "shuffle": True}}},
           {"section_filters": {0: {"compression": "zstd"},
                                1: {"compression": "gzip", "compression_opts": 1}}},
           {"section_filters": {1: {"compression": "zstd", "shuffle": True}}}]
INDEXES = ["auto", "fixed_array", "btree2", "extensible_array", "single"]


def _values(rng, dtype, n):
    if dtype.names:
        v = np.zeros(n, dtype)
        v["a"] = rng.integers(-100, 100, n)
        v["b"] = rng.normal(size=n)
        return v
    if dtype.kind == "f":
        return rng.normal(size=n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dtype)


@st.composite
def cases(draw):
    index = draw(st.sampled_from(INDEXES))
    rank = draw(st.integers(2 if index == "btree2" else 1, 4))
    shape = tuple(draw(st.integers(1, 12 if rank < 3 else 6)) for _ in range(rank))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    maxshape = shape
    if index == "extensible_array":
        maxshape = (None,) + shape[1:]
    elif index == "btree2":     # the format's v2 B-tree index: > 1 unlimited dimension
        maxshape = (None, None) + tuple(None if draw(st.booleans()) else s for s in shape[2:])
    elif index == "single":
        chunks = shape
    density = draw(st.sampled_from([0.0, 0.05, 0.3, 0.6, 0.7, 1.0]))
    dtype = draw(st.sampled_from(DTYPES))
    filters = draw(st.sampled_from(range(len(FILTERS))))
    seed = draw(st.integers(0, 2**16))
    return shape, chunks, maxshape, index, density, dtype, filters, seed


# the LZF case of issue 17: an i1 chunk of 100 elements, 60 defined: its point-list section 0
# (~260 bytes) unfilters to more than the dense chunk (100 bytes)
LZF_I1 = ((100,), (100,), (100,), "auto", 0.6, np.dtype("i1"), 2, 3)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
@example(LZF_I1)
def test_roundtrip(tmp_path_factory, case):
    _roundtrip(tmp_path_factory.mktemp("rt") / "s.h5", case)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases())
def test_roundtrip_many(tmp_path_factory, case):
    _roundtrip(tmp_path_factory.mktemp("rt") / "s.h5", case)


def _roundtrip(path, case):
    shape, chunks, maxshape, index, density, dtype, filters, seed = case
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < density
    coords = np.argwhere(mask)
    vals = _values(rng, dtype, len(coords))
    fill = np.zeros((), dtype)
    kw = FILTERS[filters]
    with purehep.File(path, "w", libver="latest") as f:
        ds = f.create_dataset("s", shape, dtype, chunks=chunks, maxshape=maxshape, sparse=True,
                              chunk_index=None if index == "auto" else index, **kw)
        # some through ds[sel] = values (one point at a time), the rest as a coordinate list
        half = min(len(coords) // 2, 40)
        for c, v in zip(coords[:half], vals[:half]):
            ds[tuple(int(x) for x in c)] = v
        ds.write_sparse(coords[half:], vals[half:])
    expect = np.full(shape, fill, dtype)
    expect[mask] = vals
    with purehep.File(path) as f:
        ds = f["s"]
        assert ds.is_sparse and ds.chunks == chunks
        if index != "auto":
            want = {"fixed_array": L.FIXED_ARRAY, "btree2": L.BTREE2, "single": L.SINGLE,
                    "extensible_array": L.EXTENSIBLE_ARRAY}[index]
            assert ds._layout.index_type == want
        np.testing.assert_array_equal(ds[...], expect)
        c, v = ds.read_sparse()
        np.testing.assert_array_equal(c, coords)
        np.testing.assert_array_equal(v, vals)
        np.testing.assert_array_equal(ds.defined(), coords)
        assert ds.nnz == len(coords)
        # a partial selection
        sel = tuple(slice(0, max(1, s // 2)) for s in shape)
        np.testing.assert_array_equal(ds[sel], expect[sel])
        inside = np.all(coords < np.array([max(1, s // 2) for s in shape]), axis=1)
        np.testing.assert_array_equal(ds.defined(sel), coords[inside])
    # erase then read: the fill value there
    with purehep.File(path.with_suffix(".2.h5"), "w", libver="latest") as f:
        ds = f.create_dataset("s", shape, dtype, chunks=chunks, maxshape=maxshape, sparse=True,
                              fillvalue=fill, **kw)
        ds.write_sparse(coords, vals)
        er = tuple(slice(s // 3, s) for s in shape)
        ds.erase(er)
        expect[er] = fill
        np.testing.assert_array_equal(ds[...], expect)
        gone = np.all(coords >= np.array([s // 3 for s in shape]), axis=1)
        np.testing.assert_array_equal(ds.defined(), coords[~gone])
    with purehep.File(path.with_suffix(".2.h5")) as f:
        np.testing.assert_array_equal(f["s"][...], expect)
