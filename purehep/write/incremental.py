"""Incremental updates of existing index structures in modify mode.

A commit that adds a few names to a group or a few chunks to a dataset changes O(log n) nodes
of the structures that index them, not the whole structure. This module edits those nodes in
memory (each node read once per commit) and hands the session two kinds of writes:

* new blocks (split-off nodes, new symbol table nodes, a grown local heap data segment, new
  direct blocks, new data blocks ...) put into the commit's ``BlockMeta``: they are written to
  unused space and flushed before anything refers to them (step 1 of the commit);
* in-place patches of existing blocks, each one write of one whole structure (its checksum
  included), with an *order*: the session applies patches by increasing order and, for a
  durable commit, flushes between two different orders (step 3 of the commit). The orders
  used here are chosen so that every state between two patches is one h5py reads (see each
  editor's docstring); the ones of modify.py are 0 (rebuilt local heap headers), 1 (rebuilt
  v1 B-tree roots) and 2 (object headers, always last).

Freed blocks (the old data segment of a grown heap, copied-on-write v2 B-tree nodes ...) are
released to the session's allocator, which reuses them only after the commit has completed.
"""
import bisect
import struct

from ..format import btree1 as B1
from ..format import local_heap, symbol_table
from ..format.superblock import SymbolTableEntry

# patch orders (see the module docstring)
ORDER_HEAP_UNLINK = 0.1      # local heap header with an empty free list
ORDER_HEAP_DATA = 0.2        # bytes of the local heap data segment
ORDER_HEAP_HEADER = 0.3      # local heap header: final free list, size, data address
ORDER_V1_NODE = 1.0          # + (MAX_LEVEL - level) / 1000: v1 B-tree nodes, root first
ORDER_SNOD = 1.5             # symbol table nodes, after every B-tree node


def v1_order(level):
    return ORDER_V1_NODE + (B1.MAX_LEVEL - level) / 1000.0


# --- local heaps ----------------------------------------------------------------------------

class LocalHeapEditor:
    """Insert strings into an existing local heap (spec III.D), as libhdf5 does: first fit
    in the free list; a free block whose leftover would be smaller than a free-block header
    (2 lengths) is used whole; when nothing fits the data segment grows by
    max(needed, current size) (it at least doubles).

    Crash-safe order. In place (no growth): (0.1) the header's free list is emptied, (0.2) the
    changed bytes of the data segment (new strings, the moved free-block headers) are written,
    (0.3) the header gets the new free list. The string bytes overwrite the old free-block
    header, which libhdf5 validates when it loads a heap; with the free list emptied first
    every intermediate heap loads (a heap without a free list only hides its free space).
    Growth: the whole new data segment goes to new space, then one header patch (size,
    free list, address) switches to it; the old segment is freed after the commit."""

    def __init__(self, session, meta, address):
        ctx = self.ctx = session.ctx
        self.session, self.meta, self.address = session, meta, address
        h = local_heap.LocalHeap.decode(ctx, address)
        self.data_address, self.size = h.data_address, h.data_size
        self.orig_size = h.data_size
        self.data = bytearray(h.data)
        self.free = []
        sl = ctx.sizeof_lengths
        off, seen = h.free_list_offset, set()
        while off is not None and off != local_heap.FREE_NULL and off not in seen:
            seen.add(off)
            if off + 2 * sl > self.size:
                break
            nxt = int.from_bytes(self.data[off:off + sl], "little")
            size = int.from_bytes(self.data[off + sl:off + 2 * sl], "little")
            if size < 2 * sl or off + size > self.size:
                break
            self.free.append([off, size])
            off = None if nxt == local_heap.FREE_NULL else nxt
        self.old_free = [list(b) for b in self.free]
        self.grown = False
        self.lo, self.hi = None, None

    def string(self, offset):
        end = self.data.find(b"\0", offset)
        return bytes(self.data[offset:end if end >= 0 else len(self.data)])

    def _touch(self, a, b):
        self.lo = a if self.lo is None else min(self.lo, a)
        self.hi = b if self.hi is None else max(self.hi, b)

    def insert(self, raw):
        """Offset of ``raw`` + NUL (padded to 8 bytes) stored in the heap."""
        item = raw + b"\0"
        item += bytes((-len(item)) % 8)
        need = len(item)
        small = 2 * self.ctx.sizeof_lengths
        while True:
            last = None
            for i, (off, size) in enumerate(self.free):
                if size > need and size - need >= small:
                    self.free[i] = [off + need, size - need]
                    break
                if size == need:
                    del self.free[i]
                    break
                if last is None or self.free[last][0] < off:
                    last = i
            else:
                grow = max(need, self.size)
                if last is not None and sum(self.free[last]) == self.size:
                    self.free[last][1] += grow
                else:
                    self.free.append([self.size, grow])
                self.data.extend(bytes(grow))
                self.size += grow
                self.grown = True
                continue
            self.data[off:off + need] = item
            self._touch(off, off + need)
            return off

    def finish(self, patches):
        """Queue the heap's writes (see the class docstring)."""
        ctx, sl = self.ctx, self.ctx.sizeof_lengths
        if self.free == self.old_free and self.lo is None and not self.grown:
            return
        for i, (off, size) in enumerate(self.free):
            nxt = self.free[i + 1][0] if i + 1 < len(self.free) else local_heap.FREE_NULL
            self.data[off:off + 2 * sl] = ctx.pack_length(nxt) + ctx.pack_length(size)
            self._touch(off, off + 2 * sl)
        head = self.free[0][0] if self.free else None
        if self.grown:
            addr = self.meta.alloc(self.size)
            self.meta.put(addr, bytes(self.data))
            patches.append((ORDER_HEAP_HEADER, self.address,
                            local_heap.encode(ctx, self.size, addr, head)))
            self.session.alloc.release(self.data_address, self.orig_size)
            self.data_address = addr
            return
        patches.append((ORDER_HEAP_UNLINK, self.address,
                        local_heap.encode(ctx, self.size, self.data_address, None)))
        patches.append((ORDER_HEAP_DATA, self.data_address + self.lo,
                        bytes(self.data[self.lo:self.hi])))
        patches.append((ORDER_HEAP_HEADER, self.address,
                        local_heap.encode(ctx, self.size, self.data_address, head)))


# --- v1 B-trees -------------------------------------------------------------------------------

class V1Node:
    __slots__ = ("addr", "level", "keys", "children", "left", "right", "new", "dirty")

    def __init__(self, addr, level, keys, children, left, right, new):
        self.addr, self.level, self.keys, self.children = addr, level, keys, children
        self.left, self.right, self.new, self.dirty = left, right, new, new


class V1TreeEditor:
    """Insertions into an existing version 1 B-tree (spec III.A.1), node type 0 or 1.

    A node holds 2K children at most. A full node splits as libhdf5 splits it: the left part
    keeps ``int(2K * ratio)`` children, ratio 0.1 for the leftmost node of its level, 0.9 for
    the rightmost (or lone) node, 0.5 otherwise, adjusted so that the new child lands next to
    the one that split; the left part stays at the node's address and the right part is a new
    node, linked as right sibling (the old right sibling's left pointer is patched). The root
    never moves (symbol table messages and parents' scratch-pads cache its address): when it
    splits, both halves go to new nodes and the root, one level higher, points to them.

    Crash-safe order: new nodes are written first (commit step 1); existing nodes are patched
    top-down, root first, one level after the other (orders ``v1_order(level)``), and the
    leaves' children (symbol table nodes) after all of them. Between two patches a parent may
    already point to a new right node while the node that split still holds all its old
    entries: readers see some entries twice in an iteration, never a missing or unreadable
    one, since the old node's content is a superset of the left part and every new node is
    complete when the first pointer to it is written; a parent's key range is widened before
    the leaf holds the new key, so lookups of existing keys never fail."""

    def __init__(self, session, meta, root, node_type, key_bytes, k, ndims=None):
        self.ctx, self.session, self.meta = session.ctx, session, meta
        self.root, self.node_type, self.key_bytes, self.k = root, node_type, key_bytes, k
        self.ndims = ndims
        self.nodes = {}
        self.size = B1.node_size(self.ctx, key_bytes, k)

    def node(self, addr):
        n = self.nodes.get(addr)
        if n is None:
            d = B1.decode_node(self.ctx, addr, self.node_type, self.ndims)
            ks = self.key_bytes
            keys = [bytes(r[:ks]) for r in d.entries] + [bytes(d.last_key[:ks])]
            n = V1Node(addr, d.level, keys, d.children(self.ctx), d.left, d.right, False)
            self.nodes[addr] = n
        return n

    def new_node(self, level, keys, children, left=None, right=None):
        addr = self.meta.alloc(self.size)
        n = V1Node(addr, level, keys, children, left, right, True)
        self.nodes[addr] = n
        return n

    def descend(self, choose):
        """[(node, child index)] from the root to a level-0 node; ``choose(node)`` picks the
        child index (and may widen the node's keys)."""
        path, addr = [], self.root
        for _ in range(B1.MAX_LEVEL + 1):
            n = self.node(addr)
            if not n.children:
                return [(n, None)]
            i = choose(n)
            path.append((n, i))
            if n.level == 0:
                return path
            addr = n.children[i]
        raise ValueError("v1 B-tree deeper than its maximum level")

    def insert_after(self, path, d, sep, child):
        """Insert child ``child`` with left key ``sep`` right after child path[d][1] of node
        path[d][0], splitting full nodes up to the root."""
        node, idx = path[d]
        two_k = 2 * self.k
        node.dirty = True
        if len(node.children) < two_k:
            node.keys.insert(idx + 1, sep)
            node.children.insert(idx + 1, child)
            return
        ratio = 0.9 if node.right is None else 0.1 if node.left is None else 0.5
        nleft = int(two_k * ratio)
        if idx < nleft and nleft == two_k:
            nleft -= 1
        elif idx >= nleft and nleft == 0:
            nleft += 1
        keys, kids = node.keys, node.children
        if d == 0:                                   # the root: both halves move out
            left = self.new_node(node.level, keys[:nleft + 1], kids[:nleft])
            right = self.new_node(node.level, keys[nleft:], kids[nleft:], left=left.addr)
            left.right = right.addr
            target = left if idx < nleft else right
            j = idx if idx < nleft else idx - nleft
            target.keys.insert(j + 1, sep)
            target.children.insert(j + 1, child)
            node.level += 1
            node.keys = [left.keys[0], right.keys[0], right.keys[-1]]
            node.children = [left.addr, right.addr]
            return
        right = self.new_node(node.level, keys[nleft:], kids[nleft:], left=node.addr,
                              right=node.right)
        if node.right is not None:
            sib = self.node(node.right)
            sib.left = right.addr
            sib.dirty = True
        node.keys, node.children, node.right = keys[:nleft + 1], kids[:nleft], right.addr
        if idx < nleft:
            node.keys.insert(idx + 1, sep)
            node.children.insert(idx + 1, child)
        else:
            right.keys.insert(idx - nleft + 1, sep)
            right.children.insert(idx - nleft + 1, child)
        self.insert_after(path, d - 1, right.keys[0], right.addr)

    def encode(self, n):
        return B1.encode_node(self.ctx, self.node_type, n.level, n.keys, n.children, n.left,
                              n.right, self.key_bytes, self.k)

    def finish(self, patches):
        for n in self.nodes.values():
            if not n.dirty:
                continue
            if n.new:
                self.meta.put(n.addr, self.encode(n))
            else:
                patches.append((v1_order(n.level), n.addr, self.encode(n)))


# --- symbol-table groups ----------------------------------------------------------------------

class SymbolTableEditor:
    """Insert entries into an existing symbol-table group: the name into the local heap
    (``LocalHeapEditor``), the entry into the symbol table node (SNOD) that covers it, and,
    when that node is full (2K entries), a split as libhdf5 does it: the node keeps the first
    K entries, a new node takes the other K, the new entry goes to the side of its position,
    and the new node is inserted into the B-tree (``V1TreeEditor``) after the old one with the
    last name of the left part as separating key. A name beyond the tree's last key widens
    the right keys of the rightmost path first.

    Order of writes: new SNODs and B-tree nodes (step 1); heap patches (0.1-0.3); B-tree node
    patches top-down (1.0x); SNOD patches (1.5). Until the SNOD patch the new name is simply
    absent; after a split the old SNOD lists its moved entries (also in the new node) until
    its patch: an interrupted commit leaves duplicates in iteration, never a lost entry."""

    def __init__(self, session, meta, btree_address, heap_address):
        ctx = self.ctx = session.ctx
        sb = getattr(session, "superblock", None)
        self.leaf_k = getattr(sb, "group_leaf_k", 4) or 4
        internal_k = getattr(sb, "group_internal_k", 16) or 16
        self.meta = meta
        self.heap = LocalHeapEditor(session, meta, heap_address)
        self.tree = V1TreeEditor(session, meta, btree_address, B1.GROUP, ctx.sizeof_lengths,
                                 internal_k)
        self.snods = {}               # address -> [entries (raw bytes)], dirty set below
        self.snod_dirty = set()
        self.snod_new = set()
        self.esize = SymbolTableEntry.size(ctx)

    def key_name(self, key):
        return self.heap.string(int.from_bytes(key, "little"))

    def snod(self, addr):
        s = self.snods.get(addr)
        if s is None:
            raw = bytes(self.ctx.read(addr, 8, "symbol table node"))
            if raw[:4] != b"SNOD":
                raise ValueError(f"no symbol table node at {addr}")
            n = struct.unpack_from("<H", raw, 6)[0]
            body = bytes(self.ctx.read(addr + 8, n * self.esize, "symbol table node"))
            s = [body[i * self.esize:(i + 1) * self.esize] for i in range(n)]
            self.snods[addr] = s
        return s

    def entry_name(self, raw):
        return self.heap.string(int.from_bytes(raw[:self.ctx.sizeof_offsets], "little"))

    def new_snod(self, entries):
        addr = self.meta.alloc(symbol_table.node_size(self.ctx, self.leaf_k))
        self.snods[addr] = entries
        self.snod_new.add(addr)
        self.snod_dirty.add(addr)
        return addr

    def insert(self, name, make_entry):
        """Add member ``name`` (bytes); ``make_entry(name_offset, heap)`` returns the encoded
        symbol table entry (it may store more strings, a soft link's value, in ``heap``)."""
        ctx = self.ctx
        off = self.heap.insert(name)
        raw = make_entry(off, self.heap)
        keyb = ctx.pack_length(off)
        tree = self.tree

        def choose(n):
            names = [self.key_name(k) for k in n.keys[1:]]
            i = bisect.bisect_left(names, name)
            if i >= len(n.children):                 # beyond the last key: widen it
                n.keys[-1] = keyb
                n.dirty = True
                i = len(n.children) - 1
            return i

        path = tree.descend(choose)
        node, idx = path[-1]
        if idx is None:                              # an empty tree: its first node
            addr = self.new_snod([raw])
            node.keys = [node.keys[0], keyb]
            node.children = [addr]
            node.dirty = True
            return
        saddr = node.children[idx]
        entries = self.snod(saddr)
        pos = bisect.bisect_left([self.entry_name(e) for e in entries], name)
        self.snod_dirty.add(saddr)
        k = self.leaf_k
        if len(entries) < 2 * k:
            entries.insert(pos, raw)
            return
        left, right = entries[:k], entries[k:]
        if pos <= k:
            left.insert(pos, raw)
        else:
            right.insert(pos - k, raw)
        entries[:] = left
        new = self.new_snod(right)
        md = left[-1][:ctx.sizeof_offsets]
        tree.insert_after(path, len(path) - 1, ctx.pack_length(int.from_bytes(md, "little")),
                          new)

    def finish(self, patches):
        self.heap.finish(patches)
        self.tree.finish(patches)
        for addr in self.snod_dirty:
            data = symbol_table.encode_node(self.ctx, self.snods[addr], self.leaf_k)
            if addr in self.snod_new:
                self.meta.put(addr, data)
            else:
                patches.append((ORDER_SNOD, addr, data))


# --- v2 B-trees -------------------------------------------------------------------------------

ORDER_BT2_HEADER = 1.9       # the v2 B-tree header: the one write that switches trees


class V2Node:
    __slots__ = ("addr", "level", "records", "children", "new")

    def __init__(self, addr, level, records, children, new):
        self.addr, self.level, self.records, self.children, self.new = \
            addr, level, records, children, new


class V2TreeEditor:
    """Insert and replace records of an existing version 2 B-tree (spec III.A.2), copy on
    write.

    A v2 B-tree node does not store its record count: its parent (or the header, for the
    root) does, and the node's checksum sits right after its records, so a node and the count
    that describes it must change together. Every node on the path of a change is therefore
    written anew (new space, commit step 1; nodes already new in this commit are edited in
    memory) and the header, at its fixed address, is patched last in one write (root
    address, root record count, depth, total): before that write readers see the old tree
    whole, after it the new one. The old path's nodes are freed once the commit is done.
    Cost: O(depth) nodes of ``node_size`` bytes per commit.

    Inserts split a full node on the way down (its middle record moves up; a full root makes
    the tree one level deeper), as libhdf5 splits; libhdf5 first tries to move records to a
    sibling with room, which this editor does not (nodes of sequential inserts end half
    full rather than full)."""

    def __init__(self, session, meta, address, key):
        from ..format import btree2
        ctx = self.ctx = session.ctx
        self.session, self.meta, self.address, self.key = session, meta, address, key
        t = self.tree = btree2.BTree2.decode(ctx, address)
        self.btype, self.node_size, self.rs = t.type, t.node_size, t.record_size
        self.depth, self.total = t.depth, t.total_records
        self.version = getattr(t, "version", 0)
        self.root = None
        if t.root_address is not None:
            self.root = self._load(t.root_address, t.root_nrecords, t.depth)
        self._limits(self.depth)

    def _limits(self, depth):
        from ..format import btree2
        self.info, self.nrec_size = btree2._node_limits(self.ctx, self.node_size, self.rs,
                                                         depth)

    def _load(self, addr, nrec, level):
        raw, children, _ = self.tree._read_node(addr, nrec, level)
        rs = self.rs
        recs = [bytes(raw[i * rs:(i + 1) * rs]) for i in range(nrec)]
        kids = [[a, n, t] for a, n, t in children] if level else None
        return V2Node(addr, level, recs, kids, False)

    def _own(self, node):
        """The node made writable: moved to new space unless new in this commit."""
        if not node.new:
            self.session.alloc.release(node.addr, self.node_size)
            node.addr = self.meta.alloc(self.node_size)
            node.new = True
        return node

    def _child(self, node, i):
        c = node.children[i]
        if not isinstance(c[0], V2Node):
            c[0] = self._load(c[0], c[1], node.level - 1)
        return c[0]

    def _total(self, node):
        if node.children is None:
            return len(node.records)
        return len(node.records) + sum(
            self._total(c[0]) if isinstance(c[0], V2Node) else c[2] for c in node.children)

    def _full(self, node):
        return len(node.records) >= self.info[node.level].max_nrec

    def _split_child(self, parent, i):
        child = self._own(self._child(parent, i))
        n = len(child.records)
        nl = (n - 1) // 2
        right = V2Node(self.meta.alloc(self.node_size), child.level, child.records[nl + 1:],
                       child.children[nl + 1:] if child.children is not None else None, True)
        mid = child.records[nl]
        child.records = child.records[:nl]
        if child.children is not None:
            child.children = child.children[:nl + 1]
        parent.records.insert(i, mid)
        parent.children.insert(i + 1, [right, 0, 0])

    def _bisect(self, node, k):
        keys = [self.key(r) for r in node.records]
        return bisect.bisect_left(keys, k), keys

    def insert(self, rec):
        k = self.key(rec)
        if self.root is None:
            self.root = V2Node(self.meta.alloc(self.node_size), 0, [rec], None, True)
            self.total += 1
            return
        if self._full(self.root):
            self.depth += 1
            self._limits(self.depth)
            old = self.root
            self.root = V2Node(self.meta.alloc(self.node_size), self.depth, [],
                               [[old, 0, 0]], True)
            self._split_child(self.root, 0)
        node = self._own(self.root)
        while node.level > 0:
            i, _ = self._bisect(node, k)
            if self._full(self._child(node, i)):
                self._split_child(node, i)
                i, _ = self._bisect(node, k)
            node = self._own(self._child(node, i))
        i, _ = self._bisect(node, k)
        node.records.insert(i, rec)
        self.total += 1

    def replace(self, rec):
        """Replace the record whose key equals ``rec``'s; False if there is none."""
        k = self.key(rec)
        node = self.root
        path = []
        while node is not None:
            i, keys = self._bisect(node, k)
            path.append(node)
            if i < len(keys) and keys[i] == k:
                for n in path:
                    self._own(n)
                node.records[i] = rec
                return True
            if node.children is None:
                return False
            node = self._child(node, i)
        return False

    def _encode(self, node):
        ctx = self.ctx
        if node.children is None:
            body = b"BTLF" + bytes((0, self.btype)) + b"".join(node.records)
        else:
            body = b"BTIN" + bytes((0, self.btype)) + b"".join(node.records)
            for c in node.children:
                sub = c[0]
                addr = sub.addr if isinstance(sub, V2Node) else sub
                nrec = len(sub.records) if isinstance(sub, V2Node) else c[1]
                tot = self._total(sub) if isinstance(sub, V2Node) else c[2]
                body += ctx.pack_address(addr) + nrec.to_bytes(self.nrec_size, "little")
                if node.level > 1:
                    body += tot.to_bytes(self.info[node.level - 1].cum_max_nrec_size, "little")
        body += struct.pack("<I", _lookup3(body))
        if len(body) > self.node_size:
            raise AssertionError("v2 B-tree node overflow")
        return body + bytes(self.node_size - len(body))

    def finish(self, patches):
        from ..format import btree2
        stack = [self.root] if self.root is not None else []
        while stack:
            n = stack.pop()
            if not n.new:
                continue
            self.meta.put(n.addr, self._encode(n))
            if n.children is not None:
                stack.extend(c[0] for c in n.children if isinstance(c[0], V2Node))
        t = self.tree
        hdr = btree2.encode_header(self.ctx, self.btype, self.node_size, self.rs, self.depth,
                                   t.split_percent, t.merge_percent,
                                   self.root.addr if self.root else None,
                                   len(self.root.records) if self.root else 0, self.total,
                                   self.version)
        patches.append((ORDER_BT2_HEADER, self.address, hdr))


def _lookup3(data):
    from ..format import checksum
    return checksum.lookup3(bytes(data))


# --- extensible arrays ------------------------------------------------------------------------

ORDER_EA_DATA = 1.6          # existing data blocks (elements)
ORDER_EA_SUPER = 1.7         # existing secondary blocks (pointers to new data blocks)
ORDER_EA_INDEX = 1.8         # the index block (elements, pointers to new blocks)
ORDER_EA_HEADER = 1.9        # the header: max index set and statistics, last


class Unsupported(Exception):
    """A case an editor does not handle: the caller rebuilds the structure instead."""


class EAEditor:
    """Set elements of an existing extensible array (spec VII.D): elements of the index
    block, of existing data blocks, and of new data blocks and secondary blocks as the array
    grows (the header's statistics follow). Data blocks large enough to be paged are not
    edited (``Unsupported``: the caller rebuilds the index).

    Crash-safe order: new data and secondary blocks first (commit step 1, complete, their
    elements included); then existing blocks bottom-up, each one write with its checksum:
    data blocks (1.6), secondary blocks (1.7), the index block (1.8), and the header (1.9)
    last. libhdf5 returns the fill value for every index at or past the header's "max index
    set", so elements past the old end stay invisible until the header write, and an
    element changed below it (a chunk rewritten elsewhere) switches in one write."""

    def __init__(self, session, meta, address, fill):
        from ..format import extensible_array as EA
        ctx = self.ctx = session.ctx
        self.EA, self.meta, self.address, self.fill = EA, meta, address, fill
        h = self.hdr = EA.ExtensibleArrayHeader.decode(ctx, address)
        self.es = h.element_size
        self.n_super, self.n_dblk, self.n_sblk, self.isize = h.index_block_layout(ctx)
        self.sblocks = h.super_blocks()
        if h.index_block_address is None:
            raise Unsupported("extensible array without an index block")
        self.ib = bytearray(ctx.read(h.index_block_address, self.isize,
                                     "extensible array index block"))
        self.ib_dirty = False
        self.blocks = {}        # address -> [bytearray, new, dirty, order]
        self.stats = dict(nsuper=h.nsuper, super_size=h.super_size, ndata=h.ndata,
                          data_size=h.data_size, max_index_set=h.max_index_set,
                          nelements=h.nelements)
        self.prefix = bytes((h.version, h.client_id)) + ctx.pack_address(address)

    def _addr_at(self, buf, pos):
        so = self.ctx.sizeof_offsets
        v = int.from_bytes(buf[pos:pos + so], "little")
        return None if v == self.ctx.undefined else v

    def _block(self, addr, size, order):
        b = self.blocks.get(addr)
        if b is None:
            b = self.blocks[addr] = [bytearray(self.ctx.read(addr, size, "extensible array")),
                                     False, False, order]
        return b

    def _new_block(self, data, order):
        addr = self.meta.alloc(len(data))
        self.blocks[addr] = [bytearray(data), True, True, order]
        return addr

    def _new_data_block(self, start, ne):
        h = self.hdr
        head = b"EADB" + self.prefix + start.to_bytes(h.block_offset_size, "little")
        data = head + self.fill * ne + bytes(4)
        self.stats["ndata"] += 1
        self.stats["data_size"] += len(data)
        self.stats["nelements"] += ne
        return self._new_block(data, ORDER_EA_DATA)

    def set(self, i, element):
        ctx, h, so, es = self.ctx, self.hdr, self.ctx.sizeof_offsets, self.es
        if len(element) != es:
            raise ValueError("element size")
        self.stats["max_index_set"] = max(self.stats["max_index_set"], i + 1)
        if i < h.index_elements:
            pos = 6 + so + i * es
            self.ib[pos:pos + es] = element
            self.ib_dirty = True
            return
        j = i - h.index_elements
        d = 0
        for s, (nd, ne, start) in enumerate(self.sblocks):
            if j < start + nd * ne:
                break
            if s < self.n_super:
                d += nd
        else:
            raise Unsupported("element index beyond the array's maximum")
        db = (j - start) // ne
        k = (j - start) % ne
        prefix, npages, head, total = h.data_block_layout(ctx, ne)
        if npages:
            raise Unsupported("paged extensible array data blocks")
        if s < self.n_super:
            pos = 6 + so + h.index_elements * es + (d + db) * so
            daddr = self._addr_at(self.ib, pos)
            if daddr is None:
                daddr = self._new_data_block(start + db * ne, ne)
                self.ib[pos:pos + so] = ctx.pack_address(daddr)
                self.ib_dirty = True
        else:
            pos = 6 + so + h.index_elements * es + self.n_dblk * so + (s - self.n_super) * so
            saddr = self._addr_at(self.ib, pos)
            _, bm, ssize = h.secondary_block_layout(ctx, nd, ne)
            if saddr is None:
                body = (b"EASB" + self.prefix + start.to_bytes(h.block_offset_size, "little")
                        + bytes(bm) + ctx.pack_address(None) * nd + bytes(4))
                saddr = self._new_block(body, ORDER_EA_SUPER)
                self.stats["nsuper"] += 1
                self.stats["super_size"] += len(body)
                self.ib[pos:pos + so] = ctx.pack_address(saddr)
                self.ib_dirty = True
            sb = self._block(saddr, ssize, ORDER_EA_SUPER)
            spos = 6 + so + h.block_offset_size + bm + db * so
            daddr = self._addr_at(sb[0], spos)
            if daddr is None:
                daddr = self._new_data_block(start + db * ne, ne)
                sb[0][spos:spos + so] = ctx.pack_address(daddr)
                sb[2] = True
        blk = self._block(daddr, head + 4, ORDER_EA_DATA)
        blk[0][prefix + k * es:prefix + (k + 1) * es] = element
        blk[2] = True

    def finish(self, patches):
        from ..format import checksum
        ctx = self.ctx

        def seal(buf):
            buf[-4:] = struct.pack("<I", checksum.lookup3(bytes(buf[:-4])))
            return bytes(buf)

        for addr, (buf, new, dirty, order) in self.blocks.items():
            if not dirty:
                continue
            if new:
                self.meta.put(addr, seal(buf))
            else:
                patches.append((order, addr, seal(buf)))
        if self.ib_dirty:
            patches.append((ORDER_EA_INDEX, self.hdr.index_block_address, seal(self.ib)))
        from dataclasses import replace
        h = replace(self.hdr, **self.stats)
        if h != self.hdr:
            patches.append((ORDER_EA_HEADER, self.address, h.encode(ctx)))


# --- v1 B-tree chunk indexes ------------------------------------------------------------------

class ChunkBTreeEditor:
    """Chunks added to or moved in a version 1 B-tree chunk index (node type 1, layout
    version 3), through ``V1TreeEditor`` (splits, root kept in place, top-down patches).

    Keys are (chunk size, filter mask, element offsets + a trailing 0); child i of a node
    covers the offsets from key i (included) to key i+1 (excluded), compared dimension by
    dimension as libhdf5 compares them. A moved chunk replaces its key and address in its
    leaf (one write). A new chunk goes after the child whose range holds it; past the last
    key (appends) the right keys of the rightmost path become the new chunk's offsets plus
    one chunk, as libhdf5 sets them. A chunk sorting before the first key raises
    ``Unsupported`` (the caller rebuilds)."""

    def __init__(self, session, meta, root, rank, chunks):
        sb = getattr(session, "superblock", None)
        k = getattr(sb, "indexed_storage_k", None) or 32
        self.rank, self.chunks = rank, tuple(chunks)
        self.kb = 8 + 8 * (rank + 1)
        self.tree = V1TreeEditor(session, meta, root, B1.CHUNK, self.kb, k, rank + 1)

    def _offsets(self, key):
        return struct.unpack_from(f"<{self.rank}Q", key, 8)

    def _key(self, size, mask, offsets):
        return struct.pack(f"<II{self.rank + 1}Q", size, mask, *offsets, 0)

    def put(self, scaled, addr, size, mask):
        x = tuple(s * c for s, c in zip(scaled, self.chunks))
        end = self._key(0, 0, [o + c for o, c in zip(x, self.chunks)])
        key = self._key(size, mask, x)
        tree = self.tree

        def choose(n):
            offs = [self._offsets(k) for k in n.keys]
            if x < offs[0]:
                raise Unsupported("a chunk before the index's first key")
            i = bisect.bisect_right(offs[:len(n.children)], x) - 1
            if x >= offs[-1]:
                n.keys[-1] = end
                n.dirty = True
            return i

        root = tree.node(tree.root)
        if not root.children:
            root.keys = [key, end]
            root.children = [addr]
            root.dirty = True
            return
        path = tree.descend(choose)
        leaf, i = path[-1]
        if self._offsets(leaf.keys[i]) == x:
            leaf.keys[i] = key
            leaf.children[i] = addr
            leaf.dirty = True
            return
        tree.insert_after(path, len(path) - 1, key, addr)

    def finish(self, patches):
        self.tree.finish(patches)
