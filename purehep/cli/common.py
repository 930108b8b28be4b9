"""Helpers shared by the commands: ``FILE[/PATH]`` targets, progress lines, short dtype and
shape names (h5ls style) and links in name order (the order h5ls and h5dump list them)."""
import os
import sys
import time

FILTER_NAMES = {1: "deflate", 2: "shuffle", 3: "fletcher32", 4: "szip", 5: "nbit",
                6: "scaleoffset", 32000: "lzf", 32001: "blosc", 32015: "zstd"}


def split_target(target):
    """(file path, object path) of ``FILE[/PATH]``."""
    if os.path.exists(target):
        return target, "/"
    head, tail = target, ""
    while head and not os.path.isfile(head):
        head, _, last = head.rpartition("/")
        tail = last + ("/" + tail if tail else "")
    if not head:
        raise FileNotFoundError(f"no such file: {target}")
    return head, "/" + tail


def open_file(path):
    import purehep
    return purehep.File(path)


def links_by_name(group):
    """A group's links (format-level Link records) in name order, as libhdf5's tools list
    them (bytewise order of the UTF-8 names), whatever order the group tracks."""
    return sorted(group._links.values(), key=lambda k: k.name.encode("utf-8", "surrogateescape"))


def attr_names(obj):
    """An object's attribute names in name order (h5dump's and h5ls's default)."""
    return sorted(obj.attrs, key=lambda n: n.encode("utf-8", "surrogateescape"))


def committed_type(obj):
    """The object header address of the committed datatype an object's datatype message
    refers to (spec IV.A.2 shared messages), or None."""
    from ..format.messages import shared_location
    from ..hl.base import DATATYPE
    raw = obj._oh.first(DATATYPE)
    if raw is None or not raw.shared:
        return None
    where, loc = shared_location(obj._ctx, raw)
    return loc if where == "header" else None


class Progress:
    """A progress line on stderr when it is a terminal (long inspect/check runs)."""

    def __init__(self, label, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = label
        self.start = self.last = time.monotonic()
        self.shown = False

    def __call__(self, count):
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.2 or now - self.start < 0.5:
            return
        self.last = now
        spin = "|/-\\"[int(now * 5) % 4]
        self.stream.write(f"\r{self.label} {spin} {count} structures, {now - self.start:.1f} s")
        self.stream.flush()
        self.shown = True

    def done(self):
        if self.shown:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()


def dtype_name(dt):
    """A short name of a numpy dtype carrying h5py's metadata (vlen, enum, references)."""
    import numpy as np
    meta = dt.metadata or {}
    if "vlen" in meta:
        v = meta["vlen"]
        return "vlen str" if v is str else "vlen bytes" if v is bytes else \
            f"vlen {dtype_name(np.dtype(v))}"
    if "enum" in meta:
        return f"enum {dt.name}"
    if "ref" in meta:
        return "region reference" if "Region" in getattr(meta["ref"], "__name__", "") else \
            "object reference"
    if dt.names:
        return "compound {" + ", ".join(f"{n}: {dtype_name(dt.fields[n][0])}"
                                        for n in dt.names) + "}"
    if dt.subdtype is not None:
        return f"{dtype_name(dt.subdtype[0])}{list(dt.subdtype[1])}"
    if dt.kind == "S":
        return f"string[{dt.itemsize}]"
    return dt.name if dt.byteorder in "=|" or dt.kind in "b" else \
        f"{dt.name} ({'big' if dt.byteorder == '>' else 'little'}-endian)"


def shape_text(shape, maxshape=None):
    """h5ls's dataspace: ``{10, 20/Inf}``, ``SCALAR`` or ``NULL``."""
    if shape is None:
        return "NULL"
    if shape == ():
        return "SCALAR"
    maxshape = maxshape or shape
    parts = []
    for s, m in zip(shape, maxshape):
        parts.append(f"{s}" if m == s else f"{s}/{'Inf' if m is None else m}")
    return "{" + ", ".join(parts) + "}"


def load_map(path, label):
    """(byte source, file map) of a file, with a progress line while it is walked."""
    from ..inspect.walker import walk
    from ..io import open_source
    src = open_source(path)
    bar = Progress(label)
    try:
        fmap = walk(src, bar)
    finally:
        bar.done()
    return src, fmap
