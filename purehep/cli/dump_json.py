"""``purehep dump --json``: the objects, attributes and values of a file (or one dataset) as a
JSON document whose values round-trip (``purehep.inspect.values.decode`` rebuilds each numpy
array exactly)."""
import json
import os


def _attrs(obj, values):
    from ..inspect.values import encode, dtype_spec
    out = {}
    for name in obj.attrs:
        dt, shape = obj.attrs.get_dtype(name), obj.attrs.get_shape(name)
        if values:
            out[name] = encode(obj.attrs[name], dt)
        else:
            out[name] = {"dtype": dtype_spec(dt), "shape": None if shape is None else list(shape)}
    return out


def _object(obj, args, seen):
    import purehep
    from ..inspect.values import encode, dtype_spec
    if isinstance(obj, purehep.Dataset):
        node = {"kind": "dataset", "dtype": dtype_spec(obj.dtype),
                "shape": None if obj.shape is None else list(obj.shape),
                "maxshape": None if obj.maxshape is None else list(obj.maxshape),
                "chunks": list(obj.chunks) if obj.chunks else None,
                "attrs": _attrs(obj, not args.header)}
        if not args.header and not args.attributes:
            if getattr(obj, "is_sparse", False):
                from ..sparse.dump import json_value
                node["value"] = json_value(obj, encode)
            else:
                node["value"] = encode(obj[()], obj.dtype)
        return node
    if isinstance(obj, purehep.Group):
        node = {"kind": "group", "attrs": _attrs(obj, not args.header), "members": {}}
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
                    node["members"][name] = _object(obj[name], args, seen)
                except (purehep.PurehepError, KeyError, OSError) as exc:
                    node["members"][name] = {"kind": "unreadable", "error": str(exc)}
        return node
    return {"kind": "datatype", "dtype": dtype_spec(obj.dtype)}


def run(args, f, out):
    path = args.dataset[0] if args.dataset else "/"
    obj = f[path]
    doc = {"file": os.path.basename(args.file), "path": path, "object": _object(obj, args, {})}
    out(json.dumps(doc, indent=1, ensure_ascii=False))
    return 0
