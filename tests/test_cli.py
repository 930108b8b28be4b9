"""purehep ls and dump against h5py's view of the same files; python -m purehep."""
import json
import subprocess
import sys

import h5py
import numpy as np
import pytest

from purehep.cli import main
from purehep.inspect.values import decode
from test_inspect import build


@pytest.fixture(scope="module", params=["earliest", "latest"])
def sample(request, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cli") / f"{request.param}.h5")
    build(path, request.param)
    with h5py.File(path, "a") as f:
        f["compound"] = np.array([(1, 2.5, b"x"), (3, np.nan, b"yz")],
                                 dtype=[("i", "i4"), ("f", "f8"), ("s", "S3")])
        f["complex"] = np.array([1 + 2j, 3 - 4j])
        f.create_dataset("vl", data=np.array([np.arange(2), np.arange(4)], dtype=object),
                         dtype=h5py.vlen_dtype("i4"))
        f["enum"] = np.array([0, 1, 2], dtype=h5py.enum_dtype({"R": 0, "G": 1, "B": 2}, "u1"))
        f["soft"] = h5py.SoftLink("/g")
        f.attrs["vec"] = np.arange(4, dtype=">i2")
    return path


def run(capsys, *argv):
    status = main(list(argv))
    return status, capsys.readouterr().out


def test_ls_matches_h5py(sample, capsys):
    status, out = run(capsys, "ls", "-r", sample)
    assert status == 0
    lines = {ln.split()[0]: ln for ln in out.splitlines()}
    with h5py.File(sample, "r") as f:
        def visit(name, obj):
            line = lines["/" + name]
            if isinstance(obj, h5py.Dataset):
                assert "Dataset" in line
                dims = "{" + ", ".join(str(s) if m == s else f"{s}/{'Inf' if m is None else m}"
                                       for s, m in zip(obj.shape, obj.maxshape)) + "}"
                assert (dims if obj.shape else "SCALAR") in line, line
            else:
                assert line.split()[1] == "Group"
        f.visititems(visit)
        assert "Soft Link {/g}" in lines["/soft"]
    status, out = run(capsys, "ls", sample + "/g")
    with h5py.File(sample, "r") as f:
        assert [ln.split()[0] for ln in out.splitlines()] == list(f["g"].keys())
    status, out = run(capsys, "ls", "-v", sample + "/g/fixed")
    assert "Chunks:    {5, 10}" in out and "deflate" in out and "Storage:" in out
    with h5py.File(sample, "r") as f:
        assert f"{f['g/fixed'].id.get_storage_size()} allocated bytes" in out


def test_dump_header_matches_h5py(sample, capsys):
    status, out = run(capsys, "dump", "-H", sample)
    assert status == 0 and "DATA {" not in out
    with h5py.File(sample, "r") as f:
        for name in f:
            assert f'"{name}"' in out
        assert "DATASPACE  SIMPLE { ( 10, 10 ) / ( 10, 10 ) }" in out
        assert "H5T_IEEE_F64LE" in out
    status, out = run(capsys, "dump", "-d", "/g/single", sample)
    assert "(0): 0, 1, 2, 3, 4, 5, 6, 7, 8, 9" in out


def _compare(node, h):
    if isinstance(h, h5py.Dataset):
        assert node["kind"] == "dataset"
        assert tuple(node["shape"]) == h.shape
        got, want = decode(node["value"]), h[()]
        _same(got, want)
    else:
        assert node["kind"] == "group"
        assert list(node["members"]) == list(h.keys())
        for k, sub in node["members"].items():
            if sub["kind"] in ("group", "dataset"):
                _compare(sub, h[k])
    for name in h.attrs:
        _same(decode(node["attrs"][name]), h.attrs[name])


def _same(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape
    if want.dtype.kind == "U":          # h5py gives str for scalar vlen strings
        assert [str(x) for x in got.reshape(-1)] == [str(x) for x in want.reshape(-1)]
    elif want.dtype.kind == "O":
        for a, b in zip(got.reshape(-1), want.reshape(-1)):
            if isinstance(b, np.ndarray):
                np.testing.assert_array_equal(a, b)
            else:
                assert (b.decode() if isinstance(b, bytes) and isinstance(a, str) else b) == a
    elif want.dtype.names:
        for n in want.dtype.names:
            np.testing.assert_array_equal(got[n], want[n])
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_dump_json_round_trips(sample, capsys):
    status, out = run(capsys, "dump", "--json", sample)
    assert status == 0
    doc = json.loads(out)
    with h5py.File(sample, "r") as f:
        _compare(doc["object"], f)
    status, out = run(capsys, "dump", "--json", "-d", "/compound", sample)
    node = json.loads(out)["object"]
    with h5py.File(sample, "r") as f:
        _same(decode(node["value"]), f["compound"][()])
    status, out = run(capsys, "dump", "--json", "-H", sample)
    assert "value" not in json.loads(out)["object"]["members"]["contig"]


def test_python_m_purehep_and_errors(sample, tmp_path):
    r = subprocess.run([sys.executable, "-m", "purehep", "ls", sample], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "contig" in r.stdout
    r = subprocess.run([sys.executable, "-m", "purehep", "ls", str(tmp_path / "none.h5")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "purehep ls" in r.stderr


def test_query(tmp_path, capsys):
    """``purehep query`` answers for a HEP001 table (through its search index), a 2005 index
    table and a compound dataset h5py wrote, as numpy evaluates the same predicate."""
    import purehep
    from purehep import index, table
    p = tmp_path / "q.h5"
    rng = np.random.default_rng(4)
    ts, energy = np.arange(5000, dtype="i8"), rng.random(5000)
    with h5py.File(p, "w") as f:
        f["rec"] = np.array(list(zip(ts, energy)), dtype=[("ts", "i8"), ("e", "f8")])
    with purehep.File(p, "a") as f:
        t = table.create_table(f, "events", {"ts": ts, "energy": energy}, chunks=512)
        t.create_search_index("ts", "CHUNK_MINMAX")
        index.create_index(f, "by_e", {"e": energy, "target": [f["rec"].ref] * 5000},
                           keys=["e"], target="target")
    want = np.flatnonzero((ts > 1000) & (ts <= 1010) & (energy < 0.5))
    code, text = run(capsys, "query", f"{p}/events", "ts > 1000 AND ts <= 1010 AND energy < 0.5")
    assert code == 0 and text.splitlines()[0].startswith(f"{len(want)} rows")
    assert [int(line.split(":")[0]) for line in text.splitlines()[1:]] == want.tolist()
    code, text = run(capsys, "query", f"{p}/rec", "ts BETWEEN 10 AND 12", "--json")
    got = json.loads(text)
    assert got["rows"] == [10, 11, 12] and got["columns"]["e"] == energy[10:13].tolist()
    code, text = run(capsys, "query", f"{p}/by_e", "e < 0.001", "--json")
    assert sorted(json.loads(text)["columns"]["e"]) == sorted(energy[energy < 0.001].tolist())
    assert run(capsys, "query", f"{p}/events", "ts >> 3")[0] == 2
    assert run(capsys, "query", f"{p}/events/ts", "ts > 3")[0] == 2
