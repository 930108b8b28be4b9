"""purehep.h5t's predefined types that numpy has no dtype of (bitfields, HDF5 2.0's complex
class) and objects created with a TypeID or h5py's transient ``Datatype(type_id)``, side by side
with h5py: same classes, sizes, orders and dtypes, and files each library reads back alike."""
import h5py
import numpy as np
import pytest

import purehep
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
