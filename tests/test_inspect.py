"""purehep inspect: the byte map of h5py-written files (earliest and latest, every chunk
index) accounts for every byte, and the CLI renders it (text, JSON, --at)."""
import json

import h5py
import numpy as np
import pytest

from purehep.cli import main
from purehep.inspect import account, walk_path
from purehep.inspect.account import classify_gaps


def build(path, libver):
    with h5py.File(path, "w", libver=(libver, "latest")) as f:
        f.attrs["title"] = "inspect sample"
        f["contig"] = np.arange(100.0).reshape(10, 10)
        g = f.create_group("g")
        g.attrs["units"] = "m"
        g.create_dataset("fixed", data=np.arange(1000, dtype="i4").reshape(10, 100),
                         chunks=(5, 10), compression="gzip")
        g.create_dataset("paged", data=np.arange(3000, dtype="i2"), chunks=(2,))
        g.create_dataset("single", data=np.arange(10, dtype="i4"), chunks=(10,))
        g.create_dataset("ea", data=np.arange(3000, dtype="i4"), chunks=(2,), maxshape=(None,))
        g.create_dataset("bt2", data=np.arange(400, dtype="f4").reshape(20, 20), chunks=(5, 5),
                         maxshape=(None, None), shuffle=True, compression="gzip")
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((10,))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        space = h5py.h5s.create_simple((100,))
        h5py.h5d.create(g.id, b"implicit", h5py.h5t.STD_I16LE, space, dcpl=dcpl)
        f.create_dataset("vlen", data=["a", "bb", "ccc"], dtype=h5py.string_dtype())
        many = f.create_group("many")
        for i in range(12):
            many.attrs[f"a{i:02d}"] = np.arange(i + 1)
            many.create_group(f"m{i:02d}")
    return path


INDEXES = {"earliest": ["v1 B-tree node"],
           "latest": ["fixed array header", "fixed array data block", "extensible array header",
                      "extensible array index block", "extensible array secondary block",
                      "extensible array data block", "v2 B-tree header", "v2 B-tree leaf node"]}


@pytest.fixture(scope="module", params=["earliest", "latest"])
def sample(request, tmp_path_factory):
    lv = request.param
    return lv, build(str(tmp_path_factory.mktemp("inspect") / f"{lv}.h5"), lv)


def test_every_byte_accounted(sample):
    libver, path = sample
    fmap = walk_path(path)
    acc = classify_gaps(fmap, account(fmap))
    assert not fmap.findings
    parts = acc["metadata"] + acc["raw"] + acc["free"] + acc["userblock"] + acc["unclaimed"]
    assert parts == acc["size"] == len(open(path, "rb").read())
    assert acc["overlapping"] == 0
    # what h5py leaves unclaimed is zero-filled space the library freed or left in an
    # aggregator block (it does not persist free space by default) or stale structures
    assert acc["unclaimed_other"] == 0
    names = {s.name for top in fmap.structures for _d, s in top.walk()}
    for name in INDEXES[libver] + ["object header", "global heap collection", "raw data chunk",
                                   "contiguous raw data"]:
        assert name in names, name
    if libver == "latest":
        assert "fixed array data block page" in names and "fractal heap header" in names
    else:
        assert {"local heap", "symbol table node"} <= names
    # the raw data chunks are those h5py reports
    with h5py.File(path, "r") as f:
        for name in ("g/fixed", "g/ea", "g/bt2", "g/single", "g/implicit", "g/paged"):
            ds = f[name]
            want = sorted(ds.id.get_chunk_info(i).byte_offset
                          for i in range(ds.id.get_num_chunks()))
            got = sorted(s.offset for s in fmap.structures
                         if s.name == "raw data chunk" and s.owner == "/" + name)
            assert got == want, name


def test_structures_nest_inside_their_parents(sample):
    _lv, path = sample
    fmap = walk_path(path)
    for top in fmap.structures:
        for _d, s in top.walk():
            for c in s.children:
                assert s.offset <= c.offset and c.end <= s.end, (s.name, c.name)


def test_cli_inspect_text_json_and_at(sample, capsys):
    _lv, path = sample
    assert main(["inspect", path]) == 0
    text = capsys.readouterr().out
    assert "superblock" in text and "account: metadata" in text
    assert main(["inspect", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    acc = doc["account"]
    assert acc["metadata"] + acc["raw"] + acc["free"] + acc["userblock"] + acc["unclaimed"] \
        == doc["size"]
    ohdr = next(s for s in doc["structures"] if s["name"] == "object header"
                and s.get("owner") == "/contig")
    msg = ohdr["children"][1]
    at = msg["offset"] + 1
    assert main(["inspect", path, "--at", str(at)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "object header" in out[0] and msg["name"] in out[1]
    assert main(["inspect", path, "--at", str(at), "--json"]) == 0
    chain = json.loads(capsys.readouterr().out)["structures"]
    assert [c["name"] for c in chain] == ["object header", msg["name"]]


def test_userblock_and_unclaimed_offsets(tmp_path, capsys):
    path = str(tmp_path / "ub.h5")
    with h5py.File(path, "w", userblock_size=512) as f:
        f["x"] = np.arange(10)
    fmap = walk_path(path)
    acc = account(fmap)
    assert acc["userblock"] == 512 and not fmap.findings
    assert acc["metadata"] + acc["raw"] + acc["free"] + acc["userblock"] + acc["unclaimed"] \
        == acc["size"]
    assert main(["inspect", path, "--at", "100"]) == 0
    assert "user block" in capsys.readouterr().out
