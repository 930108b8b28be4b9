"""Writing through an external link from a file open for writing, side by side with h5py:
libhdf5 opens the link's target with the parent's intent, so the target's objects are
writable (their file reports mode 'r+'), and closing the parent commits the target."""
import gc

import h5py
import numpy as np
import pytest

import purehep


def _through_link(mod, tmp):
    a, b = tmp / f"a_{mod.__name__}.h5", tmp / f"b_{mod.__name__}.h5"
    with mod.File(a, "w") as f:
        f["d"] = np.arange(3)
        f.create_group("g")
    out = []
    with mod.File(b, "w") as f:
        f["L"] = mod.ExternalLink(a, "/")
        f["G"] = mod.ExternalLink(a, "/g")
        root, g = f["L"], f["G"]
        out.append((root.file.mode, g.file.mode))
        root["d"][0] = 7
        root["new"] = 5
        g.create_dataset("x", data=[1.5, 2.5])
        g.attrs["k"] = "v"
        f["L/d"][2] = 9                      # the path through the link, too
        out.append(sorted(f["L"]))
    del root, g             # (live objects of the target keep it open in libhdf5)
    gc.collect()
    with mod.File(a, "r") as f:              # committed when the parent closed
        out.append((sorted(f), f["d"][()].tolist(), f["new"][()].tolist(),
                    f["g/x"][()].tolist(), f["g"].attrs["k"]))
    with mod.File(b, "r") as f:              # a read-only parent opens its target read-only
        out.append(f["L"].file.mode)
        with pytest.raises((OSError, ValueError, KeyError)):
            f["L"]["more"] = 1
    return out


def test_writes_through_external_links_as_h5py(tmp_path):
    assert _through_link(purehep, tmp_path) == _through_link(h5py, tmp_path)


def test_external_target_open_read_only_here_is_refused(tmp_path):
    """A target this process holds open read-only cannot be opened for writing through
    the link (libhdf5: 'file is already open for read-only')."""
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    for mod in (h5py, purehep):
        with mod.File(a, "w") as f:
            f["d"] = 1
        with mod.File(a, "r"), mod.File(b, "w") as f:
            f["L"] = mod.ExternalLink(a, "/")
            with pytest.raises(KeyError):
                f["L"]
