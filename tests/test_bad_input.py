"""Truncated, corrupted and fuzzed files: always a purehep error naming structure and offset,
never IndexError/struct.error/MemoryError, a hang or an unbounded allocation."""
import os

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
    for pos in range(0, min(n, 6000), 11):
        for mask in (0x01, 0xFF):
            data = bytearray(sample_bytes)
            data[pos] ^= mask
            outcome = check_damaged(data)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert set(outcomes) <= {"ok", "KeyError", "FormatError", "ChecksumError", "TruncatedError",
                             "UnsupportedFeatureError"}, outcomes


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
