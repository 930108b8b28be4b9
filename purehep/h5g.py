"""h5py's ``h5g`` as far as purehep has it: ``get_objinfo`` (H5Gget_objinfo's H5G_stat_t:
the object's header address, hard link count and modification time — spec IV.A.1, the
version 1 prefix's reference count or the Object Reference Count message, the version 2
header's times or the Object Modification Time messages — or a soft or external link's
value length) and the object type codes of H5G_obj_t; H5Gcreate and H5Gopen.
"""
import itertools

from .format.messages import link as _link

UNKNOWN, GROUP, DATASET, TYPE, LINK, UDLINK = -1, 0, 1, 2, 3, 4
LINK_ERROR, LINK_HARD, LINK_SOFT = -1, 0, 1
CRT_ORDER_TRACKED = 1

__all__ = ["UNKNOWN", "GROUP", "DATASET", "TYPE", "LINK", "LINK_ERROR", "LINK_HARD",
           "LINK_SOFT", "CRT_ORDER_TRACKED", "GroupStat", "get_objinfo", "create", "open"]

_FILENOS = itertools.count(1)
MTIME_OLD, MTIME, REFCOUNT = 0x0E, 0x12, 0x16


class GroupStat:
    """H5G_stat_t: fileno (2-tuple naming the open file), objno (2-tuple naming the object:
    its header address), nlink (hard links to it), type (GROUP, DATASET, TYPE, LINK or
    UDLINK), mtime (the change time, seconds since the epoch, as libhdf5 fills it; 0 when
    times are not tracked), linklen (a
    soft or external link's value length, 0 for objects)."""

    def __init__(self, fileno, objno, nlink, type, mtime, linklen):   # noqa: A002
        self.fileno, self.objno, self.nlink = fileno, objno, nlink
        self.type, self.mtime, self.linklen = type, mtime, linklen


def get_objinfo(obj, name=b".", follow_link=True):
    """The GroupStat of the object ``name`` ("." itself) of the id ``obj`` (a file, group,
    dataset or committed datatype id); with ``follow_link`` False, of a soft or external
    link ``name`` itself."""
    from .h5d import location
    from .hl.base import ExternalLink, SoftLink
    from .hl.datatype import Datatype
    from .h5t import TypeID
    loc = obj._named if isinstance(obj, TypeID) and obj._named is not None else location(obj)
    path = name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
    fileno = (file_number(loc.file), 0)
    if path not in (".", ""):
        link = loc.get(path, getlink=True)
        if link is None:
            raise RuntimeError(f"Can't get info for object: {path!r} ({path!r} doesn't "
                               f"exist)")
        if not follow_link and isinstance(link, (SoftLink, ExternalLink)):
            value = _link.Link(path, _link.SOFT, target=link.path) \
                if isinstance(link, SoftLink) else \
                _link.Link(path, _link.EXTERNAL, target=link.path, filename=link.filename)
            from .h5l import LinkInfo
            kind = LINK if isinstance(link, SoftLink) else UDLINK
            return GroupStat(fileno, (0, 0), 0, kind, 0, LinkInfo(value).u)
        try:
            loc = loc[path]
        except KeyError as exc:       # a dangling soft or external link
            detail = str(exc).strip("'\"").rpartition(" (")[2].rstrip(")")
            raise RuntimeError(f"Can't get info for object: {path!r} ({detail})") from None
    header = loc._oh
    kind = GROUP if hasattr(loc, "create_group") else TYPE if isinstance(loc, Datatype) \
        else DATASET
    return GroupStat(fileno, (loc.addr, 0), link_count(loc, header), kind,
                     header_times(loc, header)["change"], 0)     # libhdf5 gives the ctime


def create(loc, name, lcpl=None, gcpl=None):
    """H5Gcreate: group ``name`` in the group ``loc`` (the groups on its path must exist
    unless ``lcpl`` asks for them), tracking creation order as ``gcpl`` says; its GroupID."""
    from .h5d import location, path_exists
    parent = location(loc)
    path = name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
    path_exists(parent, path, lcpl, "group")
    if parent.get(path, getlink=True) is not None:
        raise ValueError("Unable to synchronously create group (name already exists)")
    order = gcpl is not None and bool(gcpl.get_link_creation_order())
    return parent.create_group(path, track_order=order or None).id


def open(loc, name):     # noqa: A001 - h5py's name
    """H5Gopen: the GroupID of the group ``name`` of ``loc``."""
    from .h5d import location
    path = name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name
    obj = location(loc).get(path)
    if obj is None:
        raise ValueError(f"Unable to synchronously open group (object {path!r} doesn't "
                         f"exist)")
    if not hasattr(obj, "create_group"):
        raise ValueError("Unable to synchronously open group (not a group)")
    return obj.id


def file_number(file):
    """A number naming the open file ``file`` among those this process opened (from 1)."""
    return file.__dict__.setdefault("_fileno", next(_FILENOS))


def link_count(obj, header):
    """Hard links to the object: the v1 prefix's count, the v2 Reference Count message."""
    if header.version == 1:
        return header.refcount
    from .hl.base import message
    count = message(obj._ctx, header, REFCOUNT, required=False)
    return 1 if count is None else int(count)


def header_times(obj, header):
    """{access, modification, change, birth} times of the object (seconds, 0: not kept):
    the v2 header's, else the time of an Object Modification Time message, which libhdf5
    reports as the change time."""
    out = dict.fromkeys(("access", "modification", "change", "birth"), 0)
    if header.version == 2:
        out.update((k, int(v)) for k, v in (header.times or {}).items())
        return out
    from .hl.base import message
    for mtype in (MTIME, MTIME_OLD):
        value = message(obj._ctx, header, mtype, required=False)
        if value is not None:
            out["change"] = int(value)
            break
    return out
