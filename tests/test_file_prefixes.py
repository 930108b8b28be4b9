"""h5py's dataset access prefixes (``efile_prefix``, ``virtual_prefix`` of create_dataset and
require_dataset) and libhdf5's environment variables over them (HDF5_EXTFILE_PREFIX,
HDF5_VDS_PREFIX), side by side with h5py: where external raw data files are written and
read, where virtual dataset sources are found, what the access list reports."""
import os

import h5py
import numpy as np
import pytest

import purehep


def _efile(mod, tmp):
    """External files named relative to a prefix: ${ORIGIN} (the HDF5 file's folder) and a
    folder; written from another working directory."""
    work = tmp / "work"
    work.mkdir()
    os.chdir(work)
    out = []
    path = tmp / "f.h5"
    data = np.arange(12.0).reshape(3, 4)
    with mod.File(path, "w") as f:
        d = f.create_dataset("o", data.shape, "f8", external=[("o.bin", 0, mod.h5f.UNLIMITED)],
                             efile_prefix="${ORIGIN}")
        d[...] = data
        out.append(d.id.get_access_plist().get_efile_prefix() == os.fsencode(str(tmp) + os.sep))
        (tmp / "sub").mkdir()
        e = f.create_dataset("s", (2,), "i4", external=[("s.bin", 0, 8)],
                             efile_prefix=str(tmp / "sub"))
        e[...] = [7, 8]
        out.append(sorted(x[0] for x in d.external + e.external))
    out.append(sorted(p.name for p in tmp.rglob("*.bin")))
    out.append((tmp / "o.bin").read_bytes() == data.tobytes())
    with mod.File(path, "r") as f:
        e = f.require_dataset("s", (2,), "i4", efile_prefix=str(tmp / "sub"))
        out.append(e[()].tolist())
        out.append(f.require_dataset("o", (3, 4), "f8", efile_prefix="${ORIGIN}")[()].tolist())
    return out


def _vds_files(mod, src, vds):
    """In new folders ``src`` and ``vds``: a.h5 holding "x" (0..4), and v.h5 whose virtual
    dataset "v" maps all of it from the source file named "a.h5" (fill value -1)."""
    src.mkdir()
    vds.mkdir()
    with mod.File(src / "a.h5", "w") as f:
        f["x"] = np.arange(5, dtype="i4")
    layout = mod.VirtualLayout((5,), "i4")
    layout[:] = mod.VirtualSource("a.h5", "x", shape=(5,))
    with mod.File(vds / "v.h5", "w") as f:
        f.create_virtual_dataset("v", layout, fillvalue=-1)


def _vds(mod, tmp):
    """A virtual dataset whose source file (named relatively) lies elsewhere: found through
    ``virtual_prefix`` or HDF5_VDS_PREFIX, read as fill values without."""
    _vds_files(mod, tmp / "src", tmp / "vds")
    out = []
    with mod.File(tmp / "vds" / "v.h5", "r") as f:
        out.append(f["v"][()].tolist())
    for prefix in (str(tmp / "src"), "${ORIGIN}/../src", str(tmp / "nowhere")):
        with mod.File(tmp / "vds" / "v.h5", "r") as f:
            d = f.require_dataset("v", (5,), "i4", virtual_prefix=prefix)
            out.append((d[()].tolist(), os.path.normpath(
                d.id.get_access_plist().get_virtual_prefix().decode()) ==
                os.path.normpath(prefix.replace("${ORIGIN}", str(tmp / "vds")))))
            del d
    return out


@pytest.fixture
def here():
    cwd = os.getcwd()
    yield
    os.chdir(cwd)


def test_efile_prefix_as_h5py(tmp_path, here):
    (tmp_path / "h").mkdir()
    (tmp_path / "p").mkdir()
    assert _efile(purehep, tmp_path / "p") == _efile(h5py, tmp_path / "h")


def test_virtual_prefix_as_h5py(tmp_path):
    (tmp_path / "h").mkdir()
    (tmp_path / "p").mkdir()
    assert _vds(purehep, tmp_path / "p") == _vds(h5py, tmp_path / "h")


_ENV_RUN = """
import os, sys, numpy as np
mod = __import__(sys.argv[1])
tmp = sys.argv[2]
with mod.File(os.path.join(tmp, "v.h5"), "r") as f:
    print(f["v"][()].tolist())
with mod.File(os.path.join(tmp, "e.h5"), "r") as f:
    print(f["e"][()].tolist())
"""


@pytest.mark.parametrize("writer", [h5py, purehep])
def test_prefix_environment_as_h5py(tmp_path, writer):
    """HDF5_VDS_PREFIX and HDF5_EXTFILE_PREFIX set before the library loads: sources and
    external files found through them (${ORIGIN} too), in files written by either library."""
    import subprocess
    import sys
    (tmp_path / "ext").mkdir()
    _vds_files(writer, tmp_path / "src", tmp_path / "f")
    (tmp_path / "ext" / "e.bin").write_bytes(np.arange(3, dtype="<i4").tobytes())
    with writer.File(tmp_path / "f" / "e.h5", "w") as f:
        f.create_dataset("e", (3,), "<i4", external=[("e.bin", 0, 12)])
    env = dict(os.environ, HDF5_VDS_PREFIX="${ORIGIN}/../src",
               HDF5_EXTFILE_PREFIX=str(tmp_path / "ext"))
    got = [subprocess.run([sys.executable, "-c", _ENV_RUN, mod, str(tmp_path / "f")],
                          env=env, capture_output=True, text=True, check=True,
                          cwd=tmp_path).stdout for mod in ("h5py", "purehep")]
    assert got[0] == got[1] == "[0, 1, 2, 3, 4]\n[0, 1, 2]\n"
