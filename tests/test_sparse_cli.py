"""`purehep ls -v` and `purehep dump` on sparse datasets: the layout is named (structured
chunk, sparse, index, per-section filters) and the data is dumped as the defined elements'
coordinates and values, not the dense array (a 10,000 x 10,000 dataset prints one line per
defined element)."""
import json

import numpy as np
import pytest

import purehep
from purehep.cli import main
from purehep.inspect.values import decode


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A 10,000 x 10,000 float32 sparse dataset with 500 defined elements (gzip), and the
    coordinates and values written."""
    path = str(tmp_path_factory.mktemp("sparsecli") / "big.h5")
    rng = np.random.default_rng(4)
    lin = np.sort(rng.choice(10_000 * 10_000, 500, replace=False))
    coords = np.stack(np.unravel_index(lin, (10_000, 10_000)), axis=1)
    values = rng.normal(size=500).astype("f4")
    with purehep.File(path, "w", libver="latest") as f:
        ds = f.create_dataset("m", (10_000, 10_000), "f4", chunks=(1000, 1000), sparse=True,
                              fillvalue=-2.0, compression="gzip")
        ds.write_sparse(coords, values)
    return path, coords, values


def run(capsys, *argv):
    status = main(list(argv))
    return status, capsys.readouterr().out


def test_ls_names_the_layout(big, capsys):
    status, out = run(capsys, "ls", "-v", big[0])
    assert status == 0
    assert "Layout:    structured chunk (sparse, 2 sections)" in out
    assert "Chunks:    (1000, 1000), fixed array index" in out
    assert "section 0 (selection): deflate (1) [4]" in out
    assert "section 1 (values): deflate (1) [4]" in out
    assert "Layout:    4" not in out


def test_dump_lists_defined_elements(big, capsys):
    path, coords, values = big
    status, out = run(capsys, "dump", "-d", "m", path)
    assert status == 0
    lines = out.splitlines()
    assert "   STORAGE_LAYOUT { STRUCTURED_CHUNK SPARSE ( 1000, 1000 ) }" in lines
    assert "   FILLVALUE -2" in lines          # h5dump's %g form of -2.0
    start = lines.index("   DATA {")
    rows = lines[start + 1:start + 1 + len(coords)]
    assert lines[start + 1 + len(coords)] == "   }"
    assert "   DEFINED 500" in lines
    for row, c, v in zip(rows, coords, values):
        label, text = row.strip().split(": ")
        assert label == f"({c[0]},{c[1]})"
        assert float(text) == pytest.approx(float(v), rel=1e-5)     # h5dump's %g
    assert len(lines) < 520            # one line per defined element, not 10^8 values


def test_dump_json(big, capsys):
    path, coords, values = big
    status, out = run(capsys, "dump", "--json", "-d", "m", path)
    assert status == 0
    value = json.loads(out)["object"]["value"]
    assert value["sparse"] is True
    np.testing.assert_array_equal(np.array(value["coords"]), coords)
    np.testing.assert_array_equal(decode(value["values"]), values)
    assert decode(value["fillvalue"]) == np.float32(-2.0)


def test_header_only(big, capsys):
    status, out = run(capsys, "dump", "-H", big[0])
    assert status == 0 and "STRUCTURED_CHUNK SPARSE" in out and "DATA {" not in out
