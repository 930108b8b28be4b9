"""Modify mode ('a', 'r+') against h5py: the same operations applied by h5py and by purehep to
copies of one file must leave the same content; h5dump must accept purehep's result; append
loops must stay close to h5py's file sizes; deleted space is reused; repack."""
import os
import shutil
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")
import purehep  # noqa: E402
from modify_helpers import make_base, operations, dump  # noqa: E402

H5DUMP = shutil.which("h5dump")
WRITERS = [(h5py, "earliest"), (h5py, "latest"), (purehep, "earliest"), (purehep, "latest")]


def _h5dump_ok(path):
    return subprocess.run([H5DUMP, path], capture_output=True).returncode == 0


@pytest.mark.parametrize("writer,libver", WRITERS, ids=lambda x: getattr(x, "__name__", x))
def test_operations_match_h5py(tmp_path, writer, libver):
    a, b = str(tmp_path / "h5py.h5"), str(tmp_path / "purehep.h5")
    make_base(a, writer, libver)
    shutil.copy(a, b)
    before = dump(b)
    readable = H5DUMP and _h5dump_ok(b)     # h5dump 1.10 cannot read HDF5 2.0's layout v5
    with h5py.File(a, "a") as f:
        operations(f, h5py)
    with purehep.File(b, "a") as f:
        operations(f, purehep)
    expected, found = dump(a), dump(b)
    assert found == expected
    assert found != before
    if readable:
        assert _h5dump_ok(b)
    # and purehep reads its own result, in a second session that changes more
    with purehep.File(b, "r+") as f:
        assert f["ea"][449] == 10149
        f["ea"].resize((460,))
        f["ea"][450:] = 5
        f.attrs["second"] = "session"
    with h5py.File(b, "r") as f:
        assert f["ea"][-10:].tolist() == [5] * 10
        assert f.attrs["second"] == "session"
        assert f["contig"][:].tolist() == expected["contig"][4]


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_header_continuation(tmp_path, libver):
    """Headers written without spare room get continuation blocks."""
    path = str(tmp_path / "c.h5")
    with purehep.File(path, "w", libver=libver) as f:
        f["d"] = np.arange(4)
    with purehep.File(path, "a") as f:
        for i in range(40):
            f["d"].attrs[f"attribute_number_{i}"] = np.arange(i + 1)
    with purehep.File(path, "a") as f:
        f["d"].attrs["attribute_number_3"] = "changed"
        f["d"][1] = 42
    with h5py.File(path, "r") as f:
        assert len(f["d"].attrs) == 40
        assert f["d"].attrs["attribute_number_39"].tolist() == list(range(40))
        assert f["d"].attrs["attribute_number_3"] == "changed"
        assert f["d"][:].tolist() == [0, 42, 2, 3]
    if H5DUMP:
        assert _h5dump_ok(path)


def _append_loop(mod, path, kind, flush_every):
    libver = "earliest" if kind == "stab" else "latest"
    with h5py.File(path, "w", libver=libver) as f:
        if kind == "ea":
            f.create_dataset("d", shape=(0,), maxshape=(None,), chunks=(1000,), dtype="f8")
        elif kind == "bt2":
            f.create_dataset("d", shape=(0, 4), maxshape=(None, None), chunks=(1000, 4),
                             dtype="f8")
        else:
            f.create_group("g")
    with mod.File(path, "a") as f:
        if kind == "stab":
            g = f["g"]
            for i in range(500):
                g.create_dataset(f"ds{i}", data=np.arange(10) + i)
                if flush_every and i % flush_every == 0:
                    f.flush()
        else:
            d = f["d"]
            for i in range(1000):
                n = d.shape[0]
                d.resize(n + 100, axis=0)
                rows = np.arange(n, n + 100, dtype="f8")
                d[n:n + 100] = rows[:, None] if kind == "bt2" else rows
                if flush_every and i % flush_every == 0:
                    f.flush()
    return os.path.getsize(path)


@pytest.mark.parametrize("kind", ["ea", "bt2", "stab"])
@pytest.mark.parametrize("flush_every", [0, 50])
def test_append_loop_sizes(tmp_path, kind, flush_every):
    ref = _append_loop(h5py, str(tmp_path / "h5py.h5"), kind, flush_every)
    path = str(tmp_path / "purehep.h5")
    size = _append_loop(purehep, path, kind, flush_every)
    assert size <= 1.10 * ref, (size, ref)
    with h5py.File(path, "r") as f:
        if kind == "stab":
            assert len(f["g"]) == 500
            assert all(f[f"g/ds{i}"][3] == i + 3 for i in (0, 250, 499))
        else:
            v = f["d"][()].reshape(100000, -1)
            assert (v[:, 0] == np.arange(100000)).all()


@pytest.mark.parametrize("libver", ["earliest", "latest"])
def test_deleted_space_is_reused(tmp_path, libver):
    path = str(tmp_path / "r.h5")
    with h5py.File(path, "w", libver=libver) as f:
        for i in range(4):
            f.create_dataset(f"d{i}", data=np.arange(10000.0))
        f.create_dataset("c", data=np.arange(10000.0), chunks=(1000,))
        f.create_group("g")["x"] = np.arange(5000.0)
    size = os.path.getsize(path)
    with purehep.File(path, "a") as f:
        del f["d1"]
        del f["c"]
        del f["g"]                     # and its member
        f.flush()
        assert f._writer.alloc.free_bytes > 3 * 80000 // 2
        f["n1"] = np.arange(10000.0) + 1
        f.create_dataset("n2", data=np.arange(10000.0), chunks=(1000,))
        f["n3"] = np.arange(5000.0)
    assert os.path.getsize(path) <= size + 4096
    with h5py.File(path, "r") as f:
        assert sorted(f) == ["d0", "d2", "d3", "n1", "n2", "n3"]
        assert f["n1"][-1] == 10000.0 and f["n2"][-1] == 9999.0 and f["d3"][-1] == 9999.0


def test_overwrite_filtered_chunk_that_grows(tmp_path):
    path = str(tmp_path / "g.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("z", data=np.zeros(1000), chunks=(100,), compression="gzip")
    rng = np.random.default_rng(1)
    noise = rng.random(100)
    with purehep.File(path, "r+") as f:
        f["z"][200:300] = noise                # compresses far worse than zeros
    with h5py.File(path, "r") as f:
        v = f["z"][:]
    assert (v[200:300] == noise).all() and not v[:200].any() and not v[300:].any()


def test_modes(tmp_path):
    path = str(tmp_path / "new.h5")
    with purehep.File(path, "a") as f:        # 'a' creates a missing file
        f["x"] = np.arange(3)
    with purehep.File(path, "r+") as f:
        f["y"] = np.arange(2)
        assert sorted(f) == ["x", "y"]
        assert f["x"][1] == 1
    with pytest.raises(FileNotFoundError):
        purehep.File(str(tmp_path / "missing.h5"), "r+")
    with h5py.File(path, "r") as f:
        assert sorted(f) == ["x", "y"]


@pytest.mark.parametrize("writer,libver", WRITERS[:2] + WRITERS[3:],
                         ids=lambda x: getattr(x, "__name__", x))
def test_repack(tmp_path, writer, libver):
    src, dst = str(tmp_path / "s.h5"), str(tmp_path / "d.h5")
    make_base(src, writer, libver)
    with purehep.File(src, "a") as f:
        operations(f, purehep)
    from purehep.cli import main
    assert main(["repack", src, dst]) == 0
    assert dump(dst) == dump(src)
    assert os.path.getsize(dst) < os.path.getsize(src)


# --- incremental updates (purehep.write.incremental) ---------------------------------------------

def _check_clean(path):
    from purehep.cli import main
    assert main(["check", path]) == 0


def _small_k_file(path, leaf_k=2, internal_k=2):
    """An earliest-format file whose groups have tiny B-tree / symbol table nodes (so that a
    few hundred names split nodes over several levels): h5py writes it, then the superblock's
    group K values are lowered (the existing nodes hold fewer entries than the new limits)."""
    import struct
    with h5py.File(path, "w", libver="earliest") as f:
        g = f.create_group("g")
        for i in range(3):
            g.create_dataset(f"x{i}", data=[i])
        f.create_group("empty")
    with open(path, "r+b") as fh:
        fh.seek(16)
        fh.write(struct.pack("<HH", leaf_k, internal_k))


def test_symbol_table_inserts_split_levels(tmp_path):
    import random
    path = str(tmp_path / "k.h5")
    _small_k_file(path)
    names = [f"n{i:05d}" for i in range(700)]
    random.Random(2).shuffle(names)
    names = sorted(names[:250]) + names[250:]        # appends at the end, then anywhere
    with purehep.File(path, "a") as f:
        for j, n in enumerate(names):
            f["g"].create_dataset(n, data=[j])
            if j % 9 == 0:
                f["g"][n + "_s"] = purehep.SoftLink("/g/x1")
            if j % 23 == 0:
                f.flush()
        for j in range(40):
            f["empty"].create_group(f"e{j:02d}")
    with h5py.File(path, "r") as f:
        g = f["g"]
        assert len(g) == 3 + 700 + 78 and len(f["empty"]) == 40
        for j, n in enumerate(names):
            assert g[n][0] == j
        assert g[names[9] + "_s"][0] == 1
    _check_clean(path)
    with h5py.File(path, "a") as f:                  # libhdf5 keeps inserting into our nodes
        for i in range(100):
            f["g"].create_dataset(f"h{i}", data=[i])
    with h5py.File(path, "r") as f:
        assert len(f["g"]) == 881 and f["g/h99"][0] == 99 and f["g"][names[7]][0] == 7
    _check_clean(path)


def test_commit_in_big_group_writes_little(tmp_path):
    """Adding one member to a 5,000-member symbol-table group writes ~1 KB, not the group."""
    path = str(tmp_path / "big.h5")
    with h5py.File(path, "w", libver="earliest") as f:
        g = f.create_group("g")
        for i in range(5000):
            g.create_group(f"m{i:05d}")
    size = os.path.getsize(path)
    with purehep.File(path, "a") as f:
        g = f["g"]
        sink = f._writer.sink
        for name in ("m02500x", "m04999z", "a"):
            before = sink.bytes_written
            g.create_group(name)
            f.flush()
            assert sink.bytes_written - before < 4096
    assert os.path.getsize(path) - size < 8192
    with h5py.File(path, "r") as f:
        assert len(f["g"]) == 5003 and "m02500x" in f["g"] and "m02500" in f["g"]


def _count_edits(monkeypatch):
    """Count the finish() calls of the incremental editors (each = one in-place update)."""
    import collections
    from purehep.write import incremental as I
    counts = collections.Counter()
    for cls in (I.EAEditor, I.V2TreeEditor, I.SymbolTableEditor, I.ChunkBTreeEditor):
        orig = cls.finish

        def finish(self, patches, orig=orig, name=cls.__name__):
            counts[name] += 1
            return orig(self, patches)
        monkeypatch.setattr(cls, "finish", finish)
    return counts


@pytest.mark.parametrize("kind", ["ea", "ea2d", "eagz", "bt2", "bt2gz", "bt1", "bt1gz"])
def test_chunk_index_appends_in_place(tmp_path, monkeypatch, kind):
    """Appends commit into the existing extensible array / v2 B-tree (new data and secondary
    blocks, B-tree splits over several levels); h5py and purehep check agree."""
    counts = _count_edits(monkeypatch)
    path = str(tmp_path / f"{kind}.h5")
    gz = "gzip" if kind.endswith("gz") else None
    with h5py.File(path, "w", libver="earliest" if kind.startswith("bt1") else "latest") as f:
        if kind == "ea2d":
            f.create_dataset("d", shape=(0, 6), maxshape=(None, 6), chunks=(3, 2), dtype="i8")
        elif kind.startswith("ea"):
            f.create_dataset("d", shape=(0,), maxshape=(None,), chunks=(4,), dtype="i8",
                             compression=gz)
        else:
            f.create_dataset("d", shape=(0, 3), maxshape=(None, None), chunks=(2, 2),
                             dtype="i8", compression=gz)
    with purehep.File(path, "a") as f:
        d = f["d"]
        for i in range(400):
            n = d.shape[0]
            d.resize(n + 3, axis=0)
            rows = np.arange(n, n + 3)
            d[n:n + 3] = rows[:, None] * 10 + np.arange(d.shape[1]) if d.ndim == 2 else rows
            if i % 7 == 0:
                f.flush()
            if i % 50 == 0 and kind.startswith("bt"):       # grow the other axis too
                d.resize(d.shape[1] + 1, axis=1)
                d[:, -1] = -np.arange(d.shape[0])
        final = d[()]
    editor = "EAEditor" if kind.startswith("ea") else \
        "V2TreeEditor" if kind.startswith("bt2") else "ChunkBTreeEditor"
    assert counts[editor] > 50
    with h5py.File(path, "r") as f:
        v = f["d"][()]
    assert (v == final).all()
    assert (v.reshape(len(v), -1)[:, 0] == np.arange(1200) * (10 if v.ndim == 2 else 1)).all()
    _check_clean(path)
    with h5py.File(path, "a") as f:                  # libhdf5 goes on appending
        f["d"].resize(1210, axis=0)
        f["d"][1200:] = 7
    with h5py.File(path, "r") as f:
        assert (f["d"][1200:] == 7).all() and (f["d"][:1200] == final).all()


def test_write_existing_chunked_strings(tmp_path):
    """Writing into an existing chunked variable-length string dataset (its values go to new
    global heap collections; the dataset's other storage settings are kept)."""
    p = tmp_path / "s.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("s", data=np.array([b"a", b"bc"] * 10, dtype=object),
                         dtype=h5py.string_dtype("ascii"), chunks=(4,))
    with purehep.File(p, "r+") as f:
        f["s"][0] = b"zz"
        f["s"][17:19] = [b"x", b"yyy"]
    with h5py.File(p) as f:
        want = [b"a", b"bc"] * 10
        want[0], want[17], want[18] = b"zz", b"x", b"yyy"
        assert f["s"][()].tolist() == want and f["s"].chunks == (4,)


def test_resize_existing_strings_first(tmp_path):
    """Resizing a variable-length string dataset before anything else touches it in r+ mode
    (its values are loaded at the extent they have in the file, then resized)."""
    p = tmp_path / "r.h5"
    with purehep.File(p, "w") as f:
        f.create_dataset("s", data=np.array(["a", "bc", "d"], dtype=object),
                         dtype=purehep.string_dtype(), chunks=(4,), maxshape=(None,))
    with purehep.File(p, "r+") as f:
        f["s"].resize((6,))
        f["s"][3:] = ["x", "y", "z"]
    with h5py.File(p) as f:
        assert f["s"].asstr()[()].tolist() == ["a", "bc", "d", "x", "y", "z"]


_VSTR = h5py.string_dtype()
NULL_STRING_TYPES = {   # (dtype, element 1 with strings, element 3 with empty strings, new 2)
    "member": ([("a", "i4"), ("s", _VSTR)], (1, "x"), (3, ""), (2, "y")),
    "array_member": ([("a", "i4"), ("s", _VSTR, (2,))], (1, ["x", "y"]), (3, ["", ""]),
                     (2, ["z", ""])),
    "nested": ([("a", "i4"), ("n", [("s", h5py.string_dtype("ascii")), ("b", "f8")])],
               (1, (b"x", 0.5)), (3, (b"", 1.5)), (2, (b"y", 2.5))),
    "array": ((_VSTR, (2,)), np.array(["x", "y"], object), np.array(["", ""], object),
              np.array(["z", ""], object)),
}
NULL_STRING_OPS = {
    "write": lambda ds, new: ds.__setitem__(2, new),
    "resize": lambda ds, new: ds.resize((7,)),
    "attribute": lambda ds, new: ds.attrs.__setitem__("z", 1),
    "rewrite": lambda ds, new: ds.__setitem__(slice(3, 4), ds[3:4]),
}


@pytest.mark.skipif(H5DUMP is None, reason="h5dump is not installed")
@pytest.mark.parametrize("op", list(NULL_STRING_OPS))
@pytest.mark.parametrize("kind", list(NULL_STRING_TYPES))
def test_null_strings_in_compounds_stay_null(tmp_path, kind, op):
    """Variable-length strings never written inside compound members and array types are
    null heap IDs (h5dump: NULL; "" is an empty heap object), and stay null when purehep
    rewrites the dataset after a change to it, as they do when h5py changes it: purehep
    kept the nulls of top-level strings only, and wrote the others back as empty strings."""
    dtype, one, empty, new = NULL_STRING_TYPES[kind]
    base = str(tmp_path / "base.h5")
    with h5py.File(base, "w") as f:
        ds = f.create_dataset("d", (5,), np.dtype(dtype), chunks=(2,), maxshape=(None,))
        ds[1] = one
        ds[3] = empty
    dumps = []
    for lib in (h5py, purehep):
        path = str(tmp_path / f"{lib.__name__}.h5")
        shutil.copy(base, path)
        with lib.File(path, "r+") as f:
            NULL_STRING_OPS[op](f["d"], new)
        dumps.append(subprocess.run([H5DUMP, "-d", "d", path], capture_output=True,
                                    text=True, check=True).stdout)
    assert "NULL" in dumps[0]
    assert dumps[1].replace("purehep.h5", "h5py.h5") == dumps[0]
