"""Modify mode ('r+' and 'a'): change an existing file in place without ever breaking it.

A session is the reader's context over the file plus
* an allocator: new space at the end of the file, or from a free list of blocks that the last
  committed flush stopped referencing (never blocks the file on disk still uses);
* the object graph of the writer (purehep.write.model), where objects already in the file are
  ``Existing*`` nodes that load their links, attributes and storage on first use;
* a commit (``flush``) that writes, in this order, each step flushed (fsync) before the next:
  1. every new structure (raw data, object headers, heaps, B-trees, chunk indexes,
     continuation blocks) in unused space;
  2. the superblock's end-of-file address (and checksum for versions 2/3), so that the new
     structures lie inside the file libhdf5 sees;
  3. in-place patches, by increasing order, each order flushed before the next: local heap
     headers and bytes, then v1 B-tree nodes top-down, symbol table nodes, extensible
     array blocks bottom-up and v2 B-tree / extensible array headers, then object header
     chunk 0 last (each patch one write of one structure, its checksum included).
  A file cut off at any point is the previous commit, plus some of the objects of the one in
  progress (each object whole, old or new; at worst a group lists a few moved members twice
  in iteration, see purehep.write.incremental).

Growth is edited in place (purehep.write.incremental; O(log n) nodes per commit): names added
to symbol-table groups (local heap, symbol table nodes, v1 B-tree, with splits), chunks added
or moved in extensible arrays, v2 B-tree (types 10/11) and v1 B-tree chunk indexes. Everything
else that changes is rebuilt, not edited: a group's links when some were changed or removed,
compact and dense (fractal heap + v2 B-tree) link and attribute storage, fixed array and single
chunk indexes, chunk indexes when chunks are removed or when an extensible array's paged data
blocks would change, and the first commit of a dataset created in the session; the object header is then
rewritten around the new structures (chunk 0 in place at its size, the rest of the messages in
a new continuation block when they no longer fit). The addresses others cache stay put: object
headers, and the B-tree root and local heap header of symbol-table groups (the heap's data
segment only grows, so every name keeps its offset). Chunks written over are written elsewhere
(copy on write) and the old ones freed once the commit no longer references them.

The superblock's file consistency flags (version 3) are left clear: libhdf5 refuses to open a
file with them set, so setting them would make a file cut off mid-session unreadable; an
exclusive ``flock`` on the file keeps other purehep writers out instead.
"""
import bisect
import os
import struct
import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import PurehepError, UnsupportedFeatureError
from ..format import checksum, local_heap, object_header, symbol_table, superblock as SB
from ..format import btree1 as B1
from ..format import messages as M
from ..format.messages import (attribute_info as m_ainfo, dataspace as m_space,
                               group_info as m_ginfo, layout as L, link as m_link,
                               link_info as m_linfo, simple as m_simple)
from . import model
from . import policy as P


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass

NIL, DATASPACE, LINK_INFO, DATATYPE, FILL_OLD, FILL, LINK, LAYOUT = \
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08
GROUP_INFO, FILTERS, ATTRIBUTE, CONTINUATION, STAB, ATTR_INFO, REFCOUNT = \
    0x0A, 0x0B, 0x0C, 0x10, 0x11, 0x15, 0x16
GROUP_LEAF_K, GROUP_INTERNAL_K = 4, 16


# --- the file ----------------------------------------------------------------------------------

class Allocator:
    """File space: first fit from the free list, else at the end of the file. Blocks released
    during a flush become free when that flush has committed (``commit``)."""

    def __init__(self, eoa):
        self.eoa = eoa
        self.free = []            # sorted [address, size]
        self.pending = []

    def alloc(self, n, reuse=True):
        n = max(int(n), 1)
        if reuse:
            for i, (a, s) in enumerate(self.free):
                if s >= n:
                    if s == n:
                        del self.free[i]
                    else:
                        self.free[i] = [a + n, s - n]
                    return a
        a = (self.eoa + 7) & ~7
        self.eoa = a + n
        return a

    def release(self, addr, n):
        if addr is not None and n > 0:
            self.pending.append((int(addr), int(n)))

    def commit(self):
        blocks = sorted(self.free + [list(b) for b in self.pending])
        self.pending = []
        merged = []
        for a, s in blocks:
            if merged and a < merged[-1][0] + merged[-1][1]:
                continue                          # released twice: keep the first
            if merged and merged[-1][0] + merged[-1][1] == a:
                merged[-1][1] += s
            else:
                merged.append([a, s])
        self.free = merged

    @property
    def free_bytes(self):
        return sum(s for _, s in self.free)


class BlockMeta:
    """Metadata blocks of one flush, each allocated separately (Emitter's ``meta``)."""

    def __init__(self, allocator):
        self.allocator = allocator
        self.blocks = {}
        self.starts = []
        self.owner = None         # blocks are recorded against the structure being built
        self.owned = {}

    def alloc(self, n):
        a = self.allocator.alloc(n)
        self.blocks[a] = bytearray(n)
        bisect.insort(self.starts, a)
        if self.owner is not None:
            self.owned.setdefault(self.owner, []).append((a, n))
        return a

    def put(self, addr, data):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            raise AssertionError(f"write at {addr} outside the allocated blocks")
        start = self.starts[i]
        blk = self.blocks[start]
        pos = addr - start
        data = bytes(data)
        if pos + len(data) > len(blk):
            raise AssertionError(f"write of {len(data)} bytes at {addr} outside its block")
        blk[pos:pos + len(data)] = data


# --- existing objects as graph nodes -------------------------------------------------------------

class ExistingLink(model.LinkEntry):
    """A link read from the file: ``raw`` is its encoding (link message body, or the symbol
    table entry for symbol-table groups); the target node is loaded on first use."""

    def __init__(self, session, kind, address=None, path=None, filename=None, order=0,
                 raw=None, entry=None):
        self.kind, self.path, self.filename, self.order = kind, path, filename, order
        self._session, self.address, self._node = session, address, None
        self.raw, self.entry = raw, entry

    @property
    def node(self):
        if self._node is None and self.kind == model.HARD:
            self._node = self._session.node_at(self.address)
        return self._node

    @node.setter
    def node(self, value):
        self._node = value

    __eq__ = object.__eq__
    __hash__ = object.__hash__


class ExistingAttr(model.AttrEntry):
    """An attribute read from the file, kept as its message (``raw``, ``flags``)."""

    def __init__(self, name, dtype, shape, raw, flags, order):
        super().__init__(name, dtype, shape, None, order)
        self.raw, self.flags = raw, flags


class Existing:
    """Shared by the nodes of objects already in the file."""

    def _init_existing(self, session, address):
        self.session = session
        self.address = address
        self._attrs = None
        self.track_times, self.times = False, None

    @property
    def header(self):
        from ..hl.base import header_of
        return header_of(self.session.ctx, self.address)

    @property
    def attrs(self):
        if self._attrs is None:
            self._load_attrs()
        return self._attrs

    @attrs.setter
    def attrs(self, value):
        self._attrs = value

    def _load_attrs(self):
        ctx, h = self.session.ctx, self.header
        info_raw = h.first(ATTR_INFO)
        info = M.decode(ctx, info_raw) if info_raw is not None else None
        self.attr_info = info
        self.track_order = bool(info and info.track_order) or bool(h.flags & 0x04)
        found = []
        if info is not None and info.dense:
            from ..format.dense_storage import _index
            from ..format.fractal_heap import FractalHeap
            heap = FractalHeap.decode(ctx, info.fractal_heap_address)
            tree = _index(ctx, info.name_index_address, (8,), "name index")
            for rec in tree.records():
                body, offset = heap.get(rec.heap_id)
                found.append((bytes(body), rec.flags, rec.creation_order, offset))
        for raw in h.find(ATTRIBUTE):
            found.append((bytes(raw.data), raw.flags, raw.creation_order, raw.offset))
        attrs = []
        for i, (body, flags, order, offset) in enumerate(found):
            from .. format.object_header import RawMessage
            msg = M.decode(ctx, RawMessage(ATTRIBUTE, flags, memoryview(body), offset))
            try:
                dtype = msg.datatype.dtype
            except Exception:           # a type purehep reads but cannot express
                dtype = None
            attrs.append(ExistingAttr(msg.name, dtype, msg.dataspace.shape, body, flags,
                                      order if order is not None else i))
        if self.track_order:
            attrs.sort(key=lambda a: a.order)
        self._attrs = {a.name: a for a in attrs}
        self.attr_counter = max([a.order + 1 for a in attrs] +
                                [info.max_creation_index or 0 if info else 0])
        self._attr_snap = self._attr_state()

    def _attr_state(self):
        return [(n, id(a), id(a.value), a.shape) for n, a in self._attrs.items()]

    def attrs_changed(self):
        return self._attrs is not None and self._attr_state() != self._attr_snap


class ExistingGroup(Existing, model.GroupNode):
    def __init__(self, session, address):
        self._init_existing(session, address)
        self._links = None
        h = self.header
        info_raw = h.first(LINK_INFO)
        self.link_info = M.decode(session.ctx, info_raw) if info_raw is not None else None
        self.old_style = h.first(STAB) is not None
        self.track_order = bool(self.link_info and self.link_info.track_order)
        self.link_counter = (self.link_info.max_creation_index or 0) if self.link_info else 0
        self.attr_counter = 0

    @property
    def links(self):
        if self._links is None:
            self._load_links()
        return self._links

    @links.setter
    def links(self, value):
        self._links = value

    def _load_links(self):
        s, ctx, h = self.session, self.session.ctx, self.header
        out = []
        if self.old_style:
            stab = M.decode(ctx, h.first(STAB))
            heap = local_heap.LocalHeap.decode(ctx, stab.heap_address)
            for name, e in symbol_table.group_entries(ctx, stab.btree_address, heap):
                name = name.decode("utf-8", "surrogateescape")
                if e.cache_type == 2:
                    target = heap.string(e.soft_link_offset, ctx).decode("utf-8",
                                                                         "surrogateescape")
                    out.append(ExistingLink(s, model.SOFT, path=target, entry=e, raw=name))
                else:
                    out.append(ExistingLink(s, model.HARD, address=e.header_address, entry=e,
                                            raw=name))
            for link in out:              # raw is only meaningful for link messages
                link.stab_name, link.raw = link.raw, None
            self._links = {link.stab_name: link for link in out}
        else:
            info = self.link_info
            bodies = []
            if info is not None and info.dense:
                from ..format.dense_storage import dense_messages
                bodies = dense_messages(ctx, info.fractal_heap_address, info.name_index_address)
            else:
                bodies = [(bytes(r.data), r.offset) for r in h.find(LINK)]
            links = []
            for body, offset in bodies:
                lk = M.decode_body(ctx, LINK, body, offset)
                kind = {m_link.HARD: model.HARD, m_link.SOFT: model.SOFT,
                        m_link.EXTERNAL: model.EXTERNAL}.get(lk.type, "user")
                e = ExistingLink(s, kind, address=lk.address, path=lk.target,
                                 filename=lk.filename, order=lk.creation_order or 0,
                                 raw=bytes(body))
                links.append((lk.name, e))
            if self.track_order:
                links.sort(key=lambda x: x[1].order)
            else:
                links.sort(key=lambda x: x[0].encode("utf-8", "surrogateescape"))
            self._links = dict(links)
        self._link_snap = self._link_state()

    def _link_state(self):
        return list(self._links.items())

    def links_changed(self):
        if self._links is None:
            return False
        snap = self._link_snap
        return len(snap) != len(self._links) or any(
            n != m or e is not f for (n, e), (m, f) in zip(snap, self._links.items()))


class ExistingDatatype(Existing, model.DatatypeNode):
    def __init__(self, session, address):
        self._init_existing(session, address)
        self.track_order = bool(self.header.flags & 0x04)
        self.attr_counter = 0
        t = M.decode(session.ctx, self.header.first(DATATYPE))
        self.dtype = getattr(t, "dtype", None)


class ExistingDataset(Existing, model.DatasetNode):
    def __init__(self, session, address):
        self._init_existing(session, address)
        ctx, h = session.ctx, self.header
        self.track_order = bool(h.flags & 0x04)
        self.attr_counter = 0
        space = M.decode(ctx, h.first(DATASPACE))
        dtype_msg = M.decode(ctx, h.first(DATATYPE))
        self.space_msg = space
        self.type_msg = dtype_msg
        self.shape = space.shape
        self.maxshape = space.maxshape
        self.dtype = dtype_msg.dtype
        lay = M.decode(ctx, h.first(LAYOUT)) if h.first(LAYOUT) is not None else None
        self.layout_msg = lay
        self.layout = {L.COMPACT: "compact", L.CONTIGUOUS: "contiguous", L.CHUNKED: "chunked",
                       L.STRUCTURED: "sparse"}.get(getattr(lay, "layout_class", None), "other")
        if self.layout == "contiguous" and h.first(0x07) is not None:
            self.layout = "external"
        self.chunks = tuple(lay.chunk_shape) if self.layout in ("chunked", "sparse") else None
        pipe = M.decode(ctx, h.first(FILTERS)) if h.first(FILTERS) is not None else None
        if self.layout == "sparse":
            from ..sparse.storage import pipelines_of
            self.section_filters = pipelines_of(pipe, lay.nsections)
            self.filters = ()
        else:
            self.filters = tuple(pipe.filters) if pipe is not None else ()
        fill = h.first(FILL)
        fv = M.decode(ctx, fill) if fill is not None else None
        self.fill = fv.value if fv is not None and fv.value is not None and \
            len(fv.value) == dtype_msg.file_dtype.itemsize else None
        self.early = bool(fv is not None and fv.alloc_time == 1)
        self.stored_dtype = None
        self.wide_chunk_sizes = bool(lay is not None and lay.version >= 5)
        if self.layout in ("chunked", "sparse"):
            if lay.version >= 4:
                self.index = (lay.index_type, dict(lay.index_info))
            else:
                self.index = (L.BTREE1, {})
        else:
            self.index = None
        self._store = None
        self._snap_shape = self.shape
        self._snap_records = None
        self._snap_address = None

    @property
    def store(self):
        if self._store is None:
            self._store = self.session.open_store(self)
        return self._store

    @store.setter
    def store(self, value):
        self._store = value

    def committed(self):
        """Remember the stored state (a commit just wrote it)."""
        self._snap_shape = self.shape
        st = self._store
        from .storage import ChunkStore, ContiguousStore
        if isinstance(st, ChunkStore):
            for rec in st.records.values():
                rec[3] = 0                   # committed chunks are never written over
            self._snap_records = {k: (r[0], r[1], r[2]) for k, r in st.records.items()}
        elif isinstance(st, ContiguousStore):
            self._snap_address = st.address
        elif self.layout == "sparse" and st is not None:
            self._snap_records = dict(st.records)
        elif st is not None:
            st._touched = False

    def data_changed(self):
        if self.shape != self._snap_shape:
            return True
        st = self._store
        if st is None:
            return False
        from .storage import ChunkStore, ContiguousStore
        if isinstance(st, ChunkStore):
            cur = {k: (r[0], r[1], r[2]) for k, r in st.records.items()}
            return cur != self._snap_records
        if isinstance(st, ContiguousStore):
            return st.address != self._snap_address
        if self.layout == "sparse":
            return bool(st.dirty) or st.records != self._snap_records
        return bool(getattr(st, "_touched", False))


from .storage import MemoryStore as _MemoryStore  # noqa: E402


class TrackedMemoryStore(_MemoryStore):
    """A MemoryStore that notes being written (its dataset is then rewritten at commit)."""
    _touched = False

    def write(self, args, values):
        super().write(args, values)
        self._touched = True

    def resize(self, shape, fill):
        super().resize(shape, fill)
        self._touched = True


def _target(entry, em):
    """The object header address a hard link points to (without loading the object)."""
    if isinstance(entry, ExistingLink) and entry._node is None:
        return entry.address
    return em.addresses.get(id(entry.node))


class _Addresses(dict):
    """The emitter's object addresses: this commit's new objects over the session's."""

    def __init__(self, base):
        super().__init__()
        self.base = base

    def __missing__(self, key):
        return self.base[key]

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self.base.get(key, default)


# --- header rewriting --------------------------------------------------------------------------

def _pad8(n):
    return n + (-n) % 8


def rebuild_messages(header, replace_types, extra, keep_refcount=None):
    """The header's messages (type, flags, body, creation order) with every message of the
    types in ``replace_types`` replaced by ``extra[type]`` (at the first one's place, or at
    the end); NIL and continuation messages are dropped (the layout is redone)."""
    out, done = [], set()
    for m in header.messages:
        if m.type in (NIL, CONTINUATION):
            continue
        if m.type in replace_types:
            if m.type not in done:
                done.add(m.type)
                out.extend(extra.get(m.type, []))
            continue
        out.append((m.type, m.flags, bytes(m.data), m.creation_order))
    for t in replace_types:
        if t not in done:
            out.extend(extra.get(t, []))
    return out


class HeaderLayout:
    """Chunk 0 of an existing header (its size is fixed) and what it needs around it."""

    def __init__(self, ctx, header):
        self.ctx, self.header = ctx, header
        addr = header.address
        if header.version == 1:
            raw = bytes(ctx.read(addr, 16, "object header"))
            self.chunk0 = struct.unpack_from("<I", raw, 8)[0]
            self.prefix = 16
        else:
            flags = header.flags
            pre = 6 + (16 if flags & 0x20 else 0) + (4 if flags & 0x10 else 0)
            width = 1 << (flags & 0x03)
            raw = bytes(ctx.read(addr, pre + width, "object header"))
            self.chunk0 = int.from_bytes(raw[pre:pre + width], "little")
            self.prefix_bytes = raw
            self.prefix = pre + width
        self.old_blocks = []
        so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
        for m in header.messages:
            if m.type == CONTINUATION:
                a = int.from_bytes(bytes(m.data[:so]), "little")
                n = int.from_bytes(bytes(m.data[so:so + sl]), "little")
                self.old_blocks.append((a, n))

    def encode(self, msgs, alloc, refcount):
        """(chunk 0 bytes, [(address, continuation block bytes)])."""
        if self.header.version == 1:
            return self._encode_v1(msgs, alloc, refcount)
        return self._encode_v2(msgs, alloc)

    def _encode_v1(self, msgs, alloc, refcount):
        ctx = self.ctx
        cont_size = 8 + _pad8(ctx.sizeof_offsets + ctx.sizeof_lengths)
        sizes = [8 + _pad8(len(m[2])) for m in msgs]
        for m, s in zip(msgs, sizes):
            if s - 8 > 0xFFFF:
                raise ValueError(f"header message of type {m[0]:#x} is too large ({s} bytes)")

        def enc(m):
            body = bytes(m[2])
            size = _pad8(len(body))
            return struct.pack("<HHB3x", m[0], size, m[1]) + body + bytes(size - len(body))

        def nil(n):     # a NIL message filling n bytes (n >= 8, a multiple of 8)
            return struct.pack("<HHB3x", 0, n - 8, 0) + bytes(n - 8)

        blocks = []
        count = 0
        if sum(sizes) <= self.chunk0:
            first, rest = list(msgs), []
        else:
            room, used, k = self.chunk0 - cont_size, 0, 0
            while k < len(msgs) and used + sizes[k] <= room:
                used += sizes[k]
                k += 1
            first, rest = list(msgs[:k]), list(msgs[k:])
        body = b"".join(enc(m) for m in first)
        count += len(first)
        if rest:
            data = b"".join(enc(m) for m in rest)
            addr = alloc(len(data))
            blocks.append((addr, data))
            count += len(rest)
            gap = self.chunk0 - len(body) - cont_size
            if gap:
                body += nil(gap)
                count += 1
            cont = ctx.pack_address(addr) + ctx.pack_length(len(data))
            body += enc((CONTINUATION, 0, cont))
            count += 1
        else:
            gap = self.chunk0 - len(body)
            if gap:
                body += nil(gap)
                count += 1
        if len(body) != self.chunk0:
            raise AssertionError("object header chunk 0 changed size")
        prefix = struct.pack("<BBHII4x", 1, 0, count, refcount, self.chunk0)
        return prefix + body, blocks

    def _encode_v2(self, msgs, alloc):
        ctx = self.ctx
        ordered = bool(self.header.flags & 0x04)
        hsize = 6 if ordered else 4

        def enc(m):
            body = bytes(m[2])
            if len(body) > 0xFFFF:
                raise ValueError(f"header message of type {m[0]:#x} is too large")
            if ordered:
                order = m[3] if len(m) > 3 and m[3] is not None else 0
                return struct.pack("<BHBH", m[0], len(body), m[1], order) + body
            return struct.pack("<BHB", m[0], len(body), m[1]) + body

        def fill(n):    # n bytes of free space: a NIL message, or a gap shorter than a header
            if n >= hsize:
                return enc((NIL, 0, bytes(n - hsize), 0))
            return bytes(n)

        sizes = [hsize + len(m[2]) for m in msgs]
        cont_size = hsize + ctx.sizeof_offsets + ctx.sizeof_lengths
        blocks = []
        if sum(sizes) <= self.chunk0:
            body = b"".join(enc(m) for m in msgs)
            body += fill(self.chunk0 - len(body))
        else:
            room, used, k = self.chunk0 - cont_size, 0, 0
            while k < len(msgs) and used + sizes[k] <= room:
                used += sizes[k]
                k += 1
            body = b"".join(enc(m) for m in msgs[:k])
            data = b"OCHK" + b"".join(enc(m) for m in msgs[k:])
            data += struct.pack("<I", checksum.lookup3(data))
            addr = alloc(len(data))
            blocks.append((addr, data))
            gap = self.chunk0 - len(body) - cont_size
            body += fill(gap) if gap >= hsize else b""
            body += enc((CONTINUATION, 0, ctx.pack_address(addr) + ctx.pack_length(len(data)),
                         0))
            body += bytes(self.chunk0 - len(body))
        if len(body) != self.chunk0:
            raise AssertionError("object header chunk 0 changed size")
        out = self.prefix_bytes + body
        return out + struct.pack("<I", checksum.lookup3(out)), blocks


# --- the session -------------------------------------------------------------------------------

@dataclass(frozen=True)
class FilePolicy(P.Policy):
    """The writer's choices for new objects in an existing file, by its superblock version."""
    sb: int = 0

    @property
    def superblock_version(self):
        return self.sb


class Writer:
    """A file opened for writing ('r+', 'a', 'w', 'w-'/'x'): the session over it.

    ``mode`` 'w' creates or truncates the file, 'x' creates it (an error if it exists): both
    write an empty file for ``libver`` first (purehep.write.newfile), and from then on a new
    file is changed as any existing file is. The file is locked for writing while open."""

    def __init__(self, path, mode="r+", locking=None, libver=None, userblock_size=0,
                 track_order=None):
        from ..io.sink import Overlay, make_sink
        new = mode != "r+"
        if new:
            from .newfile import check_userblock
            check_userblock(userblock_size)
            policy = P.Policy.from_libver(libver)
        self.sink = make_sink(path, mode, locking)
        try:
            if new:
                from .newfile import write_empty
                write_empty(self.sink, policy, userblock_size, track_order)
            source = self.sink.source()
            sb = SB.Superblock.find(source)
            ctx = sb.context(source, path=self.sink.path)
            sb.check_file(ctx)
        except BaseException:
            self.sink.close()
            if new and self.sink.path is not None:
                _remove(self.sink.path)
            raise
        self.superblock = sb
        self.ctx = ctx
        ctx.superblock = sb
        self.base = ctx.base_address
        if not new:
            # new objects are written for the oldest library the file's superblock admits
            level = 0 if sb.version < 2 else 1 if sb.version == 2 else 2
            policy = FilePolicy(level, ("earliest", "v108", "v110")[level], sb=sb.version)
        self.policy = policy
        self.alloc = Allocator(max(sb.eof_address, self.sink.size - self.base))
        self.eoa_on_disk = sb.eof_address
        self.overlay = Overlay()     # in-place patches staged, not yet committed
        self.staged = False          # changes emitted that the file does not refer to yet
        self.nodes = {}              # address -> Existing node
        self.addresses = {}          # id(node) -> address
        self.owned = {}              # (id(node), what) -> blocks of this session's structures
        self.generation = 0
        self.dirty = False
        self.durable = True
        self.root = self.node_at(sb.root_address)
        self.root_address = sb.root_address
        self.closed = False

    # -- the writer interface ----------------------------------------------------------------
    def absolute(self, addr):
        return self.base + addr

    def alloc_raw(self, n):
        """Space for raw data; reused space is zeroed (unwritten parts must read as zeros)."""
        addr = self.alloc.alloc(n, reuse=False) if n > (1 << 22) else self.alloc.alloc(n)
        end = self.absolute(addr) + n
        if end <= self.sink.size:
            self.sink.write(self.absolute(addr), bytes(n))
        else:
            self.sink.truncate(end)
        self.dirty = True
        return addr

    def release(self, addr, n):
        self.alloc.release(addr, n)

    def touch(self):
        self.dirty = True

    @staticmethod
    def now():
        t = int(time.time())
        return (t, t, t, t)

    def node_at(self, address):
        """The node of the object whose header is at ``address`` (loaded once)."""
        node = self.nodes.get(address)
        if node is not None:
            return node
        from ..hl.base import header_of, object_kind
        kind = object_kind(header_of(self.ctx, address))
        cls = {"group": ExistingGroup, "dataset": ExistingDataset,
               "datatype": ExistingDatatype}[kind]
        node = cls(self, address)
        self.nodes[address] = node
        self.addresses[id(node)] = address
        return node

    def address_of(self, node):
        if self.dirty or id(node) not in self.addresses:
            self.stage()
        return self.addresses.get(id(node))

    def path_of(self, node):
        return model.path_of(self.root, node)

    # -- stores of existing datasets ---------------------------------------------------------
    def open_store(self, node):
        from .storage import ChunkStore, ContiguousStore, ExternalStore
        from . import values as V
        if node.layout == "sparse":
            return self._open_sparse_store(node)
        if node.layout == "external":
            from ..hl.storage import external_segments
            segments = external_segments(self.ctx, M.decode(self.ctx, node.header.first(0x07)))
            return ExternalStore(segments, node.shape, node.dtype)
        if node.layout not in ("chunked", "contiguous", "compact"):
            raise UnsupportedFeatureError(f"writing to a dataset with {node.layout} storage")
        if node.shape is None:
            raise TypeError("Empty datasets can't be written")
        if V.needs_heap(node.dtype) or node.layout == "compact":
            from ..hl.dataset import Dataset
            ds = Dataset(self.ctx.file, node.address, None)
            store = TrackedMemoryStore(node.shape, node.dtype, None)
            store.array[...] = ds[()]
            return store
        lay = node.layout_msg
        if node.layout == "contiguous":
            store = ContiguousStore(self, node.shape, node.dtype, node.fill)
            store.address = lay.address
            node._snap_address = lay.address
            return store
        if lay.version < 3:
            raise UnsupportedFeatureError("writing chunks of a version 1/2 layout")
        store = ChunkStore(self, node)
        from ..hl.dataset import Dataset
        if lay.flags & L.DONT_FILTER_PARTIAL_EDGE_CHUNKS and node.filters:
            raise UnsupportedFeatureError("writing a dataset whose partial edge chunks are "
                                          "stored unfiltered")
        storage = Dataset(self.ctx.file, node.address, None)._storage
        table = getattr(storage, "chunked", storage).table
        for i in range(len(table)):
            scaled = tuple(int(x) for x in table.scaled[i])
            store.records[scaled] = [int(table.addresses[i]), int(table.sizes[i]),
                                     int(table.masks[i]), 0]
        if node.index[0] == L.IMPLICIT:
            raise UnsupportedFeatureError("writing chunks indexed implicitly (fixed in place)")
        node._snap_records = {k: (r[0], r[1], r[2]) for k, r in store.records.items()}
        return store

    def _open_sparse_store(self, node):
        """A sparse dataset's store holding its defined elements as the file has them, and
        its chunks' index records (chunks not written again stay where they are)."""
        from ..hl.dataset import Dataset
        from ..sparse.store import SparseStore
        reader = Dataset(self.ctx.file, node.address, None)._storage.sparse
        store = SparseStore(self, node)
        coords, values = reader.read_sparse()
        store.write_points(coords, values)
        store.dirty.clear()
        table = reader.table
        store.records = {tuple(int(x) for x in table.scaled[i]): table.record(i)
                         for i in range(len(table))}
        node._snap_records = dict(store.records)
        return store

    # -- the commit --------------------------------------------------------------------------
    def stage(self):
        """Emit the changes made since the last stage: new structures into unused space,
        in-place patches into the overlay. The session then reads its changes (through the
        overlay); the file on disk still describes the last commit, whatever happens next."""
        if not self.dirty:
            return
        from .emit import Emitter, Resolver
        ctx = self.ctx
        em = Emitter(self, 0)
        meta = BlockMeta(self.alloc)
        em.meta = meta
        from .emit import GlobalHeaps
        em.gheaps = GlobalHeaps(ctx, meta)
        em.addresses = _Addresses(self.addresses)
        em.plans = {}
        self.patches = []            # (order, address, bytes): heaps 0, B-tree roots 1, headers 2
        loaded = list(self.nodes.values())
        for node in loaded:
            st = getattr(node, "_store", None) if isinstance(node, ExistingDataset) else \
                getattr(node, "store", None)
            if getattr(st, "flush_before_emit", False):
                st.flush_dirty()
        # new objects: reachable from loaded groups through links to nodes without an address
        new = self._new_nodes(loaded)
        dummy, real = Resolver(em, False), Resolver(em, True)
        plans = [em.plan(n) for n in new]
        em.plans = {id(p.node): p for p in plans}
        for p in plans:
            st = getattr(p.node, "store", None)
            if getattr(st, "flush_before_emit", False):
                st.flush_dirty()
            p.size = len(em.encode_header(p, em.messages(p, dummy)))
            p.address = meta.alloc(p.size)
            em.addresses[id(p.node)] = p.address
        for p in reversed(plans):
            meta.owner = (id(p.node), "side")
            em.side_structures(p, real)
            meta.owner = None
        for p in plans:
            meta.put(p.address, em.encode_header(p, em.messages(p, real)))
        refdelta = self._refcount_changes(loaded, new)
        deleted = self._deletions(refdelta)
        for node in list(self.nodes.values()):
            if id(node) in deleted:
                self._free_object(node)
                continue
            self._update_existing(em, node, real, refdelta.pop(id(node), 0))
        em.gheaps.finish()
        # new structures go to unused space at once; patches wait in the overlay
        for a in sorted(meta.blocks):
            self.sink.write(self.absolute(a), meta.blocks[a])
        self.sink.truncate(self.absolute(self.alloc.eoa))
        for order, addr, data in self.patches:
            self.overlay.add(order, self.absolute(addr), data)
        self.patches = []
        self.staged = True
        # staged: adopt new nodes, remember state, free what is no longer referenced
        self._adopted = []
        for p in plans:
            self._adopt(p.node, p.address)
        for key, blocks in meta.owned.items():
            old = self.owned.get(key)
            if old:
                for a, n in old:
                    self.alloc.release(a, n)
            self.owned[key] = blocks
        for node in deleted.values():
            node.deleted = True
            self.nodes.pop(node.address, None)
            self.addresses.pop(id(node), None)
        for node in list(self.nodes.values()):
            if isinstance(node, ExistingDataset):
                node.committed()
            if isinstance(node, ExistingGroup) and node._links is not None:
                node._link_snap = node._link_state()
            if node._attrs is not None:
                node._attr_snap = node._attr_state()
        self.dirty = False
        self.generation += 1
        ctx.cache.clear()
        ctx.source = self.sink.source(self.overlay)
        for node in self._adopted:
            self._refresh(node)
        self._adopted = []

    def flush(self, durable=None):
        """Commit: stage what changed, then make the file refer to it, each step on disk
        (fsync) before the next: 1. the new structures (written when staged); 2. the
        superblock's end-of-file address; 3. the in-place patches by increasing order (local
        heaps, v1 B-tree nodes, symbol table nodes, array blocks, v2 B-tree / array headers,
        then object header chunk 0), each order flushed before the next. Blocks the last
        commit stopped referencing become free only now."""
        self.stage()
        if not self.staged:
            return
        durable = self.durable if durable is None else durable
        if durable:
            self.sink.sync()
        eoa = self.alloc.eoa
        if eoa != self.eoa_on_disk:
            self._write_eoa(eoa)
            if durable:
                self.sink.sync()
        last = None
        for order, addr, data in self.overlay.ordered():
            if durable and last is not None and order != last:
                self.sink.sync()
            last = order
            self.sink.write(addr, data)
        if durable and last is not None:
            self.sink.sync()
        self.overlay.clear()
        self.alloc.commit()
        self.staged = False
        self.ctx.cache.clear()
        self.ctx.source = self.sink.source()

    def _new_nodes(self, loaded):
        out, seen = [], set()
        stack = []
        for node in loaded:
            if isinstance(node, ExistingGroup) and node._links is not None:
                for e in node._links.values():
                    if e.kind == model.HARD and not isinstance(e, ExistingLink):
                        stack.append(e.node)
        stack.reverse()
        while stack:
            node = stack.pop()
            if id(node) in seen or isinstance(node, Existing) or id(node) in self.addresses:
                continue
            seen.add(id(node))
            out.append(node)
            if isinstance(node, model.GroupNode):
                kids = [e.node for e in node.links.values() if e.kind == model.HARD]
                stack.extend(reversed(kids))
        return out

    def _refcount_changes(self, loaded, new):
        """Hard links added to / removed from objects already in the file: id -> delta."""
        delta = {}
        for node in loaded:
            if not isinstance(node, ExistingGroup) or not node.links_changed():
                continue
            before = {id(e) for _, e in node._link_snap}
            now = {id(e) for e in node._links.values()}
            for e in node._links.values():
                if e.kind == model.HARD and id(e) not in before and isinstance(e.node, Existing):
                    delta[id(e.node)] = delta.get(id(e.node), 0) + 1
            for _, e in node._link_snap:
                if id(e) not in now and e.kind == model.HARD and isinstance(e.node, Existing):
                    delta[id(e.node)] = delta.get(id(e.node), 0) - 1
        for node in new:
            if isinstance(node, model.GroupNode):
                for e in node.links.values():
                    if e.kind == model.HARD and isinstance(e.node, Existing):
                        delta[id(e.node)] = delta.get(id(e.node), 0) + 1
        return {k: v for k, v in delta.items() if v}

    # -- deleting objects ------------------------------------------------------------------------
    def _refcount(self, node):
        h = node.header
        if h.version == 1:
            return h.refcount
        rc = h.first(REFCOUNT)
        if rc is None:
            return 1
        return int.from_bytes(bytes(rc.data[1:5]), "little")

    def _deletions(self, refdelta):
        """Objects whose last hard link goes in this commit (id -> node), their members with
        them (libhdf5 frees such objects; their space joins the free list)."""
        deleted = {}
        queue = [k for k, v in refdelta.items() if v < 0]
        by_id = {id(n): n for n in self.nodes.values()}
        while queue:
            k = queue.pop()
            node = by_id.get(k)
            if node is None or k in deleted or node is self.root:
                continue
            if self._refcount(node) + refdelta.get(k, 0) > 0:
                continue
            deleted[k] = node
            if isinstance(node, ExistingGroup):
                for e in node.links.values():
                    if e.kind == model.HARD:
                        child = e.node
                        by_id[id(child)] = child
                        refdelta[id(child)] = refdelta.get(id(child), 0) - 1
                        queue.append(id(child))
        for k in deleted:
            refdelta.pop(k, None)
        return deleted

    def _free_object(self, node):
        """Release the space of a deleted object (at commit)."""
        ctx, rel = self.ctx, self.alloc.release
        h = node.header
        lay = HeaderLayout(ctx, h)
        rel(node.address, lay.prefix + lay.chunk0 + (4 if h.version == 2 else 0))
        for what in ("header", "links", "attrs", "index", "data", "side"):
            blocks = self.owned.pop((id(node), what), None)
            if blocks is None and what == "header":
                blocks = lay.old_blocks
            for a, n in blocks or ():
                rel(a, n)
        if isinstance(node, ExistingDataset):
            st = node._store
            from .storage import ChunkStore, ContiguousStore
            lay_msg = node.layout_msg
            if isinstance(st, ChunkStore):
                seen = set()
                for r in list(st.records.values()) + [list(v) for v in
                                                       (node._snap_records or {}).values()]:
                    if (r[0], r[1]) not in seen:
                        seen.add((r[0], r[1]))
                        rel(r[0], r[1])
            elif isinstance(st, ContiguousStore):
                if st.address is not None:
                    rel(st.address, st.nbytes)
            elif lay_msg is not None and node.layout == "contiguous" and \
                    lay_msg.address is not None:
                rel(lay_msg.address, lay_msg.size)
            elif lay_msg is not None and node.layout == "chunked" and lay_msg.version >= 3:
                try:
                    from ..hl.dataset import Dataset
                    storage = Dataset(ctx.file, node.address, None)._storage
                    t = getattr(storage, "chunked", storage).table
                    for a, n in zip(t.addresses.tolist(), t.sizes.tolist()):
                        rel(a, n)
                except Exception:
                    pass
            if lay_msg is not None and node.layout == "chunked" and \
                    (id(node), "index") not in self.owned:
                for a, n in self._index_blocks(node, lay_msg):
                    rel(a, n)
        elif isinstance(node, ExistingGroup) and h.first(STAB) is not None:
            stab = M.decode(ctx, h.first(STAB))
            heap = local_heap.LocalHeap.decode(ctx, stab.heap_address)
            for a in B1.node_addresses(ctx, stab.btree_address, B1.GROUP):
                rel(a, B1.node_size(ctx, ctx.sizeof_lengths, GROUP_INTERNAL_K))
            for a in B1.group_symbol_table_nodes(ctx, stab.btree_address):
                rel(a, symbol_table.node_size(ctx, GROUP_LEAF_K))
            rel(heap.data_address, heap.data_size)
            rel(stab.heap_address, local_heap.header_size(ctx))

    def _adopt(self, node, address):
        """A node emitted by this commit becomes an existing object at ``address``."""
        self.addresses[id(node)] = address
        self.nodes[address] = node
        from .storage import ChunkStore
        if isinstance(node, model.GroupNode):
            links = node.__dict__.pop("links")
            attrs = node.__dict__.pop("attrs")
            node.__class__ = ExistingGroup
            node._links = links
            node._link_snap = node._link_state()
        elif isinstance(node, model.DatasetNode):
            attrs = node.__dict__.pop("attrs")
            store = node.__dict__.pop("store")
            node.__class__ = ExistingDataset
            node._store = store
            node._snap_shape = node.shape
            node._snap_records = None
            node._snap_address = None
            from .storage import MemoryStore
            if type(store) is MemoryStore:
                store.__class__ = TrackedMemoryStore
        else:
            attrs = node.__dict__.pop("attrs")
            node.__class__ = ExistingDatatype
        node.session = self
        node.address = address
        node._attrs = attrs
        node._attr_snap = node._attr_state()
        self._adopted.append(node)

    def _refresh(self, node):
        """Header-derived state of a node adopted by the last commit."""
        ctx, h = self.ctx, node.header
        raw = h.first(ATTR_INFO)
        node.attr_info = M.decode(ctx, raw) if raw is not None else None
        if isinstance(node, ExistingGroup):
            raw = h.first(LINK_INFO)
            node.link_info = M.decode(ctx, raw) if raw is not None else None
            node.old_style = h.first(STAB) is not None
        elif isinstance(node, ExistingDataset):
            node.space_msg = M.decode(ctx, h.first(DATASPACE))
            node.layout_msg = M.decode(ctx, h.first(LAYOUT))
            node.committed()

    def _write_eoa(self, eoa):
        sb, ctx = self.superblock, self.ctx
        so = ctx.sizeof_offsets
        if sb.version < 2:
            pos = sb.offset + (24 if sb.version == 0 else 28) + 2 * so
            self.sink.write(pos, ctx.pack_address(eoa))
        else:
            n = 12 + 4 * so
            raw = bytearray(self.sink.read(sb.offset, n))
            raw[12 + 2 * so:12 + 3 * so] = ctx.pack_address(eoa)
            self.sink.write(sb.offset, bytes(raw) + struct.pack("<I", checksum.lookup3(bytes(raw))))
        self.eoa_on_disk = eoa

    # -- rewriting one existing object ---------------------------------------------------------
    def _update_existing(self, em, node, R, refdelta=0, force=False):
        if not isinstance(node, Existing):
            return
        replace_types, extra = set(), {}
        if isinstance(node, ExistingGroup) and node.links_changed():
            self._update_links(em, node, R, replace_types, extra)
        if node.attrs_changed():
            self._update_attrs(em, node, R, replace_types, extra)
        if isinstance(node, ExistingDataset) and node.data_changed():
            self._update_dataset(em, node, R, replace_types, extra)
        if not replace_types and not refdelta:
            return
        self._rewrite_header(em, node, replace_types, extra, refdelta)

    def _rewrite_header(self, em, node, replace_types, extra, refdelta):
        ctx = self.ctx
        header = node.header
        refcount = header.refcount
        if header.version == 2:
            rc = header.first(REFCOUNT)
            refcount = M.decode(ctx, rc) if rc is not None else 1
            if not isinstance(refcount, int):
                refcount = getattr(refcount, "count", 1)
        refcount = max(refcount + refdelta, 1)
        if header.version == 2 and refdelta:
            replace_types.add(REFCOUNT)
            extra[REFCOUNT] = [(REFCOUNT, 0, m_simple.encode_refcount(refcount), 0)] \
                if refcount > 1 else []
        msgs = rebuild_messages(header, replace_types, extra)
        lay = HeaderLayout(ctx, header)
        meta = em.meta
        meta.owner = (id(node), "header")
        chunk0, blocks = lay.encode(msgs, meta.alloc, refcount)
        meta.owner = None
        for a, data in blocks:
            meta.put(a, data)
        key = (id(node), "header")
        if key not in self.owned:         # continuation blocks of the file as it was
            self.owned[key] = list(lay.old_blocks)
        self.patches.append((2, node.address, chunk0))

    def _update_links(self, em, node, R, replace_types, extra):
        links = node._links
        if node.old_style and not any(e.kind not in (model.HARD, model.SOFT)
                                      for e in links.values()):
            added = self._added_links(node)
            if added:
                self._insert_symbol_table(em, node, added)
            else:
                self._rebuild_symbol_table(em, node)
            return
        if node.old_style:           # a link a symbol table cannot hold: become new-style
            replace_types.update((STAB, LINK_INFO, GROUP_INFO, LINK))
            extra[GROUP_INFO] = [(GROUP_INFO, 0x01, m_ginfo.encode(m_ginfo.GroupInfo()), 0)]
            ginfo = m_ginfo.GroupInfo()
            node.old_style = False
            for e in links.values():
                e.raw = None
        else:
            graw = node.header.first(GROUP_INFO)
            ginfo = M.decode(self.ctx, graw) if graw is not None else m_ginfo.GroupInfo()
            replace_types.update((LINK_INFO, LINK))
        track = node.track_order
        info = node.link_info
        was_dense = bool(info and info.dense)
        dense = len(links) > ginfo.max_compact or (was_dense and len(links) >= ginfo.min_dense)
        from .emit import Plan
        p = Plan(node)
        if dense:
            em.meta.owner = (id(node), "links")
            em._dense_links(p, R)
            em.meta.owner = None
            self.owned.setdefault((id(node), "links"), [])
        else:
            if (id(node), "links") in self.owned:
                self.owned[(id(node), "links")] = self.owned[(id(node), "links")]
            extra[LINK] = [(LINK, 0, em._link_body(n, e, track, R), None)
                           for n, e in links.items()]
        linfo = m_linfo.LinkInfo(track, bool(info and info.index_order) if info else track,
                                 node.link_counter if track else None,
                                 p.side.get("link_heap"), p.side.get("link_name"),
                                 p.side.get("link_order"))
        if track and not dense:
            linfo = replace(linfo, creation_order_index_address=None)
        node.link_info = linfo
        extra[LINK_INFO] = [(LINK_INFO, 0, m_linfo.encode(linfo, self.ctx), None)]

    @staticmethod
    def _added_links(node):
        """Names of the links added since the last commit when that is the only change (every
        committed link still there, the same entry), else None."""
        links, snap = node._links, node._link_snap
        if len(links) <= len(snap):
            return None
        for name, e in snap:
            if links.get(name) is not e:
                return None
        old = {name for name, _ in snap}
        return [n for n in links if n not in old]

    def _insert_symbol_table(self, em, node, added):
        """Links added to a symbol-table group, inserted into its heap, symbol table nodes and
        B-tree in place (purehep.write.incremental.SymbolTableEditor: O(log n) nodes written,
        crash-safe order there). Changed or removed links rebuild the group instead
        (``_rebuild_symbol_table``)."""
        from .incremental import SymbolTableEditor
        ctx = self.ctx
        stab = M.decode(ctx, node.header.first(STAB))
        ed = SymbolTableEditor(self, em.meta, stab.btree_address, stab.heap_address)
        for name in sorted(added, key=lambda n: n.encode("utf-8", "surrogateescape")):
            e = node._links[name]

            def make_entry(off, heap, e=e):
                if e.kind == model.SOFT:
                    t = heap.insert(e.path.encode("utf-8", "surrogateescape"))
                    return SB.encode_symbol_table_entry(ctx, off, None, soft_link_offset=t)
                child = None if isinstance(e, ExistingLink) else em.plans.get(id(e.node))
                addr = _target(e, em)
                if child is not None and child.old_style and "btree" in child.side:
                    return SB.encode_symbol_table_entry(ctx, off, addr, child.side["btree"],
                                                        child.side["heap"])
                return SB.encode_symbol_table_entry(ctx, off, addr)

            ed.insert(name.encode("utf-8", "surrogateescape"), make_entry)
        ed.finish(self.patches)
        # the blocks of a rebuilt table are no longer the whole table: forget them (a later
        # rebuild or deletion walks the table in the file instead)
        self.owned.pop((id(node), "links"), None)

    def _rebuild_symbol_table(self, em, node):
        """New symbol table nodes and B-tree under the same root address; the local heap's
        data segment grows by the new names (old names keep their offsets)."""
        ctx = self.ctx
        stab = M.decode(ctx, node.header.first(STAB))
        heap = local_heap.LocalHeap.decode(ctx, stab.heap_address)
        data = bytearray(heap.data)
        offsets = {}

        def put_name(raw):
            off = len(data)
            data.extend(raw + b"\0" + bytes((-(len(raw) + 1)) % 8))
            return off

        current = dict(symbol_table.group_entries(ctx, stab.btree_address, heap))
        entries = []
        for name in sorted(node._links, key=lambda n: n.encode("utf-8", "surrogateescape")):
            e = node._links[name]
            key = name.encode("utf-8", "surrogateescape")
            ent = current.get(key)
            if ent is not None:
                offsets[key] = ent.name_offset
                same = (e.kind == model.HARD and ent.cache_type != 2 and
                        ent.header_address == _target(e, em)) or \
                    (e.kind == model.SOFT and ent.cache_type == 2 and
                     heap.string(ent.soft_link_offset, ctx) ==
                     e.path.encode("utf-8", "surrogateescape"))
                if not same:
                    ent = None
            if ent is not None:
                raw = SB.encode_symbol_table_entry(
                    ctx, ent.name_offset, ent.header_address,
                    ent.btree_address if ent.cache_type == 1 else None,
                    ent.heap_address if ent.cache_type == 1 else None,
                    ent.soft_link_offset if ent.cache_type == 2 else None)
                if ent.cache_type not in (0, 1, 2):
                    raw = SB.encode_symbol_table_entry(ctx, ent.name_offset, ent.header_address)
                entries.append((ent.name_offset, raw))
                continue
            off = offsets.get(key)
            if off is None:
                off = offsets[key] = put_name(key)
            if e.kind == model.SOFT:
                t = put_name(e.path.encode("utf-8", "surrogateescape"))
                raw = SB.encode_symbol_table_entry(ctx, off, None, soft_link_offset=t)
            else:
                child = None if isinstance(e, ExistingLink) else em.plans.get(id(e.node))
                addr = _target(e, em)
                if child is not None and child.old_style and "btree" in child.side:
                    raw = SB.encode_symbol_table_entry(ctx, off, addr, child.side["btree"],
                                                       child.side["heap"])
                else:
                    raw = SB.encode_symbol_table_entry(ctx, off, addr)
            entries.append((off, raw))
        meta = em.meta
        meta.owner = (id(node), "links")
        key = (id(node), "links")
        if key not in self.owned:       # structures of the file as it was
            old = [(a, B1.node_size(ctx, ctx.sizeof_lengths, GROUP_INTERNAL_K))
                   for a in B1.node_addresses(ctx, stab.btree_address, B1.GROUP)
                   if a != stab.btree_address]
            old += [(a, symbol_table.node_size(ctx, GROUP_LEAF_K))
                    for a in B1.group_symbol_table_nodes(ctx, stab.btree_address)]
            old.append((heap.data_address, heap.data_size))
            self.owned[key] = old
        if len(data) != heap.data_size:
            daddr = meta.alloc(len(data))
            meta.put(daddr, bytes(data))
            hdr = local_heap.encode(ctx, len(data), daddr, heap.free_list_offset)
            self.patches.append((0, stab.heap_address, hdr))
        else:                             # same names: keep the data segment
            self.owned[key] = [b for b in self.owned[key] if b[0] != heap.data_address]
        k = GROUP_LEAF_K
        per = 2 * k
        snods = []
        for i in range(0, len(entries), per):
            part = entries[i:i + per]
            a = meta.alloc(symbol_table.node_size(ctx, k))
            meta.put(a, symbol_table.encode_node(ctx, [r for _, r in part], k))
            snods.append((a, part[-1][0]))
        from . import chunk_index
        keys = [ctx.pack_length(0)] + [ctx.pack_length(o) for _, o in snods]
        chunk_index.btree1(em, 0, [a for a, _ in snods], keys, ctx.sizeof_lengths,
                           GROUP_INTERNAL_K,
                           root=(stab.btree_address,
                                 lambda a, d: self.patches.append((1, a, d))))
        meta.owner = None

    def _update_attrs(self, em, node, R, replace_types, extra):
        ctx = self.ctx
        attrs = sorted(node._attrs.values(), key=lambda a: a.order)
        bodies = []
        for a in attrs:
            if isinstance(a, ExistingAttr) and a.value is None:
                bodies.append((a, a.raw, a.flags))
            else:
                bodies.append((a, em._attr_body(node, a, R), 0))
        header = node.header
        replace_types.update((ATTRIBUTE, ATTR_INFO))
        info = getattr(node, "attr_info", None)
        if header.version == 1:
            extra[ATTRIBUTE] = [(ATTRIBUTE, f, b, None) for a, b, f in bodies]
            return
        phase = header.attr_phase_change or (P.ATTR_MAX_COMPACT, P.ATTR_MIN_DENSE)
        was_dense = bool(info and info.dense)
        big = any(len(b) >= P.MAX_COMPACT_ATTRIBUTE for _, b, _ in bodies)
        dense = big or len(bodies) > phase[0] or (was_dense and len(bodies) >= phase[1])
        track = node.track_order
        heap = name = order = None
        if dense:
            from ..format import btree2, fractal_heap
            meta = em.meta
            meta.owner = (id(node), "attrs")
            hid_heap, blocks, ids = fractal_heap.encode_heap(ctx, [b for _, b, _ in bodies],
                                                             meta.alloc, **P.ATTR_HEAP)
            for a_, d in blocks:
                meta.put(a_, d)
            recs = sorted((checksum.lookup3(a.name.encode("utf-8", "surrogateescape")),
                           a.name.encode("utf-8", "surrogateescape"), a.order, f, hid)
                          for (a, _, f), hid in zip(bodies, ids))
            name_recs = [btree2.encode_record(8, btree2.AttributeName(hid, f, o, h), ctx)
                         for h, _, o, f, hid in recs]
            name = em._tree(8, name_recs, 17)
            if info is not None and info.index_order or (info is None and track):
                order_recs = [btree2.encode_record(9, btree2.AttributeCreationOrder(
                    hid, f, a.order), ctx) for (a, _, f), hid in zip(bodies, ids)]
                order = em._tree(9, order_recs, 13)
            heap = hid_heap
            meta.owner = None
            self.owned.setdefault((id(node), "attrs"), [])
        else:
            extra[ATTRIBUTE] = [(ATTRIBUTE, f, b, a.order) for a, b, f in bodies]
        if info is not None or dense or track:
            index_order = bool(info.index_order) if info is not None else track
            new_info = m_ainfo.AttributeInfo(
                bool(info.track_order) if info is not None else track, index_order,
                node.attr_counter if (info is not None and info.track_order) or
                (info is None and track) else None, heap, name, order)
            node.attr_info = new_info
            extra[ATTR_INFO] = [(ATTR_INFO, 0x04, m_ainfo.encode(new_info, ctx), None)]

    def _update_dataset(self, em, node, R, replace_types, extra):
        from .emit import Plan
        from .storage import ChunkStore, ContiguousStore
        ctx = self.ctx
        space = node.space_msg
        version = space.version if space is not None else self.policy.dataspace_version
        kind = m_space.SCALAR if node.shape == () else m_space.SIMPLE
        if node.shape != node._snap_shape or space is None:
            body = m_space.encode(m_space.Dataspace(kind, tuple(node.shape),
                                                    tuple(node.maxshape), version), ctx)
            replace_types.add(DATASPACE)
            extra[DATASPACE] = [(DATASPACE, 0, body, None)]
            node.space_msg = m_space.Dataspace(kind, tuple(node.shape), tuple(node.maxshape),
                                               version)
        st = node._store
        if st is None:
            st = node.store if node.layout == "chunked" else None
        p = Plan(node)
        old = node.layout_msg
        if node.layout == "sparse":
            from ..sparse import create
            create.side_structures(em, p)        # the index, rebuilt in unused space
            self._replace_layout(node, create.layout_of(
                node, old.element_size, p.side["index_address"], p.side["index_info"]),
                replace_types, extra)
            return
        if isinstance(st, ChunkStore) and self._update_chunk_index(em, node, st):
            return                       # the index edited in place: the layout is unchanged
        if isinstance(st, ChunkStore):
            em.meta.owner = (id(node), "index")
            if (id(node), "index") not in self.owned and old is not None:
                self.owned[(id(node), "index")] = self._index_blocks(node, old)
            self._release_replaced_chunks(node, st)
            em._chunk_index(p)
            em.meta.owner = None
            self.owned.setdefault((id(node), "index"), [])
        elif isinstance(st, ContiguousStore):
            p.side["data_address"] = st.address
        elif st is not None:
            em.meta.owner = (id(node), "data")
            if old is not None and (id(node), "data") not in self.owned:
                self.owned[(id(node), "data")] = self._data_blocks(node, old)
            em._dataset_side(p, R)
            if node.layout == "chunked":
                em._chunk_index(p)
            em.meta.owner = None
            self.owned.setdefault((id(node), "data"), [])
        else:
            return
        lay = em._layout(p, R)
        if old is not None and lay.layout_class == L.CHUNKED and old.version != lay.version:
            lay = replace(lay, version=old.version)
        self._replace_layout(node, lay, replace_types, extra)

    def _replace_layout(self, node, lay, replace_types, extra):
        """The dataset's layout message becomes ``lay`` at this commit."""
        node.layout_msg = lay
        replace_types.add(LAYOUT)
        if lay.version == 5 and lay.layout_class == L.CHUNKED:     # = version 4 but for
            body = b"\x05" + L.encode(replace(lay, version=4), self.ctx)[1:]  # 8-byte sizes
        else:
            body = L.encode(lay, self.ctx)
        extra[LAYOUT] = [(LAYOUT, 0, body, None)]

    def _update_chunk_index(self, em, node, st):
        """Chunks added or moved since the last commit, written into the dataset's index in
        place (purehep.write.incremental): extensible arrays (``EAEditor``), v2 B-trees
        of types 10/11 (``V2TreeEditor``) and v1 B-trees (``ChunkBTreeEditor``). True when
        done; False (the index is rebuilt) for
        other indexes, a first commit, chunks removed, or a case an editor declines (paged
        data blocks). Fixed arrays need nothing of this: they cover the maximum shape."""
        from . import incremental as I
        from .chunk_index import _element, chunk_size_len
        from . import values as V
        lay = node.layout_msg
        snap = node._snap_records
        if lay is None or snap is None or lay.address is None or lay.version < 3:
            return False
        kind = L.BTREE1 if lay.version == 3 else lay.index_type
        if kind not in (L.EXTENSIBLE_ARRAY, L.BTREE2, L.BTREE1) or node.index[0] != kind:
            return False
        recs = st.records
        if any(k not in recs for k in snap):
            return False
        changed = sorted((k, r) for k, r in recs.items()
                         if snap.get(k) != (r[0], r[1], r[2]))
        if not changed:
            return False
        ctx = self.ctx
        esize = V.stored_dtype(node.dtype, ctx.sizeof_offsets).itemsize
        chunk_nbytes = int(np.prod(node.chunks)) * esize
        width = chunk_size_len(chunk_nbytes, getattr(node, "wide_chunk_sizes", False))
        filtered = bool(node.filters)
        try:
            if kind == L.BTREE1:
                ed = I.ChunkBTreeEditor(self, em.meta, lay.address, len(node.chunks),
                                        node.chunks)
                for k, r in changed:
                    ed.put(k, r[0], r[1], r[2])
            elif kind == L.EXTENSIBLE_ARRAY:
                udim = [d for d, m in enumerate(node.maxshape) if m is None]
                if len(udim) != 1:
                    return False
                udim = udim[0]
                others = [d for d in range(len(node.chunks)) if d != udim]
                ogrid = [-(-node.maxshape[d] // node.chunks[d]) for d in others]
                per = int(np.prod(ogrid)) if others else 1
                ed = I.EAEditor(self, em.meta, lay.address, _element(ctx, None, filtered,
                                                                     width))
                for k, r in changed:
                    rest = int(np.ravel_multi_index([k[d] for d in others], ogrid)) \
                        if others else 0
                    ed.set(k[udim] * per + rest, _element(ctx, r, filtered, width))
            else:
                from ..format import btree2
                rank = len(node.chunks)
                btype = 11 if filtered else 10
                rctx = btree2.ChunkRecordContext(rank, width)
                tail = 8 * rank

                def key(rec):
                    return struct.unpack_from(f"<{rank}Q", rec, len(rec) - tail)

                ed = I.V2TreeEditor(self, em.meta, lay.address, key)
                if ed.btype != btype or ed.rs != len(btree2.encode_record(
                        btype, btree2.Chunk(0, (0,) * rank, 0, 0), ctx, rctx)):
                    return False
                for k, r in changed:
                    rec = btree2.encode_record(btype, btree2.Chunk(r[0], tuple(k), r[1], r[2]),
                                               ctx, rctx)
                    if k not in snap or not ed.replace(rec):
                        ed.insert(rec)
        except I.Unsupported:
            return False
        self._release_replaced_chunks(node, st)
        ed.finish(self.patches)
        # blocks a rebuild of this session recorded are no longer the index's: forget them
        self.owned.pop((id(node), "index"), None)
        return True

    def _release_replaced_chunks(self, node, st):
        snap = node._snap_records or {}
        live = {(r[0], r[1]) for r in st.records.values()}
        for k, (a, n, _) in snap.items():
            if (a, n) not in live:
                self.alloc.release(a, n)

    def _data_blocks(self, node, lay):
        if lay.layout_class == L.CONTIGUOUS and lay.address is not None:
            return [(lay.address, lay.size)]
        return []

    def _index_blocks(self, node, lay):
        """Blocks of a chunk index as the file had it (freed once a new one is committed)."""
        ctx = self.ctx
        try:
            if lay.index_type == L.BTREE1 and lay.address is not None:
                ks = B1.key_size(ctx, B1.CHUNK, len(node.chunks) + 1)
                size = B1.node_size(ctx, ks, self.superblock.indexed_storage_k or 32)
                return [(a, size) for a in B1.node_addresses(ctx, lay.address, B1.CHUNK,
                                                             len(node.chunks) + 1)]
        except Exception:
            return []
        return []

    # -- closing -------------------------------------------------------------------------------
    def close(self):
        if self.closed:
            return
        try:
            self.flush(durable=True)
            self._trim_end()
        finally:
            self.closed = True
            self.sink.close()

    def _trim_end(self):
        """Give free space at the end of the file back (libhdf5 2.0 truncates it at close):
        the end-of-file address first, then the file."""
        free = self.alloc.free
        if not free or free[-1][0] + free[-1][1] < self.alloc.eoa:
            return
        addr = free.pop()[0]
        self.alloc.eoa = addr
        self._write_eoa(addr)
        self.sink.sync()
        self.sink.shrink(self.absolute(addr))

    def abort(self):
        self.closed = True
        self.sink.close()
