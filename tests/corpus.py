"""Compare purehep with h5py on corpus files, in worker processes.

Some corpus files crash libhdf5 or corrupt its memory (they are CVE reproducers), so h5py and
purehep each run in a worker process of their own: the h5py worker snapshots h5py's view of a
file (pickled, references reduced to whether they are null), the purehep worker compares its
reading against that snapshot. A dead h5py worker means h5py crashed on the file, and purehep
is then checked alone; a dead purehep worker is a purehep failure.
"""
import os
import pickle
import struct
import subprocess
import sys

import h5py
import hdf5plugin  # noqa: F401  (h5py reads the plugin filters' objects too)
import numpy as np

import purehep
from compare import same_values

# What purehep may answer for an object h5py (with hdf5plugin's filters) reads: an
# UnsupportedFeatureError for these only. Every filter hdf5plugin provides is read, except
# those without a Python codec (purehep.filters.WITHOUT_LIBRARY): SZ, SZ3, FCIDECOMP, SPERR,
# HTJ2K; the corpus has none of them.
DOCUMENTED_UNSUPPORTED = ("jpeg", "mafisc", "unknown filter", "filter id")

# Objects where h5py's answer is known to be wrong, with the reason; purehep must still read
# them without error, but is not compared with h5py there.
H5PY_WRONG = {
    ("vlunicode_endian.h5", "/vlunicode_big"):
        "h5py returns big-endian vlen sequence elements unswapped (values byte-reversed)",
}


def _try(fn):
    try:
        return True, fn()
    except Exception:  # noqa: BLE001 - h5py failing is information here
        return False, None


WHOLE_BYTES = 32 << 20     # datasets bigger than this are compared by their corners

# -- phase 1: h5py's view --------------------------------------------------------------------
def snapshot(path):
    """h5py's view of a file: {object path: description}, or None if h5py cannot open it."""
    ok, f = _try(lambda: h5py.File(path, "r"))
    if not ok:
        return None
    out = {}
    with f:
        _snap_group(f, "/", out, set())
    return out


def _snap_attrs(obj):
    ok, names = _try(lambda: list(obj.attrs.keys()))
    if not ok:
        return None
    values = {}
    for name in names:
        ok, value = _try(lambda: obj.attrs[name])
        values[name] = (ok, value)
    return names, values


def _snap_group(g, path, out, seen):
    ok, keys = _try(lambda: list(g.keys()))
    out[path] = {"kind": "group", "keys": keys if ok else None, "attrs": _snap_attrs(g)}
    if not ok:
        return
    for name in keys:
        sub = path.rstrip("/") + "/" + name
        ok, link = _try(lambda: g.get(name, getlink=True))
        if not ok:
            continue
        if not isinstance(link, h5py.HardLink):
            ok, _ = _try(lambda: g[name])
            out[sub] = {"kind": "link", "opens": ok}
            continue
        ok, obj = _try(lambda: g[name])
        if not ok:
            continue
        if isinstance(obj, h5py.Group):
            addr = h5py.h5o.get_info(obj.id).token if hasattr(h5py.h5o.get_info(obj.id), "token") \
                else h5py.h5o.get_info(obj.id).addr
            if addr in seen:
                continue
            seen.add(addr)
            _snap_group(obj, sub, out, seen)
        elif isinstance(obj, h5py.Dataset):
            out[sub] = _snap_dataset(obj)
        else:
            out[sub] = {"kind": "datatype", "dtype": obj.dtype, "attrs": _snap_attrs(obj)}


def _snap_dataset(obj):
    """A dataset's description: its values whole when they are at most WHOLE_BYTES, else
    (or when h5py cannot read them whole: tlayouto.h5) ``parts``, pairs of (selection,
    values): the first and the last corners of WHOLE_BYTES / 2 at most."""
    desc = {"kind": "dataset", "dtype": obj.dtype, "shape": obj.shape,
            "attrs": _snap_attrs(obj), "data": (False, None), "parts": []}
    if obj.size * obj.dtype.itemsize <= WHOLE_BYTES:
        desc["data"] = _try(lambda: obj[()])
        if desc["data"][0] or not obj.shape:
            return desc
    for sel in _corners(obj.shape, WHOLE_BYTES // 2 // max(1, obj.dtype.itemsize)):
        desc["parts"].append((sel, _try(lambda: obj[sel])))
    return desc


def _corners(shape, budget):
    """The first and the last box of at most ``budget`` elements of ``shape``, as slices
    (the last dimensions taken whole first)."""
    counts = []
    for dim in reversed(shape):
        counts.append(min(dim, max(1, budget)))
        budget //= max(1, counts[-1])
    counts.reverse()
    head = tuple(slice(0, c) for c in counts)
    tail = tuple(slice(d - c, d) for d, c in zip(shape, counts))
    return [head] if head == tail else [head, tail]


# -- phase 2: purehep against the snapshot ---------------------------------------------------
def _guard(results, path, fn):
    try:
        fn()
        results.append((path, "equal"))
    except purehep.UnsupportedFeatureError as exc:
        results.append((path, f"unsupported: {exc}"))
    except AssertionError as exc:
        results.append((path, f"MISMATCH {str(exc)[:300]}"))
    except Exception as exc:  # noqa: BLE001
        results.append((path, f"CRASH {type(exc).__name__}: {str(exc)[:300]}"))


def _eq(a, b):
    assert a == b, (a, b)


def _cmp_attrs(snap, p, path, results):
    if snap is None:
        return
    names, values = snap
    _guard(results, path + "@keys", lambda: _eq(names, list(p.attrs.keys())))
    for name in names:
        ok, value = values[name]
        if ok:
            _guard(results, f"{path}@{name}", lambda: same_values(value, p.attrs[name], name))


def compare(path, snap):
    """(object path, outcome) pairs for purehep's reading of ``path`` against ``snap``."""
    if snap is None:
        try:
            with purehep.File(path) as p:
                p.visititems(lambda name, obj: None)
            return [("/", "h5py-fails/purehep-opens")]
        except purehep.PurehepError:
            return [("/", "h5py-fails/purehep-error")]
        except Exception as exc:  # noqa: BLE001
            return [("/", f"CRASH {type(exc).__name__}: {exc}")]
    results = []
    try:
        p = purehep.File(path)
    except purehep.UnsupportedFeatureError as exc:
        return [("/", f"unsupported: {exc}")]
    except Exception as exc:  # noqa: BLE001
        return [("/", f"CRASH-open {type(exc).__name__}: {exc}")]
    with p:
        for opath, desc in snap.items():
            if desc["kind"] == "link":
                _guard(results, opath + " link", lambda: _link_opens(p, opath, desc["opens"]))
                continue
            holder = {}
            _guard(results, opath + " open", lambda: holder.setdefault("o", p[opath]))
            po = holder.get("o")
            if po is None:
                continue
            kind = desc["kind"]
            if kind == "link":
                continue
            if kind == "group" and desc["keys"] is not None:
                _guard(results, opath + " keys", lambda: _eq(desc["keys"], list(po.keys())))
            if kind == "dataset":
                ok, data = desc["data"]
                if (os.path.basename(path), opath) in H5PY_WRONG:
                    _guard(results, opath, lambda: po[()])
                elif ok:
                    _guard(results, opath, lambda: (_eq(desc["dtype"], po.dtype),
                                                   same_values(data, po[()], opath)))
                for sel, (ok, part) in desc["parts"]:
                    if ok:
                        _guard(results, f"{opath}{sel}",
                               lambda: same_values(part, po[sel], opath))
            _cmp_attrs(desc["attrs"], po, opath, results)
    return results


def _link_opens(p, opath, opens):
    """A soft or external link opens in purehep exactly when it opens in h5py."""
    try:
        p[opath]
    except (KeyError, RuntimeError):      # RuntimeError: a link cycle, as h5py raises it
        assert not opens, f"{opath} opens in h5py but fails in purehep"
        return
    assert opens, f"{opath} is dangling in h5py but opens in purehep"


def is_failure(outcome):
    return outcome.startswith(("MISMATCH", "CRASH"))


def is_documented(outcome):
    low = outcome.lower()
    return outcome.startswith("unsupported") and any(k in low for k in DOCUMENTED_UNSUPPORTED)


# -- the worker processes -------------------------------------------------------------------
class RefMark:
    """Stands for an h5py reference in a pickled snapshot (only whether it is null)."""

    def __init__(self, value):
        self.value = bool(value)

    def __bool__(self):
        return self.value


def sanitize(value):
    """h5py's values with references replaced by RefMark, so that snapshots pickle."""
    if isinstance(value, (h5py.Reference, h5py.RegionReference)):
        return RefMark(value)
    if isinstance(value, np.ndarray) and value.dtype.hasobject:
        if value.dtype.names:
            out = value.copy()
            for name in value.dtype.names:
                if value.dtype[name].hasobject:
                    out[name] = sanitize(value[name])
            return out
        out = np.empty(value.shape, object)
        for i, item in enumerate(value.reshape(-1)):
            out.reshape(-1)[i] = sanitize(item)
        return out
    if isinstance(value, np.void) and value.dtype.hasobject:
        return sanitize(np.array(value))[()]
    return value


def _sanitize_snapshot(snap):
    if snap is None:
        return None
    for desc in snap.values():
        if desc.get("attrs"):
            names, values = desc["attrs"]
            desc["attrs"] = (names, {k: (ok, sanitize(v)) for k, (ok, v) in values.items()})
        if "data" in desc:
            desc["data"] = _sane(desc["data"])
            desc["parts"] = [(sel, _sane(part)) for sel, part in desc["parts"]]
    return snap


def _sane(pair):
    ok, value = pair
    return ok, sanitize(value)


def _send(stream, obj):
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(blob)) + blob)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(n))


def serve(side):
    """Worker loop: 'h5py' snapshots files, 'purehep' compares against snapshots."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        msg = _receive(inp)
        if msg is None:
            return
        if side == "h5py":
            _send(out, ("snapshot", _sanitize_snapshot(snapshot(msg))))
        else:
            path, snap = msg
            _send(out, compare(path, snap))


def _worker_env():
    """The environment of worker processes: they import this directory's helpers and the
    purehep under test (a worktree's), not another installed one."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.abspath(purehep.__file__)))
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [here, root, os.environ.get("PYTHONPATH", "")]))


def _standalone(path):
    """purehep alone on a file that crashed h5py: a purehep error or success, no crash."""
    code = ("import sys, purehep\n"
            "try:\n"
            "    with purehep.File(sys.argv[1]) as f:\n"
            "        f.visititems(lambda n, o: [o.attrs[k] for k in o.attrs] and None)\n"
            "    print('ok')\n"
            "except purehep.PurehepError as e:\n"
            "    print('purehep-error')\n")
    proc = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                          timeout=120, env=_worker_env())
    if proc.returncode != 0:
        return [("/", f"CRASH purehep alone: exit {proc.returncode} {proc.stderr[-300:]}")]
    return [("/", f"h5py-crashes/purehep-{proc.stdout.strip()}")]


class _Worker:
    def __init__(self, side):
        here = os.path.dirname(os.path.abspath(__file__))
        env = _worker_env()
        self.side, self.env, self.here, self.proc = side, env, here, None

    def ask(self, msg):
        """The worker's answer, or None if it died (it is restarted on the next ask)."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", f"import corpus; corpus.serve({self.side!r})"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=self.env, cwd=self.here)
        try:
            _send(self.proc.stdin, msg)
            answer = _receive(self.proc.stdout)
        except (BrokenPipeError, EOFError, pickle.UnpicklingError):
            answer = None
        if answer is None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        return answer

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()


def run_all(paths):
    """Results for every path: h5py and purehep each in a worker process of its own, so that
    a file which corrupts libhdf5's memory cannot affect purehep's side."""
    h5, ph = _Worker("h5py"), _Worker("purehep")
    results = {}
    try:
        for path in paths:
            reply = h5.ask(path)
            if reply is None:  # h5py crashed on this file
                results[path] = _standalone(path)
                continue
            answer = ph.ask((path, reply[1]))
            results[path] = answer if answer is not None else [
                ("/", "CRASH the purehep worker died")]
    finally:
        h5.close()
        ph.close()
    return results
