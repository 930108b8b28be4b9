"""``purehep dump``: h5dump's output for a file, group, dataset or attribute.

The layout is h5dump 1.10's DDL: ``GROUP``/``DATASET``/``ATTRIBUTE`` blocks in name order,
``DATATYPE`` and ``DATASPACE`` lines (see ddl.py), data arranged as h5dump arranges it (see
ddl_data.py), hard links to objects already shown as ``HARDLINK "/first/path"``, soft, external
and user-defined links as their own blocks. Options as h5dump's: ``-H`` header only, ``-A``
header and attributes, ``-d/-a/-g`` one dataset/attribute/group (repeatable), ``-s/-S/-c/-k``
a hyperslab of a dataset, ``-p`` storage properties, ``-n`` the list of contents, ``-o FILE``
data to a file (text, or raw with ``-b``), ``--json`` values that round-trip.

Every object named on the command line is looked up before anything is printed, and each block
is closed even when an object inside it cannot be read (the error goes to stderr, as h5dump's).
"""
import os
import sys

import numpy as np

from ..errors import PurehepError
from ..format.messages import datatype as T
from .common import attr_names, committed_type, links_by_name, open_file
from .ddl import INDENT, space_text, type_text
from .ddl_data import Lines, strings
from .dump_props import properties
from .dump_select import Subset

BLOCK_ELEMENTS = 1 << 17          # elements formatted at a time
COMMENT = 0x0D


def _key(obj):
    """An object's identity across the files external links lead to."""
    return id(obj._file), obj.addr


def register(sub):
    p = sub.add_parser("dump", help="print objects, attributes and data (like h5dump)")
    p.add_argument("-H", "--header", action="store_true", help="header only, no data")
    p.add_argument("-A", "--attributes", action="store_true",
                   help="header and attribute values, no dataset data")
    p.add_argument("-d", "--dataset", metavar="PATH", action="append", help="a dataset")
    p.add_argument("-a", "--attribute", metavar="PATH", action="append",
                   help="an attribute (OBJECT/NAME)")
    p.add_argument("-g", "--group", metavar="PATH", action="append", help="a group")
    p.add_argument("-s", "--start", metavar="LIST", help="hyperslab start (with -d)")
    p.add_argument("-S", "--stride", metavar="LIST", help="hyperslab stride")
    p.add_argument("-c", "--count", metavar="LIST", help="hyperslab count")
    p.add_argument("-k", "--block", metavar="LIST", help="hyperslab block")
    p.add_argument("-p", "--properties", action="store_true",
                   help="storage layout, filters, fill value and allocation time")
    p.add_argument("-n", "--contents", action="store_true", help="list of contents")
    p.add_argument("-o", "--output", metavar="FILE", help="write data to FILE")
    p.add_argument("-b", "--binary", nargs="?", const="NATIVE", metavar="ORDER",
                   choices=["NATIVE", "FILE", "MEMORY", "LE", "BE"],
                   help="with -o: raw binary data (NATIVE, FILE, MEMORY, LE or BE)")
    p.add_argument("--json", action="store_true", help="JSON whose values round-trip")
    p.add_argument("file")
    p.set_defaults(run=run)


def run(args, out):
    if args.binary and not args.output:
        raise ValueError("-b needs -o FILE for the binary data")
    with open_file(args.file) as f:
        if args.json:
            from . import dump_json
            return dump_json.run(args, f, out)
        dumper = Dumper(f, args, out)
        targets = dumper.resolve()              # errors here leave nothing on stdout
        data_file = open(args.output, "wb" if args.binary else "w") if args.output else None
        try:
            dumper.data_file = data_file
            out(f'HDF5 "{args.file}" {{')
            try:
                dumper.dump(targets)
            finally:
                out("}")
        finally:
            if data_file is not None:
                data_file.close()
    return 1 if dumper.errors else 0


class Dumper:
    def __init__(self, f, args, out):
        self.f, self.args, self.out = f, args, out
        self.ctx = f._ctx
        self.paths = None           # object header address -> first path (h5trav's order)
        self.anonymous = []         # committed datatypes no link reaches
        self.following = set()      # (file, path) of external links being followed
        self.shown = {}             # address -> path of objects already printed
        self.errors = 0
        self.data_file = None

    # -- what to dump -------------------------------------------------------------------------
    def resolve(self):
        """The objects named by -d/-a/-g (or the root group), looked up before printing."""
        import purehep
        a = self.args
        if a.contents:
            return [("contents", None, None)]
        subset = Subset.parse(a) if any((a.start, a.stride, a.count, a.block)) else None
        if subset is not None and not a.dataset:
            raise ValueError("-s/-S/-c/-k select part of a dataset: name it with -d")
        targets = []
        for path in a.group or ():
            g = self.f[path]
            if not isinstance(g, purehep.Group):
                raise ValueError(f"{path} is not a group")
            targets.append(("group", path, g))
        for path in a.dataset or ():
            path, inline = Subset.split_path(path)
            ds = self.f[path]
            if not isinstance(ds, purehep.Dataset):
                raise ValueError(f"{path} is not a dataset")
            chosen = inline or subset
            if chosen is not None:
                chosen.check(ds.shape)
            targets.append(("dataset", path, (ds, chosen)))
        for path in a.attribute or ():
            owner, _, name = path.rstrip("/").rpartition("/")
            obj = self.f[owner or "/"]
            if name not in obj.attrs:
                raise KeyError(f"no attribute {name!r} on {owner or '/'}")
            targets.append(("attribute", name, (obj, name)))
        return targets or [("group", "/", self.f)]

    def dump(self, targets):
        for kind, path, obj in targets:
            if kind == "contents":
                self.contents()
            elif kind == "group":
                self.group(path, obj, "")
            elif kind == "dataset":
                self.dataset(path, obj[0], "", subset=obj[1])
            else:
                self.attribute(path, *obj, "")

    def fail(self, what, exc):
        if isinstance(exc, BrokenPipeError):
            raise exc
        self.errors += 1
        print(f"purehep dump error: {what}: {exc}", file=sys.stderr)

    # -- paths and references -------------------------------------------------------------------
    def first_paths(self):
        """address -> the first path of every object, depth first in name order (h5dump names
        hard links, committed datatypes and referenced objects by it); committed datatypes
        that datasets use but no link reaches are named ``/#address``, as h5dump names them."""
        if self.paths is None:
            import purehep
            from ..format.messages import link as L
            from ..hl.base import open_object
            paths, used = {self.f.addr: "/"}, []
            stack = [(iter(links_by_name(self.f)), "")]
            while stack:
                link = next(stack[-1][0], None)
                if link is None:
                    stack.pop()
                    continue
                if link.type != L.HARD or link.address in paths:
                    continue
                path = paths[link.address] = stack[-1][1] + "/" + link.name
                try:
                    obj = open_object(self.f, link.address, path)
                    if isinstance(obj, purehep.Group):
                        stack.append((iter(links_by_name(obj)), path))
                    elif isinstance(obj, purehep.Dataset):
                        used.append(committed_type(obj))
                except (purehep.PurehepError, OSError, KeyError, ValueError):
                    continue
            self.anonymous = sorted({a for a in used if a is not None and a not in paths})
            for addr in self.anonymous:
                paths[addr] = f"/#{addr}"
            self.paths = paths
        return self.paths

    def reference(self, ref):
        from ..format.object_header import header_of, object_kind
        if ref is None or not ref:
            return "NULL"
        addr = getattr(ref, "address", None)
        if addr is None:
            return "NULL"
        try:
            kind = object_kind(header_of(self.ctx, addr)).upper()
        except Exception:  # noqa: BLE001 - a dangling reference prints as h5dump prints it
            return f"UNKNOWN {addr}"
        path = self.first_paths().get(addr, "?")
        if getattr(ref, "selection", None) is not None or type(ref).__name__ == "RegionReference":
            return f'{kind} "{path}"'
        return f'{kind} {addr} "{path}"'

    def named_type(self, obj):
        """``"/path"`` when the object's datatype message is a committed datatype."""
        loc = committed_type(obj)
        return None if loc is None else f'"{self.first_paths().get(loc, f"/#{loc}")}"'

    # -- blocks ---------------------------------------------------------------------------------
    def group(self, name, g, pad, path=None):
        """A group block; ``path`` is the path it is reached by (None for a group named on
        the command line, always shown in full)."""
        import purehep
        from ..format.messages import link as L
        out = self.out
        out(f'{pad}GROUP "{name}" {{')
        inner = pad + INDENT
        try:
            if _key(g) in self.shown and path is not None:
                out(f'{inner}HARDLINK "{self.shown[_key(g)]}"')
                return
            path = path or g.name
            self.shown[_key(g)] = path
            self.comment(g, inner)
            self.attributes(g, inner)
            if path == "/" and g._file is self.f and self.first_paths():
                for addr in self.anonymous:
                    self.named_datatype(f"#{addr}", self.open_at(addr, f"/#{addr}"), inner,
                                        f"/#{addr}")
            for link in links_by_name(g):
                if link.type == L.SOFT:
                    out(f'{inner}SOFTLINK "{link.name}" {{')
                    out(f'{inner}{INDENT}LINKTARGET "{link.target}"')
                    out(f"{inner}}}")
                elif link.type == L.EXTERNAL:
                    out(f'{inner}EXTERNAL_LINK "{link.name}" {{')
                    out(f'{inner}{INDENT}TARGETFILE "{link.filename}"')
                    out(f'{inner}{INDENT}TARGETPATH "{link.target}"')
                    try:
                        self.external(g, link, inner + INDENT)
                    finally:
                        out(f"{inner}}}")
                elif link.type != L.HARD:
                    out(f'{inner}USERDEFINED_LINK "{link.name}" {{')
                    out(f"{inner}{INDENT}LINKCLASS {link.type}")
                    out(f"{inner}}}")
                else:
                    child = path.rstrip("/") + "/" + link.name
                    try:
                        obj = g[link.name]
                    except (purehep.PurehepError, OSError, KeyError, ValueError) as exc:
                        self.fail(child, exc)
                        continue
                    self.member(link.name, obj, inner, child)
        finally:
            out(f"{pad}}}")

    def external(self, group, link, pad):
        """The target of an external link, shown inside the link's block as h5dump 1.10 shows
        it (each file/path pair once along a chain of links, so cycles end)."""
        import purehep
        try:
            other = group._file._external_file(link.filename)
            key = (id(other), link.target)
            if _same_file(other, self.f) or key in self.following:
                return                  # h5dump does not follow links back into its file
            obj = other[link.target]
        except (purehep.PurehepError, OSError, KeyError, ValueError):
            return                      # a dangling external link is shown as a link only
        self.following.add(key)
        try:
            self.member(link.target, obj, pad, "/" + link.target.lstrip("/"))
        finally:
            self.following.discard(key)

    def comment(self, obj, pad):
        """``COMMENT "..."``: the object comment message (spec IV.A.2.n)."""
        raw = obj._oh.first(COMMENT)
        if raw is not None:
            text = bytes(raw.data).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            self.out(f'{pad}COMMENT "{text}"')

    def open_at(self, addr, name):
        from ..hl.base import open_object
        return open_object(self.f, addr, name)

    def member(self, name, obj, pad, path):
        import purehep
        if isinstance(obj, purehep.Group):
            return self.group(name, obj, pad, path)
        kind = "DATASET" if isinstance(obj, purehep.Dataset) else "DATATYPE"
        if _key(obj) in self.shown:
            self.out(f'{pad}{kind} "{name}" {{')
            self.out(f'{pad}{INDENT}HARDLINK "{self.shown[_key(obj)]}"')
            self.out(f"{pad}}}")
            return
        self.shown[_key(obj)] = path
        if kind == "DATASET":
            self.dataset(name, obj, pad)
        else:
            self.named_datatype(name, obj, pad, path)

    def named_datatype(self, name, obj, pad, path):
        dt = obj.datatype
        end = "" if dt.cls == 6 else ";"
        self.out(f'{pad}DATATYPE "{name}" {type_text(dt, pad)}{end}')
        self.shown[_key(obj)] = path
        if len(obj.attrs):
            self.attributes(obj, pad + INDENT)

    def dataset(self, name, ds, pad, subset=None):
        out, inner, a = self.out, pad + INDENT, self.args
        out(f'{pad}DATASET "{name}" {{')
        try:
            self.comment(ds, inner)
            try:
                dt = ds._type
            except PurehepError as exc:
                return self.undefined_type(ds, inner, exc)
            named = self.named_type(ds)
            out(f"{inner}DATATYPE  {named or type_text(dt, inner)}")
            out(f"{inner}DATASPACE  {space_text(ds.shape, ds.maxshape)}")
            if getattr(ds, "is_sparse", False):      # no h5dump form: purehep.sparse.dump
                from ..sparse.dump import layout_lines
                for line in layout_lines(ds, self.value_text(ds)):
                    out(inner + line)
            elif a.properties:
                for line in properties(ds, self.ctx):
                    out(inner + line)
            if not a.header and not a.attributes:
                if subset is not None:
                    out(f"{inner}SUBSET {{")
                    for line in subset.header():
                        out(f"{inner}{INDENT}{line}")
                    self.dataset_data(ds, inner + INDENT, subset)
                    out(f"{inner}}}")
                else:
                    self.dataset_data(ds, inner)
            self.attributes(ds, inner)
        finally:
            out(f"{pad}}}")

    def undefined_type(self, ds, pad, exc):
        """A datatype purehep cannot decode: a reference of a kind libhdf5 1.10 does not know
        either prints as h5dump prints it (``UNDEFINED``, no data); anything else is an error."""
        from ..hl.base import DATATYPE
        raw = ds._oh.first(DATATYPE)
        if raw is None or raw.shared or not raw.data or raw.data[0] & 0x0F != T.REFERENCE:
            raise exc
        self.out(f"{pad}DATATYPE  H5T_REFERENCE {{ UNDEFINED }}")
        self.out(f"{pad}DATASPACE  {space_text(ds.shape, ds.maxshape)}")
        if not self.args.header and not self.args.attributes:
            self.out(f"{pad}DATA {{")
            self.out(f"{pad}}}")

    def attributes(self, obj, pad):
        for name in attr_names(obj):
            self.attribute(name, obj, name, pad)

    def attribute(self, label, obj, name, pad):
        out, inner = self.out, pad + INDENT
        out(f'{pad}ATTRIBUTE "{label}" {{')
        try:
            msg = obj.attrs._attrs[name]
            dt, space = msg.datatype, msg.dataspace
            out(f"{inner}DATATYPE  {type_text(dt, inner)}")
            out(f"{inner}DATASPACE  {space_text(space.shape, space.maxshape)}")
            if not self.args.header:
                self.attribute_data(obj, name, dt, space.shape, inner)
        except BrokenPipeError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported; the block is still closed
            self.fail(f"attribute {name!r} of {obj.name}", exc)
        finally:
            out(f"{pad}}}")

    # -- data ------------------------------------------------------------------------------------
    def attribute_data(self, obj, name, dt, shape, pad):
        self.out(f"{pad}DATA {{")
        try:
            if shape is None:
                return
            from ..hl.attrs import attribute_value
            value = attribute_value(self.ctx, obj.attrs._attrs[name])
            value = _scalar(value, dt) if shape == () else np.asarray(value)
            if dt.cls == T.REFERENCE and dt.ref_type in (0, 1):
                return self.reference_data(value, pad, dt.ref_type)
            items = strings(dt, value, len(pad) // 3 + 1, self.reference)
            lines = Lines(len(items), shape[-1] if shape else 1, _positions(shape), pad)
            for line in lines.feed(items) + lines.finish():
                self.out(line)
        finally:
            self.out(f"{pad}}}")

    def dataset_data(self, ds, pad, subset=None):
        if getattr(ds, "is_sparse", False):
            return self.sparse_data(ds, pad)
        if self.data_file is not None:
            return self.data_to_file(ds, pad, subset)
        if _has_time(ds._type):                 # as h5dump 1.10 does
            shallow = ds._type.cls == T.TIME or any(m.type.cls == T.TIME
                                                    for m in ds._type.members)
            self.out(f"{pad}DATA{{ not yet implemented.}}" if shallow else f"{pad}DATA {{")
            if not shallow:
                self.out(f"{pad}}}")
            return
        self.out(f"{pad}DATA {{")
        try:
            if ds.shape is None:
                return
            dt = ds._type
            if dt.cls == T.REFERENCE and dt.ref_type in (0, 1) and subset is None:
                return self.reference_data(ds[()], pad, dt.ref_type)
            level = len(pad) // 3 + 1
            for block in self.data_lines(ds, dt, pad, level, subset):
                self.out.extend(block)
        except BrokenPipeError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported; the block is still closed
            self.fail(f"data of {ds.name}", exc)
        finally:
            self.out(f"{pad}}}")

    def data_lines(self, ds, dt, pad, level, subset=None):
        """The data lines of a dataset (or a hyperslab of it): lists of lines, one list per
        block of values formatted."""
        shape = ds.shape
        if subset is None:
            total = int(np.prod(shape, dtype=np.int64)) if shape else 1
            row = shape[-1] if shape else 1
            positions = _positions(shape)
            blocks = _row_blocks(ds, shape)
        else:
            total, row = subset.size, subset.row
            positions = subset.position
            blocks = subset.blocks(ds, BLOCK_ELEMENTS)
        lines = Lines(total, row, positions, pad)
        if subset is not None and len(shape) >= 3:
            lines.plane = subset.shape[-2] * subset.shape[-1]   # h5dump ends each plane
        for values in blocks:
            yield lines.feed(strings(dt, values, level, self.reference))
        yield lines.finish()

    def reference_data(self, refs, pad, ref_type):
        """References (the values of a dataset or attribute) as h5dump shows them: an object
        reference names its target and shows a dataset's data under it; a region reference
        shows the target dataset with the region's blocks or points, its type and space."""
        import purehep
        inner = pad + INDENT
        for ref in np.asarray(refs, dtype=object).reshape(-1):
            if not ref:
                self.out(inner + "NULL")
                continue
            try:
                target = self.f[ref] if ref_type == 0 else self.open_at(ref.address, None)
            except (purehep.PurehepError, OSError, KeyError, ValueError) as exc:
                self.fail("reference", exc)
                continue
            if ref_type == 1:
                self.region(ref, target, inner)
                continue
            self.out(inner + self.reference(ref))
            self.out(f"{inner}{INDENT}DATA {{")
            try:
                if isinstance(target, purehep.Dataset) and target.shape is not None:
                    deeper = inner + INDENT
                    for block in self.data_lines(target, target._type, deeper,
                                                 len(deeper) // 3 + 1):
                        self.out.extend(block)
            finally:
                self.out(f"{inner}{INDENT}}}")

    def region(self, ref, target, pad):
        path = self.first_paths().get(ref.address, "?")
        sel = ref.selection
        if sel is None or sel.kind not in (1, 2):
            self.out(f'{pad}DATASET "{path}"')
            return
        self.out(f'{pad}DATASET "{path}" {{')
        try:
            self.out(f"{pad}{INDENT}REGION_TYPE {_region_text(sel, target.shape)}")
            self.out(f"{pad}{INDENT}DATATYPE  {type_text(target._type, pad + INDENT)}")
            self.out(f"{pad}{INDENT}DATASPACE  {space_text(target.shape, target.maxshape)}")
        finally:
            self.out(f"{pad}}}")

    def value_text(self, ds):
        """One value of ``ds`` as the data lines print it."""
        return lambda v: strings(ds._type, np.asarray([v], ds.dtype), 1, self.reference)[0]

    def sparse_data(self, ds, pad):
        """A sparse dataset has no h5dump form: its defined elements as (coordinates): value
        lines (purehep.sparse.dump), never materialised densely."""
        from ..sparse.dump import data_lines
        data_lines(ds, pad, self.out, self.value_text(ds))

    def data_to_file(self, ds, pad, subset):
        """``-o FILE``: the data go to the file (h5dump's text lines, or raw with ``-b``) and
        the DATA block on stdout stays empty."""
        self.out(f"{pad}DATA {{")
        try:
            if ds.shape is None:
                return
            if self.args.binary:
                from .dump_select import binary_blocks
                for raw in binary_blocks(ds, subset, self.args.binary, BLOCK_ELEMENTS):
                    self.data_file.write(raw)
                return
            self.data_file.write("\n")
            for block in self.data_lines(ds, ds._type, "   ", 2, subset):
                self.data_file.write("".join(line + "\n" for line in block))
        finally:
            self.out(f"{pad}}}")

    # -- contents ---------------------------------------------------------------------------------
    def contents(self):
        import purehep
        from ..format.messages import link as L
        out = self.out
        out("FILE_CONTENTS {")
        try:
            out(" group      /")
            seen = {self.f.addr: "/"}

            def walk(group, prefix):
                for link in links_by_name(group):
                    path = f"{prefix}/{link.name}"
                    if link.type == L.SOFT:
                        out(f" link       {path} -> {link.target}")
                    elif link.type == L.EXTERNAL:
                        out(f" ext link   {path} -> {link.filename} {link.target}")
                    elif link.type != L.HARD:
                        out(f" unknown type of UD link {path} -> ???")
                    else:
                        try:
                            obj = group[link.name]
                        except (purehep.PurehepError, OSError, KeyError, ValueError) as exc:
                            self.fail(path, exc)
                            continue
                        kind = ("group" if isinstance(obj, purehep.Group) else "dataset"
                                if isinstance(obj, purehep.Dataset) else "datatype")
                        if obj.addr in seen:
                            out(f" {kind:<10} {path} -> {seen[obj.addr]}")
                            continue
                        out(f" {kind:<10} {path}")
                        seen[obj.addr] = path
                        if kind == "group":
                            walk(obj, path)
            walk(self.f, "")
        finally:
            out(" }")


def _positions(shape):
    """flat element number -> its coordinates (plain integer arithmetic, one call per line)."""
    if len(shape) <= 1:
        return lambda k: (k,)
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]

    def position(k):
        at = []
        for s in strides:
            q, k = divmod(k, s)
            at.append(q)
        return at
    return position


def _has_time(dt):
    """h5dump 1.10 prints no data for a type with a time class anywhere in it."""
    return dt.cls == T.TIME or (dt.base is not None and _has_time(dt.base)) or any(
        _has_time(m.type) for m in dt.members)


def _same_file(a, b):
    pa, pb = a._source.path, b._source.path
    return a is b or (pa is not None and pb is not None and os.path.samefile(pa, pb))


def _region_text(sel, shape):
    """``POINT  (1,2), (3,4)`` or ``BLOCK  (0,0)-(1,1), ...`` of a dataspace selection."""
    def pos(p):
        return "(" + ",".join(str(int(x)) for x in p) + ")"
    if sel.kind == 1:
        return "POINT  " + ", ".join(pos(p) for p in sel.points)
    if sel.blocks is not None:
        corners = [(b[0], b[1]) for b in sel.blocks]
    else:
        count = [int(c) for c in sel.count]
        if min(count) < 0 or np.prod(count, dtype=np.int64) > 1 << 20:
            return "BLOCK  (unlimited)"
        corners = []
        for idx in np.ndindex(*count):
            lo = sel.start + np.asarray(idx) * sel.stride
            corners.append((lo, lo + sel.block - 1))
    return "BLOCK  " + ", ".join(f"{pos(lo)}-{pos(hi)}" for lo, hi in corners)


def _scalar(value, dt):
    """A one-element array holding a scalar dataset's or attribute's value (a vlen sequence
    or array value stays one element)."""
    if dt.cls == T.VLEN and not dt.vlen_string:
        holder = np.empty(1, object)
        holder[0] = value
        return holder
    return np.asarray(value)[None]


def _row_blocks(ds, shape):
    """The dataset's values in blocks of whole leading-axis slices (about BLOCK_ELEMENTS
    elements each), so a large dataset is never formatted in one piece."""
    if not shape:
        yield _scalar(ds[()], ds._type)
        return
    if ds.size <= BLOCK_ELEMENTS or shape[0] <= 1:
        yield ds[()]
        return
    per = max(1, int(np.prod(shape[1:], dtype=np.int64)))
    step = max(1, BLOCK_ELEMENTS // per)
    for start in range(0, shape[0], step):
        yield ds[start:start + step]
