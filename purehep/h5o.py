"""h5py's ``h5o`` as far as purehep has it: objects of a file by location and name —
information about one (H5Oget_info: type, header address, hard link count, attribute count,
times: spec IV.A.1, see purehep.h5g), opening, linking, copying (with an object copy list's
flags), existence and a visit of every object below a group — over purehep's groups.
"""
from .h5d import location
from .h5g import file_number, header_times, link_count

TYPE_GROUP, TYPE_DATASET, TYPE_NAMED_DATATYPE = 0, 1, 2
COPY_SHALLOW_HIERARCHY_FLAG, COPY_EXPAND_SOFT_LINK_FLAG, COPY_EXPAND_EXT_LINK_FLAG, \
    COPY_EXPAND_REFERENCE_FLAG, COPY_WITHOUT_ATTR_FLAG, COPY_PRESERVE_NULL_FLAG = \
    1, 2, 4, 8, 16, 32

__all__ = ["TYPE_GROUP", "TYPE_DATASET", "TYPE_NAMED_DATATYPE", "COPY_SHALLOW_HIERARCHY_FLAG",
           "COPY_EXPAND_SOFT_LINK_FLAG", "COPY_EXPAND_EXT_LINK_FLAG",
           "COPY_EXPAND_REFERENCE_FLAG", "COPY_WITHOUT_ATTR_FLAG", "COPY_PRESERVE_NULL_FLAG",
           "ObjInfo", "get_info", "open", "link", "copy", "exists_by_name", "visit"]


class ObjInfo:
    """H5O_info_t as h5py gives it: fileno, addr, type, rc (hard links), atime, mtime,
    ctime, btime (0: not kept), num_attrs."""

    def __init__(self, obj):
        from .hl.datatype import Datatype
        header = obj._oh
        self.fileno = file_number(obj.file)
        self.addr = obj.addr
        self.type = TYPE_GROUP if hasattr(obj, "create_group") else \
            TYPE_NAMED_DATATYPE if isinstance(obj, Datatype) else TYPE_DATASET
        self.rc = link_count(obj, header)
        times = header_times(obj, header)
        self.atime, self.mtime = times["access"], times["modification"]
        self.ctime, self.btime = times["change"], times["birth"]
        self.num_attrs = len(obj.attrs)


def _name(name):
    return name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name


def _target(oid):
    """The object an identifier stands for (a committed datatype's TypeID among them)."""
    from .h5t import TypeID
    if isinstance(oid, TypeID) and oid._named is not None:
        return oid._named
    return location(oid)


def get_info(loc, name=None, *, lapl=None):
    """ObjInfo of the object ``loc`` stands for, or of its member ``name``."""
    obj = _target(loc)
    if name is not None and _name(name) not in (".", ""):
        path = _name(name)
        if obj.get(path, getlink=True) is None:
            raise RuntimeError("Can't get deprecated info for object (name doesn't exist)")
        obj = obj[path]
    return ObjInfo(obj)


def open(loc, name, lapl=None):     # noqa: A001 - h5py's name
    """H5Oopen: the identifier of the group, dataset or committed datatype ``name``."""
    return location(loc)[_name(name)].id


def link(obj, loc, name, lcpl=None, lapl=None):
    """H5Olink: a new hard link ``name`` in the group ``loc`` to the object ``obj``."""
    location(loc)[_name(name)] = _target(obj)


def copy(src_loc, src_name, dst_loc, dst_name, copypl=None, lcpl=None):
    """H5Ocopy: the object ``src_name`` of ``src_loc`` copied to ``dst_name`` of
    ``dst_loc`` (another file's too), recursively unless ``copypl`` (an OBJECT_COPY list)
    says otherwise."""
    flags = 0 if copypl is None else copypl.get_copy_object()
    source = location(src_loc)[_name(src_name)]
    dest, name = location(dst_loc), _name(dst_name)
    if name in dest:
        raise RuntimeError("Unable to synchronously copy object (destination object already "
                           "exists)")
    dest.copy(source, dest, name, shallow=bool(flags & COPY_SHALLOW_HIERARCHY_FLAG),
              expand_soft=bool(flags & COPY_EXPAND_SOFT_LINK_FLAG),
              expand_external=bool(flags & COPY_EXPAND_EXT_LINK_FLAG),
              expand_refs=bool(flags & COPY_EXPAND_REFERENCE_FLAG),
              without_attrs=bool(flags & COPY_WITHOUT_ATTR_FLAG))


def exists_by_name(loc, name, lapl=None):
    """Whether ``name`` leads to an object (its links followed; the groups on the way must
    exist)."""
    from .h5l import LinkProxy
    path = _name(name)
    LinkProxy(location(loc))._parent(path, f"determine if {path!r} exists")
    return location(loc).get(path) is not None


def visit(loc, func, *, info=False, obj_name=b".", lapl=None):
    """Call ``func(path)`` (``func(path, info)`` with ``info``) for every object below the
    group ``obj_name`` of ``loc``, each once, in name order; the first result that is not
    None."""
    group = location(loc)
    if _name(obj_name) not in (".", ""):
        group = group[_name(obj_name)]
    if info:
        return group.visititems(lambda path, obj: func(path.encode("utf-8", "surrogateescape"),
                                                       ObjInfo(obj)))
    return group.visit(lambda path: func(path.encode("utf-8", "surrogateescape")))
