"""``purehep ls [-r] [-v] [-d] [-a] FILE[/PATH]``: h5ls's listing. One line per link, the name
in a 24-column field: ``Group``, ``Dataset {10, 20/Inf}``, ``Type``, ``Soft Link {target}``,
``External Link {file//path}``, ``UD Link {cannot follow UD links}``; with ``-r`` every path
below, an object met again marked ``, same as /first/path`` (so hard-link loops end). ``-v``
adds, as h5ls does, attributes with their types, the location (``1:address``), link count,
chunk shape, storage use, filters and the type; ``-d`` the data; ``-a`` raw data addresses."""
import numpy as np

from .common import (FILTER_NAMES, attr_names, committed_type, links_by_name, open_file,
                     split_target)
from .ddl_data import strings
from ..format.messages import datatype as T

_INT_NATIVE = {(1, True): "native signed char", (1, False): "native unsigned char",
               (2, True): "native short", (2, False): "native unsigned short",
               (4, True): "native int", (4, False): "native unsigned int",
               (8, True): "native long", (8, False): "native unsigned long"}


def register(sub):
    p = sub.add_parser("ls", help="list groups and datasets (like h5ls)")
    p.add_argument("-r", "--recursive", action="store_true", help="list all groups below")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="attributes, location, storage, filters and types")
    p.add_argument("-d", "--data", action="store_true", help="print the values of datasets")
    p.add_argument("-a", "--address", action="store_true", help="raw data addresses")
    p.add_argument("target", metavar="FILE[/PATH]")
    p.set_defaults(run=run)


def type_name(dt, indent=15):
    """h5ls's description of a format-level datatype (nested lines start at ``indent``)."""
    if dt.cls == T.FIXED:
        if dt.order == "<" and (dt.size, dt.signed) in _INT_NATIVE and not dt.bit_offset \
                and dt.precision == dt.size * 8:
            return _INT_NATIVE[dt.size, dt.signed]
        order = "" if dt.size == 1 else f"{'big' if dt.order == '>' else 'little'}-endian "
        return f"{dt.precision}-bit {order}{'' if dt.signed else 'unsigned '}integer"
    if dt.cls == T.FLOAT:
        if dt.order == "<" and dt.size in (4, 8):
            return "native float" if dt.size == 4 else "native double"
        return f"IEEE {dt.size * 8}-bit {'big' if dt.order == '>' else 'little'}-endian float"
    if dt.cls == T.STRING or (dt.cls == T.VLEN and dt.vlen_string):
        size = "variable-length" if dt.cls == T.VLEN else f"{dt.size}-byte"
        pad = ("null-terminated", "null-padded", "space-padded")[min(dt.padding, 2)]
        return f"{size} {pad} {'UTF-8' if dt.charset else 'ASCII'} string"
    if dt.cls == T.BITFIELD:
        return f"native {dt.size * 8}-bit field" if dt.order == "<" else \
            f"{dt.size * 8}-bit big-endian bitfield"
    if dt.cls == T.OPAQUE:
        return f"{dt.size}-byte opaque type\n{' ' * 15}(tag = \"{dt.tag.decode('latin-1')}\")"
    if dt.cls == T.COMPOUND:
        pad = " " * (indent + 4)
        lines = ["struct {"] + [f'{pad}{chr(34) + m.name + chr(34):<18} '
                                f'+{m.offset:<4} {type_name(m.type, indent + 4)}'
                                for m in dt.members]
        return "\n".join(lines + [f"{' ' * indent}}} {dt.size} bytes"])
    if dt.cls == T.ENUM:
        lines = [f"enum {type_name(dt.base)} {{"] + [
            f"{' ' * 19}{n if isinstance(n, str) else n.decode('latin-1'):<16} = {v}"
            for n, v in zip(dt.enum_names, dt.enum_values)]
        return "\n".join(lines + [f"{' ' * 15}}}"])
    if dt.cls == T.ARRAY:
        return f"[{','.join(map(str, dt.dims))}] {type_name(dt.base, indent)}"
    if dt.cls == T.VLEN:
        return f"variable length of\n{' ' * 19}{type_name(dt.base)}"
    if dt.cls == T.REFERENCE:
        return "object reference" if dt.ref_type == 0 else "dataset region reference"
    return dt.class_name


def _storage(ds):
    """h5ls's storage line: logical and allocated bytes and their ratio."""
    import purehep
    if ds.dtype.hasobject:
        return "information not available"
    try:
        stored, logical = ds.id.get_storage_size(), ds.nbytes
    except purehep.PurehepError as exc:
        return f"unavailable ({exc})"
    text = f"{logical} logical bytes, {stored} allocated bytes"
    return text + (f", {100.0 * logical / stored:.2f}% utilization" if stored else "")


def _dims(shape, maxshape, verbose):
    if shape is None:
        return "{NULL}"
    if shape == ():
        return "{SCALAR}"
    maxshape = maxshape or shape
    parts = []
    for s, m in zip(shape, maxshape):
        mx = "Inf" if m is None else str(m)
        parts.append(f"{s}/{mx}" if verbose or m != s else str(s))
    return "{" + ", ".join(parts) + "}"


def _name(text):
    return f"{text:<24} " if len(text) < 24 else text + " "


class Lister:
    def __init__(self, f, args, out):
        self.f, self.args, self.out = f, args, out
        self.seen = {}

    def line(self, name, kind, obj=None):
        """The object's line and, with -v/-d, its details."""
        import purehep
        a = self.args
        if obj is not None and obj.addr in self.seen:
            self.out(_name(name) + f"{kind}, same as {self.seen[obj.addr]}")
            return False
        if obj is not None:
            self.seen[obj.addr] = name if name.startswith("/") else obj.name
        if isinstance(obj, purehep.Dataset):
            self.out(_name(name) + f"Dataset {_dims(obj.shape, obj.maxshape, a.verbose)}")
        else:
            self.out(_name(name) + kind)
        if obj is not None and a.verbose:
            self.verbose(obj)
        if isinstance(obj, purehep.Dataset) and a.address:
            self.addresses(obj)
        if isinstance(obj, purehep.Dataset) and a.data:
            self.data(obj)
        return True

    def verbose(self, obj):
        import purehep
        out = self.out
        for name in attr_names(obj):
            try:
                msg = obj.attrs._attrs[name]
                shape = msg.dataspace.shape
                out(f"    Attribute: {name} {_dims(shape, shape, False)}")
                out(f"        Type:      {type_name(msg.datatype)}")
            except purehep.PurehepError as exc:
                out(f"    Attribute: {name} (unreadable: {exc})")
        out(f"    Location:  1:{obj.addr}")
        out(f"    Links:     {getattr(obj._oh, 'refcount', 1)}")
        raw = obj._oh.first(0x0D)
        if raw is not None:
            text = bytes(raw.data).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            out(f'    Comment:   "{text}"')
        if isinstance(obj, purehep.Dataset) and obj.is_sparse:
            from ..sparse.dump import ls_lines
            for line in ls_lines(obj, FILTER_NAMES):
                out(line)
            out(f"    Type:      {type_name(obj._type)}")
        elif isinstance(obj, purehep.Dataset):
            if obj.chunks:
                nbytes = int(np.prod(obj.chunks)) * obj._type.size
                out(f"    Chunks:    {{{', '.join(map(str, obj.chunks))}}} {nbytes} bytes")
            out("    Storage:   " + _storage(obj))
            for i, f in enumerate(obj._pipeline or ()):
                name = FILTER_NAMES.get(f.id) or f.name or "filter"
                params = f"OPT {{{', '.join(map(str, f.client_data))}}}" if f.client_data \
                    else " {}"
                out(f"    Filter-{i}:  {name}-{f.id} {params}")
            loc = committed_type(obj)
            shared = f"shared-1:{loc} " if loc is not None else ""
            out(f"    Type:      {shared}{type_name(obj._type)}")
        elif not isinstance(obj, purehep.Group):
            out(f"    Type:      shared-1:{obj.addr} {type_name(obj.datatype)}")

    def addresses(self, ds):
        lay = ds._layout
        if lay.address is not None and lay.layout_class == 1:
            self.out(f"    Address: {self.f._ctx.absolute(lay.address)}")
        elif ds.chunks:
            for info in ds.id.chunk_infos() if hasattr(ds.id, "chunk_infos") else ():
                self.out(f"    Chunk {list(info.chunk_offset)}: address {info.byte_offset}")

    def data(self, ds):
        self.out("    Data:")
        if ds.shape is None:
            return
        items = strings(ds._type, ds[()], 3, lambda r: f"object {getattr(r, 'address', '?')}")
        line, width = "        ", 80
        for i, s in enumerate(items):
            piece = s + ("," if i < len(items) - 1 else "")
            if len(line) + 1 + len(piece) > width and line.strip():
                self.out(line)
                line = "        "
            line += " " + piece
        if line.strip():
            self.out(line)

    def members(self, group, prefix):
        import purehep
        from ..format.messages import link as L
        for link in links_by_name(group):
            shown = f"{prefix}/{link.name}" if self.args.recursive else link.name
            if link.type == L.SOFT:
                self.out(_name(shown) + f"Soft Link {{{link.target}}}")
                continue
            if link.type == L.EXTERNAL:
                target = link.target.lstrip("/")
                self.out(_name(shown) + f"External Link {{{link.filename}//{target}}}")
                continue
            if link.type != L.HARD:
                self.out(_name(shown) + "UD Link {cannot follow UD links}")
                continue
            try:
                child = group[link.name]
            except (purehep.PurehepError, OSError, KeyError, ValueError) as exc:
                self.out(_name(shown) + f"**NOT FOUND** ({exc})")
                continue
            kind = "Group" if isinstance(child, purehep.Group) else \
                "Dataset" if isinstance(child, purehep.Dataset) else "Type"
            first = self.line(shown, kind, child)
            if first and self.args.recursive and kind == "Group":
                self.members(child, shown)


def run(args, out):
    import purehep
    fpath, opath = split_target(args.target)
    with open_file(fpath) as f:
        obj = f[opath]
        lister = Lister(f, args, out)
        if args.verbose:
            out(f'Opened "{fpath}" with sec2 driver.')
        if not isinstance(obj, purehep.Group):
            kind = "Dataset" if isinstance(obj, purehep.Dataset) else "Type"
            lister.line(opath.rsplit("/", 1)[-1] or "/", kind, obj)
            return 0
        prefix = "" if opath == "/" else opath.rstrip("/")
        if args.recursive or args.verbose and opath == "/":
            lister.line(prefix or "/", "Group", obj)
        else:
            lister.seen[obj.addr] = prefix or "/"
        lister.members(obj, prefix)
    return 0
