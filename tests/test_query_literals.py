"""Literals whose meaning depends on numpy's comparison rules, answered through every search
index kind exactly as a scan answers them (found by a randomized query fuzz, session 14):
a float beyond 2**53 against a 64-bit integer column (compared in float64), BETWEEN bounds
out of order as Python numbers but equal in the column's type, the empty string, a number
against a string column, a literal with trailing NULs on a fixed-length string column, and
a BITMAP whose values dataset another program deleted."""
import numpy as np
import pytest

import purehep
from purehep.table import Table, create_table

KINDS = ("CHUNK_MINMAX", "SORTED_ROWS", "BITMAP", "CHUNK_BLOOM")


def _answers(path, query):
    """(scan rows, trust-mode rows, verify-mode rows once the index is in use)."""
    with purehep.File(path, "r") as f:
        scan = Table(f["t"], indexes="ignore").query(query).tolist()
        trust = Table(f["t"], indexes="trust").query(query).tolist()
        t = Table(f["t"])
        verify = [t.query(query).tolist() for _ in range(20)][-1]
    return scan, trust, verify


def _table(tmp_path, values, kind, chunks=2):
    path = tmp_path / f"{kind}.h5"
    with purehep.File(path, "w") as f:
        t = create_table(f, "t", {"a": values}, chunks=chunks)
        t.create_search_index("a", kind)
    return path


CASES = [
    ("i8", [2 ** 53 + 1, 5, 7, 9], "a = 9007199254740992.0", [0]),
    ("i8", [2 ** 63 - 1, 5], "a IN (9.223372036854776e18)", [0]),
    ("u8", [2 ** 64 - 1, 1], "a = 1.8446744073709552e19", [0]),
    ("i8", [2 ** 53 + 1, 5], "a BETWEEN 9007199254740993 AND 9007199254740992.0", [0]),
    ("f4", [0.1, 0.5, 2.0], "a BETWEEN 0.10000000001 AND 0.1", [0]),
    ("f4", [16777216.0, 1.0], "a BETWEEN 16777217 AND 16777216", [0]),
    ("S2", [b"x", b"", b"ab"], "a = '' OR a = 'x'", [0, 1]),
    ("S2", [b"x", b"y", b"ab"], "a = 5", []),
    ("S2", [b"x", b"y", b"ab"], "a != 5", [0, 1, 2]),
    ("S2", [b"x", b"y", b"ab"], "a IN (5, 'y')", [1]),
    ("S2", [b"b", b"y", b"ab"], "a = 'b\x00'", [0]),
    ("S2", [b"b", b"y", b"ab"], "a BETWEEN 'b\x00' AND 'b'", [0]),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype,values,query,want", CASES,
                         ids=[c[2] for c in CASES])
def test_indexes_answer_as_the_scan(tmp_path, kind, dtype, values, query, want):
    path = _table(tmp_path, np.array(values, dtype=dtype), kind)
    scan, trust, verify = _answers(path, query)
    assert scan == want
    assert trust == scan and verify == scan


def test_bitmap_whose_values_were_deleted(tmp_path):
    """h5py deletes a BITMAP's values dataset (libhdf5 shortens the file, the index's
    reference dangles): "verify" mode answers as the scan, "trust" mode raises a purehep
    error naming the structure it could not read."""
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "b.h5"
    with purehep.File(path, "w") as f:
        t = create_table(f, "t", {"a": (np.arange(300) % 8).astype("u4")}, chunks=64)
        t.create_search_index("a", "BITMAP")
        t.append({"a": np.arange(20, 21, dtype="u4")})
    with h5py.File(path, "r+") as f:
        del f["t/_search_indexes/a__bitmap__values"]
    with purehep.File(path, "r") as f:
        scan = Table(f["t"], indexes="ignore").query("a = 3").tolist()
        assert scan == list(range(3, 300, 8))
        assert Table(f["t"]).query("a = 3").tolist() == scan
        with pytest.raises(purehep.PurehepError):
            Table(f["t"], indexes="trust").query("a = 3")
