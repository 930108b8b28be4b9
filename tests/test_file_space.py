"""Files created with libhdf5's file space options (h5py's fs_strategy, fs_persist,
fs_threshold, fs_page_size; page_buf_size, min_meta_keep, min_raw_keep; meta_block_size):
purehep writes the File Space Info message libhdf5 writes (spec IV.A.2.x) in a superblock
extension, allocates "page" files in pages of one kind, and h5py reads, appends to (with its
page buffer) and reports the settings of the files it writes as of its own; bad options fail
as in h5py."""
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import purehep
from purehep.cli.check import check_one, CLEAN
from purehep.format.free_space import FileSpaceInfo, file_space_info

STRINGS = np.array(["alpha", "b" * 300, ""], dtype=object)

# (fs_strategy, fs_persist, fs_threshold, fs_page_size, libver)
CASES = [
    ("fsm", True, 1, None, None),
    ("fsm", True, 1, None, "latest"),
    ("fsm", False, 0, None, "v108"),
    ("page", False, 1, None, "latest"),
    ("page", True, 1, 4096, None),
    ("page", True, 1, 512, "latest"),
    ("page", False, 1, 8192, "v110"),
    ("aggregate", False, 1, None, None),
    ("none", True, 100, None, "latest"),
]
IDS = [f"{s}-{'persist' if p else 'transient'}-t{t}-{ps}-{lv}" for s, p, t, ps, lv in CASES]


def _options(case):
    strategy, persist, threshold, page, libver = case
    return dict(fs_strategy=strategy, fs_persist=persist, fs_threshold=threshold,
                fs_page_size=page, libver=libver)


def _fill(f):
    """Contiguous, chunked gzip and variable-length string datasets, groups, attributes; a
    dataset and a group deleted."""
    f["contig"] = np.arange(3000.0)
    f.create_dataset("gz", data=np.arange(5000, dtype="i4").reshape(50, 100), chunks=(10, 25),
                     compression="gzip")
    f["strings"] = STRINGS
    g = f.create_group("g/h")
    g.attrs["n"] = 7
    g.attrs["s"] = "text"
    f["g"].attrs["arr"] = np.arange(40)
    f["gone"] = np.zeros(2000)
    f.create_group("gone_group").attrs["x"] = 1
    f.flush()
    del f["gone"], f["gone_group"]
    f["small"] = np.int8(3)


def _expect(f):
    """What _fill (and _append, when it ran) left, read by purehep or h5py."""
    out = {"names": sorted(f), "contig": f["contig"][()].tolist(), "gz": f["gz"][()].tolist(),
           "strings": [s.decode() if isinstance(s, bytes) else s for s in f["strings"][()]],
           "g/h": dict(f["g/h"].attrs), "arr": f["g"].attrs["arr"].tolist(),
           "small": int(f["small"][()])}
    if "added" in f:
        out["added"] = f["added"][()].tolist()
        out["g"] = sorted(f["g"])
    return out


def _want(appended=False):
    out = {"names": ["contig", "g", "gz", "small", "strings"] + (["added"] if appended else []),
           "contig": np.arange(3000.0).tolist(),
           "gz": np.arange(5000).reshape(50, 100).tolist(),
           "strings": list(STRINGS), "g/h": {"n": 7, "s": "text"},
           "arr": list(range(40)), "small": 3}
    if appended:
        out["names"].sort()
        out["added"] = list(range(5000))
        out["g"] = ["h", "k"]
        out["g/h"] = {"n": 7, "s": "text", "more": 2.5}
    return out


def _append(path, page):
    kw = {"page_buf_size": 4 * page} if page else {}
    with h5py.File(path, "a", **kw) as f:
        f.create_dataset("added", data=np.arange(5000), chunks=(1000,), compression="gzip")
        f["g/h"].attrs["more"] = 2.5
        f.create_group("g/k")
        del f["g/k"]
        f.create_group("g/k")


def _fields(info):
    return (info.version, info.strategy, info.persist, info.threshold, info.page_size,
            info.page_end_threshold, len(info.managers))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_created_with_file_space_options(tmp_path, case):
    ours, theirs = tmp_path / "ours.h5", tmp_path / "theirs.h5"
    opts = _options(case)
    page = (case[3] or 4096) if case[0] == "page" else 0
    with purehep.File(ours, "w", **opts) as f:
        _fill(f)
    with h5py.File(theirs, "w", **opts) as f:
        _fill(f)
    assert check_one(str(ours))[:2] == (CLEAN, [])
    # the File Space Info message h5py writes for the same options, field by field
    with purehep.File(ours) as a, purehep.File(theirs) as b:
        mine = file_space_info(a._ctx, a._superblock.extension_address)[0]
        libs = file_space_info(b._ctx, b._superblock.extension_address)[0]
        assert _fields(mine) == _fields(libs)
        assert a._superblock.version == b._superblock.version
        if mine.persist:      # no managers: the end of the file before them is the end
            assert mine.manager_addresses == () and \
                mine.eoa_before_managers == a._superblock.eof_address
        assert a.superblock_version == b.superblock_version
    with h5py.File(ours) as f, h5py.File(theirs) as g:
        for getter in ("get_file_space_strategy", "get_file_space_page_size"):
            assert getattr(f.id.get_create_plist(), getter)() == \
                getattr(g.id.get_create_plist(), getter)()
        assert _expect(f) == _want()
    with purehep.File(ours) as f, h5py.File(theirs) as g:
        for getter in ("get_file_space_strategy", "get_file_space_page_size"):
            assert getattr(f.id.get_create_plist(), getter)() == \
                getattr(g.id.get_create_plist(), getter)()
    if page:
        assert ours.stat().st_size % page == 0
    _append(ours, page)
    with purehep.File(ours) as f:
        assert _expect(f) == _want(appended=True)
    assert check_one(str(ours))[0] == CLEAN
    # purehep changes the file again; libhdf5 reads it with its page buffer
    with purehep.File(ours, "a") as f:
        f["again"] = np.arange(10)
        del f["added"]
    kw = {"page_buf_size": 2 * page} if page else {}
    with h5py.File(ours, "r", **kw) as f:
        assert f["again"][()].tolist() == list(range(10)) and "added" not in f
        assert f["gz"][()].sum() == np.arange(5000).sum()
    with purehep.File(ours) as f:
        info = file_space_info(f._ctx, f._superblock.extension_address)[0]
        if info.persist and not info.manager_addresses:
            assert info.eoa_before_managers == f._superblock.eof_address
    if shutil.which("h5dump"):
        run = subprocess.run(["h5dump", "-H", str(ours)], capture_output=True, timeout=60)
        assert run.returncode == 0, run.stderr.decode()


def test_paged_file_pages_of_one_kind(tmp_path):
    """A new "page" file: its metadata and raw data never share a page, and the empty file's
    metadata page is filled before another is opened."""
    path = tmp_path / "p.h5"
    with purehep.File(path, "w", fs_strategy="page", libver="latest") as f:
        f["a"] = np.arange(100)
        f.create_group("g").attrs["x"] = 1
        raw = f["a"].id.get_offset()
    assert raw % 4096 == 0 and raw >= 4096
    data = path.read_bytes()
    assert data[:4096].count(b"OHDR") == 4       # the extension's, the root's, a's, g's
    assert not any(sig in data[raw:raw + 4096] for sig in (b"OHDR", b"OCHK", b"HEAP", b"TREE"))


def test_defaults_write_no_message(tmp_path):
    """libhdf5's default settings (strategy "fsm", no persistence, threshold 1; a page size
    without the "page" strategy) leave the superblock as without them."""
    for kw in (dict(fs_strategy="fsm"), dict(fs_page_size=8192), dict(fs_persist=True),
               dict(fs_strategy="fsm", fs_page_size=8192), dict(meta_block_size=4096)):
        with purehep.File(tmp_path / "a.h5", "w", **kw) as f, \
                h5py.File(tmp_path / "b.h5", "w", **kw) as g:
            assert f.superblock_version == g.id.get_create_plist().get_version()[0] == 0
            assert f._writer.space is None


def _outcome(lib, path, mode, kw):
    return _opened(lambda: lib.File(path, mode, **kw))


def _opened(open_file):
    """The settings the property lists of the file ``open_file()`` opens report, or the
    exception it raises (type and message)."""
    try:
        with open_file() as f:
            fapl, fcpl = f.id.get_access_plist(), f.id.get_create_plist()
            return ("ok", fcpl.get_file_space_strategy(), fcpl.get_file_space_page_size(),
                    fapl.get_page_buffer_size(), fapl.get_meta_block_size(), f.meta_block_size)
    except Exception as e:          # noqa: BLE001 - the exception is the outcome compared
        return type(e), str(e)


OPTIONS = [
    ("w", dict(fs_strategy="foo")),
    ("w", dict(fs_strategy="page", fs_page_size=100)),
    ("w", dict(fs_strategy="page", fs_page_size=2 ** 31)),
    ("w", dict(fs_strategy="page", fs_page_size=-1)),
    ("w", dict(fs_strategy="page", fs_page_size=1000)),
    ("w", dict(fs_strategy="fsm", fs_threshold=-1)),
    ("w", dict(fs_strategy="none", fs_persist=True, fs_threshold=100)),
    ("w", dict(fs_strategy="aggregate", fs_persist=True)),
    ("w", dict(fs_strategy="page", page_buf_size=1000)),
    ("w", dict(fs_strategy="page", page_buf_size=5000, min_meta_keep=20, min_raw_keep=30)),
    ("w", dict(fs_strategy="page", page_buf_size=8192, min_meta_keep=101)),
    ("w", dict(fs_strategy="page", page_buf_size=8192, min_raw_keep=101)),
    ("w", dict(fs_strategy="page", page_buf_size=8192, min_meta_keep=60, min_raw_keep=50)),
    ("w", dict(fs_strategy="page", page_buf_size=8192, min_meta_keep=-1)),
    ("w", dict(fs_strategy="page", page_buf_size=-1)),
    ("w", dict(fs_strategy="page", fs_page_size=16384, page_buf_size=8192)),
    ("w", dict(page_buf_size=8192)),
    ("w", dict(fs_strategy="fsm", page_buf_size=8192)),
    ("w", dict(min_meta_keep=50)),
    ("w", dict(meta_block_size=1000)),
    ("w", dict(meta_block_size=-1)),
    ("w", dict(fs_strategy="")),
    ("a", dict(fs_strategy="page")),
    ("r", dict(fs_strategy="fsm")),
    ("r", dict(page_buf_size=8192)),
    ("r", dict(page_buf_size=100, min_meta_keep=10)),
    ("r+", dict(page_buf_size=20000, min_meta_keep=10, min_raw_keep=20, meta_block_size=512)),
    ("a", dict(page_buf_size=8192)),
    ("x", dict(fs_strategy="page")),
]


@pytest.mark.parametrize("paged", [False, True])
@pytest.mark.parametrize("mode,kw", OPTIONS, ids=[f"{m}-{sorted(k.items())}" for m, k in OPTIONS])
def test_options_side_by_side(tmp_path, mode, kw, paged):
    """Each library on its own file: the same outcome (exception type and message, or the
    settings the file's property lists report)."""
    got = []
    for lib in (purehep, h5py):
        path = tmp_path / f"{lib.__name__}.h5"
        with h5py.File(path, "w", **({"fs_strategy": "page", "fs_page_size": 8192}
                                     if paged else {})):
            pass
        if mode == "x":
            path.unlink()
        got.append(_outcome(lib, path, mode, kw))
    assert got[0] == got[1]


def test_h5py_written_settings_reported(tmp_path):
    """The settings of files h5py wrote, read by purehep's property lists as by h5py's."""
    for i, kw in enumerate(_options(c) for c in CASES):
        path = tmp_path / f"{i}.h5"
        with h5py.File(path, "w", **kw):
            pass
        with purehep.File(path) as f, h5py.File(path) as g:
            mine, theirs = f.id.get_create_plist(), g.id.get_create_plist()
            assert mine.get_file_space_strategy() == theirs.get_file_space_strategy()
            assert mine.get_file_space_page_size() == theirs.get_file_space_page_size()
            assert mine.get_userblock() == theirs.get_userblock()


@pytest.mark.parametrize("info", [
    FileSpaceInfo.create(0, True, 1, 4096, 904),
    FileSpaceInfo.create(1, False, 1, 512, None),
    FileSpaceInfo.create(3, False, 1, 4096, None),
    FileSpaceInfo(1, 1, True, 7, 8192, (None,) * 6 + (1536,) + (None,) * 5, 3, 360),
])
def test_file_space_info_round_trip(info):
    """The File Space Info message encoder and decoder (spec IV.A.2.x) agree."""
    from purehep.format.context import Context, Cursor
    from purehep.format.free_space import decode_file_space_info
    ctx = Context(None, 8, 8)
    body = info.encode(ctx)
    assert decode_file_space_info(Cursor(body, 0, "file space info message", ctx)) == info


@pytest.mark.parametrize("size", [512, 4096])
def test_meta_block_size_applied(tmp_path, size):
    """A metadata block size given is applied as libhdf5 applies it: the raw data of the
    first dataset lies past the block its header was given (h5py's TestFileMetaBlockSize)."""
    path = tmp_path / "m.h5"
    with purehep.File(path, "w", meta_block_size=size, libver="latest") as f:
        f["test"] = 5
        f["more"] = np.arange(10)
        f.create_group("g").attrs["a"] = 1
        assert f.meta_block_size == size
        assert size <= f["test"].id.get_offset() < 2 * size
    assert check_one(str(path))[0] == CLEAN
    with h5py.File(path, "a", meta_block_size=size) as f:
        assert f["test"][()] == 5 and f["more"][()].tolist() == list(range(10))
        f["after"] = np.arange(3)
    with purehep.File(path) as f:
        assert f["after"][()].tolist() == [0, 1, 2] and f["g"].attrs["a"] == 1


def test_in_memory_side_by_side():
    """File.in_memory takes the file space options for a new file, and refuses them (as every
    creation keyword) with an image, as h5py; each library reads purehep's image (libhdf5's
    image of an open paged file misses metadata its cache holds, so only purehep's is read)."""
    got, images = [], []
    for lib in (purehep, h5py):
        with lib.File.in_memory(fs_strategy="page", fs_persist=True) as f:
            f["a"] = np.arange(10)
            images.append(f.id.get_file_image())
            out = [f.id.get_create_plist().get_file_space_strategy(),
                   f.id.get_access_plist().get_page_buffer_size()]
        for kw in (dict(fs_strategy="page"), dict(track_order=True, fs_page_size=4096)):
            out.append(_opened(lambda: lib.File.in_memory(images[-1], **kw)))
        got.append(out)
    assert got[0] == got[1]
    for lib in (purehep, h5py):
        with lib.File.in_memory(images[0]) as f:
            assert f["a"][()].tolist() == list(range(10))
            assert f.id.get_create_plist().get_file_space_strategy() == (1, 1, 1)
