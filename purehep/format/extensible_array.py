"""Extensible Array chunk index (spec VII.D): header EAHD, index block EAIB, secondary
("super") blocks EASB, data blocks EADB and data block pages.

Derived parameters follow the library: super block ``s`` has 2**(s//2) data blocks of
2**((s+1)//2) * min_elements elements; the index block holds ``index_elements`` elements,
2*(min_pointers-1) data block addresses (super blocks 0 .. 2*log2(min_pointers)-1) and the
addresses of the remaining super blocks. A data block with more than 2**page_bits elements is
paged: its pages (elements + checksum) follow it, and its super block's page bitmap (bit
``dblock * npages + page``, most significant bit first) says which pages exist. Block offsets
are (max_bits + 7) // 8 bytes. Every block is checksummed and bounds-checked.

``encode`` writes an array from {element index: record} and an element encoder (any client:
dense chunks 0/1, structured chunks 2/3).
"""
import bisect
from dataclasses import dataclass
from functools import partial
import struct

import numpy as np

from ..errors import FormatError
from . import checksum
from .context import Cursor

PARAMETERS = ("max_bits", "index_elements", "min_elements", "min_pointers", "page_bits")


def _log2(n):
    return n.bit_length() - 1


@dataclass(frozen=True)
class ExtensibleArrayHeader:
    address: int
    client_id: int
    element_size: int
    max_bits: int
    index_elements: int
    min_elements: int
    min_pointers: int
    page_bits: int
    nsuper: int
    super_size: int
    ndata: int
    data_size: int
    max_index_set: int
    nelements: int
    index_block_address: int | None
    version: int = 0

    @staticmethod
    def size(ctx):
        return 4 + 8 + 6 * ctx.sizeof_lengths + ctx.sizeof_offsets + 4

    @classmethod
    def decode(cls, ctx, addr):
        n = cls.size(ctx)
        buf = ctx.read(addr, n, "extensible array header")
        cur = ctx.cursor(addr, n, "extensible array header")
        cur.signature(b"EAHD")
        version = cur.version((0, 1))
        fields = [cur.u8() for _ in range(7)]
        lengths = [cur.length() for _ in range(6)]
        iblk = cur.address()
        checksum.verify(ctx, buf, "extensible array header", ctx.absolute(addr))
        h = cls(addr, *fields, *lengths, iblk, version)
        if (h.element_size == 0 or not 0 < h.max_bits <= 64 or h.min_elements == 0
                or h.min_elements & (h.min_elements - 1) or h.min_pointers == 0
                or h.min_pointers & (h.min_pointers - 1) or h.page_bits > 40
                or _log2(h.min_elements) > h.max_bits):
            raise cur.error("implausible extensible array parameters")
        return h

    def encode(self, ctx):
        Ln = ctx.pack_length
        body = (b"EAHD" + bytes((self.version, self.client_id, self.element_size, self.max_bits,
                                 self.index_elements, self.min_elements, self.min_pointers,
                                 self.page_bits))
                + Ln(self.nsuper) + Ln(self.super_size) + Ln(self.ndata) + Ln(self.data_size)
                + Ln(self.max_index_set) + Ln(self.nelements)
                + ctx.pack_address(self.index_block_address))
        return _sealed(body)

    def index_block_layout(self, ctx):
        """(super blocks whose data blocks the index block points to, data block addresses,
        secondary block addresses, index block bytes)."""
        n_super = 2 * _log2(self.min_pointers)
        n_dblk = 2 * (self.min_pointers - 1)
        n_sblk = max(1 + self.max_bits - _log2(self.min_elements) - n_super, 0)
        size = 6 + ctx.sizeof_offsets + self.index_elements * self.element_size + \
            (n_dblk + n_sblk) * ctx.sizeof_offsets + 4
        return n_super, n_dblk, n_sblk, size

    def secondary_block_layout(self, ctx, nd, ne):
        """(pages per data block, page bitmap bytes, block bytes) of a secondary block of
        ``nd`` data blocks of ``ne`` elements."""
        page_n = 1 << self.page_bits
        npages = ne // page_n if ne > page_n else 0
        bm = nd * ((npages + 7) // 8) if npages else 0
        return npages, bm, 6 + ctx.sizeof_offsets + self.block_offset_size + bm + \
            nd * ctx.sizeof_offsets + 4

    def data_block_layout(self, ctx, ne):
        """(prefix bytes, pages, bytes up to the checksum, bytes with the pages) of a data
        block of ``ne`` elements; the prefix ends after the block offset."""
        page_n = 1 << self.page_bits
        npages = ne // page_n if ne > page_n else 0
        prefix = 6 + ctx.sizeof_offsets + self.block_offset_size
        head = prefix + (0 if npages else ne * self.element_size)
        return prefix, npages, head, head + 4 + npages * (page_n * self.element_size + 4)

    def check_prefix(self, ctx, buf, baddr, sig, structure):
        """Check a block's signature, version, client id and back pointer (not its
        checksum)."""
        cur = Cursor(buf, ctx.absolute(baddr), structure, ctx)
        cur.signature(sig)
        cur.version((0, 1))
        if cur.u8() != self.client_id:
            raise cur.error("client id differs from the header's")
        if cur.address() != self.address:
            raise cur.error("block does not point back to its header")

    @property
    def block_offset_size(self):
        return (self.max_bits + 7) // 8

    def super_blocks(self):
        """[(ndata_blocks, elements per data block, first element index)] per super block
        (element index counted after the index block's own elements)."""
        out, start = [], 0
        for s in range(1 + self.max_bits - _log2(self.min_elements)):
            nd = 1 << (s // 2)
            ne = (1 << ((s + 1) // 2)) * self.min_elements
            out.append((nd, ne, start))
            start += nd * ne
        return out


def read_elements(ctx, addr):
    """(header, element indexes (int64), uint8 rows (len(indexes), element_size)) of the
    extensible array at ``addr``: the elements of the blocks and pages present, in index
    order; the elements of absent blocks are undefined and left out (so that what is read
    stays within what the file holds, whatever the header claims)."""
    hdr = ExtensibleArrayHeader.decode(ctx, addr)
    es = hdr.element_size
    total = hdr.max_index_set
    parts = []                  # (first element index, rows)
    if hdr.index_block_address is not None and total:
        _read_blocks(ctx, hdr, addr, total, parts)
    if not parts:
        return hdr, np.zeros(0, np.int64), np.zeros((0, es), np.uint8)
    index = np.concatenate([np.arange(first, first + len(rows), dtype=np.int64)
                            for first, rows in parts])
    return hdr, index, np.concatenate([rows for _, rows in parts])


def _read_blocks(ctx, hdr, addr, total, parts):
    so, es = ctx.sizeof_offsets, hdr.element_size
    sblocks = hdr.super_blocks()
    n_iblk_super, n_iblk_dblk, n_iblk_sblk, isize = hdr.index_block_layout(ctx)
    iaddr = hdr.index_block_address
    buf = ctx.read(iaddr, isize, "extensible array index block")
    _check_prefix(ctx, buf, iaddr, b"EAIB", hdr, "extensible array index block")
    raw = np.frombuffer(buf, np.uint8)
    pos = 6 + so
    k = min(hdr.index_elements, total)
    parts.append((0, raw[pos:pos + k * es].reshape(k, es)))
    pos += hdr.index_elements * es
    dblk_addrs = addresses(ctx, raw[pos:pos + n_iblk_dblk * so])
    pos += n_iblk_dblk * so
    sblk_addrs = addresses(ctx, raw[pos:pos + n_iblk_sblk * so])
    base = hdr.index_elements
    seen = {addr, iaddr}
    d = 0
    for s, (nd, ne, start) in enumerate(sblocks):
        if base + start >= total:
            break
        if s < n_iblk_super:
            for j in range(nd):
                _read_data_block(ctx, hdr, dblk_addrs[d], base + start + j * ne, ne, None, 0,
                                 total, parts, seen)
                d += 1
            continue
        saddr = sblk_addrs[s - n_iblk_super]
        if saddr is None:
            continue
        _remember(ctx, seen, saddr)
        npages, bm_size, ssize = hdr.secondary_block_layout(ctx, nd, ne)
        sbuf = ctx.read(saddr, ssize, "extensible array secondary block")
        _check_prefix(ctx, sbuf, saddr, b"EASB", hdr, "extensible array secondary block")
        sraw = np.frombuffer(sbuf, np.uint8)
        p = 6 + so + hdr.block_offset_size
        bitmap = sraw[p:p + bm_size]
        p += bm_size
        addrs = addresses(ctx, sraw[p:p + nd * so])
        for j in range(nd):
            first = base + start + j * ne
            if first >= total:
                break
            _read_data_block(ctx, hdr, addrs[j], first, ne, bitmap, j * npages, total, parts,
                             seen)


BATCH_PAGES = 1024       # pages verified together at most while lookup3 runs as plain Python


class Elements:
    """Random access to the elements of the extensible array at ``addr``: the header and the
    index block are read here; ``block(i)`` reads only the secondary block, data block and
    page holding element ``i`` (each once: they are kept), or, while lookup3 runs as plain
    Python, maybe other data blocks of its super block, or other pages of its run of
    BATCH_PAGES pages of its super block, with it (``checksum.Batches``)."""

    def __init__(self, ctx, addr):
        self.ctx = ctx
        self.header = hdr = ExtensibleArrayHeader.decode(ctx, addr)
        self.entry_size = es = hdr.element_size
        self.total = hdr.max_index_set
        self.page_n = 1 << hdr.page_bits
        self._blocks = {}          # first element index -> bytes holding the elements from it
        self._secondary = {}       # super block -> (page bitmap, data block addresses)
        self._checked = set()      # paged data blocks whose own prefix was checked
        self._batches = {}         # elements per data block -> checksum.Batches
        if hdr.index_block_address is None or self.total == 0:
            self.index_rows = None
            return
        so = ctx.sizeof_offsets
        self.n_iblk_super, n_dblk, n_sblk, isize = hdr.index_block_layout(ctx)
        iaddr = hdr.index_block_address
        buf = ctx.read(iaddr, isize, "extensible array index block")
        _check_prefix(ctx, buf, iaddr, b"EAIB", hdr, "extensible array index block")
        raw = np.frombuffer(buf, np.uint8)
        pos = 6 + so
        self.index_rows = memoryview(buf)[pos:pos + hdr.index_elements * es]
        pos += hdr.index_elements * es
        self.dblk_addrs = addresses(ctx, raw[pos:pos + n_dblk * so])
        self.sblk_addrs = addresses(ctx, raw[pos + n_dblk * so:pos + (n_dblk + n_sblk) * so])
        self.sblocks = hdr.super_blocks()
        self.starts = [start for _, _, start in self.sblocks]
        self.dfirst = np.concatenate(([0], np.cumsum([nd for nd, _, _ in self.sblocks]))).tolist()
        self._layouts = {}         # elements per data block -> hdr.data_block_layout
        self.page_bytes = self.page_n * es + 4
        # the prefix data blocks have in the common case (else checked field by field)
        self._eadb = b"EADB" + bytes((hdr.version, hdr.client_id)) + ctx.pack_address(addr)
        self._page_batches = checksum.Batches(ctx, self.page_bytes,
                                              "extensible array data block page")

    def block(self, i):
        """(first element index, bytes holding the elements from it on) of the index block
        elements, data block or data block page holding element ``i``; None when that block
        is not allocated."""
        hdr = self.header
        if self.index_rows is None or not 0 <= i < self.total:
            return None
        if i < hdr.index_elements:
            return 0, self.index_rows
        j = i - hdr.index_elements
        s = bisect.bisect_right(self.starts, j) - 1
        nd, ne, start = self.sblocks[s]
        k = (j - start) // ne
        first = hdr.index_elements + start + k * ne
        got = self._layouts.get(ne)
        if got is None:
            got = self._layouts[ne] = hdr.data_block_layout(self.ctx, ne)
        npages = got[1]
        key = first + (i - first) // self.page_n * self.page_n if npages else first
        buf = self._blocks.get(key)
        if buf is not None:
            return key, buf
        if s < self.n_iblk_super:
            addrs, bitmap = self.dblk_addrs[self.dfirst[s]:self.dfirst[s] + nd], None
        else:
            sec = self._secondary_block(s, nd, ne)
            if sec is None:
                return None
            bitmap, addrs = sec
        if addrs[k] is None:
            return None
        if npages:
            return self._page(s, k, first, key, addrs, bitmap, ne, got)
        base = hdr.index_elements + start

        def others():
            return {base + q * ne: a for q, a in enumerate(addrs)
                    if a is not None and q != k and base + q * ne < self.total
                    and base + q * ne not in self._blocks}

        prefix = got[0]
        for f, buf in self._data_blocks(ne, got).load(s, nd, first, addrs[k], others).items():
            self._blocks[f] = memoryview(buf)[prefix:]
        return first, self._blocks[first]

    def _data_blocks(self, ne, layout):
        """The checksum.Batches of unpaged data blocks of ``ne`` elements."""
        b = self._batches.get(ne)
        if b is None:
            b = self._batches[ne] = checksum.Batches(self.ctx, layout[2] + 4,
                                                     "extensible array data block",
                                                     self._check_eadb)
        return b

    def _check_eadb(self, buf, daddr):
        """Check a data block's prefix (not its checksum)."""
        if buf[:len(self._eadb)] != self._eadb:
            self.header.check_prefix(self.ctx, buf, daddr, b"EADB", "extensible array data block")

    def _page(self, s, k, first, pfirst, addrs, bitmap, ne, layout):
        """``block`` for the page at element ``pfirst`` of data block ``k`` (at element
        ``first``) of super block ``s``, whose page bitmap and data block addresses are
        ``bitmap`` and ``addrs``."""
        prefix, npages = layout[0], layout[1]
        daddr = addrs[k]
        if bitmap is None:
            raise FormatError("paged data block without a page bitmap",
                              "extensible array data block", self.ctx.absolute(daddr))
        bit = k * npages + (pfirst - first) // self.page_n
        if not (int(bitmap[bit >> 3]) >> (7 - (bit & 7))) & 1:
            return None
        self._check_data_block(daddr, prefix)
        run = bit // BATCH_PAGES
        where = {}                 # page -> its data block address, of the batch's pages
        got = self._page_batches.load(
            (s, run), min(BATCH_PAGES, len(addrs) * npages - run * BATCH_PAGES), pfirst,
            daddr + prefix + 4 + bit % npages * self.page_bytes,
            partial(self._other_pages, s, run, addrs, bitmap, ne, npages, prefix, pfirst, where))
        for f, buf in got.items():
            if f != pfirst:
                try:
                    self._check_data_block(where[f], prefix)
                except FormatError:
                    continue       # fails when asked for
            self._blocks[f] = buf
        return pfirst, self._blocks[pfirst]

    def _other_pages(self, s, run, addrs, bitmap, ne, npages, prefix, pfirst, where):
        """{first element: address} of the set pages of run ``run`` of BATCH_PAGES pages of
        super block ``s`` (numbered data block by data block) not loaded, but ``pfirst``;
        ``where`` gets each one's data block address."""
        from ..kernels.chunkindex import bitmap_expand
        a = run * BATCH_PAGES                # a multiple of 8
        bits = bitmap_expand(bitmap[a >> 3:], min(BATCH_PAGES, len(addrs) * npages - a))
        base = self.header.index_elements + self.starts[s]
        out = {}
        for b in (np.flatnonzero(bits) + a).tolist():
            k, q = divmod(b, npages)
            f = base + k * ne + q * self.page_n
            if addrs[k] is not None and f < self.total and f not in self._blocks and f != pfirst:
                out[f] = addrs[k] + prefix + 4 + q * self.page_bytes
                where[f] = addrs[k]
        return out

    def _check_data_block(self, daddr, prefix):
        """Check a paged data block's own prefix and checksum (once)."""
        if daddr not in self._checked:
            buf = self.ctx.read_small(daddr, prefix + 4, "extensible array data block")
            self._check_eadb(buf, daddr)
            checksum.verify(self.ctx, buf, "extensible array data block",
                            self.ctx.absolute(daddr))
            self._checked.add(daddr)

    def _secondary_block(self, s, nd, ne):
        if s not in self._secondary:
            saddr = self.sblk_addrs[s - self.n_iblk_super]
            sec = None
            if saddr is not None:
                hdr, ctx, so = self.header, self.ctx, self.ctx.sizeof_offsets
                _, bm_size, ssize = hdr.secondary_block_layout(ctx, nd, ne)
                sbuf = ctx.read(saddr, ssize, "extensible array secondary block")
                _check_prefix(ctx, sbuf, saddr, b"EASB", hdr, "extensible array secondary block")
                sraw = np.frombuffer(sbuf, np.uint8)
                p = 6 + so + hdr.block_offset_size
                dstart = p + bm_size
                sec = (sraw[p:dstart].copy(), addresses(ctx, sraw[dstart:dstart + nd * so]))
            self._secondary[s] = sec
        return self._secondary[s]


def addresses(ctx, raw):
    """The addresses packed in ``raw`` (None for the undefined address)."""
    so = ctx.sizeof_offsets
    if so == 8:
        vals = np.frombuffer(raw, "<u8").tolist()
    else:
        vals = [int.from_bytes(bytes(raw[i:i + so]), "little") for i in range(0, len(raw), so)]
    return [None if v == ctx.undefined else v for v in vals]


def _remember(ctx, seen, a):
    if a in seen:
        raise FormatError("extensible array block referenced twice", "extensible array",
                          ctx.absolute(a))
    seen.add(a)


def _check_prefix(ctx, buf, baddr, sig, hdr, structure):
    hdr.check_prefix(ctx, buf, baddr, sig, structure)
    checksum.verify(ctx, buf, structure, ctx.absolute(baddr))


def _read_data_block(ctx, hdr, daddr, first, ne, bitmap, bit0, total, parts, seen):
    if daddr is None:
        return
    _remember(ctx, seen, daddr)
    es = hdr.element_size
    page_n = 1 << hdr.page_bits
    prefix, npages, head, _ = hdr.data_block_layout(ctx, ne)
    structure = "extensible array data block"
    if not npages:
        buf = ctx.read(daddr, head + 4, structure)
        _check_prefix(ctx, buf, daddr, b"EADB", hdr, structure)
        cnt = min(ne, total - first)
        parts.append((first, np.frombuffer(buf, np.uint8)[prefix:prefix + cnt * es]
                      .reshape(cnt, es)))
        return
    buf = ctx.read(daddr, prefix + 4, structure)
    _check_prefix(ctx, buf, daddr, b"EADB", hdr, structure)
    if bitmap is None:
        raise FormatError("paged data block without a page bitmap", structure, ctx.absolute(daddr))
    page_bytes = page_n * es + 4
    for p in range(npages):
        pfirst = first + p * page_n
        if pfirst >= total:
            break
        bit = bit0 + p
        if not (int(bitmap[bit >> 3]) >> (7 - (bit & 7))) & 1:
            continue
        paddr = daddr + prefix + 4 + p * page_bytes
        pbuf = ctx.read(paddr, page_bytes, "extensible array data block page")
        checksum.verify(ctx, pbuf, "extensible array data block page", ctx.absolute(paddr))
        cnt = min(page_n, total - pfirst)
        parts.append((pfirst, np.frombuffer(pbuf, np.uint8)[:cnt * es].reshape(cnt, es)))


def _sealed(body):
    return body + struct.pack("<I", checksum.lookup3(body))


def encode(ctx, by_linear, element, element_size, client_id, alloc, *, max_bits,
           index_elements, min_elements, min_pointers, page_bits, version=0):
    """An extensible array holding ``by_linear`` ({element index: record}); ``element(record
    or None)`` encodes one element of ``element_size`` bytes. Allocates header, index block,
    then data and secondary blocks in element order through ``alloc(nbytes) -> address``;
    data blocks of secondary blocks may be paged (only pages holding elements below the
    array's size are written and marked). Returns (header address, [(address, bytes)])."""
    total = max(by_linear) + 1
    hdr = ExtensibleArrayHeader(None, client_id, element_size, max_bits, index_elements,
                                min_elements, min_pointers, page_bits, 0, 0, 0, 0, total, 0,
                                None, version)
    off_size = hdr.block_offset_size
    n_iblk_super, n_iblk_dblk, n_iblk_sblk, isize = hdr.index_block_layout(ctx)
    page_n = 1 << page_bits

    def elements(first, count):
        return b"".join(element(by_linear.get(i)) for i in range(first, first + count))

    haddr = alloc(ExtensibleArrayHeader.size(ctx))
    iaddr = alloc(isize)
    prefix = bytes((version, client_id)) + ctx.pack_address(haddr)
    blocks = []
    dblk_addrs, sblk_addrs = [None] * n_iblk_dblk, [None] * n_iblk_sblk
    ndata = data_size = nsuper = super_size = 0
    realized = min(total, index_elements)
    d = 0
    for s, (nd, ne, start) in enumerate(hdr.super_blocks()):
        if index_elements + start >= total:
            break
        npages = ne // page_n if ne > page_n else 0
        if npages and s < n_iblk_super:
            from ..errors import UnsupportedFeatureError
            raise UnsupportedFeatureError("extensible arrays whose index block points to "
                                          "paged data blocks (page bits below "
                                          f"{_log2(ne)}) are not written")
        bitmap = bytearray(nd * ((npages + 7) // 8))
        addrs = []
        for j in range(nd):
            first = index_elements + start + j * ne
            if first >= total:
                addrs.append(None)
                continue
            head = b"EADB" + prefix + (start + j * ne).to_bytes(off_size, "little")
            if not npages:
                body = _sealed(head + elements(first, ne))
                a = alloc(len(body))
                blocks.append((a, body))
                size = len(body)
            else:
                page_bytes = page_n * element_size + 4
                head = _sealed(head)
                size = len(head) + npages * page_bytes
                a = alloc(size)
                blocks.append((a, head))
                for p in range(npages):
                    pfirst = first + p * page_n
                    if pfirst >= total:
                        break
                    bit = j * npages + p
                    bitmap[bit >> 3] |= 0x80 >> (bit & 7)
                    blocks.append((a + len(head) + p * page_bytes,
                                   _sealed(elements(pfirst, page_n))))
            addrs.append(a)
            ndata += 1
            data_size += size
            realized += ne
        if s < n_iblk_super:
            for a in addrs:
                dblk_addrs[d] = a
                d += 1
        else:
            body = _sealed(b"EASB" + prefix + start.to_bytes(off_size, "little") + bytes(bitmap)
                           + b"".join(ctx.pack_address(a) for a in addrs))
            a = alloc(len(body))
            blocks.append((a, body))
            sblk_addrs[s - n_iblk_super] = a
            nsuper += 1
            super_size += len(body)
    blocks.append((iaddr, _sealed(b"EAIB" + prefix + elements(0, index_elements)
                                  + b"".join(ctx.pack_address(a) for a in dblk_addrs)
                                  + b"".join(ctx.pack_address(a) for a in sblk_addrs))))
    hdr = ExtensibleArrayHeader(haddr, client_id, element_size, max_bits, index_elements,
                                min_elements, min_pointers, page_bits, nsuper, super_size,
                                ndata, data_size, total, realized, iaddr, version)
    return haddr, [(haddr, hdr.encode(ctx))] + blocks
