"""The byte map's walks of fractal heaps (spec III.G), v2 B-trees (III.A.2), the shared
object header message table (III.H) and free-space managers (III.F): methods of
purehep.inspect.walker.Walker, which records each structure's extent and findings."""
from ..errors import TruncatedError
from ..format.context import Cursor
from ..format.free_space import FreeSpaceManager
from .structure import FREE, Structure


class HeapWalks:
    """Walker's methods for heaps, v2 B-trees, shared messages and free space."""

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
