"""h5py's ``h5l``: the links of a group (``group.id.links``, a LinkProxy) as H5L calls see
them — existence, information (type, creation order, name character set: spec IV.A.2.g, the
Link message), soft and external link values, creation, moving, iteration and recursive
visits — over purehep's Group (names as bytes, paths relative to the group or absolute).
"""
import posixpath

from .format.messages import link as _link
from .h5 import INDEX_NAME, ITER_INC, in_index_order

TYPE_HARD, TYPE_SOFT, TYPE_EXTERNAL = _link.HARD, _link.SOFT, _link.EXTERNAL

__all__ = ["TYPE_HARD", "TYPE_SOFT", "TYPE_EXTERNAL", "LinkInfo", "LinkProxy"]


class LinkInfo:
    """H5L_info_t: link type, creation order (valid when the group tracks it), character
    set of the name, and ``u``: a hard link's object address, else the size of its value."""

    def __init__(self, link):
        self.type = link.type
        self.corder_valid = link.creation_order is not None
        self.corder = link.creation_order or 0
        self.cset = link.charset
        self.u = link.address if link.type == TYPE_HARD else len(_value(link))


def _value(link):
    """The stored value of a soft link (target path and NUL) or an external link (flags,
    file name, object path, each NUL-terminated)."""
    if link.type == TYPE_SOFT:
        return link.target.encode("utf-8", "surrogateescape") + b"\0"
    if link.type == TYPE_EXTERNAL:
        return b"\0" + b"\0".join(s.encode("utf-8", "surrogateescape")
                                  for s in (link.filename, link.target)) + b"\0"
    return link.raw or b""


def _name(name):
    if not isinstance(name, bytes):
        raise TypeError(f"expected bytes, {type(name).__name__} found")
    return name.decode("utf-8", "surrogateescape")


class LinkProxy:
    """The links of a group (h5py's ``GroupID.links``)."""

    def __init__(self, group):
        self._group = group

    def _parent(self, path, what):
        """(group holding the last component of ``path``, that component's name); libhdf5's
        errors (RuntimeError) for a missing or non-group component on the way."""
        from .hl.group import Group
        group = self._group.file["/"] if path.startswith("/") else self._group
        parts = [p for p in path.split("/") if p and p != "."]
        for part in parts[:-1]:
            if part not in group._links:
                raise RuntimeError(f"Unable to {what} (component not found)")
            obj = group.get(part)
            if not isinstance(obj, Group):
                raise RuntimeError(f"Unable to {what} (message type not found)")
            group = obj
        return group, (parts[-1] if parts else ".")

    def _find(self, name, what):
        group, leaf = self._parent(_name(name), what)
        link = group._links.get(leaf)
        if link is None:
            raise RuntimeError(f"Unable to {what} (name doesn't exist)")
        return link

    def exists(self, name, lapl=None):
        """Whether the link ``name`` exists (the groups leading to it must)."""
        group, leaf = self._parent(_name(name), "synchronously check link existence")
        return leaf in group._links

    def get_info(self, name, index=-1, *, lapl=None):
        """LinkInfo of the link ``name`` (h5py 3.16 takes an ``index`` and leaves it
        unused: so does this)."""
        if name == b"":
            raise ValueError("No name specified (no name specified)")
        return LinkInfo(self._find(name, "get link info"))

    def get_val(self, name, lapl=None):
        """A soft link's target path (bytes); an external link's (file name, object path)."""
        link = self._find(name, "get link value")
        if link.type == TYPE_SOFT:
            return link.target.encode("utf-8", "surrogateescape")
        if link.type == TYPE_EXTERNAL:
            return tuple(s.encode("utf-8", "surrogateescape")
                         for s in (link.filename, link.target))
        raise TypeError("Link must be either a soft or external link")

    def create_hard(self, new_name, cur_loc, cur_name, lcpl=None, lapl=None):
        """A hard link ``new_name`` to the object ``cur_name`` of the group ``cur_loc``."""
        from .h5d import location
        self._group[_name(new_name)] = location(cur_loc)[_name(cur_name)]

    def create_soft(self, new_name, target, lcpl=None, lapl=None):
        from .hl.base import SoftLink
        self._group[_name(new_name)] = SoftLink(_name(target))

    def create_external(self, link_name, file_name, obj_name, lcpl=None, lapl=None):
        from .hl.base import ExternalLink
        self._group[_name(link_name)] = ExternalLink(_name(file_name), _name(obj_name))

    def move(self, src_name, dst_loc, dst_name, lcpl=None, lapl=None):
        """Move the link ``src_name`` to ``dst_name`` of the group ``dst_loc`` (same file)."""
        from .h5d import location
        dest = location(dst_loc)
        if dest.file != self._group.file:
            raise RuntimeError("Unable to move link (source and destination should be in "
                               "the same file)")
        self._group.move(_name(src_name), posixpath.join(dest.name, _name(dst_name)))

    def iterate(self, func, *, info=False, obj_name=b".", lapl=None, idx_type=INDEX_NAME,
                order=ITER_INC, idx=0):
        """Call ``func(name)`` (``func(name, info)`` with ``info``) for the links of the
        group ``obj_name`` from position ``idx``; (the first result that is not None or
        false, else None; the position after the last link visited)."""
        group = self._group if obj_name in (b".", b"") else self._group[_name(obj_name)]
        links = _ordered(group, idx_type, order)
        for i in range(idx, len(links)):
            name = links[i].name.encode("utf-8", "surrogateescape")
            result = func(name, LinkInfo(links[i])) if info else func(name)
            if result:
                return result, i + 1
        return None, len(links)

    def visit(self, func, *, info=False, obj_name=b".", lapl=None):
        """Call ``func(path)`` (``func(path, info)`` with ``info``) for every link below the
        group ``obj_name``, in name order, groups entered once each; the first result that
        is not None."""
        from .hl.base import open_object
        group = self._group if obj_name in (b".", b"") else self._group[_name(obj_name)]

        def each(path, link, parent, first):
            name = path.encode("utf-8", "surrogateescape")
            result = func(name, LinkInfo(link)) if info else func(name)
            obj = None
            if result is None and first:
                obj = open_object(group.file, link.address, parent._child_name(link.name))
            return result, obj
        return group._walk(each)


def _ordered(group, idx_type, order):
    """The group's links in name or creation order, increasing or decreasing."""
    return in_index_order(list(group._links.values()), idx_type, order,
                          lambda k: k.creation_order, lambda k: k.name, "Link")
