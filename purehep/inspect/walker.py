"""The byte map: walk every structure reachable from the superblock and record its extent.

Built on the ``purehep.format`` decoders (run with checksum verification off: checksums are a
rule of the checker, computed over the extents recorded here). Where a decoder does not
expose the size of what it decoded, the size is computed here from the spec's layouts. What
the walker cannot decode becomes a ``Finding``; the walk goes on with the rest of the file.

Facts the checker needs (B-tree keys, heap free lists, chunk tables, counts) are collected in
``FileMap.facts``, keyed by rule family.
"""
import importlib
import struct
from collections import defaultdict

import numpy as np

from ..errors import (ChecksumError, FormatError, PurehepError, TruncatedError,
                      UnsupportedFeatureError)
from ..format import btree1, messages
from ..format.context import Context, Cursor
from ..format.free_space import FreeSpaceManager
from ..format.messages import layout as L
from ..format.object_header import ObjectHeader, RawMessage
from ..format.superblock import SIGNATURE, Superblock, SymbolTableEntry
from .structure import (FREE, MESSAGE_SECTIONS, METADATA, RAW, USERBLOCK, Finding, Structure,
                        section_of)

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


class Walker:
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
        except RecursionError as exc:
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

    def fractal_heap(self, addr, owner):
        from ..format.fractal_heap import FractalHeap
        ctx = self.ctx
        if not self.first_time("frhp", addr):
            return ctx.cache.get(("frhp", addr))
        if not self.in_file("fractal heap header", addr, 4, owner):
            return None
        heap = FractalHeap.decode(ctx, addr)
        so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
        fixed = 4 + 1 + 2 + 2 + 1 + 4 + sl + so + sl + so + 8 * sl + 2 + sl + sl + 2 + 2 + so + 2
        size = fixed + 4 + ((sl + 4 + heap.io_filters_encoded_length)
                            if heap.io_filters_encoded_length else 0)
        base = self.abs(addr)
        fields = {k: getattr(heap, k) for k in (
            "heap_id_length", "io_filters_encoded_length", "flags", "max_managed_object_size",
            "next_huge_id", "huge_btree_address", "managed_free_space",
            "free_space_manager_address", "managed_space", "allocated_managed_space",
            "direct_block_iterator_offset", "managed_objects", "huge_objects_size",
            "huge_objects", "tiny_objects_size", "tiny_objects", "table_width",
            "starting_block_size", "max_direct_block_size", "max_heap_size",
            "starting_root_rows", "root_block_address", "current_root_rows")}
        self.add(Structure("fractal heap header", base, size, 0, fields, owner=owner,
                           checksum=(base, base + size - 4, base + size - 4, False)))
        self.guard("fractal heap", base, self._heap_blocks, heap, owner)
        if heap.huge_btree_address is not None:
            tree = self.btree2(heap.huge_btree_address, None, f"huge objects of {owner}")
            if tree is not None:
                for rec in self.guard("v2 B-tree header", self.abs(heap.huge_btree_address),
                                      lambda: list(tree.records())) or []:
                    length = rec.length
                    if self.in_file("fractal heap huge object", rec.address, length, owner) and \
                            self.first_time("huge", rec.address):
                        self.add(Structure("fractal heap huge object", self.abs(rec.address),
                                           length, owner=owner,
                                           fields={"id": rec.id, "filter_mask": rec.filter_mask}))
        if heap.free_space_manager_address is not None:
            self.guard("free-space manager header", self.abs(heap.free_space_manager_address),
                       self.free_space_manager, heap.free_space_manager_address, heap)
        self.facts["frhp"].append((heap, owner))
        return heap

    def _heap_blocks(self, heap, owner):
        ctx = self.ctx
        if heap.root_block_address is None:
            return
        if heap.current_root_rows == 0:
            self._direct_block(heap, heap.root_block_address, heap.starting_block_size, 0,
                               heap.root_filtered_size, heap.root_filter_mask, owner)
            return
        seen = set()

        def walk(addr, nrows, base):
            if addr in seen:
                self.finding("fractal heap indirect block", self.abs(addr), "no cycles",
                             "indirect block referenced twice")
                return
            seen.add(addr)
            if not self.in_file("fractal heap indirect block", addr,
                                heap.indirect_block_size(nrows), owner):
                return
            ib = heap.indirect_block(addr, nrows, base)
            size = heap.indirect_block_size(nrows)
            off = self.abs(addr)
            self.add(Structure("fractal heap indirect block", off, size, 0,
                               {"block_offset": base, "rows": nrows,
                                "allocated_children": sum(e.address is not None
                                                          for e in ib.entries)},
                               owner=owner, checksum=(off, off + size - 4, off + size - 4, False)))
            for entry, bsize, child_off, rows in heap.children(ib):
                if rows is None:
                    self.guard("fractal heap direct block", self.abs(entry.address),
                               self._direct_block, heap, entry.address, bsize, child_off,
                               entry.filtered_size, entry.filter_mask, owner)
                else:
                    if rows >= nrows:
                        self.finding("fractal heap indirect block", off, "well-formed",
                                     "child indirect block is not smaller than its parent")
                        continue
                    self.guard("fractal heap indirect block", self.abs(entry.address), walk,
                               entry.address, rows, child_off)

        walk(heap.root_block_address, heap.current_root_rows, 0)

    def _direct_block(self, heap, addr, size, block_offset, filtered_size, mask, owner):
        extent = filtered_size if heap.filtered else size
        if not self.in_file("fractal heap direct block", addr, extent or 0, owner):
            return
        off = self.abs(addr)
        fields = {"block_offset": block_offset, "block_size": size}
        if heap.filtered:
            fields.update(filtered_size=filtered_size, filter_mask=mask)
        s = Structure("fractal heap direct block", off, extent, 0, fields, owner=owner)
        if heap.checksum_direct_blocks and not heap.filtered:
            at = off + 4 + 1 + self.ctx.sizeof_offsets + heap.heap_offset_size
            s.checksum = (off, off + size, at, True)
        self.add(s)
        heap.direct_block(addr, size, block_offset, filtered_size, mask)

    def btree2(self, addr, record_context, owner):
        from ..format.btree2 import BTree2
        ctx = self.ctx
        if not self.first_time("bthd", addr):
            return None
        if not self.in_file("v2 B-tree header", addr, 4, owner):
            return None
        tree = self.guard("v2 B-tree header", self.abs(addr), BTree2.decode, ctx, addr,
                          record_context)
        if tree is None:
            return None
        so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
        size = 4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + so + 2 + sl + 4
        off = self.abs(addr)
        self.add(Structure("v2 B-tree header", off, size, 0,
                           {"type": tree.type, "node_size": tree.node_size,
                            "record_size": tree.record_size, "depth": tree.depth,
                            "split_percent": tree.split_percent,
                            "merge_percent": tree.merge_percent,
                            "root_node_address": tree.root_address,
                            "root_records": tree.root_nrecords,
                            "total_records": tree.total_records},
                           owner=owner, checksum=(off, off + size - 4, off + size - 4, False)))
        keys = []
        if tree.root_address is not None:
            self.guard("v2 B-tree node", self.abs(tree.root_address), self._btree2_node, tree,
                       tree.root_address, tree.root_nrecords, tree.depth, owner, keys, set())
        self.facts["btree2"].append((tree, keys, owner))
        return tree

    def _btree2_node(self, tree, addr, nrec, level, owner, keys, seen):
        ctx = self.ctx
        name = "v2 B-tree internal node" if level else "v2 B-tree leaf node"
        if addr in seen:
            self.finding(name, self.abs(addr), "no cycles", "node referenced twice")
            return
        seen.add(addr)
        if not self.in_file(name, addr, tree.node_size, owner):
            return
        records, children, base = tree._read_node(addr, nrec, level)
        ptr = tree.pointer_size(level) if level else 0
        used = 6 + nrec * tree.record_size + ((nrec + 1) * ptr if level else 0)
        self.add(Structure(name, base, tree.node_size, 0,
                           {"records": nrec, "level": level,
                            "capacity": tree.node_info[level].max_nrec},
                           owner=owner, unused=tree.node_size - used - 4,
                           checksum=(base, base + used, base + used, False)))
        recs = tree._decode_records(records, base, name)
        keyf = tree.record_type.key
        for i in range(nrec + (1 if level else 0)):
            if level:
                caddr, cn, _total = children[i]
                self.guard(name, base, self._btree2_node, tree, caddr, cn, level - 1, owner,
                           keys, seen)
            if i < nrec:
                keys.append((keyf(recs[i]), base, name))

    # --- shared messages (III.I) and free-space managers (III.H) ----------------------------------
    def sohm(self, tm):
        from ..format.sohm import SharedMessageTable, record_size
        ctx = self.ctx
        if tm.table_address is None or not self.first_time("smtb", tm.table_address):
            return
        table = SharedMessageTable.decode(ctx, tm.table_address, tm.nindexes)
        entry = 1 + 1 + 2 + 4 + 2 + 2 + 2 + 2 * ctx.sizeof_offsets
        size = 4 + tm.nindexes * entry + 4
        off = self.abs(tm.table_address)
        self.add(Structure("shared object header message table", off, size, 0,
                           {"indexes": tm.nindexes}, owner="(shared messages)",
                           checksum=(off, off + size - 4, off + size - 4, False)))
        ctx.sohm = table
        for i, index in enumerate(table.indexes):
            owner = f"shared message index {i}"
            if index.heap_address is not None:
                self.guard("fractal heap header", self.abs(index.heap_address), self.fractal_heap,
                           index.heap_address, owner)
            if index.index_address is None:
                continue
            if index.index_type == 1:
                self.guard("v2 B-tree header", self.abs(index.index_address), self.btree2,
                           index.index_address, None, owner)
            else:
                rsize = record_size(ctx)
                lsize = 4 + index.list_cutoff * rsize + 4
                loff = self.abs(index.index_address)
                used = 4 + index.nmessages * rsize
                self.add(Structure("shared message record list", loff, lsize, None,
                                   {"messages": index.nmessages, "capacity": index.list_cutoff},
                                   owner=owner, unused=lsize - used - 4,
                                   checksum=(loff, loff + used, loff + used, False)))
            self.facts["sohm"].append((table, index))

    def file_space_info(self, info):
        for a in info.manager_addresses:
            self.guard("free-space manager header", self.abs(a), self.free_space_manager, a,
                       None)

    def free_space_manager(self, addr, heap):
        """A free-space manager header (FSHD) and its section list (FSSE), spec III.H."""
        ctx = self.ctx
        if not self.first_time("fshd", addr):
            return
        size = FreeSpaceManager.size(ctx)
        if not self.in_file("free-space manager header", addr, size):
            return
        m = FreeSpaceManager.decode(ctx, addr)
        client, nserial, max_sect = m.client, m.serialized_sections, m.max_section_size
        sect_addr, sect_used, addr_bits = m.section_list_address, m.section_list_used, \
            m.address_space_bits
        off = self.abs(addr)
        owner = "file free space" if client == 1 else "fractal heap free space"
        self.add(Structure("free-space manager header", off, size, m.version,
                           {"client": client, "total_space": m.total_space,
                            "sections": m.sections, "serialized_sections": nserial,
                            "section_classes": m.section_classes,
                            "address_space_bits": addr_bits, "max_section_size": max_sect,
                            "section_list_address": sect_addr, "section_list_used": sect_used,
                            "section_list_allocated": m.section_list_allocated},
                           owner=owner, checksum=(off, off + size - 4, off + size - 4, False)))
        if sect_addr is None or not self.in_file("free-space section list", sect_addr,
                                                 m.section_list_allocated):
            return
        soff = self.abs(sect_addr)
        s = self.add(Structure("free-space section list", soff, m.section_list_allocated, None,
                               {"used": sect_used}, owner=owner,
                               unused=max(m.section_list_allocated - sect_used, 0),
                               checksum=(soff, soff + sect_used - 4, soff + sect_used - 4, False)))
        buf = m.section_list(ctx)
        c = Cursor(buf, soff, "free-space section list", ctx)
        c.pos = 4 + 1 + ctx.sizeof_offsets
        from ..format.btree2 import limit_enc_size
        len_w = limit_enc_size(max_sect)
        start = c.pos
        sections = self._sections(c, sect_used, nserial, limit_enc_size(nserial), len_w,
                                  (addr_bits + 7) // 8, client, heap)
        if len(sections) != nserial and len_w > 1:
            # older libhdf5 sized section lengths from the maximum section size less one
            # (65,536 -> 2 bytes; seen in tfcontents1.h5): accept that reading when it is the
            # one that yields the declared sections exactly
            c.pos = start
            narrower = self._sections(c, sect_used, nserial, limit_enc_size(nserial), len_w - 1,
                                      (addr_bits + 7) // 8, client, heap)
            if len(narrower) == nserial and c.pos == sect_used - 4:
                sections = narrower
        s.fields["sections_read"] = len(sections)
        if client == 1:
            for soffset, ssize, _t in sections:
                if self.in_file("free-space section", soffset, ssize, "file free-space manager"):
                    self.add(Structure("free-space section", self.abs(soffset), ssize, kind=FREE,
                                       owner="file free space"))
        self.facts["fsm"].append((s, client, nserial, len(sections)))

    @staticmethod
    def _sections(c, used, nserial, count_w, len_w, off_w, client, heap):
        """(offset, size, type) of the serialized sections of a section list (spec III.H)."""
        sections = []
        try:
            while c.pos < used - 4 and len(sections) < nserial:
                n = c.uint(count_w)
                ssize = c.uint(len_w)
                for _ in range(n):
                    soffset = c.uint(off_w)
                    stype = c.u8()
                    if client == 0 and stype in (1, 3) and heap is not None:
                        # "first row" and "indirect" sections: the indirect block's heap
                        # offset, its start row, start column and number of blocks (2 bytes each)
                        c.uint(heap.heap_offset_size)
                        c.skip(6)
                    sections.append((soffset, ssize, stype))
        except TruncatedError:
            pass
        return sections

    # --- datasets (IV.A.2.i, Appendix C) -----------------------------------------------------
    def dataset(self, d, path, top):
        ctx = self.ctx
        layout = d[0x08][0]
        space = (d.get(0x01) or [None])[0]
        dtype = (d.get(0x03) or [None])[0]
        filters = (d.get(0x0B) or [None])[0]
        if layout.layout_class == L.CONTIGUOUS:
            if layout.address is not None and (0x07 not in d):
                if self.in_file("contiguous raw data", layout.address, layout.size, path):
                    self.add(Structure("contiguous raw data", self.abs(layout.address),
                                       layout.size, kind=RAW, owner=path,
                                       fields={"dataset": path}))
            self.facts["contiguous"].append((layout, space, dtype, path, top))
        elif layout.layout_class == L.VIRTUAL:
            if layout.address is not None:
                self.global_heap(layout.address, f"virtual dataset mappings of {path}")
        elif layout.layout_class == L.CHUNKED:
            self.chunked(layout, space, dtype, filters, path, top)
        elif layout.layout_class == L.STRUCTURED:
            self.structured(layout, space, filters, path)

    def structured(self, layout, space, filters, path):
        """Structured chunk storage (sparse RFC): the chunk index (client ids 2/3, B-tree
        types 12/13), every chunk within the file, its section offsets ordered, its sections
        unfiltered and section checksums verified."""
        from ..sparse import index as SIX
        from ..sparse.storage import pipelines_of
        from ..format import structured_chunk as SC
        from ..format.btree2 import ChunkRecordContext
        ctx = self.ctx
        if space is None or space.shape is None:
            return
        rank = len(layout.chunk_shape)
        owner = f"chunk index of {path}"
        maxshape = space.maxshape if space.maxshape is not None else space.shape
        addr, it = layout.address, layout.index_type
        pipelines = pipelines_of(filters, layout.nsections)
        if addr is not None:
            if it == L.FIXED_ARRAY:
                self.guard("fixed array header", self.abs(addr), self.fixed_array, addr, owner)
            elif it == L.EXTENSIBLE_ARRAY:
                self.guard("extensible array header", self.abs(addr), self.extensible_array,
                           addr, owner)
            elif it == L.BTREE2:
                self.btree2(addr, ChunkRecordContext(rank, SIX.size_len(layout),
                                                     layout.nsections), owner)
        table = self.guard(owner, self.abs(addr) if addr is not None else None, SIX.load, ctx,
                           layout, space.shape, maxshape, bool(pipelines))
        if table is None:
            return
        chunk = np.asarray(layout.chunk_shape, np.int64)
        for i in range(len(table)):
            a, n = int(table.addresses[i]), int(table.sizes[i])
            origin = (table.scaled[i] * chunk).tolist()
            if a + ctx.base_address + n > self.size or n < 0:
                self.finding("structured chunk", self.abs(a), "within file",
                             f"chunk {origin} of {path} ({n} bytes at address {a}) lies past "
                             f"the end of the file ({self.size} bytes)", "IV.B")
                continue
            self.add(Structure("structured chunk", self.abs(a), n, kind=RAW, owner=path,
                               fields={"chunk_offset": origin,
                                       "section_offsets": [int(x) for x in table.offsets[i]]}))
            raw = bytes(ctx.read(a, n, "structured chunk"))
            self.guard("structured chunk", self.abs(a), SC.disassemble, raw, table.offsets[i],
                       tuple(layout.metadata_sections),
                       None if table.unfiltered is None else table.unfiltered[i],
                       None if table.masks is None else table.masks[i], pipelines,
                       layout.element_size, (f"structured chunk at {origin} of {path}",
                                             self.abs(a)))

    def chunked(self, layout, space, dtype, filters, path, top):
        ctx = self.ctx
        rank = len(layout.chunk_shape)
        owner = f"chunk index of {path}"
        if space is None or space.shape is None:
            return
        maxshape = space.maxshape if space.maxshape is not None else space.shape
        addr = layout.address
        it = layout.index_type
        if addr is not None:
            if it == L.BTREE1:
                self.btree1(addr, btree1.CHUNK, rank + 1, owner)
            elif it == L.FIXED_ARRAY:
                self.guard("fixed array header", self.abs(addr), self.fixed_array, addr, owner)
            elif it == L.EXTENSIBLE_ARRAY:
                self.guard("extensible array header", self.abs(addr), self.extensible_array,
                           addr, owner)
            elif it == L.BTREE2:
                from ..format.btree2 import ChunkRecordContext
                self.btree2(addr, ChunkRecordContext(rank), owner)
        chunk_nbytes = int(np.prod(layout.chunk_shape, dtype=np.int64)) * layout.element_size
        from ..chunks import INDEX_MODULES
        mod = importlib.import_module(f"purehep.chunks.{INDEX_MODULES[it]}")
        nfilters = len(filters) if filters is not None else 0
        table = self.guard(owner, self.abs(addr) if addr is not None else None, mod.load, ctx,
                           layout, space.shape, maxshape, chunk_nbytes, nfilters > 0)
        self.facts["chunked"].append((layout, space, nfilters, table, path, top, chunk_nbytes))
        if table is None:
            return
        scaled = table.scaled
        chunk = np.asarray(layout.chunk_shape, np.int64)
        for i in range(len(table)):
            a, n = int(table.addresses[i]), int(table.sizes[i])
            if a + ctx.base_address + n > self.size or n < 0:
                self.finding("raw data chunk", self.abs(a), "within file",
                             f"chunk {(scaled[i] * chunk).tolist()} of {path} ({n} bytes at "
                             f"address {a}) lies past the end of the file ({self.size} bytes)",
                             "IV.B")
                continue
            self.add(Structure("raw data chunk", self.abs(a), n, kind=RAW, owner=path,
                               fields={"chunk_offset": (scaled[i] * chunk).tolist(),
                                       "filter_mask": int(table.masks[i])}))

    def fixed_array(self, addr, owner):
        from ..format.fixed_array import FixedArrayHeader
        ctx = self.ctx
        hsize = FixedArrayHeader.size(ctx)
        if not self.in_file("fixed array header", addr, hsize, owner):
            return
        hdr = FixedArrayHeader.decode(ctx, addr)
        off = self.abs(addr)
        self.add(Structure("fixed array header", off, hsize, None,
                           {"client_id": hdr.client_id, "entry_size": hdr.entry_size,
                            "page_bits": hdr.page_bits, "max_entries": hdr.max_entries,
                            "data_block_address": hdr.data_block_address}, owner=owner,
                           checksum=(off, off + hsize - 4, off + hsize - 4, False)))
        if hdr.data_block_address is None or hdr.max_entries == 0:
            return
        es, n = hdr.entry_size, hdr.max_entries
        page_n = 1 << hdr.page_bits
        prefix, npages, dsize, pages = hdr.data_block_layout(ctx)
        daddr = hdr.data_block_address
        total = dsize + pages
        if not self.in_file("fixed array data block", daddr, total, owner):
            return
        doff = self.abs(daddr)
        blk = self.add(Structure("fixed array data block", doff, total, None,
                                 {"entries": n, "pages": npages}, owner=owner,
                                 checksum=(doff, doff + dsize - 4, doff + dsize - 4, False)))
        raw = bytes(ctx.read(daddr, dsize, "fixed array data block"))
        hdr.check_data_block(ctx, raw, daddr)
        pos = doff + dsize
        for p in range(npages):
            cnt = min(page_n, n - p * page_n)
            psize = cnt * es + 4
            init = (raw[prefix + (p >> 3)] >> (7 - (p & 7))) & 1
            page = Structure("fixed array data block page", pos, psize, None,
                             {"page": p, "initialized": bool(init)})
            if init:
                page.checksum = (pos, pos + psize - 4, pos + psize - 4, False)
            blk.children.append(page)
            pos += psize

    def extensible_array(self, addr, owner):
        from ..format.extensible_array import ExtensibleArrayHeader, addresses
        ctx = self.ctx
        so = ctx.sizeof_offsets
        hsize = ExtensibleArrayHeader.size(ctx)
        if not self.in_file("extensible array header", addr, hsize, owner):
            return
        hdr = ExtensibleArrayHeader.decode(ctx, addr)
        off = self.abs(addr)
        self.add(Structure("extensible array header", off, hsize, None,
                           {k: getattr(hdr, k) for k in (
                               "client_id", "element_size", "max_bits", "index_elements",
                               "min_elements", "min_pointers", "page_bits", "nsuper",
                               "super_size", "ndata", "data_size", "max_index_set",
                               "nelements", "index_block_address")},
                           owner=owner, checksum=(off, off + hsize - 4, off + hsize - 4, False)))
        self.facts["eahd"].append((hdr, off))
        if hdr.index_block_address is None:
            return
        es = hdr.element_size
        sblocks = hdr.super_blocks()
        n_iblk_super, n_iblk_dblk, n_iblk_sblk, isize = hdr.index_block_layout(ctx)
        iaddr = hdr.index_block_address
        if not self.in_file("extensible array index block", iaddr, isize, owner):
            return
        ioff = self.abs(iaddr)
        self.add(Structure("extensible array index block", ioff, isize, None,
                           {"elements": hdr.index_elements, "data_block_addresses": n_iblk_dblk,
                            "secondary_block_addresses": n_iblk_sblk}, owner=owner,
                           checksum=(ioff, ioff + isize - 4, ioff + isize - 4, False)))
        raw = bytes(ctx.read(iaddr, isize, "extensible array index block"))
        hdr.check_prefix(ctx, raw, iaddr, b"EAIB", "extensible array index block")
        pos = 6 + so + hdr.index_elements * es
        dblks = addresses(ctx, raw[pos:pos + n_iblk_dblk * so])
        pos += n_iblk_dblk * so
        sblks = addresses(ctx, raw[pos:pos + n_iblk_sblk * so])
        bos = hdr.block_offset_size
        d = 0
        for s, (nd, ne, start) in enumerate(sblocks):
            if s < n_iblk_super:
                for j in range(nd):
                    if d < len(dblks) and dblks[d] is not None:
                        self.guard("extensible array data block", self.abs(dblks[d]),
                                   self._ea_data_block, hdr, dblks[d], ne, owner, None, 0)
                    d += 1
                continue
            saddr = sblks[s - n_iblk_super] if s - n_iblk_super < len(sblks) else None
            if saddr is None:
                continue
            npages, bm, ssize = hdr.secondary_block_layout(ctx, nd, ne)
            if not self.in_file("extensible array secondary block", saddr, ssize, owner):
                continue
            soff = self.abs(saddr)
            self.add(Structure("extensible array secondary block", soff, ssize, None,
                               {"super_block": s, "data_blocks": nd, "elements_per_block": ne},
                               owner=owner, checksum=(soff, soff + ssize - 4, soff + ssize - 4,
                                                      False)))
            sraw = bytes(ctx.read(saddr, ssize, "extensible array secondary block"))
            hdr.check_prefix(ctx, sraw, saddr, b"EASB", "extensible array secondary block")
            p = 6 + so + bos
            bitmap = sraw[p:p + bm]
            p += bm
            for j, daddr in enumerate(addresses(ctx, sraw[p:p + nd * so])):
                if daddr is not None:
                    self.guard("extensible array data block", self.abs(daddr),
                               self._ea_data_block, hdr, daddr, ne, owner, bitmap, j * npages)

    def _ea_data_block(self, hdr, daddr, ne, owner, bitmap, bit0):
        ctx = self.ctx
        es = hdr.element_size
        page_n = 1 << hdr.page_bits
        prefix, npages, head, size = hdr.data_block_layout(ctx, ne)
        if not self.in_file("extensible array data block", daddr, size, owner):
            return
        doff = self.abs(daddr)
        blk = self.add(Structure("extensible array data block", doff, size, None,
                                 {"elements": ne, "pages": npages}, owner=owner,
                                 checksum=(doff, doff + head, doff + head, False)))
        raw = bytes(ctx.read(daddr, head + 4, "extensible array data block"))
        hdr.check_prefix(ctx, raw, daddr, b"EADB", "extensible array data block")
        pos = doff + prefix + 4
        for p in range(npages):
            psize = page_n * es + 4
            bit = bit0 + p
            init = bitmap is not None and bit // 8 < len(bitmap) and \
                (bitmap[bit >> 3] >> (7 - (bit & 7))) & 1
            page = Structure("extensible array data block page", pos, psize, None,
                             {"page": p, "initialized": bool(init)})
            if init:
                page.checksum = (pos, pos + psize - 4, pos + psize - 4, False)
            blk.children.append(page)
            pos += psize

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
