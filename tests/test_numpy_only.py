"""purehep with numpy as its only third-party package: a fresh Python in which importing
anything outside the standard library but numpy (numba, isal, deflate, zstandard, mmh3,
scipy, ...) fails, reading files h5py wrote (every chunk index kind, the built-in filters,
metadata of both formats) and writing gzip + shuffle + fletcher32 and lzf datasets that h5py
reads back. Values are compared exactly with h5py's, in this process."""
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

from test_filters import _create_nbit
from tools.bench.common import run_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_numpy_only(code, **env):
    """Run ``code`` in a fresh numpy-only Python from the repository root; its stdout."""
    return run_python(code, numpy_only=True, env=env)[1]


def test_blocker_blocks():
    out = run_numpy_only("import purehep\n"
                         "for m in ('numba', 'isal', 'deflate', 'zstandard', 'mmh3', 'h5py'):\n"
                         "    try:\n        __import__(m)\n    except ImportError:\n"
                         "        print(m)\n")
    assert out.split() == ["numba", "isal", "deflate", "zstandard", "mmh3", "h5py"]


def _source_file(p):
    a = np.arange(30 * 12, dtype="<i4").reshape(30, 12)
    with h5py.File(p, "w", libver="earliest") as f:
        f.create_dataset("v1/plain", data=a, chunks=(7, 5))
        f.create_dataset("v1/gz", data=a, chunks=(7, 5), compression="gzip", shuffle=True,
                         fletcher32=True)
        f.create_dataset("v1/lzf", data=a, chunks=(7, 5), compression="lzf")
        f.create_dataset("v1/so", data=a, chunks=(7, 5), scaleoffset=0, fillvalue=3)
        f.create_dataset("v1/sof", data=a / 7, chunks=(7, 5), scaleoffset=2)
        f.create_dataset("v1/contig", data=a.astype("f8"))
        g = f.create_group("meta")
        for i in range(30):
            g.create_dataset(f"d{i}", data=np.arange(i + 1))
            g[f"d{i}"].attrs["unit"] = "m"
        f.create_dataset("v1/str", data=np.array([b"ab", b"cde"]))
        f.create_dataset("v1/vlen", data=["x", "yz", "long " * 10], dtype=h5py.string_dtype())
    with h5py.File(p, "a", libver="latest") as f:
        f.create_dataset("v2/fixed", data=a, chunks=(7, 5), compression="gzip", shuffle=True)
        f.create_dataset("v2/paged", data=np.arange(1100 * 2), chunks=(2,), fletcher32=True)
        f.create_dataset("v2/single", data=a, chunks=a.shape, compression="gzip")
        e = f.create_dataset("v2/ea", shape=(0, 12), maxshape=(None, 12), dtype="<i4",
                             chunks=(2, 5), fillvalue=-1, compression="gzip", shuffle=True)
        e.resize((30, 12))
        e[3:25] = a[3:25]
        b = f.create_dataset("v2/bt2", shape=(30, 12), maxshape=(None, None), dtype="<i4",
                             chunks=(4, 4), compression="gzip")
        b[5:, 2:] = a[5:, 2:]
        g = f.create_group("meta2", track_order=True)
        for i in range(30):
            g.attrs[f"a{i}"] = i
            g.create_group(f"g{i}")
    _create_nbit(p.with_name("nbit.h5"), "d", 11, 3, (12, 5), (5, 2),
                 np.arange(60, dtype="i4").reshape(12, 5) * 7)


def test_read(tmp_path):
    p = tmp_path / "f.h5"
    _source_file(p)
    out = tmp_path / "out.npz"
    code = f"""
import sys, numpy as np, purehep
res = {{}}
sels = [(), (slice(1, None, 3),), (slice(3, 20), slice(2, 9)), (5,)]
with purehep.File({str(p)!r}) as f:
    names = []
    f.visit(names.append)
    for name in names:
        obj = f[name]
        if isinstance(obj, purehep.Dataset):
            for k, sel in enumerate(sels):
                if len(sel) > obj.ndim or (sel and obj.shape[0] <= 5):
                    continue
                res[f"{{name}}|{{k}}"] = np.asarray(obj[sel])
        for key, val in obj.attrs.items():
            res[f"{{name}}@{{key}}"] = np.asarray(val)
with purehep.File({str(p.with_name("nbit.h5"))!r}) as f:
    res["nbit|0"] = f["d"][()]
np.savez({str(out)!r}, **{{k: v.astype("U") if v.dtype == object else v for k, v in res.items()}})
print("numba" in sys.modules, "isal" in sys.modules, "zlib" in sys.modules)
"""
    assert run_numpy_only(code).split() == ["False", "False", "True"]
    sels = [(), (slice(1, None, 3),), (slice(3, 20), slice(2, 9)), (5,)]
    got = np.load(out)
    seen = 0
    with h5py.File(p, "r") as f:
        for key in got.files:
            if key == "nbit|0":
                continue
            if "@" in key:
                name, attr = key.split("@")
                expect = np.asarray(f[name].attrs[attr])
            else:
                name, k = key.split("|")
                expect = np.asarray(f[name][sels[int(k)]])
            if expect.dtype == object:
                expect = np.array([x.decode() if isinstance(x, bytes) else x
                                   for x in expect.reshape(-1)]).reshape(expect.shape)
            np.testing.assert_array_equal(got[key], expect, err_msg=key)
            seen += 1
    assert seen > 60
    with h5py.File(p.with_name("nbit.h5"), "r") as f:
        np.testing.assert_array_equal(got["nbit|0"], f["d"][()])


def test_write(tmp_path):
    p = tmp_path / "w.h5"
    code = f"""
import numpy as np, purehep
rng = np.random.default_rng(4)
x = np.cumsum(rng.normal(size=(300, 200)), 0).astype("f4")
with purehep.File({str(p)!r}, "w") as f:
    f.create_dataset("gz", data=x, chunks=(50, 64), compression="gzip", shuffle=True,
                     fletcher32=True)
    f.create_dataset("lzf", data=x[:40, :50].astype("f8"), chunks=(16, 32), compression="lzf")
    f.create_dataset("grow", data=np.arange(10), maxshape=(None,), chunks=(4,))
    f["gz"].attrs["note"] = "numpy only"
    f.create_group("g").create_dataset("s", data=np.arange(5, dtype="u2"))
with purehep.File({str(p)!r}, "r+") as f:
    f["grow"].resize((25,))
    f["grow"][10:] = np.arange(10, 25)
"""
    run_numpy_only(code)
    x = np.cumsum(np.random.default_rng(4).normal(size=(300, 200)), 0).astype("f4")
    with h5py.File(p, "r") as f:
        np.testing.assert_array_equal(f["gz"][()], x)
        np.testing.assert_array_equal(f["lzf"][()], x[:40, :50].astype("f8"))
        np.testing.assert_array_equal(f["grow"][()], np.arange(25))
        np.testing.assert_array_equal(f["g/s"][()], np.arange(5, dtype="u2"))
        assert f["gz"].attrs["note"] == "numpy only"
        assert f["gz"].fletcher32 and f["gz"].shuffle


@pytest.mark.parametrize("env", [{"NUMBA_DISABLE_JIT": "1"}, {"PUREHEP_NO_NUMBA": "1"}])
def test_disabled_numba_not_imported(tmp_path, env):
    """numba installed but disabled: purehep never imports it."""
    p = tmp_path / "f.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(100000, dtype="f4"), chunks=(100,),
                         compression="gzip", shuffle=True)
    code = ("import sys, numpy as np, purehep\n"
            f"with purehep.File({str(p)!r}) as f:\n"
            "    assert (f['x'][()] == np.arange(100000, dtype='f4')).all()\n"
            "print(json.dumps('numba' in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) is False
