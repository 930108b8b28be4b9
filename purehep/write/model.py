"""The in-memory object graph a file is written from.

Nodes hold what the user asked for (links, attributes, dataset descriptions, data stores);
nothing here knows about addresses or format versions. A node is written once per flush;
hard links may share nodes (several names, cycles).
"""
from dataclasses import dataclass

import numpy as np

HARD, SOFT, EXTERNAL = "hard", "soft", "external"


@dataclass
class LinkEntry:
    kind: str
    node: object = None          # hard
    path: str = None             # soft target / external object path
    filename: str = None         # external
    order: int = 0               # creation order


def fits_symbol_table(name, entry):
    """Whether a symbol table entry (spec III.C) can hold a link: hard or soft, with a name of
    the ASCII character set (the entry has no character set field). libhdf5 turns a
    symbol-table group into link messages for any other link, whatever the libver bounds."""
    return entry.kind in (HARD, SOFT) and name.isascii()


@dataclass
class AttrEntry:
    name: str
    dtype: np.dtype
    shape: tuple | None          # None: null dataspace (Empty)
    value: np.ndarray | None     # user-form values (object arrays for vlen / references)
    order: int = 0
    named: object = None         # the DatatypeNode of the committed type it shares, if any


class Node:
    kind = "object"

    def __init__(self, track_order=False, track_times=False):
        self.attrs = {}            # name -> AttrEntry, in creation order
        self.attr_counter = 0
        self.track_order = track_order   # attribute creation order tracked and indexed
        self.track_times = track_times
        self.times = None

    def set_attr(self, name, dtype, shape, value, named=None):
        """Create attribute ``name``; one of that name is deleted first, so the new one has
        the next creation order (as h5py's attrs.create: H5Adelete, H5Acreate)."""
        self.attrs.pop(name, None)
        self.attrs[name] = AttrEntry(name, dtype, shape, value, self.attr_counter, named)
        self.attr_counter += 1


class GroupNode(Node):
    """A group; ``link_order``: link creation order tracked and indexed (by default as the
    attributes' ``track_order``: libhdf5 sets the two apart only for the groups it creates
    on the way to a new object, which track their links as their parent does)."""
    kind = "group"

    def __init__(self, track_order=False, track_times=False, link_order=None):
        super().__init__(track_order, track_times)
        self.link_order = track_order if link_order is None else link_order
        self.links = {}            # name -> LinkEntry, in creation order
        self.link_counter = 0

    def add_link(self, name, entry):
        """Link ``entry`` as ``name`` with the next creation order. A link read from the file
        (write.existing.ExistingLink, moved here by Group.move) loses its encoding, which
        holds the name and creation order it was read with (spec IV.A.2.g)."""
        if getattr(entry, "raw", None) is not None:
            entry.raw = None
        entry.order = self.link_counter
        self.link_counter += 1
        self.links[name] = entry


class DatatypeNode(Node):
    kind = "datatype"

    def __init__(self, dtype, track_order=False, track_times=False):
        super().__init__(track_order, track_times)
        self.dtype = dtype


class DatasetNode(Node):
    kind = "dataset"
    external = None               # contiguous in external files: [(name, offset, size)]
    virtual = None                # layout "virtual": [(file, dataset, sdims, vdims)]
    fill_time = None              # h5py's fill_time ('alloc', 'never', 'ifset'); None: default
    heap_fill = None              # a fill value of a variable-length type: the value itself,
    #                               its heap data written when its message is emitted
    prefixes = {}                 # the access list's {"efile"|"virtual": prefix} (io.prefix),
    #                               kept with the dataset while its file is open, as libhdf5
    named = None                  # the DatatypeNode of the committed type it shares, if any

    def __init__(self, shape, maxshape, dtype, layout, chunks=None, filters=(), fill=None,
                 early=False, track_order=False, track_times=False, stored_dtype=None):
        super().__init__(track_order, track_times)
        self.shape = shape                # None: null dataspace
        self.maxshape = maxshape
        self.dtype = dtype                # the user-facing dtype (h5py metadata conventions)
        self.layout = layout              # "contiguous" | "compact" | "chunked" | "virtual"
        self.chunks = chunks
        self.filters = tuple(filters)     # FilterInfo
        self.fill = fill                  # fill value as file bytes, or None (default zeros)
        self.early = early
        self.store = None                 # a store from purehep.write.storage
        self.stored_dtype = stored_dtype

    @property
    def filtered(self):
        return bool(self.filters)

    def memory_fill(self):
        """The value of elements never written in a MemoryStore (those a resize adds): the
        fill value given of a variable-length type, as libhdf5 fills new chunks with it;
        None (MemoryStore's zero value) without one, or with fill time "never"."""
        return None if self.fill_time == "never" else self.heap_fill


def named_types(node):
    """The committed datatypes (DatatypeNode) an object's datatype and attributes share, one
    per use: each use counts in the type's object reference count (spec IV.A.1, as libhdf5
    counts them)."""
    out = [a.named for a in node.attrs.values() if a.named is not None]
    if getattr(node, "named", None) is not None:
        out.append(node.named)
    return out


def walk(root, skip=lambda node: False):
    """Every node reachable from ``root`` through hard links, each once, depth first in link
    creation order (the root first), leaving out the nodes ``skip`` names and what is only
    reachable through them."""
    out, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or skip(node):
            continue
        seen.add(id(node))
        out.append(node)
        if isinstance(node, GroupNode):
            children = [e.node for e in node.links.values() if e.kind == HARD]
            stack.extend(reversed(children))
    return out


def path_of(root, node, by_name=lambda group: False):
    """A path from ``root`` to ``node`` through hard links, or None: the first met visiting
    each group's links in its native order, a group's members right after its link (libhdf5's
    search for the name of an object opened with no path, H5G_visit: name order in a
    symbol-table group, ``by_name(group)``, else creation order)."""
    if node is root:
        return "/"

    def native(group):
        links = group.links.items()
        return iter(sorted(links, key=lambda item: item[0].encode("utf-8", "surrogateescape"))
                    if by_name(group) else list(links))
    seen, stack = {id(root)}, [("", native(root))]
    while stack:
        prefix, links = stack[-1]
        name, e = next(links, (None, None))
        if e is None:
            stack.pop()
            continue
        if e.kind != HARD:
            continue
        if e.node is node:
            return prefix + "/" + name
        if isinstance(e.node, GroupNode) and id(e.node) not in seen:
            seen.add(id(e.node))
            stack.append((prefix + "/" + name, native(e.node)))
    return None
