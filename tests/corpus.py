"""Walk a corpus file with h5py and purehep side by side and classify every object."""
import h5py
import numpy as np

import purehep
from compare import same_values

# What purehep may answer for an object h5py reads: an UnsupportedFeatureError for these only.
DOCUMENTED_UNSUPPORTED = ("szip", "blosc", "bzip2", "lz4", "jpeg", "zfp", "mafisc", "bshuf",
                          "bitshuffle", "sz", "filter", "virtual")


def _h5_read(fn):
    try:
        return True, fn()
    except Exception:  # noqa: BLE001 - h5py failing is information, not an error here
        return False, None


def compare_file(path):
    """Return a list of (object path, outcome) for one corpus file.

    Outcomes: 'equal', 'h5py-fails/purehep-error', 'unsupported: ...' (documented) or a
    failure string starting with 'MISMATCH'/'CRASH'.
    """
    results = []
    ok, h = _h5_read(lambda: h5py.File(path, "r"))
    if not ok:
        try:
            with purehep.File(path) as p:
                p.visititems(lambda name, obj: None)
            results.append(("/", "h5py-fails/purehep-opens"))
        except purehep.PurehepError:
            results.append(("/", "h5py-fails/purehep-error"))
        except Exception as exc:  # noqa: BLE001
            results.append(("/", f"CRASH {type(exc).__name__}: {exc}"))
        return results
    with h:
        try:
            p = purehep.File(path)
        except purehep.UnsupportedFeatureError as exc:
            return [("/", f"unsupported: {exc}")]
        except Exception as exc:  # noqa: BLE001
            return [("/", f"CRASH-open {type(exc).__name__}: {exc}")]
        with p:
            _walk(h, p, "/", results, set())
    return results


def _guard(results, path, fn):
    try:
        fn()
        results.append((path, "equal"))
    except purehep.UnsupportedFeatureError as exc:
        results.append((path, f"unsupported: {exc}"))
    except AssertionError as exc:
        results.append((path, f"MISMATCH {exc}"))
    except Exception as exc:  # noqa: BLE001
        results.append((path, f"CRASH {type(exc).__name__}: {exc}"))


def _attrs(h, p, path, results):
    ok, names = _h5_read(lambda: list(h.attrs.keys()))
    if not ok:
        return
    _guard(results, path + "@keys", lambda: _eq(names, list(p.attrs.keys())))
    for name in names:
        ok, value = _h5_read(lambda: h.attrs[name])
        if ok:
            _guard(results, f"{path}@{name}", lambda: same_values(value, p.attrs[name], name))


def _eq(a, b):
    assert a == b, (a, b)


def _walk(h, p, path, results, seen):
    ok, keys = _h5_read(lambda: list(h.keys()))
    if not ok:
        return
    _guard(results, path + " keys", lambda: _eq(keys, list(p.keys())))
    _attrs(h, p, path, results)
    for name in keys:
        sub = path.rstrip("/") + "/" + name
        ok, link = _h5_read(lambda: h.get(name, getlink=True))
        if not ok or not isinstance(link, h5py.HardLink):
            ok, ho = _h5_read(lambda: h[name])
            if ok and not isinstance(link, h5py.HardLink):
                _guard(results, sub + " (via link)", lambda: p[name])
            continue
        ok, ho = _h5_read(lambda: h[name])
        if not ok:
            continue
        holder = {}
        _guard(results, sub + " open", lambda: holder.setdefault("o", p[name]))
        po = holder.get("o")
        if po is None:
            continue
        if isinstance(ho, h5py.Group):
            if po.addr in seen:
                continue
            seen.add(po.addr)
            _walk(ho, po, sub, results, seen)
        elif isinstance(ho, h5py.Dataset):
            ok, data = _h5_read(lambda: ho[()])
            if ok:
                _guard(results, sub, lambda: (_eq(ho.dtype, po.dtype), same_values(data, po[()], sub)))
            _attrs(ho, po, sub, results)
        else:
            _attrs(ho, po, sub, results)


def is_failure(outcome):
    return outcome.startswith(("MISMATCH", "CRASH"))


def is_documented(outcome):
    return outcome.startswith("unsupported") and any(k in outcome.lower() for k in DOCUMENTED_UNSUPPORTED)
