"""The HEP001 validator against hand-made violations: a conformant table written by purehep
(every column kind, a row index, a categorical, all four search-index kinds) is copied and
changed with h5py one MUST at a time; the validator must report each change with the
section it breaks, name a section in every problem, and never raise."""
import shutil
import warnings

import h5py
import numpy as np
import pytest

import purehep
from purehep.table import Table, create_table, validate

N, CHUNK = 100, 16
S = "t/_search_indexes"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("valid") / "base.h5"
    rng = np.random.default_rng(1)
    f_values = rng.normal(size=N)
    f_values[::9] = np.nan
    with purehep.File(path, "w") as f:
        t = create_table(f, "t", {"i": np.arange(N, dtype=np.int64) % 37,
                                  "f": f_values,
                                  "label": np.array(["x", "y", "z", "y"] * (N // 4)),
                                  "b": np.array([b"ab", b"c"] * (N // 2))},
                         categories={"label": ["x", "y", "z"]},
                         index={"row_id": np.arange(N, dtype=np.uint64)}, chunks=CHUNK,
                         title="Sample run", description="test table", units={"f": "MeV"},
                         units_vocabulary="UDUNITS-2")
        t.create_search_index("i", "CHUNK_MINMAX")
        t.create_search_index("f", "SORTED_ROWS")
        t.create_search_index("label", "BITMAP")
        t.create_search_index("i", "CHUNK_BLOOM")
    with purehep.File(path) as f:
        assert validate(f["t"]) == []
    with h5py.File(path) as f:
        assert sorted(f[S]) == ["f__sorted_rows", "i__chunk_bloom", "i__chunk_minmax",
                                "label__bitmap", "label__bitmap__values"]
    return path


# --- h5py helpers ----------------------------------------------------------------------------

def put_str(obj, name, value, *, cset=h5py.h5t.CSET_ASCII, pad=h5py.h5t.STR_NULLPAD,
            size=None, shape=()):
    """A fixed-length string attribute with exactly the given character set and padding."""
    raw = value if isinstance(value, bytes) else value.encode("utf-8")
    size = size or max(len(raw), 1)
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(size)
    tid.set_strpad(pad)
    tid.set_cset(cset)
    if name in obj.attrs:
        del obj.attrs[name]
    space = h5py.h5s.create_simple(shape) if shape else h5py.h5s.create(h5py.h5s.SCALAR)
    aid = h5py.h5a.create(obj.id, name.encode(), tid, space)
    aid.write(np.full(shape, raw, dtype=f"S{size}"), mtype=tid)


def utf8(obj, name, value, **kw):
    put_str(obj, name, value, cset=h5py.h5t.CSET_UTF8, **kw)


def refs(*objs):
    return np.array([o.ref for o in objs], dtype=h5py.ref_dtype)


def add_order(t, name):
    order = [n.decode() if isinstance(n, bytes) else n for n in t.attrs["column-order"]]
    set_order(t, order + [name])


def set_order(t, names):
    width = max(len(n.encode()) for n in names)
    del t.attrs["column-order"]
    t.attrs.create("column-order", np.array([n.encode() for n in names]),
                   dtype=h5py.string_dtype("utf-8", width))


def add_column(t, name, data, fill=-1, **kw):
    ds = t.create_dataset(name, data=data, fillvalue=fill, **kw)
    add_order(t, name)
    return ds


def recreate(f, path, data, **kw):
    """Replace dataset ``path`` by ``data`` keeping its attributes (types included) and every
    reference to it in the table's attributes."""
    old = f[path]
    attrs = {k: (old.attrs[k], old.attrs.get_id(k).dtype, old.attrs.get_id(k).shape)
             for k in old.attrs}
    pointing = []                     # (object, attribute, positions) that name ``old``

    def find(_, obj):
        for k in obj.attrs:
            if obj.attrs.get_id(k).dtype == h5py.ref_dtype:
                arr = np.asarray(obj.attrs[k], dtype=object)
                hits = [i for i, r in enumerate(arr.reshape(-1)) if r and f[r] == old]
                if hits:
                    pointing.append((obj.name, k, arr, hits))
    f["t"].visititems(find)
    del f[path]
    new = f.create_dataset(path, data=data, **kw)
    for k, (v, dt, shape) in attrs.items():
        new.attrs.create(k, v, shape=shape, dtype=dt)
    for name, k, arr, hits in pointing:
        flat = arr.reshape(-1).copy()
        for i in hits:
            flat[i] = new.ref
        f[name].attrs.create(k, flat.reshape(arr.shape), dtype=h5py.ref_dtype)
    return new


def set_field(ds, field, values):
    arr = ds[()]
    arr[field] = values
    ds[...] = arr


# --- the violations: (id, section(s) expected, change) ---------------------------------------

def _null_version(f):
    del f["t"].attrs["VERSION"]


CASES = [
    # §5.1 CLASS
    ("class_vlen", "§5.1", lambda f: f["t"].attrs.__setitem__("CLASS", "COLUMN_TABLE")),
    ("class_utf8", "§5.1", lambda f: utf8(f["t"], "CLASS", "COLUMN_TABLE")),
    ("class_16_bytes", "§5.1", lambda f: put_str(f["t"], "CLASS", "COLUMN_TABLE", size=16)),
    ("class_space_padded", "§5.1", lambda f: put_str(f["t"], "CLASS", "COLUMN_TABLE",
                                                      pad=h5py.h5t.STR_SPACEPAD)),
    ("class_array", "§5.1", lambda f: put_str(f["t"], "CLASS", "COLUMN_TABLE", shape=(1,))),
    ("class_missing", "§5.1", lambda f: f["t"].attrs.__delitem__("CLASS")),
    ("class_other_value", "§5.1", lambda f: put_str(f["t"], "CLASS", "COLUMN_TABL")),
    # §5.2 VERSION
    ("version_missing", "§5.2", _null_version),
    ("version_vlen", "§5.2", lambda f: f["t"].attrs.__setitem__("VERSION", "1.0")),
    ("version_array", "§5.2", lambda f: put_str(f["t"], "VERSION", "1.0", shape=(1,))),
    ("version_utf8", "§5.2", lambda f: utf8(f["t"], "VERSION", "1.0")),
    ("version_2", "§5.2", lambda f: put_str(f["t"], "VERSION", "2.0")),
    # §5.3 table attributes (and its note on fixed-length UTF-8)
    ("title_space_padded", "§5.3", lambda f: utf8(f["t"], "TITLE", "T", pad=h5py.h5t.STR_SPACEPAD)),
    ("title_cut_utf8", "§5.3", lambda f: utf8(f["t"], "TITLE", "café".encode()[:4])),
    ("title_not_string", "§5.3", lambda f: f["t"].attrs.__setitem__("TITLE", 5)),
    ("column_order_vlen", "§5.3", lambda f: f["t"].attrs.__setitem__(
        "column-order", np.array(["i", "f", "label", "b"], dtype=h5py.string_dtype()))),
    ("index_names_nothing", "§5.3", lambda f: utf8(f["t"], "_index", "nope")),
    ("units_vocabulary_array", "§5.3", lambda f: utf8(f["t"], "units_vocabulary", "UCUM",
                                                      shape=(2,))),
    # §5.5 self-contained
    ("subgroup", "§5.5", lambda f: f["t"].create_group("extra")),
    ("nested_table", "§5.5", lambda f: put_str(f["t"].create_group("inner"), "CLASS", "COLUMN_TABLE")),
    ("dangling_soft_link", "§5.5", lambda f: f["t"].__setitem__("gone", h5py.SoftLink("/nowhere"))),
    ("external_link", "§5.5", lambda f: f["t"].__setitem__("ext", h5py.ExternalLink("x.h5", "/a"))),
    ("soft_link_outside", "§5.5", lambda f: (f.create_dataset("outside", data=np.arange(N)),
                                              f["t"].__setitem__("alias", h5py.SoftLink("/outside")))),
    ("named_datatype", "§5.5", lambda f: f["t"].__setitem__("dt", np.dtype("<i4"))),
    # §6.1 columns
    ("column_rank_2", "§6.1", lambda f: add_column(f["t"], "m", np.zeros((N, 2)))),
    ("column_scalar", "§6.1", lambda f: add_column(f["t"], "sc", np.float64(1.0))),
    ("column_short", "§9.1", lambda f: add_column(f["t"], "short", np.arange(N // 2))),
    ("column_named_search_indexes", "§8.1", lambda f: (
        f["t"].__delitem__("_search_indexes"), f["t"].create_dataset("_search_indexes", data=[1]))),
    # §6.4 fill values
    ("no_explicit_fill", "§6.4", lambda f: add_column(f["t"], "nofill", np.arange(N), fill=None)),
    ("float_no_explicit_fill", "§6.4", lambda f: add_column(f["t"], "x", np.ones(N), fill=None)),
    # §6.5 column attributes
    ("units_not_string", "§6.5", lambda f: f["t/f"].attrs.__setitem__("units", 3)),
    ("description_space_padded", "§5.3", lambda f: utf8(f["t/i"], "description", "d",
                                                          pad=h5py.h5t.STR_SPACEPAD)),
    ("indexes_scalar_ref", "§6.5", lambda f: f["t/i"].attrs.__setitem__("_indexes", f["t/row_id"].ref)),
    ("indexes_strings", "§6.5", lambda f: f["t/i"].attrs.__setitem__("_indexes", np.array([b"row_id"]))),
    ("search_indexes_ints", "§6.5", lambda f: f["t/f"].attrs.__setitem__("_search_indexes", [1, 2])),
    # §6.6 categoricals (and §9.5)
    ("categorical_float_codes", "§6.6", lambda f: add_column(f["t"], "fc", np.zeros(N), fill=np.nan)
     .attrs.__setitem__("_categories", f["t/label_categories"].ref)),
    ("categories_ref_array", "§6.6", lambda f: f["t/label"].attrs.__setitem__(
        "_categories", refs(f["t/label_categories"]))),
    ("categories_ref_string", "§6.6", lambda f: f["t/label"].attrs.__setitem__(
        "_categories", "label_categories")),
    ("categories_outside_table", "§6.6", lambda f: f["t/label"].attrs.__setitem__(
        "_categories", f.create_dataset("elsewhere", data=np.array([b"x"])).ref)),
    ("categories_unlinked", "§6.6|§9.5", lambda f: f["t"].__delitem__("label_categories")),
    ("categories_rank_2", "§6.6", lambda f: _categorical(f, np.array([[b"x", b"y"]]))),
    ("categories_no_encoding_type", "§6.6",
     lambda f: f["t/label_categories"].attrs.__delitem__("encoding-type")),
    ("categories_wrong_encoding_type", "§6.6",
     lambda f: utf8(f["t/label_categories"], "encoding-type", "category")),
    ("categories_no_ordered", "§6.6", lambda f: f["t/label_categories"].attrs.__delitem__("ordered")),
    ("categories_ordered_string", "§6.6",
     lambda f: f["t/label_categories"].attrs.__setitem__("ordered", "false")),
    ("categories_ordered_array", "§6.6",
     lambda f: f["t/label_categories"].attrs.__setitem__("ordered", np.array([True]))),
    ("categorical_fill_is_a_code", "§6.6", lambda f: _categorical(f, np.array([b"x", b"y"]), fill=0)),
    # §7 index datasets
    ("index_rank_2", "§7.1", lambda f: f["t"].create_dataset("row2", data=np.zeros((N, 2)))
     .attrs.__setitem__("_columns_list", refs(f["t/i"]))),
    ("columns_list_scalar", "§7.1", lambda f: f["t/row_id"].attrs.__setitem__("_columns_list", f["t/i"].ref)),
    ("columns_list_strings", "§7.1", lambda f: f["t/row_id"].attrs.__setitem__("_columns_list", [b"i"])),
    ("columns_list_outside", "§7.1", lambda f: f["t/row_id"].attrs.__setitem__(
        "_columns_list", refs(f["t/i"], f["t/f"], f["t/label"], f["t/b"],
                              f.create_dataset("other", data=np.arange(N))))),
    ("index_lacks_column", "§7.2", lambda f: f["t/row_id"].attrs.__setitem__(
        "_columns_list", refs(f["t/i"], f["t/f"], f["t/label"]))),
    ("column_lacks_index", "§7.2", lambda f: f["t/f"].attrs.__delitem__("_indexes")),
    ("index_short", "§9.1", lambda f: _short_index(f)),
    ("index_unlinked", "§7.2|§7.1", lambda f: f["t"].__delitem__("row_id")),
    # §8.1–§8.3 the search-index group, links and KIND
    ("search_index_outside_group", "§8.1", lambda f: f.move(f"{S}/i__chunk_minmax", "t/mm")),
    ("search_index_unlinked", "§8.1|§9.3", lambda f: f[S].__delitem__("i__chunk_minmax")),
    ("group_in_search_indexes", "§8.1", lambda f: f[S].create_group("g")),
    ("search_index_no_columns_list", "§8.2",
     lambda f: f[f"{S}/f__sorted_rows"].attrs.__delitem__("_columns_list")),
    ("column_lacks_search_index", "§8.2", lambda f: f["t/f"].attrs.__delitem__("_search_indexes")),
    ("minmax_two_columns", "§8.4", lambda f: f[f"{S}/i__chunk_minmax"].attrs.__setitem__(
        "_columns_list", refs(f["t/i"], f["t/f"]))),
    ("dataset_without_kind", "§8.3", lambda f: f[S].create_dataset("junk", data=[1])),
    ("kind_vlen", "§8.3", lambda f: f[f"{S}/f__sorted_rows"].attrs.__setitem__("KIND", "SORTED_ROWS")),
    ("kind_array", "§8.3", lambda f: put_str(f[f"{S}/f__sorted_rows"], "KIND", "SORTED_ROWS", shape=(1,))),
    ("kind_utf8", "§8.3", lambda f: utf8(f[f"{S}/f__sorted_rows"], "KIND", "SORTED_ROWS")),
    # §8.4 CHUNK_MINMAX
    ("minmax_length", "§8.4", lambda f: recreate(f, f"{S}/i__chunk_minmax", f[f"{S}/i__chunk_minmax"][:-1])),
    ("minmax_field_order", "§8.4", lambda f: recreate(f, f"{S}/i__chunk_minmax", _reorder(
        f[f"{S}/i__chunk_minmax"][()], ["max", "min", "nan_count", "fill_count", "n"]))),
    ("minmax_min_type", "§8.4", lambda f: recreate(f, f"{S}/i__chunk_minmax", _retype(
        f[f"{S}/i__chunk_minmax"][()], {"min": "<i4", "max": "<i4"}))),
    ("minmax_n_uint32", "§8.4", lambda f: recreate(f, f"{S}/i__chunk_minmax", _retype(
        f[f"{S}/i__chunk_minmax"][()], {"n": "<u4"}))),
    ("minmax_nan_count_of_ints", "§8.4", lambda f: set_field(f[f"{S}/i__chunk_minmax"], "nan_count", 1)),
    ("minmax_no_chunk_shape", "§8.4", lambda f: f[f"{S}/i__chunk_minmax"].attrs.__delitem__("chunk_shape")),
    ("minmax_wrong_chunk_shape", "§8.4", lambda f: f[f"{S}/i__chunk_minmax"].attrs.__setitem__(
        "chunk_shape", np.array([8], np.uint64))),
    ("minmax_chunk_shape_int32", "§8.4", lambda f: f[f"{S}/i__chunk_minmax"].attrs.__setitem__(
        "chunk_shape", np.array([CHUNK], np.int32))),
    ("minmax_tampered", "§8.4", lambda f: set_field(f[f"{S}/i__chunk_minmax"], "max", -5)),
    # §8.5 SORTED_ROWS
    ("sorted_signed", "§8.5", lambda f: recreate(f, f"{S}/f__sorted_rows",
                                                 f[f"{S}/f__sorted_rows"][()].astype(np.int64))),
    ("sorted_length", "§8.5", lambda f: recreate(f, f"{S}/f__sorted_rows", f[f"{S}/f__sorted_rows"][:-1])),
    ("sorted_no_nan_tail", "§8.5", lambda f: f[f"{S}/f__sorted_rows"].attrs.__delitem__("nan_tail_length")),
    ("sorted_fill_tail_int32", "§8.5", lambda f: f[f"{S}/f__sorted_rows"].attrs.__setitem__(
        "fill_tail_length", np.int32(0))),
    ("sorted_not_ordered", "§8.5", lambda f: f[f"{S}/f__sorted_rows"].attrs.__setitem__("ordered", False)),
    ("sorted_no_ordered", "§8.5", lambda f: f[f"{S}/f__sorted_rows"].attrs.__delitem__("ordered")),
    ("sorted_wrong_nan_tail", "§8.5", lambda f: f[f"{S}/f__sorted_rows"].attrs.__setitem__(
        "nan_tail_length", np.uint64(0))),
    ("sorted_nan_not_last", "§8.5", lambda f: _rotate(f[f"{S}/f__sorted_rows"])),
    # §8.6 BITMAP
    ("bitmap_int8", "§8.6", lambda f: recreate(f, f"{S}/label__bitmap",
                                               f[f"{S}/label__bitmap"][()].astype(np.int8))),
    ("bitmap_row_bytes", "§8.6", lambda f: recreate(f, f"{S}/label__bitmap", f[f"{S}/label__bitmap"][:, :-1])),
    ("bitmap_no_values", "§8.6", lambda f: f[f"{S}/label__bitmap"].attrs.__delitem__("_values")),
    ("bitmap_values_outside", "§8.6", lambda f: f[f"{S}/label__bitmap"].attrs.__setitem__(
        "_values", f.create_dataset("vals", data=np.arange(3, dtype=np.int8)).ref)),
    ("bitmap_values_type", "§8.6", lambda f: recreate(f, f"{S}/label__bitmap__values",
                                                      np.arange(3, dtype=np.int64))),
    ("bitmap_no_ordered", "§8.6", lambda f: f[f"{S}/label__bitmap"].attrs.__delitem__("ordered")),
    ("bitmap_bit_flipped", "§8.6", lambda f: f[f"{S}/label__bitmap"].__setitem__(
        (0, 0), f[f"{S}/label__bitmap"][0, 0] ^ 1)),
    # §8.7 CHUNK_BLOOM
    ("bloom_hash_family", "§8.7", lambda f: put_str(f[f"{S}/i__chunk_bloom"], "hash_family", "xxhash")),
    ("bloom_hash_family_vlen", "§8.7", lambda f: f[f"{S}/i__chunk_bloom"].attrs.__setitem__(
        "hash_family", "murmur3_128_double")),
    ("bloom_k_uint32", "§8.7", lambda f: f[f"{S}/i__chunk_bloom"].attrs.__setitem__("k", np.uint32(3))),
    ("bloom_k_zero", "§8.7", lambda f: f[f"{S}/i__chunk_bloom"].attrs.__setitem__("k", np.uint16(0))),
    ("bloom_m_bits", "§8.7", lambda f: f[f"{S}/i__chunk_bloom"].attrs.__setitem__("m_bits", np.uint64(8))),
    ("bloom_rows", "§8.7", lambda f: recreate(f, f"{S}/i__chunk_bloom", f[f"{S}/i__chunk_bloom"][:-1])),
    ("bloom_no_chunk_shape", "§8.7", lambda f: f[f"{S}/i__chunk_bloom"].attrs.__delitem__("chunk_shape")),
    ("bloom_tampered", "§8.7", lambda f: f[f"{S}/i__chunk_bloom"].__setitem__(
        (slice(None), slice(None)), np.zeros(f[f"{S}/i__chunk_bloom"].shape, np.uint8))),
    # §9.6 column-order
    ("order_repeats", "§9.6", lambda f: set_order(f["t"], ["i", "f", "label", "b", "i"])),
    ("order_omits", "§9.6", lambda f: set_order(f["t"], ["i", "label", "b"])),
    ("order_unknown", "§9.6", lambda f: set_order(f["t"], ["i", "f", "label", "b", "ghost"])),
    ("order_lists_group", "§9.6", lambda f: set_order(f["t"], ["i", "f", "label", "b", "_search_indexes"])),
]


def _categorical(f, categories, fill=-1):
    cats = f["t"].create_dataset("c2_categories", data=categories)
    utf8(cats, "encoding-type", "categorical")
    cats.attrs["ordered"] = False
    add_column(f["t"], "c2", np.zeros(N, np.int8), fill=fill).attrs["_categories"] = cats.ref


def _short_index(f):
    short = f["t"].create_dataset("row3", data=np.arange(N // 2, dtype=np.uint64))
    short.attrs["_columns_list"] = refs(f["t/i"])
    f["t/i"].attrs["_indexes"] = refs(f["t/row_id"], short)


def _reorder(arr, names):
    out = np.zeros(arr.shape, [(n, arr.dtype[n]) for n in names])
    for n in names:
        out[n] = arr[n]
    return out


def _retype(arr, types):
    out = np.zeros(arr.shape, [(n, types.get(n, arr.dtype[n])) for n in arr.dtype.names])
    for n in arr.dtype.names:
        out[n] = arr[n]
    return out


def _rotate(ds):
    """Move the NaN tail to the front: same values, the §8.5 order broken."""
    perm = ds[()]
    tail = int(ds.attrs["nan_tail_length"])
    ds[...] = np.concatenate([perm[-tail:], perm[:-tail]])


def test_there_are_enough_cases():
    assert len(CASES) >= 50 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case, section, change", CASES, ids=[c[0] for c in CASES])
def test_violation_is_reported_with_its_section(base, tmp_path, case, section, change):
    path = tmp_path / "v.h5"
    shutil.copy(base, path)
    with h5py.File(path, "r+") as f:
        change(f)
    with purehep.File(path) as f:
        problems = validate(f["t"], raise_=False)
        assert problems, "violation not reported"
        assert any(s in m for _, m in problems for s in section.split("|")), problems
        assert all("§" in m for _, m in problems), problems
        with pytest.raises(purehep.ValidationError):
            validate(f["t"])
        validate(f["t"], verify_indexes=False, raise_=False)      # no crash either way


def test_table_still_queries_after_foreign_changes(base, tmp_path):
    """Reads and queries of a table that fails validation still equal a scan."""
    path = tmp_path / "v.h5"
    shutil.copy(base, path)
    with h5py.File(path, "r+") as f:
        set_field(f[f"{S}/i__chunk_minmax"], "max", -5)
        f[S].create_dataset("junk", data=[1])
        want = np.flatnonzero(f["t/i"][()] > 30)
    with purehep.File(path) as f:
        assert np.array_equal(Table(f["t"]).query("i > 30"), want)


def test_unknown_kind_is_ignored(base, tmp_path):
    """§8.3: consumers ignore search indexes of an unknown KIND (not a violation)."""
    path = tmp_path / "v.h5"
    shutil.copy(base, path)
    with h5py.File(path, "r+") as f:
        other = f[S].create_dataset("i__zone", data=np.zeros(3))
        put_str(other, "KIND", "ZONE_MAP")
        other.attrs["_columns_list"] = refs(f["t/i"])
        f["t/i"].attrs["_search_indexes"] = refs(*(f[r] for r in f["t/i"].attrs["_search_indexes"]), other)
        want = np.flatnonzero(f["t/i"][()] == 3)
    with purehep.File(path) as f:
        assert validate(f["t"]) == []
        assert np.array_equal(Table(f["t"]).query("i = 3"), want)


def test_tables_written_by_purehep_validate(tmp_path):
    """purehep's own tables (every column kind, anndata mode, after appends and column
    changes) conform."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"i": np.arange(6), "u": np.arange(6, dtype=np.uint8), "f": np.linspace(0, 1, 6),
                       "b": [True, False] * 3, "s": list("abcdef"), "y": [b"x", b"yy"] * 3,
                       "c": pd.Categorical(list("xyzxyz"), ordered=True),
                       "n": pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
                       "ns": pd.array(["a", None, "b", "c", "d", "e"], dtype="string"),
                       "t": pd.date_range("2020", periods=6, freq="D")},
                      index=pd.Index([f"r{i}" for i in range(6)], name="cell"))
    with purehep.File(tmp_path / "p.h5", "w") as f:
        for name, anndata in (("t", False), ("a", True)):
            with warnings.catch_warnings():      # anndata=True: Int64 with None warns
                warnings.simplefilter("ignore", purehep.errors.PurehepWarning)
                t = create_table(f, name, df, anndata=anndata, chunks=4)
            t.create_search_index("i", "SORTED_ROWS")
            t.append(df.iloc[:2].reset_index(drop=True).assign(cell=["r6", "r7"]))
            t.add_column("z", np.zeros(8))
            assert validate(f[name]) == []


# --- no crash on anything: random attribute damage -------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

TARGETS = ["t", "t/i", "t/f", "t/label", "t/label_categories", "t/b", "t/row_id", S,
           f"{S}/i__chunk_minmax", f"{S}/f__sorted_rows", f"{S}/label__bitmap",
           f"{S}/label__bitmap__values", f"{S}/i__chunk_bloom"]
NAMES = ["CLASS", "VERSION", "column-order", "_index", "TITLE", "_indexes", "_search_indexes",
         "_categories", "_columns_list", "encoding-type", "ordered", "KIND", "chunk_shape",
         "nan_tail_length", "fill_tail_length", "_values", "k", "m_bits", "hash_family", "units"]


def _value(f, kind, target):
    return {"int": lambda: np.int64(7), "float": lambda: np.float32(np.nan),
            "vlen": lambda: "COLUMN_TABLE", "fixed": lambda: np.bytes_(b"\xff\x00x"),
            "ints": lambda: np.arange(3, dtype=np.uint64), "empty": lambda: np.zeros(0, np.uint8),
            "bool": lambda: np.True_, "ref": lambda: f[target].ref,
            "refs": lambda: refs(f[target], f["t"]), "strs": lambda: np.array([b"i", b"zz"]),
            "2d": lambda: np.zeros((2, 2), np.int8)}[kind]()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TARGETS), st.sampled_from(NAMES),
                          st.sampled_from(["del", "int", "float", "vlen", "fixed", "ints", "empty",
                                           "bool", "ref", "refs", "strs", "2d"]),
                          st.sampled_from(TARGETS)), min_size=1, max_size=4))
def test_validator_never_raises_on_damaged_attributes(base, tmp_path_factory, changes):
    path = tmp_path_factory.mktemp("fuzz") / "v.h5"
    shutil.copy(base, path)
    with h5py.File(path, "r+") as f:
        for where, name, kind, target in changes:
            obj = f[where]
            if kind == "del":
                if name in obj.attrs:
                    del obj.attrs[name]
            else:
                obj.attrs[name] = _value(f, kind, target)
    with purehep.File(path) as f:
        problems = validate(f["t"], raise_=False)
        assert all(isinstance(m, str) and "§" in m for _, m in problems)
        assert not any("unreadable" in m for _, m in problems), problems
