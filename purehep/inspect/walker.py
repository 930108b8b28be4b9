"""The byte map: walk every structure reachable from the superblock and record its extent.

Built on the ``purehep.format`` decoders (run with checksum verification off: checksums are a
rule of the checker, computed over the extents recorded here). Where a decoder does not
expose the size of what it decoded, the size is computed here from the spec's layouts. What
the walker cannot decode becomes a ``Finding``; the walk goes on with the rest of the file.

Facts the checker needs (B-tree keys, heap free lists, chunk tables, counts) are collected in
``FileMap.facts``, keyed by rule family.
"""
import struct
from collections import defaultdict

from ..errors import (ChecksumError, FormatError, PurehepError, TruncatedError,
                      UnsupportedFeatureError)
from ..format import btree1, messages
from ..format.context import Context, Cursor
from ..format.object_header import ObjectHeader, RawMessage
from ..format.superblock import SIGNATURE, Superblock, SymbolTableEntry
from .structure import FREE, MESSAGE_SECTIONS, USERBLOCK, Finding, Structure, section_of
from .walk_heaps import HeapWalks
from .walk_storage import StorageWalks

MAX_STRUCTURES = 1 << 24


class FileMap:
    """The result of a walk: top-level structures in file order, findings, notes, facts."""

    def __init__(self, size, structures, findings, notes, facts, superblock, path=None,
                 ctx=None, source=None):
        self.ctx = ctx
        self.source = source
        self.size = size
        self.structures = structures
        self.findings = findings
        self.notes = notes
        self.facts = facts
        self.superblock = superblock
        self.path = path

    def read(self, offset, n):
        return bytes(self.source.read(offset, n, "inspected bytes"))

    def at(self, offset):
        """The chain of structures (outermost first) covering file offset ``offset``."""
        for top in self.structures:
            if top.offset <= offset < top.end:
                chain = [top]
                node = top
                while True:
                    inner = [c for c in node.children if c.offset <= offset < c.end]
                    if not inner:
                        return chain
                    node = inner[0]
                    chain.append(node)
        return []


def classify(exc):
    """The rule a decoder's exception breaks."""
    msg = getattr(exc, "reason", None) or str(exc)
    low = msg.lower()
    if isinstance(exc, ChecksumError):
        return "checksum"
    if isinstance(exc, TruncatedError) or "past the end" in low or "past eof" in low:
        return "within file"
    if "signature" in low:
        return "signature"
    if "version" in low:
        return "version"
    if "cycle" in low or "twice" in low:
        return "no cycles"
    if "records" in low or "count" in low:
        return "counts"
    return "well-formed"


class Walker(HeapWalks, StorageWalks):
    def __init__(self, source, progress=None):
        self.src = source
        self.size = source.size
        self.top = []
        self.findings = []
        self.notes = []
        self.facts = defaultdict(list)
        self.headers = {}           # relative address -> Structure
        self.seen = set()           # (kind, relative address) of walked structures
        self.pending = []           # (relative header address, path)
        self.progress = progress
        self.ctx = None
        self.sb = None
        self.k_group = 16
        self.k_chunk = 32
        self.cache_image = False

    # --- helpers ------------------------------------------------------------------------------
    def finding(self, structure, offset, rule, message, section=None):
        self.findings.append(Finding(structure, offset, rule,
                                     section if section is not None else section_of(structure),
                                     message))

    def failed(self, exc, structure, offset):
        """Record a decoder's exception as a finding (or a note for unsupported features)."""
        if isinstance(exc, UnsupportedFeatureError):
            self.notes.append(f"{structure} at offset {offset}: {exc}")
            return
        if isinstance(exc, PurehepError):
            name = getattr(exc, "structure", None) or structure
            where = getattr(exc, "offset", None)
            self.finding(name, where if where is not None else offset, classify(exc),
                         getattr(exc, "reason", str(exc)))
            return
        self.finding(structure, offset, "well-formed",
                     f"the decoder failed ({type(exc).__name__}: {exc})")

    def guard(self, structure, offset, fn, *args):
        try:
            return fn(*args)
        except RecursionError:
            self.failed(FormatError("structures nest too deeply"), structure, offset)
        except Exception as exc:  # noqa: BLE001 - every failure of a walk is a finding
            self.failed(exc, structure, offset)
        return None

    def abs(self, addr):
        return self.ctx.absolute(addr)

    def add(self, s):
        if len(self.top) >= MAX_STRUCTURES:
            raise FormatError("too many structures", s.name, s.offset)
        self.top.append(s)
        if s.end > self.size:
            self.finding(s.name, s.offset, "within file",
                         f"{s.size} bytes at offset {s.offset} extend past the end of the file "
                         f"({self.size} bytes)")
        if self.progress is not None:
            self.progress(len(self.top))
        return s

    def first_time(self, kind, addr):
        key = (kind, addr)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def in_file(self, structure, addr, n, owner=""):
        """True if ``n`` bytes at relative ``addr`` lie in the file; a finding otherwise."""
        if addr is None:
            return False
        start = self.abs(addr)
        if addr < 0 or start + n > self.size:
            self.finding(structure, start, "within file",
                         f"{n} bytes at address {addr} lie past the end of the file "
                         f"({self.size} bytes)" + (f" (referenced by {owner})" if owner else ""))
            return False
        return True

    # --- level 0 ------------------------------------------------------------------------------
    def run(self):
        sb = self.superblock()
        if sb is None:
            raise FormatError("no readable superblock", "superblock", 0)
        self.pending.append((sb.root_address, "/"))
        if sb.root_entry is not None and sb.root_entry.cache_type == 1:
            self.facts["root_cache"].append((sb.root_entry, sb.offset))
        while self.pending:
            addr, path = self.pending.pop(0)
            self.guard("object header", self.abs(addr) if addr is not None else None,
                       self.object_header, addr, path)
        self.scan_global_heaps()
        self.top.sort(key=lambda s: (s.offset, -s.size))
        return FileMap(self.size, self.top, self.findings, self.notes, self.facts, sb,
                       getattr(self.src, "path", None), self.ctx, self.src)

    def superblock(self):
        src = self.src
        offset = 0
        while offset + 8 <= src.size:
            if bytes(src.read(offset, 8, "format signature")) == SIGNATURE:
                break
            offset = 512 if offset == 0 else offset * 2
        else:
            raise FormatError("no HDF5 format signature found (not an HDF5 file?)", "superblock", 0)
        try:
            sb = Superblock.decode(src, offset)
        except ChecksumError as exc:
            self.failed(exc, "superblock", offset)
            sb = self._superblock_unchecked(offset)
        self.sb = sb
        self.ctx = ctx = sb.context(src, verify_checksums=False)
        self.k_group, self.k_chunk = sb.group_internal_k, sb.indexed_storage_k
        so = sb.sizeof_offsets
        if offset:
            self.add(Structure("user block", 0, offset, kind=USERBLOCK))
        if sb.version >= 2:
            size = 12 + 4 * so + 4
            fields = {"sizeof_offsets": so, "sizeof_lengths": sb.sizeof_lengths,
                      "flags": sb.flags, "base_address": sb.base_address,
                      "superblock_extension_address": sb.extension_address,
                      "end_of_file_address": sb.eof_address,
                      "root_object_header_address": sb.root_address}
            chk = (offset, offset + size - 4, offset + size - 4, False)
        else:
            size = (24 if sb.version == 0 else 28) + 4 * so + SymbolTableEntry.size(ctx)
            fields = {"sizeof_offsets": so, "sizeof_lengths": sb.sizeof_lengths,
                      "group_leaf_k": sb.group_leaf_k, "group_internal_k": sb.group_internal_k,
                      "indexed_storage_k": sb.indexed_storage_k, "flags": sb.flags,
                      "base_address": sb.base_address,
                      "free_space_info_address": sb.free_space_address,
                      "end_of_file_address": sb.eof_address,
                      "driver_info_address": sb.driver_info_address,
                      "root_object_header_address": sb.root_address}
            chk = None
        s = self.add(Structure("superblock", offset, size, sb.version, fields, checksum=chk))
        if sb.root_entry is not None:
            e = sb.root_entry
            s.children.append(Structure("symbol table entry", offset + size - SymbolTableEntry.size(ctx),
                                        SymbolTableEntry.size(ctx), fields={
                                            "object_header_address": e.header_address,
                                            "cache_type": e.cache_type,
                                            "btree_address": e.btree_address,
                                            "heap_address": e.heap_address}))
        eof = sb.eof_address      # libhdf5 compares it with the whole file, user block included
        if eof > self.size:
            self.finding("superblock", offset, "within file",
                         f"the end-of-file address {sb.eof_address} lies past the end of the file "
                         f"({self.size} bytes): truncated file?")
        elif eof < self.size:
            self.add(Structure("bytes past the end-of-file address", eof, self.size - eof,
                               kind=FREE, fields={"end_of_file_address": sb.eof_address}))
        if sb.driver_info_address is not None:
            self.guard("driver info block", self.abs(sb.driver_info_address), self.driver_info,
                       sb.driver_info_address)
        if sb.extension_address is not None:
            self.guard("superblock extension", self.abs(sb.extension_address),
                       self.object_header, sb.extension_address, "(superblock extension)", True)
        return sb

    def _superblock_unchecked(self, offset):
        """Fields of a version 2/3 superblock whose checksum failed (spec II.A)."""
        head = self.src.read(offset, min(self.src.size - offset, 64), "superblock")
        cur = Cursor(head, offset, "superblock")
        cur.skip(8)
        version = cur.u8()
        so, sl, flags = cur.u8(), cur.u8(), cur.u8()
        cur.ctx = Context(self.src, so, sl)
        base, ext, eof, root = cur.address(), cur.address(), cur.address(), cur.address()
        return Superblock(offset, version, so, sl, flags, base or offset, eof or 0, root, ext)

    def driver_info(self, addr):
        cur = self.ctx.cursor(addr, 16, "driver info block")
        version = cur.u8()
        cur.skip(3)
        size = cur.u32()
        driver = bytes(cur.bytes(8))
        self.in_file("driver info block", addr, 16 + size)
        self.add(Structure("driver info block", self.abs(addr), 16 + size, version,
                           {"driver": driver, "information_size": size}))

    # --- level 2: object headers ----------------------------------------------------------------
    def object_header(self, addr, path, extension=False):
        ctx = self.ctx
        if addr is None:
            return
        if addr in self.headers:
            self.headers[addr].fields.setdefault("also", []).append(path)
            return
        if not self.in_file("object header", addr, 16, path):
            return
        oh = ObjectHeader.decode(ctx, addr)
        name = "superblock extension" if extension else "object header"
        blocks = self._header_blocks(oh, addr)
        first_off, first_size, first_over = blocks[0]
        top = Structure(name, first_off, first_size, oh.version, owner=path,
                        section="II.C" if extension else ("IV.A.1.a" if oh.version == 1 else "IV.A.1.b"))
        self.headers[addr] = top
        fields = {"path": path, "messages": len(oh.messages), "reference_count": oh.refcount}
        if oh.version == 1:
            declared = struct.unpack_from("<H", bytes(ctx.read(addr, 4, "object header")), 2)[0]
            fields["declared_messages"] = declared
        else:
            fields["flags"] = oh.flags
            if oh.times:
                fields["times"] = oh.times
            if oh.attr_phase_change:
                fields["attribute_phase_change"] = oh.attr_phase_change
        top.fields = fields
        structs = [top]
        overheads = [first_over]
        for boff, bsize, over in blocks[1:]:
            overheads.append(over)
            blk = Structure("object header continuation block", boff, bsize, oh.version,
                            {"of": path}, owner=path)
            if oh.version == 2:
                blk.checksum = (boff, boff + bsize - 4, boff + bsize - 4, False)
            structs.append(blk)
        if oh.version == 2:
            top.checksum = (first_off, first_off + first_size - 4, first_off + first_size - 4, False)
        hsize = 8 if oh.version == 1 else (6 if oh.flags & 0x04 else 4)
        decoded = {}
        for raw in oh.messages:
            mstart = raw.offset - hsize
            holder = next((b for b in structs if b.offset <= mstart < b.end), top)
            mname = messages.name(raw.type)
            child = Structure(f"{mname} message", mstart, hsize + len(raw.data), None,
                              {"type": raw.type, "flags": raw.flags},
                              section=MESSAGE_SECTIONS.get(raw.type, "IV.A.2"))
            if raw.creation_order is not None:
                child.fields["creation_order"] = raw.creation_order
            if raw.type == 0x00:
                child.unused = child.size
                holder.unused += child.size
            holder.children.append(child)
            if raw.type in (0x00, 0x09):
                continue
            value = self.guard(f"{mname} message", raw.offset, self._message, raw, extension)
            if value is None:
                continue
            if raw.shared:
                child.fields["shared"] = True
                self.guard(f"shared {mname} message", raw.offset, self._shared_target, raw, path)
            decoded.setdefault(raw.type, []).append(value)
            _describe(child, value)
        for blk, over in zip(structs, overheads):
            gap = blk.size - over - sum(c.size for c in blk.children)
            if gap > 0:
                blk.unused += gap
                blk.fields["gap"] = gap
            self.add(blk)
        self.facts["ohdr"].append((oh, structs, path, decoded))
        self._follow(oh, decoded, path, top)

    def _message(self, raw, extension):
        ctx = self.ctx
        if extension and raw.type == 0x18:
            # in a superblock extension, type 0x18 is libhdf5's metadata cache image message
            cur = Cursor(raw.data, raw.offset, "metadata cache image message", ctx)
            cur.u8()
            addr, length = cur.address(), cur.length()
            if addr is not None and self.in_file("metadata cache image", addr, length):
                self.add(Structure("metadata cache image", self.abs(addr), length,
                                   section="IV.A.2"))
            self.notes.append("the file holds a metadata cache image: structures in the image "
                              "may be stale or missing at their own addresses")
            self.cache_image = True
            return None
        try:
            return messages.decode(ctx, raw)
        except TruncatedError:
            if raw.type != 0x08 or not raw.data or raw.data[0] > 2:
                raise
            # libhdf5 before 1.8 wrote chunked layouts v1/v2 without the Dataset Element Size
            padded = RawMessage(raw.type, raw.flags, memoryview(bytes(raw.data) + bytes(4)),
                                raw.offset, raw.creation_order)
            value = messages.decode(ctx, padded)
            self.notes.append(f"data layout message at offset {raw.offset}: version "
                              f"{raw.data[0]} chunked layout without the Dataset Element Size "
                              "field (spec IV.A.2.i); libhdf5 accepts it")
            return value

    def _header_blocks(self, oh, addr):
        """[(absolute offset, size)] of the header's first chunk and continuation blocks."""
        ctx = self.ctx
        if oh.version == 1:
            size = struct.unpack_from("<I", bytes(ctx.read(addr, 16, "object header")), 8)[0]
            blocks = [(self.abs(addr), 16 + size, 16)]
        else:
            flags = oh.flags
            prefix = 6 + (16 if flags & 0x20 else 0) + (4 if flags & 0x10 else 0)
            width = 1 << (flags & 0x03)
            head = bytes(ctx.read(addr, prefix + width, "object header"))
            size = int.from_bytes(head[prefix:prefix + width], "little")
            blocks = [(self.abs(addr), prefix + width + size + 4, prefix + width + 4)]
        for raw in oh.messages:
            if raw.type == 0x10:
                cur = Cursor(raw.data, raw.offset, "continuation message", ctx)
                caddr, clen = cur.address(), cur.length()
                if caddr is not None:
                    blocks.append((self.abs(caddr), clen, 8 if oh.version == 2 else 0))
        return blocks

    def _shared_target(self, raw, path):
        where, loc = messages.shared_location(self.ctx, raw)
        if where == "header":
            self.pending.append((loc, f"(committed {messages.name(raw.type)} of {path})"))

    def _child(self, path, name):
        return (path.rstrip("/") + "/" + name) if not path.startswith("(") else f"{path}/{name}"

    def _follow(self, oh, d, path, top):
        """Walk the structures the header's messages point to."""
        for stab in d.get(0x11, []):
            self.guard("symbol table message", top.offset, self.symbol_table_group, stab, path)
        for link in d.get(0x06, []):
            self._link(link, path)
        for info in d.get(0x02, []):
            self.guard("link info message", top.offset, self.dense, info, path, "links", d)
        for info in d.get(0x15, []):
            self.guard("attribute info message", top.offset, self.dense, info, path, "attributes", d)
        for ext in d.get(0x07, []):
            self.guard("external data files message", top.offset, self.local_heap,
                       ext.heap_address, f"external file names of {path}")
        for tm in d.get(0x0F, []):
            self.guard("shared object header message table", None, self.sohm, tm)
        for k in d.get(0x13, []):
            self.k_group, self.k_chunk = k.group_internal_k, k.indexed_storage_internal_k
        for fsi in d.get(0x17, []):
            n = len(self.findings)
            self.guard("file space info message", top.offset, self.file_space_info, fsi)
            # the message's layout is only partly pinned down by the spec (paged aggregation
            # files of libhdf5 1.10 do not parse as version 1): what it leads to is a note
            for f in self.findings[n:]:
                self.notes.append(f"free-space managers of the file space info message not "
                                  f"walked: {f}")
            del self.findings[n:]
        if 0x08 in d:
            self.guard("data layout message", top.offset, self.dataset, d, path, top)
        self.facts["counts"].append((oh, d, path, top))

    def _link(self, link, path):
        if link.type == 0 and link.address is not None:
            self.pending.append((link.address, self._child(path, link.name)))

    # --- groups: symbol tables (III.A.1 type 0, III.B, III.D) -------------------------------------
    def symbol_table_group(self, stab, path):
        heap = self.local_heap(stab.heap_address, f"link names of {path}")
        if not self.first_time("stab", stab.btree_address):
            return
        snods = self.btree1(stab.btree_address, btree1.GROUP, None, path, heap)
        for snod in snods:
            self.guard("symbol table node", self.abs(snod), self.symbol_node, snod, heap, path)

    def symbol_node(self, addr, heap, path):
        from ..format.symbol_table import decode_node
        ctx = self.ctx
        if not self.first_time("snod", addr):
            self.finding("symbol table node", self.abs(addr), "no cycles",
                         "symbol table node referenced twice")
            return
        esize = SymbolTableEntry.size(ctx)
        cap = 2 * self.sb.group_leaf_k
        size = 8 + cap * esize
        entries = decode_node(ctx, addr)
        s = self.add(Structure("symbol table node", self.abs(addr), size, 1,
                               {"symbols": len(entries), "capacity": cap}, owner=path,
                               unused=max(cap - len(entries), 0) * esize))
        names = []
        for i, e in enumerate(entries):
            name = heap.string(e.name_offset, ctx) if heap is not None else b"?"
            names.append(name)
            s.children.append(Structure("symbol table entry", s.offset + 8 + i * esize, esize,
                                        fields={"name": name, "object_header_address":
                                                e.header_address, "cache_type": e.cache_type}))
            if e.cache_type == 2:
                continue
            child = self._child(path, name.decode("utf-8", "surrogateescape"))
            self.pending.append((e.header_address, child))
            if e.cache_type == 1:
                self.facts["stab_cache"].append((e, child, s.offset + 8 + i * esize))
        self.facts["snod"].append((s, names, cap))

    def local_heap(self, addr, owner):
        from ..format.local_heap import LocalHeap
        ctx = self.ctx
        if addr is None:
            return None
        key = ("lheap", addr)
        if key in self.seen:
            return ctx.cache.get(("heap-inspect", addr))
        self.seen.add(key)
        sl = ctx.sizeof_lengths
        hsize = 8 + 2 * sl + ctx.sizeof_offsets
        if not self.in_file("local heap", addr, hsize, owner):
            return None
        heap = LocalHeap.decode(ctx, addr)
        ctx.cache[("heap-inspect", addr)] = heap
        free = _local_heap_free_list(heap, sl)
        unused = sum(n for _o, n in free if n > 0)
        self.add(Structure("local heap", self.abs(addr), hsize, 0,
                           {"data_segment_size": heap.data_size,
                            "free_list_offset": heap.free_list_offset,
                            "data_segment_address": heap.data_address}, owner=owner))
        seg = Structure("local heap data segment", self.abs(heap.data_address), heap.data_size,
                        owner=owner, unused=unused, fields={"free_blocks": len(free)})
        for off, n in free:
            if n > 0 and 0 <= off and off + n <= heap.data_size:
                seg.children.append(Structure("local heap free block", seg.offset + off, n,
                                              fields={"heap_offset": off}))
        self.add(seg)
        self.facts["lheap"].append((heap, seg, free))
        return heap

    def btree1(self, root, node_type, ndims, owner, heap=None):
        """Walk a v1 B-tree (III.A.1); return its leaves' child addresses in key order."""
        ctx = self.ctx
        so = ctx.sizeof_offsets
        ks = btree1.key_size(ctx, node_type, ndims)
        k = self.k_group if node_type == btree1.GROUP else self.k_chunk
        size = 8 + 2 * so + 2 * k * so + (2 * k + 1) * ks
        levels = []
        level_nodes = [(root, None)]
        seen = {root}
        children_out = []
        depth = 0
        while level_nodes and depth <= btree1.MAX_LEVEL:
            decoded = []
            for addr, expected in level_nodes:
                if not self.in_file("v1 B-tree node", addr, 8 + 2 * so, owner):
                    continue
                node = self.guard("v1 B-tree node", self.abs(addr), btree1.decode_node, ctx, addr,
                                  node_type, ndims, expected)
                if node is None:
                    continue
                decoded.append(node)
                self.add(Structure("v1 B-tree node", self.abs(addr), size, None,
                                   {"node_type": node.node_type, "level": node.level,
                                    "entries": node.nentries, "capacity": 2 * k,
                                    "left_sibling": node.left, "right_sibling": node.right},
                                   owner=owner,
                                   unused=max(2 * k - node.nentries, 0) * (so + ks)))
            levels.append(decoded)
            nxt = []
            for node in decoded:
                for child in node.children(ctx):
                    if node.level == 0:
                        children_out.append(child)
                        continue
                    if child in seen:
                        self.finding("v1 B-tree node", self.abs(child), "no cycles",
                                     "node referenced twice")
                        continue
                    seen.add(child)
                    nxt.append((child, node.level - 1))
            level_nodes = nxt
            depth += 1
        self.facts["btree1"].append({"root": root, "type": node_type, "ndims": ndims,
                                     "levels": levels, "k": k, "key_size": ks, "heap": heap,
                                     "owner": owner})
        return children_out

    # --- dense links / attributes (III.G, III.A.2) ------------------------------------------------
    def dense(self, info, path, what, decoded):
        if info.fractal_heap_address is None:
            return
        owner = f"{what} of {path}"
        heap = self.fractal_heap(info.fractal_heap_address, owner)
        name_tree = order_tree = None
        if info.name_index_address is not None:
            name_tree = self.btree2(info.name_index_address, None, f"name index of {owner}")
        if info.creation_order_index_address is not None:
            order_tree = self.btree2(info.creation_order_index_address, None,
                                     f"creation-order index of {owner}")
        self.facts["dense"].append((info, path, what, heap, name_tree, order_tree))
        if heap is None or name_tree is None:
            return
        for rec in self.guard("v2 B-tree header", self.abs(info.name_index_address),
                              lambda: list(name_tree.records())) or []:
            hid = bytes(getattr(rec, "heap_id", b""))
            if hid and (hid[0] >> 4) & 3 == 1 and heap.huge_ids_direct:
                cur = Cursor(hid, 0, "fractal heap ID", self.ctx, 1)
                haddr, hlen = cur.uint(self.ctx.sizeof_offsets), cur.length()
                if self.in_file("fractal heap huge object", haddr, hlen, owner) and \
                        self.first_time("huge", haddr):
                    self.add(Structure("fractal heap huge object", self.abs(haddr), hlen,
                                       owner=owner))
            if what == "links":
                got = self.guard("fractal heap", self.abs(info.fractal_heap_address), heap.get, hid)
                if got is not None:
                    link = self.guard("link message", got[1], messages.decode_body, self.ctx,
                                      0x06, got[0], got[1])
                    if link is not None:
                        self._link(link, path)

    # --- global heap (III.E) -------------------------------------------------------------------
    def global_heap(self, addr, owner, found_by_scan=False):
        from ..format.global_heap import GlobalHeap
        if not self.first_time("gcol", addr):
            return None
        gh = GlobalHeap.decode(self.ctx, addr)
        off = self.abs(addr)
        ends = [int(o + ((z + 7) & ~7)) for o, z in zip(gh.offsets, gh.sizes) if o >= 0]
        used = max(ends) if ends else 8 + self.ctx.sizeof_lengths
        free = gh.size - used
        s = Structure("global heap collection", off, gh.size, gh.version,
                      {"objects": len(gh), "free_space": free}, owner=owner, unused=max(free, 0))
        if found_by_scan:
            s.fields["found_by"] = "signature scan of unclaimed space (heap objects are " \
                                   "referenced from data, not metadata)"
        if free > 0:
            s.children.append(Structure("global heap free space", off + used, free))
        self.add(s)
        self.facts["gcol"].append((gh, s))
        return gh

    def scan_global_heaps(self):
        """Find global heap collections in bytes no structure claims (spec III.E: collections
        are reached from variable-length data and references, which the walker does not read)."""
        from .account import gaps
        for start, end in gaps(self.top, self.size):
            buf = bytes(self.src.read(start, end - start, "unclaimed bytes"))
            pos = buf.find(b"GCOL")
            while pos >= 0:
                rel = start + pos - self.ctx.base_address
                if pos + 8 + self.ctx.sizeof_lengths <= len(buf) and buf[pos + 4] == 1:
                    got = self.guard("global heap collection", start + pos, self.global_heap, rel,
                                     "(variable-length data)", True)
                    if got is not None:
                        pos = buf.find(b"GCOL", pos + max(got.size, 4))
                        continue
                pos = buf.find(b"GCOL", pos + 4)


def _local_heap_free_list(heap, sl):
    """[(offset, size)] of the local heap's free blocks (spec III.D); (offset, -1) marks a
    block that could not be read (the checker reports it)."""
    out = []
    off = heap.free_list_offset
    if off == 1:           # libhdf5's H5HL_FREE_NULL: an empty free list
        return out
    seen = set()
    while off is not None and len(out) <= len(heap.data) // max(2 * sl, 1) + 1:
        if off in seen or off < 0 or off + 2 * sl > len(heap.data):
            out.append((off, -1))
            break
        seen.add(off)
        nxt = int.from_bytes(heap.data[off:off + sl], "little")
        size = int.from_bytes(heap.data[off + sl:off + 2 * sl], "little")
        out.append((off, size))
        off = None if nxt in (1, (1 << (8 * sl)) - 1) else nxt
    return out


def _describe(s, value):
    """A few decoded fields of a message for the byte map."""
    for attr in ("name", "shape", "maxshape", "layout_class", "address", "size", "chunk_shape",
                 "index_type", "btree_address", "heap_address", "fractal_heap_address",
                 "name_index_address", "creation_order_index_address", "length", "version"):
        v = getattr(value, attr, None)
        if v is not None and not callable(v):
            if attr == "version":
                s.version = v
            else:
                s.fields[attr] = v
    dt = getattr(value, "dtype", None)
    if dt is not None and hasattr(dt, "str"):
        s.fields["dtype"] = str(dt)
    if hasattr(value, "filters"):
        s.fields["filters"] = [f.id for f in value.filters]


def walk(source, progress=None):
    """Walk the file behind ``source`` (a purehep ByteSource); return a FileMap."""
    return Walker(source, progress).run()


def walk_path(path, progress=None):
    from ..io import open_source
    src = open_source(path)
    try:
        return walk(src, progress)
    finally:
        pass
