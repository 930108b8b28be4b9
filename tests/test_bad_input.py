"""Truncated, corrupted and fuzzed files: always a purehep error naming structure and offset,
never IndexError/struct.error/MemoryError, a hang or an unbounded allocation."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import purehep
from badinput import build_purehep_sample, build_sample, check_damaged, warm_up


@pytest.fixture(scope="module", params=["earliest", "latest", "purehep-earliest",
                                        "purehep-latest"])
def sample_bytes(request, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bad") / f"s_{request.param}.h5")
    writer, _, libver = request.param.rpartition("-")
    (build_purehep_sample if writer else build_sample)(path, libver)
    data = open(path, "rb").read()
    warm_up(data)  # kernels compile before anything is timed or measured
    return data


def test_sample_itself_is_clean(sample_bytes):
    assert check_damaged(sample_bytes) == "ok"


def test_truncated_everywhere(sample_bytes):
    n = len(sample_bytes)
    for cut in list(range(0, 2048, 7)) + list(range(2048, n, max(1, n // 300))):
        outcome = check_damaged(sample_bytes[:cut])
        assert outcome != "ok"


def test_truncation_error_names_structure_and_offset(sample_bytes):
    with pytest.raises(purehep.TruncatedError) as err:
        purehep.File(sample_bytes[: len(sample_bytes) // 2])
    assert err.value.structure and err.value.offset is not None
    with pytest.raises(purehep.FormatError, match="signature"):
        purehep.File(b"\0" * 4096)


def test_flipped_bytes_in_metadata(sample_bytes):
    n = len(sample_bytes)
    outcomes = {}
    # every 29th byte, its low bit or the whole byte in turn (tests/test_fuzz.py flips far
    # more, in workers)
    for k, pos in enumerate(range(0, min(n, 6000), 29)):
        data = bytearray(sample_bytes)
        data[pos] ^= (0x01, 0xFF)[k % 2]
        outcome = check_damaged(data)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert set(outcomes) <= {"ok", "KeyError", "FormatError", "ChecksumError", "TruncatedError",
                             "UnsupportedFeatureError", "AllocationError", "LinkTraversalError",
                             "DimensionScaleError"}, outcomes


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_fuzz_short(sample_bytes, data):
    _fuzz_case(sample_bytes, data)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("PUREHEP_FUZZ_CASES", 10000)), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.data())
def test_fuzz_long(sample_bytes, data):
    _fuzz_case(sample_bytes, data)


def _fuzz_case(sample_bytes, data):
    buf = bytearray(sample_bytes)
    n = data.draw(st.integers(1, 16))
    for _ in range(n):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        buf = buf[: data.draw(st.integers(0, len(buf)))]
    check_damaged(buf)


# -- what libhdf5 refuses or raises, purehep refuses or raises alike ---------------------------
def _message_offset(path, name):
    """Absolute offset of the body of the first ``name`` message in the file."""
    from purehep.inspect import walk_path
    for top in walk_path(path).structures:
        for _, s in top.walk():
            if s.name == name:
                return s.offset + (8 if top.version == 1 else 4)
    raise LookupError(name)


def _patch(path, offset, fmt, *values):
    import struct
    data = bytearray(open(path, "rb").read())
    struct.pack_into(fmt, data, offset, *values)
    open(path, "wb").write(data)


def test_soft_link_cycles_raise_as_in_h5py(tmp_path):
    import h5py
    path = str(tmp_path / "loops.h5")
    with h5py.File(path, "w") as f:
        f["loop"] = h5py.SoftLink("/loop")
        f["a"], f["b"] = h5py.SoftLink("/b"), h5py.SoftLink("/a")
        f.create_group("g")["up"] = h5py.SoftLink("/g/up/x")
        f.create_group("t")
        for i in range(17):            # l16 needs 17 traversals: one more than libhdf5 allows
            f[f"l{i}"] = h5py.SoftLink(f"/l{i - 1}" if i else "/t")
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        for name in ("loop", "a", "g/up", "loop/x", "l16"):
            with pytest.raises(RuntimeError):
                h[name]
            with pytest.raises(purehep.LinkTraversalError) as err:
                p[name]
            assert isinstance(err.value, RuntimeError) and "too many links" in str(err.value)
        assert p["l15"].name == "/l15" and h["l15"].name == "/l15"
        for name in ("loop", "a", "g/up", "l16"):
            assert (name in p) == (name in h) is True
        with pytest.raises(RuntimeError):
            h.get("loop")
        with pytest.raises(purehep.LinkTraversalError):
            p.get("loop")


def test_a_whole_read_beyond_memory_is_a_purehep_error(tmp_path):
    import h5py
    path = str(tmp_path / "huge.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("empty", shape=(2 ** 60,), chunks=(1 << 16,), dtype="i1", fillvalue=3)
        f.create_dataset("wide", shape=(2 ** 62, 4), chunks=(1, 4), dtype="i8")
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        for name in ("empty", "wide"):
            with pytest.raises(purehep.AllocationError) as err:
                p[name][()]
            assert isinstance(err.value, MemoryError) and "bytes" in str(err.value)
            assert (p[name][5:9] == h[name][5:9]).all()


def test_datatypes_libhdf5_refuses_are_refused(tmp_path):
    """libhdf5 (1.14.4+) refuses numeric types with more unused bits than precision bits (an
    8 MB "integer" of 32 bits is a damaged size field), rather than allocating by that size."""
    import h5py
    path = str(tmp_path / "big_type.h5")
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("x", shape=(512,), chunks=(16,), dtype="<i4")
    dt, lay = _message_offset(path, "datatype message"), _message_offset(path, "data layout message")
    _patch(path, dt + 4, "<I", 8 << 20)                   # the datatype's size
    _patch(path, lay + 3 + 8 + 4, "<I", 8 << 20)          # the chunk's element size
    with pytest.raises((KeyError, OSError)):
        with h5py.File(path, "r") as h:
            h["x"]
    with purehep.File(path) as p:
        with pytest.raises(purehep.FormatError, match="unused") as err:
            p["x"].dtype
    assert err.value.structure == "datatype message" and err.value.offset is not None


def test_reading_into_empty_and_overlapping_layouts():
    from purehep.io.source import BytesSource
    src = BytesSource(bytes(range(16)))
    empty = np.empty((0, 5), "f8")
    src.readinto(3, empty)                          # nothing to copy, no cast error
    dt = np.dtype({"names": ["a", "b"], "formats": ["<u4", "<u2"], "offsets": [0, 2],
                   "itemsize": 4})
    out = np.empty(2, dt)
    src.readinto(0, out)
    assert out.tobytes() == bytes(range(8))


def test_an_extent_beyond_its_maximum_is_refused_as_libhdf5_does(tmp_path):
    """A dataspace whose dimension exceeds its maximum is damaged (libhdf5 refuses it): read,
    a fixed array index (laid out over the maximum extent) was indexed past its end."""
    import h5py
    path = str(tmp_path / "over.h5")
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("x", data=np.arange(100, dtype="<i4"), chunks=(10,), maxshape=(100,))
    space = _message_offset(path, "dataspace message")
    _patch(path, space + 8, "<Q", 101)                  # dimension 0 of 100 at most
    with pytest.raises((KeyError, OSError, RuntimeError)):
        with h5py.File(path, "r") as h:
            h["x"]
    with purehep.File(path) as p:
        with pytest.raises(purehep.FormatError, match="exceeds its maximum") as err:
            p["x"][()]
    assert err.value.structure == "dataspace message" and err.value.offset is not None


def test_an_unknown_szip_configuration_is_a_type_error_as_in_h5py(tmp_path):
    import h5py
    path = str(tmp_path / "szip_mask.h5")
    with h5py.File(path, "w", libver="earliest") as f:
        f.create_dataset("x", data=np.arange(100, dtype="<i4"), chunks=(10,),
                         compression="szip", compression_opts=("nn", 8))
    pipe = _message_offset(path, "filter pipeline message")
    # version 1: 8 bytes, id, name length, flags, count, "szip\0" padded to 8: the mask
    _patch(path, pipe + 24, "<I", 0x89)                 # its NN bit (0x20) cleared, no EC
    with h5py.File(path, "r") as h, purehep.File(path) as p:
        with pytest.raises(TypeError, match="Unknown SZIP configuration"):
            h["x"].compression
        with pytest.raises(TypeError, match="Unknown SZIP configuration") as err:
            p["x"].compression
    assert isinstance(err.value, purehep.FormatError)
    assert err.value.structure == "filter pipeline message" and err.value.offset is not None
