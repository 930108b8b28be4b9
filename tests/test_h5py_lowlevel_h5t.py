"""purehep.h5t's predefined types that numpy has no dtype of (bitfields, HDF5 2.0's complex
class) and objects created with a TypeID or h5py's transient ``Datatype(type_id)``, side by side
with h5py: same classes, sizes, orders and dtypes, and files each library reads back alike."""
import h5py
import numpy as np
import pytest

import purehep
from compare import outcome
from purehep import h5t

PREDEFINED = [f"STD_B{b}{o}" for b in (8, 16, 32, 64) for o in ("LE", "BE")] + \
    [f"NATIVE_B{b}" for b in (8, 16, 32, 64)] + \
    [f"COMPLEX_IEEE_F{b}{o}" for b in (16, 32, 64) for o in ("LE", "BE")] + \
    ["NATIVE_FLOAT_COMPLEX", "NATIVE_DOUBLE_COMPLEX", "NATIVE_LDOUBLE_COMPLEX"]


def _dtype_or_error(tid):
    try:
        return tid.dtype
    except TypeError as e:
        return TypeError, str(e)


@pytest.mark.parametrize("name", PREDEFINED)
def test_predefined_types_match_h5py(name):
    mine, theirs = getattr(h5t, name), getattr(h5py.h5t, name)
    assert type(mine).__name__ == type(theirs).__name__
    assert mine.get_class() == theirs.get_class()
    assert mine.get_size() == theirs.get_size()
    assert mine.get_order() == theirs.get_order()
    assert _dtype_or_error(mine) == _dtype_or_error(theirs)
    assert mine.copy() == mine


def test_complex_config_names_match_h5py():
    assert purehep.h5.get_config()._r_name == h5py.get_config()._r_name
    assert purehep.h5.get_config()._i_name == h5py.get_config()._i_name


def test_transient_datatype_matches_h5py():
    mine, theirs = purehep.Datatype(h5t.STD_B16LE), h5py.Datatype(h5py.h5t.STD_B16LE)
    assert repr(mine) == repr(theirs)
    assert (mine.name, mine.dtype, bool(mine)) == (theirs.name, theirs.dtype, bool(theirs))
    assert mine.id is h5t.STD_B16LE
    for obj in (mine, theirs):
        with pytest.raises(TypeError, match="not a named datatype"):
            obj.file


CREATED = [("COMPLEX_IEEE_F32BE", ">c8"), ("COMPLEX_IEEE_F64LE", "<c16"),
           ("NATIVE_LDOUBLE_COMPLEX", "=c32"), ("STD_B16LE", "u2"), ("STD_B32BE", ">u4")]


def _write(lib, path):
    """Datasets and attributes of each type, given as Datatype(tid) and as the TypeID."""
    with lib.File(path, "w") as f:
        for name, dt in CREATED:
            tid = getattr(lib.h5t, name)
            ds = f.create_dataset(name, (5,), dtype=lib.Datatype(tid))
            ds[:] = (np.arange(5) * 3).astype(dt)
            ds.attrs.create("named", np.array(7, dt), dtype=lib.Datatype(tid))
            ds.attrs.create("tid", np.array(7, dt), dtype=tid)     # a TypeID: its dtype's
            f.create_dataset(name + "_tid", (2,), dtype=tid)


@pytest.mark.parametrize("writer", ["h5py", "purehep"])
def test_objects_created_with_type_ids_match_h5py(tmp_path, writer):
    path = str(tmp_path / "types.h5")
    _write(h5py if writer == "h5py" else purehep, path)
    with purehep.File(path, "r") as mine, h5py.File(path, "r") as theirs:
        for name in theirs:
            a, b = mine[name], theirs[name]
            assert type(a.id.get_type()).__name__ == type(b.id.get_type()).__name__, name
            assert a.id.get_type().get_size() == b.id.get_type().get_size(), name
            assert a.dtype == b.dtype, name
            np.testing.assert_array_equal(a[()], b[()])
            for attr in b.attrs:
                ta, tb = a.attrs.get_id(attr).get_type(), b.attrs.get_id(attr).get_type()
                assert type(ta).__name__ == type(tb).__name__, (name, attr)
                assert a.attrs[attr] == b.attrs[attr]


def _compound(mod):
    h5t = mod.h5t
    out = []
    tid = h5t.create(h5t.COMPOUND, 20)
    out.append((tid.get_size(), tid.get_nmembers(), tid.dtype))
    for name, offset, member in ((b"f1", 0, h5t.py_create("<f4")), (b"f2", 16, h5t.STD_I32LE),
                                 (b"f3", 8, h5t.IEEE_F64BE), (b"b", 4, h5t.STD_B16LE)):
        tid.insert(name, offset, member)
    out.append((tid.dtype, tid.get_nmembers(),
                [(tid.get_member_name(i), tid.get_member_offset(i),
                  type(tid.get_member_type(i)).__name__) for i in range(4)]))
    for bad in ((b"x", 19, h5t.STD_I32LE), (b"f1", 12, h5t.STD_I8LE), ("s", 12, h5t.STD_I8LE)):
        with pytest.raises(Exception) as info:
            tid.insert(*bad)
        out.append((info.type, str(info.value)))
    for cls in (h5t.INTEGER, h5t.ENUM):
        with pytest.raises(ValueError) as info:
            h5t.create(cls, 4)
        out.append(str(info.value))
    opaque = h5t.create(h5t.OPAQUE, 6)
    out.append((type(opaque).__name__, opaque.dtype, opaque.get_size()))
    return out


def test_created_compound_types_match_h5py(tmp_path):
    """h5t.create(COMPOUND, size) with members inserted out of order (one a bitfield), and
    a dataset of it, as h5py makes them."""
    assert _compound(purehep) == _compound(h5py)
    for lib in (purehep, h5py):
        tid = lib.h5t.create(lib.h5t.COMPOUND, 8)
        tid.insert(b"b", 4, lib.h5t.STD_B16LE)
        tid.insert(b"a", 0, lib.h5t.STD_I32LE)
        with lib.File(str(tmp_path / f"{lib.__name__}.h5"), "w") as f:
            f.create_dataset("c", (2,), dtype=tid)
    with purehep.File(str(tmp_path / "h5py.h5"), "r") as mine, \
            h5py.File(str(tmp_path / "purehep.h5"), "r") as theirs:
        a, b = mine["c"].id.get_type(), theirs["c"].id.get_type()
        assert mine["c"].dtype == theirs["c"].dtype
        assert [type(a.get_member_type(i)).__name__ for i in range(2)] == \
            [type(b.get_member_type(i)).__name__ for i in range(2)]


GETTERS = ("get_sign", "get_precision", "get_offset", "get_order", "get_strpad", "get_cset",
           "is_variable_str", "get_nmembers", "get_array_ndims", "get_array_dims", "get_fields",
           "get_ebias", "get_norm", "get_pad", "get_inpad")



def _type_report(lib, path):
    enum = lib.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i2")
    dts = {"i2": np.dtype(">i2"), "u8": np.dtype("u8"), "f4": np.dtype("f4"),
           "f2": np.dtype("<f2"), "S5": np.dtype("S5"), "vstr": lib.string_dtype(),
           "enum": enum, "vlen": lib.vlen_dtype("i4"), "arr": np.dtype(("f8", (2, 3))),
           "cmp": np.dtype([("x", "i4"), ("y", enum), ("z", ("f4", (2,)))]),
           "bool": np.dtype(bool)}
    with lib.File(path, "w") as f:
        for k, dt in dts.items():
            f.create_dataset(k, (1,), dtype=dt)
    out = []
    h5t = lib.h5t
    with lib.File(path, "r") as f:
        for k in dts:
            t = f[k].id.get_type()
            out.append((k, type(t).__name__, [c.__name__ for c in type(t).__mro__[1:-1]
                                              if c.__name__ != "ObjectID"],
                        t.get_class(), t.get_size()))
            out += [(m, outcome(getattr(t, m))) for m in GETTERS if hasattr(t, m)]
            out.append(outcome(lambda: (type(t.get_super()).__name__, t.get_super().dtype)))
            if isinstance(t, h5t.TypeEnumID):
                out += [[(t.get_member_name(i), t.get_member_value(i))
                         for i in range(t.get_nmembers())],
                        outcome(lambda: t.enum_nameof(42)), outcome(lambda: t.enum_valueof(b"GREEN")),
                        outcome(lambda: t.get_member_index(b"BLUE")),
                        outcome(lambda: t.enum_nameof(7))]
            if isinstance(t, h5t.TypeCompoundID):
                out += [[t.get_member_class(i) for i in range(3)], t.get_member_index(b"y"),
                        outcome(lambda: t.get_member_index(b"q")),
                        [type(t.get_member_type(i)).__name__ for i in range(3)]]
            out.append([t.detect_class(c) for c in (h5t.FLOAT, h5t.ENUM, h5t.VLEN,
                                                    h5t.STRING)])
    return out


def test_type_getters_match_h5py(tmp_path):
    """The class-specific getters of stored types (sign, precision, float fields, string
    padding, enum and compound members, array dimensions, base types), and h5py's classes
    and their bases."""
    assert _type_report(purehep, str(tmp_path / "p.h5")) == \
        _type_report(h5py, str(tmp_path / "h.h5"))


def _derived(lib, path):
    """Types made with vlen_create / array_create / enum_create + enum_insert, committed
    with TypeID.commit, and datasets of them."""
    h5t = lib.h5t
    out = []
    with lib.File(path, "w") as f:
        t = h5t.STD_B16LE.copy()
        t.commit(f.id, b"bits")
        h5t.py_create("f8").commit(f.id, b"dbl")
        out += [t.committed(), type(f["bits"].id).__name__, f["bits"].dtype, f["dbl"].dtype]
        with pytest.raises(KeyError, match="immutable"):
            h5t.STD_B16LE.commit(f.id, b"x")
        v = h5t.vlen_create(h5t.STD_I32LE)
        a = h5t.array_create(h5t.IEEE_F32LE, (2, 3))
        e = h5t.enum_create(h5t.STD_I8LE)
        e.enum_insert(b"B", 5)
        e.enum_insert(b"A", 1)
        out += [(type(v).__name__, v.dtype, lib.check_vlen_dtype(v.dtype)),
                (type(a).__name__, a.dtype, a.get_array_dims(), a.get_size()),
                (type(e).__name__, e.dtype, lib.check_enum_dtype(e.dtype), e.get_nmembers(),
                 [e.get_member_name(i) for i in range(2)])]
        for name, tid in (("ve", v), ("ae", a), ("ee", e)):
            f.create_dataset(name, (2,), dtype=tid)
    with lib.File(path, "r") as f:
        for name in ("ve", "ae", "ee", "bits"):
            t = f[name].id.get_type() if name != "bits" else f[name].id
            out.append((name, f[name].dtype, type(t).__name__))
        t = f["ee"].id.get_type()
        out.append([(t.get_member_name(i), t.get_member_value(i)) for i in range(2)])
    return out


def test_derived_and_committed_types_match_h5py(tmp_path):
    assert _derived(purehep, str(tmp_path / "p.h5")) == _derived(h5py, str(tmp_path / "h.h5"))


def _strings(lib, path):
    """Types changed in place: string size (fixed, VARIABLE), padding, character set; byte
    order of integers; predefined types read-only; datasets of them."""
    h5t = lib.h5t
    out = [h5t.VARIABLE, h5t.C_S1.get_strpad()]
    t = h5t.C_S1.copy()
    t.set_size(10)
    out.append((t.get_size(), t.get_strpad(), t.get_cset(), t.dtype, t.is_variable_str()))
    t.set_strpad(h5t.STR_NULLTERM)
    t.set_cset(h5t.CSET_UTF8)
    out.append((t.get_strpad(), t.get_cset(), t.dtype, lib.check_string_dtype(t.dtype)))
    v = h5t.C_S1.copy()
    v.set_size(h5t.VARIABLE)
    out.append((v.get_size(), v.is_variable_str(), v.get_cset(), v.dtype,
                lib.check_string_dtype(v.dtype)))
    v.set_cset(h5t.CSET_UTF8)
    sp = h5t.C_S1.copy()
    sp.set_size(4)
    sp.set_strpad(h5t.STR_SPACEPAD)
    i = h5t.STD_I32LE.copy()
    i.set_order(h5t.ORDER_BE)
    out += [(v.dtype, lib.check_string_dtype(v.dtype), v.get_strpad()),
            (sp.get_strpad(), sp.dtype), (i.get_order(), i.dtype)]
    for call in (lambda: h5t.C_S1.set_size(3), lambda: i.set_order(7)):
        with pytest.raises(Exception) as info:
            call()
        out.append((info.type, str(info.value)))
    with lib.File(path, "w") as f:
        for name, tid in (("fixed", t), ("vlen", v), ("space", sp), ("be", i)):
            f.create_dataset(name, (2,), dtype=tid)
        f["fixed"][0] = "héllo".encode()
        f["vlen"][0] = "wörld"
        f["space"][0] = b"ab"
        f["be"][:] = [1, 2]
    with lib.File(path, "r") as f:
        for name in ("fixed", "vlen", "space", "be"):
            tt = f[name].id.get_type()
            out.append((name, f[name].dtype, f[name][()].tolist(), tt.get_order()
                        if hasattr(tt, "get_order") else
                        (tt.get_strpad(), tt.get_cset(), tt.is_variable_str())))
    return out


def test_types_changed_in_place_match_h5py(tmp_path):
    assert _strings(purehep, str(tmp_path / "p.h5")) == _strings(h5py, str(tmp_path / "h.h5"))


def _shape_of(tid):
    """A type id's class, size, opaque tag and members (compound, array), recursively."""
    out = [type(tid).__name__, tid.get_class(), tid.get_size()]
    if tid.get_class() == h5py.h5t.OPAQUE:
        out.append(tid.get_tag())
    if tid.get_class() == h5py.h5t.COMPOUND:
        out += [_shape_of(tid.get_member_type(i)) for i in range(tid.get_nmembers())]
    if tid.get_class() == h5py.h5t.ARRAY:
        out.append(_shape_of(tid.get_super()))
    return out


_ENUM = h5py.enum_dtype({"a": 1, "b": 7}, basetype="i1")


@pytest.mark.parametrize("dtype", [
    h5py.string_dtype(), h5py.string_dtype("ascii"), h5py.vlen_dtype("i4"), _ENUM,
    np.dtype(bool), h5py.ref_dtype, h5py.regionref_dtype, np.dtype("<f4"), np.dtype("S3"),
    np.dtype([("a", h5py.string_dtype()), ("b", _ENUM), ("c", _ENUM, (2,))]),
    np.dtype((_ENUM, (3,))),
], ids=lambda d: str(d))
@pytest.mark.parametrize("logical", [False, True])
def test_py_create_logical_and_conversion_forms_match_h5py(dtype, logical):
    """py_create gives the stored (logical) type, or without ``logical`` the type h5py
    converts through: Python objects as an 8-byte opaque PYTHON:OBJECT pointer, enumerations
    as their integer base, member by member; h5py's own dtypes are understood too."""
    assert _shape_of(h5t.py_create(dtype, logical=logical)) == \
        _shape_of(h5py.h5t.py_create(dtype, logical=logical))


def _float_setters(mod):
    """libhdf5's float setters (H5Tset_fields, _ebias, _norm, _inpad, _size) and their
    checks, on copies of the predefined IEEE types."""
    out = []
    for fields in [(14, 9, 5, 0, 9), (16, 9, 5, 0, 9), (15, 10, 6, 0, 10), (9, 10, 5, 0, 9),
                   (15, 9, 5, 0, 10), (14, 10, 5, 0, 10), (15, 11, 5, 0, 10)]:
        t = mod.h5t.IEEE_F16LE.copy()
        out.append(outcome(lambda: (t.set_fields(*fields), t.get_fields())[1]))
    t = mod.h5t.IEEE_F16LE.copy()
    for setter, values in ((t.set_norm, (0, 1, 2, 3)), (t.set_inpad, (0, 1, 3)),
                           (t.set_ebias, (0, 53, -1))):     # (h5py's get_ebias fails on 0)
        out += [outcome(lambda: setter(v)) for v in values]
    out.append((t.get_norm(), t.get_inpad(), t.get_ebias()))
    for size in (1, 2, 3, 4, 8):
        t = mod.h5t.IEEE_F32LE.copy()
        out.append(outcome(lambda: (t.set_size(size), t.get_size(), t.get_precision(),
                                    t.get_offset(), t.get_fields())[1:]))
    t = mod.h5t.IEEE_F32LE.copy()
    t.set_fields(15, 10, 5, 0, 10)
    out.append(outcome(lambda: (t.set_size(2), t.get_precision(), t.dtype)[1:]))
    t.lock()
    out += [outcome(lambda: t.set_ebias(3)), outcome(lambda: t.set_size(4)),
            outcome(lambda: mod.h5t.IEEE_F16LE.set_fields(14, 9, 5, 0, 9)),
            outcome(lambda: mod.h5t.IEEE_F16LE.lock())]
    return out


def test_float_setters_match_h5py():
    """h5py's test_h5t TestTypeFloatID builds its custom floats with these."""
    assert _float_setters(purehep) == _float_setters(h5py)


# (fields, bias, size, normalization): h5py's test_custom_float_promotion's four layouts, a
# bfloat16, an 8-bit float, a 3-byte one, and layouts without an implied leading bit
CUSTOM_FLOATS = [((14, 9, 5, 0, 9), 53, 2, "implied"), ((15, 9, 6, 0, 9), 53, 2, "implied"),
                 ((15, 10, 5, 0, 10), 15, 2, "implied"), ((15, 10, 5, 0, 10), 258, 2, "implied"),
                 ((15, 7, 8, 0, 7), 127, 2, "implied"), ((7, 3, 4, 0, 3), 7, 1, "implied"),
                 ((23, 16, 7, 0, 16), 63, 3, "implied"), ((15, 10, 5, 0, 10), 15, 2, "none"),
                 ((0, 1, 6, 7, 17), 31, 3, "none")]
FLOAT_VALUES = np.array([0.0, -0.0, 1.0, -1.5, 3.14159265358979, 1e-3, -2.5e-5, 6.1e-5, 1e-7,
                         65504.0, 65520.0, 1e30, -1e300, 1e-300, 5e-324, np.inf, -np.inf,
                         np.nan, 1.99951171875, 1.9997, 0.099975586, 7.0e-46, 1.2e-38])


def _custom_float_file(lib, path, fields, bias, size, norm):
    """A dataset and an attribute of the layout, written as the h5py test writes (h5d.create
    and DatasetID.write, from singles), from doubles through create_dataset and item
    assignment, chunked and compressed. Without an implied leading bit the values are given
    in the layout's dtype: libhdf5 reads the denormals of such a layout back as other numbers
    than it wrote, so purehep, which holds values in that dtype, does not convert wider ones
    as libhdf5 does."""
    t = lib.h5t.IEEE_F64LE.copy()
    t.set_fields(*fields)
    t.set_ebias(bias)
    t.set_norm(getattr(lib.h5t, f"NORM_{norm.upper()}"))
    t.set_size(size)
    t.lock()
    with np.errstate(over="ignore", under="ignore"):
        doubles = FLOAT_VALUES if norm == "implied" else FLOAT_VALUES.astype(t.dtype)
        singles = doubles.astype(np.float32)
    fid = lib.h5f.create(path.encode())
    space = lib.h5s.create_simple((len(doubles),))
    ds = lib.h5d.create(fid, b"low", t, space)
    ds.write(lib.h5s.ALL, lib.h5s.ALL, singles)
    ds.close()
    fid.close()
    with lib.File(path, "a") as f:
        f.create_dataset("doubles", data=doubles, dtype=lib.Datatype(t))
        f.create_dataset("grown", (len(doubles),), dtype=lib.Datatype(t),
                         maxshape=(None,))[...] = doubles
        f.create_dataset("chunked", data=singles, dtype=lib.Datatype(t), chunks=(5,),
                         compression="gzip")
        f["low"].attrs.create("attr", doubles[:6], dtype=lib.Datatype(t))


@pytest.mark.parametrize("layout", CUSTOM_FLOATS, ids=str)
def test_custom_floats_written_as_libhdf5(tmp_path, layout):
    """Numbers written into custom float layouts, from doubles and singles, read back the
    same from purehep's file as from h5py's, by either library (libhdf5's H5T__conv_f_f:
    rounding, denormals, overflow to infinity, NaN)."""
    files = {}
    for lib in (h5py, purehep):
        files[lib] = str(tmp_path / f"{lib.__name__}.h5")
        _custom_float_file(lib, files[lib], *layout)
    for reader in (h5py, purehep):
        got = []
        for lib in (h5py, purehep):
            with reader.File(files[lib], "r") as f:
                got.append([(f[n].dtype, f[n][()].tobytes())
                            for n in ("low", "doubles", "chunked", "grown")] +
                           [f["low"].attrs["attr"].tobytes()])
        assert got[0] == got[1], reader.__name__


def test_unnormalized_float_specials_read_as_libhdf5(tmp_path):
    """A layout that stores its leading bit (H5T_NORM_NONE): an exponent of all ones is
    infinity with a mantissa of zeros or of the leading bit alone, NaN otherwise (purehep
    read every such value as a finite number)."""
    t = h5py.h5t.IEEE_F64LE.copy()
    t.set_fields(15, 10, 5, 0, 10)
    t.set_ebias(15)
    t.set_norm(h5py.h5t.NORM_NONE)
    t.set_size(2)
    raw = np.array([0x7C00, 0xFC00, 0x7E00, 0x7FFF, 0x7C01, 0xFE01, 0x3E00, 0x0001, 0x80D2],
                   "<u2")
    path = str(tmp_path / "none.h5")
    with h5py.File(path, "w") as f:
        ds = f.create_dataset("x", (len(raw),), dtype=h5py.Datatype(t))
        ds.id.write(h5py.h5s.ALL, h5py.h5s.ALL, raw, mtype=t)
    with h5py.File(path, "r") as theirs, purehep.File(path, "r") as mine:
        assert mine["x"].dtype == theirs["x"].dtype
        assert mine["x"][()].tobytes() == theirs["x"][()].tobytes()


@pytest.mark.parametrize("layout", ["contiguous", "chunked"])
def test_existing_custom_float_dataset_modified_as_h5py(tmp_path, layout):
    """Values written into a dataset of a custom float layout in a file opened "r+" are
    converted into the layout (purehep wrote the bytes of the dtype h5py names for it, twice
    as wide, over the dataset and past it, and failed on chunks)."""
    t = h5py.h5t.IEEE_F16LE.copy()
    t.set_fields(14, 9, 5, 0, 9)
    t.set_ebias(53)
    out = []
    for lib in (h5py, purehep):
        path = str(tmp_path / f"{lib.__name__}.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=np.full(6, 1e-9, np.float32), dtype=h5py.Datatype(t),
                             chunks=(2,) if layout == "chunked" else None)
            f["after"] = np.arange(3)
        with lib.File(path, "r+") as f:
            f["x"][1] = 2e-9
            f["x"][3:5] = np.array([3e-9, -1e-12])
        with h5py.File(path, "r") as f:
            out.append((f["x"][()].tolist(), f["after"][()].tolist()))
    assert out[0] == out[1]
