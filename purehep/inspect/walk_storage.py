"""The byte map's walks of dataset storage (spec IV.A.2.i, Appendix C): contiguous,
chunked and structured-chunk data and their chunk indexes (fixed and extensible arrays;
B-trees through the walker's own methods): methods of purehep.inspect.walker.Walker."""
import importlib

import numpy as np

from ..format import btree1
from ..format.messages import layout as L
from .structure import RAW, Structure


class StorageWalks:
    """Walker's methods for dataset storage and chunk indexes."""

    # --- datasets (IV.A.2.i, Appendix C) -----------------------------------------------------
    def dataset(self, d, path, top):
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
        from ..chunks import structured_index as SIX
        from ..chunks.structured import pipelines_of
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
