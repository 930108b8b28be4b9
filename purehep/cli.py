"""The ``purehep`` command: ls, dump, inspect (a byte map of the file), check (spec
conformance), repack and query. ``main(argv) -> exit status``."""
import argparse
import json
import os
import sys
import time

import numpy as np

UNREADABLE = 2
FILTER_NAMES = {1: "deflate", 2: "shuffle", 3: "fletcher32", 4: "szip", 5: "nbit",
                6: "scaleoffset", 32000: "lzf", 32001: "blosc", 32015: "zstd"}


# --- shared helpers ----------------------------------------------------------------------------
def _split(target):
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


def _dtype_name(dt):
    meta = dt.metadata or {}
    if "vlen" in meta:
        v = meta["vlen"]
        return "vlen str" if v is str else "vlen bytes" if v is bytes else \
            f"vlen {_dtype_name(np.dtype(v))}"
    if "enum" in meta:
        return f"enum {dt.name}"
    if "ref" in meta:
        return "region reference" if "Region" in getattr(meta["ref"], "__name__", "") else \
            "object reference"
    if dt.names:
        return "compound {" + ", ".join(f"{n}: {_dtype_name(dt.fields[n][0])}"
                                        for n in dt.names) + "}"
    if dt.subdtype is not None:
        return f"{_dtype_name(dt.subdtype[0])}{list(dt.subdtype[1])}"
    if dt.kind == "S":
        return f"string[{dt.itemsize}]"
    return dt.name if dt.byteorder in "=|" or dt.kind in "b" else \
        f"{dt.name} ({'big' if dt.byteorder == '>' else 'little'}-endian)"


def _shape(shape, maxshape=None):
    if shape is None:
        return "NULL"
    if shape == ():
        return "SCALAR"
    maxshape = maxshape or shape
    parts = []
    for s, m in zip(shape, maxshape):
        parts.append(f"{s}" if m == s else f"{s}/{'Inf' if m is None else m}")
    return "{" + ", ".join(parts) + "}"


def _open(path):
    import purehep
    return purehep.File(path)


# --- ls ------------------------------------------------------------------------------------------
def _ls_line(name, obj, link):
    import purehep
    if link is not None and isinstance(link, purehep.SoftLink):
        return f"{name:<24} Soft Link {{{link.path}}}"
    if link is not None and isinstance(link, purehep.ExternalLink):
        return f"{name:<24} External Link {{{link.filename}/{link.path}}}"
    if obj is None:
        return f"{name:<24} (unresolvable)"
    if isinstance(obj, purehep.Dataset):
        return f"{name:<24} Dataset {_shape(obj.shape, obj.maxshape)} {_dtype_name(obj.dtype)}"
    if isinstance(obj, purehep.Group):
        return f"{name:<24} Group"
    return f"{name:<24} Type {_dtype_name(obj.dtype)}"


def _ls_verbose(obj, out):
    import purehep
    from .format.messages import layout as L
    if isinstance(obj, purehep.Dataset):
        lay = obj._layout
        cls = {0: "compact", 1: "contiguous", 2: "chunked", 3: "virtual"}.get(lay.layout_class,
                                                                            str(lay.layout_class))
        out(f"    Location:  object header at {obj.addr}")
        if obj.is_sparse:
            from .sparse.dump import ls_lines
            for line in ls_lines(obj, FILTER_NAMES):
                out(line)
        else:
            out(f"    Layout:    {cls}" + (f" at address {lay.address}" if lay.address is not None
                                           and lay.layout_class in (1, 2) else ""))
        if lay.layout_class == L.CHUNKED:
            out(f"    Chunks:    {_shape(tuple(lay.chunk_shape))}, {lay.index_name} index")
        if obj._pipeline is not None and len(obj._pipeline) and not obj.is_sparse:
            out("    Filters:   " + ", ".join(
                f"{f.name or FILTER_NAMES.get(f.id, 'filter')} ({f.id})" + (f" {list(f.client_data)}" if f.client_data
                                                    else "") for f in obj._pipeline))
        try:
            stored = obj.id.get_storage_size()
            logical = obj.nbytes
            ratio = f", ratio {logical / stored:.3f}" if stored else ""
            out(f"    Storage:   {logical} logical bytes, {stored} allocated bytes{ratio}")
        except purehep.PurehepError as exc:
            out(f"    Storage:   unavailable ({exc})")
    elif isinstance(obj, purehep.Group):
        out(f"    Location:  object header at {obj.addr}")
    for name in obj.attrs:
        try:
            shape = obj.attrs.get_shape(name)
            dt = obj.attrs.get_dtype(name)
            out(f"    Attribute: {name} {_shape(shape)} {_dtype_name(dt)}")
        except Exception as exc:  # noqa: BLE001 - ls reports what it cannot read
            out(f"    Attribute: {name} (unreadable: {exc})")


def cmd_ls(args, out):
    import purehep
    fpath, opath = _split(args.target)
    with _open(fpath) as f:
        obj = f[opath]
        if not isinstance(obj, purehep.Group):
            out(_ls_line(opath.rsplit("/", 1)[-1] or "/", obj, None))
            if args.verbose:
                _ls_verbose(obj, out)
            return 0

        def listing(group, prefix):
            for name in group:
                link = group.get(name, getlink=True)
                try:
                    child = group[name] if isinstance(link, purehep.HardLink) else None
                except purehep.PurehepError:
                    child = None
                shown = f"{prefix}/{name}" if args.recursive else name
                out(_ls_line(shown, child, link if not isinstance(link, purehep.HardLink) else None))
                if args.verbose and child is not None:
                    _ls_verbose(child, out)
                if args.recursive and isinstance(child, purehep.Group) and child.addr not in seen:
                    seen.add(child.addr)
                    listing(child, f"{prefix}/{name}")

        seen = {obj.addr}
        if args.recursive:
            out(_ls_line("/" if opath == "/" else opath, obj, None))
        listing(obj, "" if opath == "/" else opath.rstrip("/"))
    return 0


# --- dump ----------------------------------------------------------------------------------------
_H5T = {"i": "H5T_STD_I", "u": "H5T_STD_U", "f": "H5T_IEEE_F"}


def _h5type(dt, indent):
    meta = dt.metadata or {}
    pad = " " * indent
    if "vlen" in meta:
        v = meta["vlen"]
        if v in (str, bytes):
            cset = "H5T_CSET_UTF8" if v is str else "H5T_CSET_ASCII"
            return f"H5T_STRING {{ STRSIZE H5T_VARIABLE; CSET {cset}; }}"
        return f"H5T_VLEN {{ {_h5type(np.dtype(v), indent)} }}"
    if "ref" in meta:
        return "H5T_REFERENCE { H5T_STD_REF_DSETREG }" if "Region" in \
            getattr(meta["ref"], "__name__", "") else "H5T_REFERENCE { H5T_STD_REF_OBJECT }"
    if "enum" in meta:
        vals = "; ".join(f'"{k}" {v}' for k, v in meta["enum"].items())
        return f"H5T_ENUM {{ {_h5type(np.dtype(dt.str), indent)}; {vals}; }}"
    if dt.names:
        inner = "\n".join(f'{pad}   {_h5type(dt.fields[n][0], indent + 3)} "{n}";' for n in dt.names)
        return "H5T_COMPOUND {\n" + inner + f"\n{pad}}}"
    if dt.subdtype is not None:
        dims = "][".join(str(d) for d in dt.subdtype[1])
        return f"H5T_ARRAY {{ [{dims}] {_h5type(dt.subdtype[0], indent)} }}"
    if dt.kind in _H5T:
        order = "BE" if dt.byteorder == ">" else "LE"
        return f"{_H5T[dt.kind]}{dt.itemsize * 8}{order}"
    if dt.kind == "S":
        return f"H5T_STRING {{ STRSIZE {dt.itemsize}; }}"
    if dt.kind == "b":
        return "H5T_ENUM { H5T_STD_I8LE; \"FALSE\" 0; \"TRUE\" 1; }"
    if dt.kind == "c":
        return f"H5T_COMPLEX {{ {_H5T['f']}{dt.itemsize * 4}{'BE' if dt.byteorder == '>' else 'LE'} }}"
    return f"H5T_OPAQUE {{ {dt.str} }}"


def _h5space(shape, maxshape=None):
    if shape is None:
        return "NULL"
    if shape == ():
        return "SCALAR"
    maxshape = maxshape or shape
    cur = ", ".join(str(s) for s in shape)
    mx = ", ".join("H5S_UNLIMITED" if m is None else str(m) for m in maxshape)
    return f"SIMPLE {{ ( {cur} ) / ( {mx} ) }}"


def _fmt(x):
    if isinstance(x, bytes):
        return json.dumps(x.decode("latin-1"))
    if isinstance(x, str):
        return json.dumps(x, ensure_ascii=False)
    if isinstance(x, np.ndarray):
        return "(" + ", ".join(_fmt(e) for e in x.reshape(-1)) + ")"
    if isinstance(x, np.void) and x.dtype.names:
        return "{" + ", ".join(_fmt(x[n]) for n in x.dtype.names) + "}"
    if isinstance(x, (tuple, list)):
        return "{" + ", ".join(_fmt(e) for e in x) + "}"
    if hasattr(x, "address"):
        return f"object {x.address}" if x else "NULL"
    if isinstance(x, np.bytes_):
        return json.dumps(bytes(x).decode("latin-1"))
    return str(x.item() if hasattr(x, "item") and not isinstance(x, np.void) else x)


def _data_lines(value, pad, out):
    out(f"{pad}DATA {{")
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if arr is None or arr.ndim == 0:
        out(f"{pad}(0): {_fmt(value if arr is None else arr[()])}")
    else:
        rows = arr.reshape(-1, arr.shape[-1]) if arr.ndim > 1 else arr.reshape(1, -1)
        lead = list(np.ndindex(*arr.shape[:-1])) if arr.ndim > 1 else [()]
        for idx, row in zip(lead, rows):
            label = ",".join(str(i) for i in idx + (0,))
            out(f"{pad}({label}): " + ", ".join(_fmt(x) for x in row))
    out(f"{pad}}}")


def _dump_attrs(obj, pad, out, values):
    for name in obj.attrs:
        out(f'{pad}ATTRIBUTE "{name}" {{')
        try:
            dt, shape = obj.attrs.get_dtype(name), obj.attrs.get_shape(name)
            out(f"{pad}   DATATYPE  {_h5type(dt, len(pad) + 3)}")
            out(f"{pad}   DATASPACE  {_h5space(shape)}")
            if values and shape is not None:
                _data_lines(obj.attrs[name], pad + "   ", out)
        except Exception as exc:  # noqa: BLE001 - dump reports what it cannot read
            out(f"{pad}   (unreadable: {exc})")
        out(f"{pad}}}")


def _dump_dataset(name, ds, pad, out, args):
    out(f'{pad}DATASET "{name}" {{')
    out(f"{pad}   DATATYPE  {_h5type(ds.dtype, len(pad) + 3)}")
    out(f"{pad}   DATASPACE  {_h5space(ds.shape, ds.maxshape)}")
    if ds.is_sparse:
        from .sparse.dump import layout_lines
        for line in layout_lines(ds, _fmt):
            out(f"{pad}   {line}")
    elif ds.chunks:
        out(f"{pad}   STORAGE_LAYOUT {{ CHUNKED ( {', '.join(map(str, ds.chunks))} ) }}")
    if not args.header and not args.attributes and ds.shape is not None:
        try:
            if ds.is_sparse:
                from .sparse.dump import data_lines
                data_lines(ds, pad + "   ", out, _fmt)
            else:
                _data_lines(ds[()], pad + "   ", out)
        except Exception as exc:  # noqa: BLE001
            out(f"{pad}   DATA {{ unreadable: {exc} }}")
    _dump_attrs(ds, pad + "   ", out, not args.header)
    out(f"{pad}}}")


def _dump_group(name, g, pad, out, args, seen):
    import purehep
    out(f'{pad}GROUP "{name}" {{')
    _dump_attrs(g, pad + "   ", out, not args.header)
    if g.addr in seen:
        out(f'{pad}   HARDLINK "{seen[g.addr]}"')
    else:
        seen[g.addr] = g.name
        for child in g:
            link = g.get(child, getlink=True)
            if isinstance(link, purehep.SoftLink):
                out(f'{pad}   SOFTLINK "{child}" {{ LINKTARGET "{link.path}" }}')
                continue
            if isinstance(link, purehep.ExternalLink):
                out(f'{pad}   EXTERNAL_LINK "{child}" {{ TARGETFILE "{link.filename}" '
                    f'TARGETPATH "{link.path}" }}')
                continue
            try:
                obj = g[child]
            except purehep.PurehepError as exc:
                out(f'{pad}   "{child}" unreadable: {exc}')
                continue
            if isinstance(obj, purehep.Dataset):
                if obj.addr in seen:
                    out(f'{pad}   DATASET "{child}" {{ HARDLINK "{seen[obj.addr]}" }}')
                else:
                    seen[obj.addr] = obj.name
                    _dump_dataset(child, obj, pad + "   ", out, args)
            elif isinstance(obj, purehep.Group):
                _dump_group(child, obj, pad + "   ", out, args, seen)
            else:
                out(f'{pad}   DATATYPE "{child}" {_h5type(obj.dtype, len(pad) + 3)}')
    out(f"{pad}}}")


def _json_attrs(obj, values):
    from .inspect.values import encode, dtype_spec
    out = {}
    for name in obj.attrs:
        dt, shape = obj.attrs.get_dtype(name), obj.attrs.get_shape(name)
        if values:
            out[name] = encode(obj.attrs[name], dt)
        else:
            out[name] = {"dtype": dtype_spec(dt), "shape": None if shape is None else list(shape)}
    return out


def _json_object(obj, args, seen):
    import purehep
    from .inspect.values import encode, dtype_spec
    if isinstance(obj, purehep.Dataset):
        node = {"kind": "dataset", "dtype": dtype_spec(obj.dtype),
                "shape": None if obj.shape is None else list(obj.shape),
                "maxshape": None if obj.maxshape is None else list(obj.maxshape),
                "chunks": list(obj.chunks) if obj.chunks else None,
                "attrs": _json_attrs(obj, not args.header)}
        if not args.header and not args.attributes:
            if obj.is_sparse:
                from .sparse.dump import json_value
                node["value"] = json_value(obj, encode)
            else:
                node["value"] = encode(obj[()], obj.dtype)
        return node
    if isinstance(obj, purehep.Group):
        node = {"kind": "group", "attrs": _json_attrs(obj, not args.header), "members": {}}
        if obj.addr in seen:
            node["hardlink"] = seen[obj.addr]
            return node
        seen[obj.addr] = obj.name
        for name in obj:
            link = obj.get(name, getlink=True)
            if isinstance(link, purehep.SoftLink):
                node["members"][name] = {"kind": "soft link", "target": link.path}
            elif isinstance(link, purehep.ExternalLink):
                node["members"][name] = {"kind": "external link", "file": link.filename,
                                         "target": link.path}
            else:
                try:
                    node["members"][name] = _json_object(obj[name], args, seen)
                except purehep.PurehepError as exc:
                    node["members"][name] = {"kind": "unreadable", "error": str(exc)}
        return node
    return {"kind": "datatype", "dtype": dtype_spec(obj.dtype)}


def cmd_dump(args, out):
    with _open(args.file) as f:
        if args.json:
            obj = f[args.dataset] if args.dataset else f
            doc = {"file": os.path.basename(args.file), "path": args.dataset or "/",
                   "object": _json_object(obj, args, {})}
            out(json.dumps(doc, indent=1, ensure_ascii=False))
            return 0
        out(f'HDF5 "{args.file}" {{')
        if args.dataset:
            _dump_dataset(args.dataset, f[args.dataset], "", out, args)
        else:
            _dump_group("/", f, "", out, args, {})
        out("}")
    return 0


# --- inspect -------------------------------------------------------------------------------------
def _field_text(fields, limit=8):
    parts = []
    for k, v in list(fields.items())[:limit]:
        if v is None:
            v = "undef"
        text = v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
        if len(text) > 40:
            text = text[:37] + "..."
        parts.append(f"{k}={text}")
    return " ".join(parts)


def _structure_line(s, depth):
    ver = f" v{s.version}" if s.version is not None else ""
    sec = f" [{s.section}]" if s.section else ""
    owner = f" ({s.owner})" if s.owner and depth == 0 else ""
    fields = _field_text(s.fields)
    return f"{'  ' * depth}{s.offset:>10} {s.size:>9}  {s.name}{ver}{sec}{owner}" + \
        (f"  {fields}" if fields else "")


def _load_map(path, label):
    from .inspect.walker import walk
    from .io import open_source
    src = open_source(path)
    bar = Progress(label)
    try:
        fmap = walk(src, bar)
    finally:
        bar.done()
    return src, fmap


def cmd_inspect(args, out):
    from .inspect.account import account, classify_gaps
    src, fmap = _load_map(args.file, "inspect")
    acc = classify_gaps(fmap, account(fmap))
    if args.at is not None:
        chain = fmap.at(args.at)
        if args.json:
            out(json.dumps({"offset": args.at, "structures": [
                {k: v for k, v in s.to_json().items() if k != "children"} for s in chain],
                "gap": next((g for g in acc["gaps"] if g["offset"] <= args.at <
                             g["offset"] + g["size"]), None)}, indent=1))
            return 0
        if not chain:
            gap = next((g for g in acc["gaps"] if g["offset"] <= args.at < g["offset"] + g["size"]),
                       None)
            if args.at >= fmap.size:
                out(f"offset {args.at} lies past the end of the file ({fmap.size} bytes)")
            elif gap:
                out(f"offset {args.at} is unclaimed: {gap['size']} bytes at {gap['offset']} "
                    f"belong to no structure ({gap['class']})")
            return 0
        for depth, s in enumerate(chain):
            out(_structure_line(s, depth) + f"  (+{args.at - s.offset})")
        inner = chain[-1]
        for k, v in inner.fields.items():
            out(f"{'  ' * len(chain)}{k}: {v}")
        return 0
    if args.json:
        doc = {"file": args.file, "size": fmap.size,
               "superblock_version": fmap.superblock.version,
               "structures": [s.to_json() for s in fmap.structures],
               "account": acc, "findings": [f.to_json() for f in fmap.findings],
               "notes": fmap.notes}
        out(json.dumps(doc, indent=1, default=str))
        return 0
    out(f"{args.file}: {fmap.size} bytes, superblock version {fmap.superblock.version}")
    out(f"{'offset':>10} {'size':>9}  structure")
    gaps = {g["offset"]: g for g in acc["gaps"]}
    items = [(s.offset, 0, s) for s in fmap.structures] + [(o, 1, g) for o, g in gaps.items()]
    for _o, kind, item in sorted(items, key=lambda t: (t[0], t[1])):
        if kind:
            out(f"{item['offset']:>10} {item['size']:>9}  (unclaimed: {item['class']})")
            continue
        for depth, s in item.walk():
            out(_structure_line(s, depth))
    out(f"account: metadata {acc['metadata']} + raw data {acc['raw']} + free {acc['free']} + "
        f"user block {acc['userblock']} + unclaimed {acc['unclaimed']} = {fmap.size} bytes")
    out(f"  unclaimed: {acc['unclaimed_zero_filled']} zero-filled (freed or aggregator slack, "
        f"not tracked in the file), {acc['unclaimed_stale_structures']} stale structures, "
        f"{acc['unclaimed_other']} other")
    out(f"  unused inside structures (NIL messages, header gaps, node and heap capacity, free "
        f"lists): {acc['unused_in_structures']}")
    if acc["overlapping"]:
        out(f"  overlapping: {acc['overlapping']} bytes claimed more than once")
    for f in fmap.findings:
        out(f"  finding: {f}")
    for n in fmap.notes:
        out(f"  note: {n}")
    return 0


# --- check ---------------------------------------------------------------------------------------
def cmd_check(args, out):
    from .inspect.check import check_map
    src, fmap = _load_map(args.file, "check")
    findings = check_map(fmap, fmap.read)
    if args.json:
        out(json.dumps({"file": args.file, "findings": [f.to_json() for f in findings],
                        "notes": fmap.notes}, indent=1))
    else:
        for f in findings:
            out(str(f))
        for n in fmap.notes:
            out(f"note: {n}")
        out(f"{args.file}: {len(findings)} finding{'s' if len(findings) != 1 else ''}")
    return 1 if findings else 0


def cmd_repack(args, out):
    from .write.repack import repack
    import os
    before = os.path.getsize(args.file)
    repack(args.file, args.dst)
    out(f"{args.file} ({before} bytes) -> {args.dst} ({os.path.getsize(args.dst)} bytes)")
    return 0


# --- query ---------------------------------------------------------------------------------------
def _matching(obj, expr):
    """(row numbers, {field: values at those rows}) of a HEP001 table group, a 2005 index
    table or any compound dataset, for a parsed query."""
    from . import Dataset
    from .index import is_index, open_index
    from .query import evaluate
    from .table import is_table, open_table
    if is_table(obj):
        table = open_table(obj)
        rows = table.where(expr)
        return rows, table.read(None, rows)
    if not isinstance(obj, Dataset) or obj.dtype.names is None or obj.ndim != 1:
        raise ValueError(f"{obj.name} is not a HEP001 table, an index table or a 1-D "
                         "compound dataset")
    if is_index(obj):
        index = open_index(obj)
        rows = index.query(expr)
        records = index.records[rows]
        return rows, {n: records[n] for n in records.dtype.names if n != index.target_field}
    records = obj[()]
    rows = np.flatnonzero(evaluate(expr, {n: records[n] for n in records.dtype.names}))
    return rows, {n: records[n][rows] for n in records.dtype.names}


def cmd_query(args, out):
    from .query import parse
    path, name = _split(args.target)
    expr = parse(args.expr)
    with _open(path) as f:
        rows, columns = _matching(f[name], expr)
    if args.json:
        out(json.dumps({"rows": rows.tolist(), "columns": {
            k: [x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else x
                for x in np.asarray(v[:args.limit]).tolist()] for k, v in columns.items()}},
            default=str))
        return 0
    names = list(columns)
    out(f"{len(rows)} row{'s' if len(rows) != 1 else ''} match {str(expr)!r}")
    for i, row in enumerate(rows[:args.limit]):
        out(f"  {int(row)}: " + ", ".join(f"{k}={_fmt(columns[k][i])}" for k in names))
    if len(rows) > args.limit:
        out(f"  ... ({len(rows) - args.limit} more; --limit N)")
    return 0


# --- main ----------------------------------------------------------------------------------------
def _parser():
    p = argparse.ArgumentParser(prog="purehep", description="HDF5 files without libhdf5: list, "
                                "dump, map every byte, check against the specification.")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("ls", help="list groups and datasets (like h5ls)")
    ls.add_argument("-r", "--recursive", action="store_true")
    ls.add_argument("-v", "--verbose", action="store_true")
    ls.add_argument("target", metavar="FILE[/PATH]")
    dump = sub.add_parser("dump", help="print objects, attributes and data (like h5dump)")
    dump.add_argument("-H", "--header", action="store_true", help="header only, no data")
    dump.add_argument("-A", "--attributes", action="store_true",
                      help="header and attribute values, no dataset data")
    dump.add_argument("-d", "--dataset", metavar="PATH", help="one dataset")
    dump.add_argument("--json", action="store_true", help="JSON whose values round-trip")
    dump.add_argument("file")
    ins = sub.add_parser("inspect", help="every structure with offset, size and fields")
    ins.add_argument("file")
    ins.add_argument("--at", type=lambda s: int(s, 0), metavar="OFFSET",
                     help="explain the structure covering one offset")
    ins.add_argument("--json", action="store_true")
    rep = sub.add_parser("repack", help="rewrite a file compactly (drops free space)")
    rep.add_argument("file", metavar="SRC")
    rep.add_argument("dst", metavar="DST")
    chk = sub.add_parser("check", help="verify the file against the specification")
    chk.add_argument("file")
    chk.add_argument("--json", action="store_true")
    qry = sub.add_parser("query", help="rows of a HEP001 table, index table or compound "
                         "dataset matching a query string")
    qry.add_argument("target", metavar="FILE/PATH")
    qry.add_argument("expr", metavar="QUERY", help='e.g. "(A>3 AND A<7) AND B=10"')
    qry.add_argument("--limit", type=int, default=20, help="rows to print (default 20)")
    qry.add_argument("--json", action="store_true")
    return p


def main(argv=None):
    """Run the ``purehep`` command; return the exit status (check: 0 clean, 1 findings,
    2 unreadable)."""
    from .errors import PurehepError
    args = _parser().parse_args(argv)
    lines = []

    def out(text):
        lines.append(text)
        if len(lines) >= 256:
            flush()

    def flush():
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
            lines.clear()

    commands = {"ls": cmd_ls, "dump": cmd_dump, "inspect": cmd_inspect, "check": cmd_check,
                "repack": cmd_repack, "query": cmd_query}
    try:
        status = commands[args.command](args, out)
    except (PurehepError, OSError, KeyError, ValueError) as exc:
        flush()
        sys.stdout.flush()
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"purehep {args.command}: {getattr(args, 'file', None) or args.target}: {msg}",
              file=sys.stderr)
        return UNREADABLE
    except BrokenPipeError:
        return 0
    try:
        flush()
    except BrokenPipeError:
        pass
    return status


if __name__ == "__main__":
    sys.exit(main())
