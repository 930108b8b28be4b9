"""Groups: old-style (symbol table, spec IV.A.2.r) and new-style (link messages, compact or
dense), with h5py's Group interface."""
import functools
import posixpath
from collections.abc import MutableMapping

from ..errors import FormatError, LinkTraversalError, PurehepError
from ..format import messages
from ..format.messages import link as _link
from .serialize import serialized
from .writing import GroupWriter
from .base import (HLObject, MappingExtras, HardLink, SoftLink, ExternalLink, open_object,
                   message, LINK, LINK_INFO, SYMBOL_TABLE)

MAX_LINK_TRAVERSALS = 16  # soft/external links followed while resolving one path, as libhdf5


def _sort_links(links, by_order):
    if by_order:
        key = lambda k: (k.creation_order is None, k.creation_order or 0,  # noqa: E731
                         k.name.encode("utf-8", "surrogateescape"))
    else:
        key = lambda k: k.name.encode("utf-8", "surrogateescape")  # noqa: E731
    return {k.name: k for k in sorted(links, key=key)}


def _symbol_table_links(ctx, header):
    from ..format.local_heap import local_heap
    from ..format.symbol_table import group_entries
    stab = message(ctx, header, SYMBOL_TABLE)
    heap = local_heap(ctx, stab.heap_address)
    links = []
    for name, entry in group_entries(ctx, stab.btree_address, heap):
        name = name.decode("utf-8", "surrogateescape")
        if entry.cache_type == 2:
            target = heap.string(entry.soft_link_offset, ctx).decode("utf-8", "surrogateescape")
            links.append(_link.Link(name, _link.SOFT, target=target))
        else:
            links.append(_link.Link(name, _link.HARD, address=entry.header_address))
    return links, False


def _new_style_links(ctx, header):
    info = message(ctx, header, LINK_INFO, required=False)
    by_order = bool(info and info.track_order)
    if info is not None and info.dense:
        from ..format.dense_storage import dense_messages
        bodies = dense_messages(ctx, info.fractal_heap_address, info.name_index_address,
                                info.creation_order_index_address, by_order)
        links = [messages.decode_body(ctx, LINK, body, offset) for body, offset in bodies]
    else:
        links = [messages.decode(ctx, raw) for raw in header.find(LINK)]
    return links, by_order


def _link_object(link, getclass, default):
    """h5py's link object for a decoded link (its class with ``getclass``); ``default`` for a
    user-defined link type."""
    if link.type == _link.HARD:
        return HardLink if getclass else HardLink()
    if link.type == _link.SOFT:
        return SoftLink if getclass else SoftLink(link.target)
    if link.type == _link.EXTERNAL:
        return ExternalLink if getclass else ExternalLink(link.filename, link.target)
    return default


def _by_name(links):
    """Links in name order: h5py's visit walks by name even in order-tracking groups."""
    return iter(sorted(links.values(), key=lambda k: k.name.encode("utf-8", "surrogateescape")))


def native_links(ctx, header):
    """(links in storage order, tracks creation order): libhdf5's "native" order — name order
    for symbol tables, header order for link messages, name-hash order for dense links."""
    def load():
        if header.first(SYMBOL_TABLE) is not None:
            return _symbol_table_links(ctx, header)
        return _new_style_links(ctx, header)
    return ctx.cached("native-links", header.address, load)


def group_links(ctx, header):
    """The group's links, name -> Link, in h5py's iteration order (cached per group)."""
    return ctx.cached("links", header.address, lambda: _sort_links(*native_links(ctx, header)))


@serialized()
class Group(HLObject, GroupWriter, MappingExtras, MutableMapping):
    """A group: a mapping from link names to objects (writable in write mode)."""

    @functools.cached_property
    def id(self):
        """h5py's low-level GroupID, as far as purehep has it (hl.objid). A non-data
        descriptor, so that File's own ``id`` (itself, None once closed) takes its place."""
        from .objid import GroupID
        return GroupID(self)

    @property
    def _links(self):
        return group_links(self._ctx, self._oh)

    # -- mapping interface --------------------------------------------------------------
    def __getitem__(self, name):
        from ..reference import Reference
        if isinstance(name, Reference):
            return self._file._deref(name)
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        if not isinstance(name, str):
            raise TypeError(f"accessing a group is done with bytes or str, not {type(name)}")
        self._live(KeyError)
        if self._node is not None:
            return self._wget(name)
        return self._resolve(name, 0)

    def __iter__(self):
        self._live()
        if self._node is not None:
            return iter(self._wnames())
        return iter(self._links)

    def __reversed__(self):
        return reversed(list(self))

    def __len__(self):
        self._live()
        if self._node is not None:
            return len(self._node.links)
        return len(self._links)

    def __setitem__(self, name, obj):
        """``group[name] = array | dtype | SoftLink | ExternalLink | existing object``."""
        if self._node is None:
            raise ValueError("Unable to create link (no write intent on file)")
        self._wsetitem(name, obj)

    def __delitem__(self, name):
        if self._node is None:        # h5py's KeyError (it cannot tell this from a missing name)
            raise KeyError("Couldn't delete link (no write intent on file)")
        self._wdelitem(name)

    def __contains__(self, name):
        """Whether the link ``name`` exists (a dangling soft link too, as in h5py)."""
        if not self:
            return False
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        if name == "":
            return False
        if self._node is not None:
            try:
                parent, leaf, node = self._wlookup(name)
            except KeyError:
                return False
            except PurehepError:          # the link is there; its object cannot be opened
                return True
            return parent is None or leaf in parent.links
        return self._path_valid(name)

    def _path_valid(self, path):
        """h5py's ``path in group``: every component but the last leads to a group (a link
        cycle on the way raises, as in h5py) and the last is a link of that group, whatever
        it points to (a dangling soft link is "in" its group)."""
        if isinstance(path, bytes):
            path = path.decode("utf-8", "surrogateescape")
        if not path:
            return False
        group = self._file._root() if path.startswith("/") else self
        parts = [p for p in path.split("/") if p and p != "."]
        for i, part in enumerate(parts):
            link = group._links.get(part)
            if link is None:
                return False
            if i == len(parts) - 1:
                break
            try:
                group = group._follow(link, 0)
            except LinkTraversalError:
                raise
            except (KeyError, PurehepError, OSError):
                return False
            if not isinstance(group, Group):
                return False
        return True

    def __repr__(self):
        """h5py's repr (the full path, or "(anonymous)")."""
        if not self:
            return "<Closed HDF5 group>"
        name = "(anonymous)" if self.name is None else f'"{self.name}"'
        return f'<HDF5 group {name} ({len(self)} members)>'

    def get(self, name, default=None, getclass=False, getlink=False, *, elink_mode=None,
            elink_swmr=None, elink_locking=None):
        """h5py's Group.get: the object, its class, or the link itself (getlink=True).
        ``elink_mode``, ``elink_swmr`` and ``elink_locking`` open the target files of
        external links so (by default with the file's own mode; "r+" from a read-only file is
        h5py's ValueError)."""
        access = self._elink_access(elink_mode, elink_swmr, elink_locking)
        if getlink and name not in self:      # (missing groups on the way too, as h5py)
            return default
        if getlink and self._node is not None:
            return self._wgetlink(name, default, getclass)
        if getlink:
            parent, _, leaf = name.rstrip("/").rpartition("/")
            group = self[parent] if parent else self
            if not isinstance(group, Group) or leaf not in group._links:
                return default
            return _link_object(group._links[leaf], getclass, default)
        try:
            obj = self[name] if access is None else self._get_with(name, access)
        except LinkTraversalError:
            raise                 # a link cycle: h5py's get raises it too
        except (KeyError, PurehepError, OSError):
            return default
        return type(obj) if getclass else obj

    def _elink_access(self, mode, swmr, locking):
        """The options of external link targets' File for Group.get's elink_ arguments."""
        if mode is None and swmr is None and locking is None:
            return None
        if mode not in (None, "r", "r+"):
            raise RuntimeError(f"Unsupported link access mode: {mode}")
        f = self._file
        if (mode is not None or swmr is not None) and f.mode == "r+" and f.swmr_mode and \
                ((mode or f.mode) != "r+" or not (f.swmr_mode if swmr is None else swmr)):
            raise ValueError("Changing external links access mode from a file opened in SWMR "
                             "write mode is not supported")
        if mode == "r+" and self._file.mode == "r":
            raise ValueError("Opening external links in write mode from a file opened in "
                             "read-only mode is not supported")
        access = {"swmr": bool(swmr)} if swmr is not None else {}
        if mode is not None:
            access["mode"] = mode
        if locking is not None:
            access["locking"] = locking
        return access

    def _get_with(self, name, access):
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        self._live(KeyError)
        if self._node is not None:
            return self._wget(name, access)
        return self._resolve(name, 0, access)

    # -- path resolution ------------------------------------------------------------------
    def _child_name(self, path):
        """The path of a member: None below an anonymous group (h5py's)."""
        if self.name is None:
            return None
        return posixpath.normpath(posixpath.join(self.name, path)).replace("//", "/")

    def _resolve(self, path, hops, access=None):
        if path.startswith("/"):
            group, rel = self._file._root(), path.lstrip("/")
        else:
            group, rel = self, path
        parts = [p for p in rel.split("/") if p and p != "."]
        obj = group
        for part in parts:
            if not isinstance(obj, Group):
                raise KeyError(f"Unable to open object: '{part}' is not in a group ({path!r})")
            link = obj._links.get(part)
            if link is None:
                raise KeyError(f"Unable to open object (object '{part}' doesn't exist) in {path!r}")
            obj = obj._follow(link, hops, access)
        if obj is self._file:     # "/" is the root group, as h5py's (equal to the file)
            obj = Group(self._file, obj._address, "/")
        return obj

    def _follow(self, link, hops, access=None):
        name = self._child_name(link.name)
        if link.type == _link.HARD:
            if link.address is None:
                raise FormatError(f"hard link {link.name!r} has an undefined address",
                                  "link message", self._ctx.absolute(self._oh.address))
            return open_object(self._file, link.address, name)
        if hops >= MAX_LINK_TRAVERSALS:
            raise LinkTraversalError(f"Special link traversal failed (too many links) while "
                                     f"resolving {name!r}")
        if link.type == _link.SOFT:
            target = self._resolve(link.target, hops + 1, access)
            target._name = name
            return target
        if link.type == _link.EXTERNAL:
            other = self._file._external_file(link.filename, access=access)
            target = other._root()._resolve(link.target, hops + 1, access)
            return target
        raise KeyError(f"link {link.name!r} has user-defined type {link.type}, which cannot be followed")

    # -- traversal ------------------------------------------------------------------------
    def visit(self, func):
        """Call ``func(name)`` for every object below this group (each once), h5py-style."""
        return self.visititems(lambda name, obj: func(name))

    def visititems(self, func):
        """Call ``func(name, obj)`` for every object below, once each, depth first in name
        order (as h5py's visititems); stops early if ``func`` returns a value."""
        def each(name, link, group, first):
            if link.type != _link.HARD or not first:
                return None, None
            obj = open_object(self._file, link.address, group._child_name(link.name))
            return func(name, obj), obj
        return self._walk(each)

    def _walk(self, each):
        """Depth-first traversal in name order; ``each(name, link, group, first)`` is called
        for every link (``first`` False for an object already entered) and returns
        (result, object); groups are entered once each (cycle-safe)."""
        seen = {self._address}
        stack = [(self, "", self._links_ahead())]
        while stack:
            group, prefix, links = stack[-1]
            link = next(links, None)
            if link is None:
                stack.pop()
                continue
            first = link.type == _link.HARD and link.address not in seen
            result, obj = each(prefix + link.name, link, group, first)
            if result is not None:
                return result
            if first:
                seen.add(link.address)
                if isinstance(obj, Group):
                    stack.append((obj, prefix + link.name + "/", obj._links_ahead()))
        return None

    def _links_ahead(self):
        """The links in name order, for a walk; a source that fetches ahead (a remote file)
        first brings in the headers of the hard-linked objects together (ByteSource.warm)."""
        links, ctx = self._links, self._ctx
        if ctx.source.prefetch_batch:
            ctx.source.warm([ctx.absolute(k.address) for k in links.values()
                             if k.type == _link.HARD])
        return _by_name(links)

    def visit_links(self, func):
        return self.visititems_links(lambda name, link: func(name))

    def visititems_links(self, func):
        """Call ``func(name, link)`` for every link below (soft and external included)."""
        def each(name, link, group, first):
            result = func(name, _link_object(link, False, None))
            obj = None
            if result is None and first:
                obj = open_object(self._file, link.address, group._child_name(link.name))
            return result, obj
        return self._walk(each)
