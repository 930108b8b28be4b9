"""Extensible Array chunk index (spec VII.D): header EAHD, index block EAIB, secondary
("super") blocks EASB, data blocks EADB and data block pages.

Derived parameters follow the library: super block ``s`` has 2**(s//2) data blocks of
2**((s+1)//2) * min_elements elements; the index block holds ``index_elements`` elements,
2*(min_pointers-1) data block addresses (super blocks 0 .. 2*log2(min_pointers)-1) and the
addresses of the remaining super blocks. A data block with more than 2**page_bits elements is
paged: its pages (elements + checksum) follow it, and its super block's page bitmap (bit
``dblock * npages + page``, most significant bit first) says which pages exist. Block offsets
are (max_bits + 7) // 8 bytes. Every block is checksummed and bounds-checked.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError
from . import checksum


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

    @classmethod
    def decode(cls, ctx, addr):
        so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
        n = 4 + 8 + 6 * sl + so + 4
        buf = ctx.read(addr, n, "extensible array header")
        cur = ctx.cursor(addr, n, "extensible array header")
        cur.signature(b"EAHD")
        cur.version((0, 1))
        fields = [cur.u8() for _ in range(7)]
        lengths = [cur.length() for _ in range(6)]
        iblk = cur.address()
        checksum.verify(ctx, buf, "extensible array header", ctx.absolute(addr))
        h = cls(addr, *fields, *lengths, iblk)
        if (h.element_size == 0 or not 0 < h.max_bits <= 64 or h.min_elements == 0
                or h.min_elements & (h.min_elements - 1) or h.min_pointers == 0
                or h.min_pointers & (h.min_pointers - 1) or h.page_bits > 40
                or _log2(h.min_elements) > h.max_bits):
            raise cur.error("implausible extensible array parameters")
        return h

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
    """(header, uint8 array (max_index_set, element_size)); missing entries are 0xFF rows."""
    hdr = ExtensibleArrayHeader.decode(ctx, addr)
    so = ctx.sizeof_offsets
    es = hdr.element_size
    total = hdr.max_index_set
    if total > (1 << 40):
        raise FormatError(f"{total} elements is implausible", "extensible array header",
                          ctx.absolute(addr))
    out = np.full((total, es), 0xFF, np.uint8)
    if hdr.index_block_address is None or total == 0:
        return hdr, out
    sblocks = hdr.super_blocks()
    n_iblk_super = 2 * _log2(hdr.min_pointers)
    n_iblk_dblk = 2 * (hdr.min_pointers - 1)
    n_iblk_sblk = max(len(sblocks) - n_iblk_super, 0)
    iaddr = hdr.index_block_address
    isize = 4 + 1 + 1 + so + hdr.index_elements * es + (n_iblk_dblk + n_iblk_sblk) * so + 4
    buf = ctx.read(iaddr, isize, "extensible array index block")
    _check_prefix(ctx, buf, iaddr, b"EAIB", hdr, "extensible array index block")
    raw = np.frombuffer(buf, np.uint8)
    pos = 6 + so
    k = min(hdr.index_elements, total)
    out[:k] = raw[pos:pos + k * es].reshape(k, es)
    pos += hdr.index_elements * es
    dblk_addrs = _addresses(ctx, raw[pos:pos + n_iblk_dblk * so])
    pos += n_iblk_dblk * so
    sblk_addrs = _addresses(ctx, raw[pos:pos + n_iblk_sblk * so])
    page_n = 1 << hdr.page_bits
    base = hdr.index_elements
    seen = {addr, iaddr}
    d = 0
    for s, (nd, ne, start) in enumerate(sblocks):
        if base + start >= total:
            break
        if s < n_iblk_super:
            for j in range(nd):
                _read_data_block(ctx, hdr, dblk_addrs[d], base + start + j * ne, ne, None, 0,
                                 out, seen)
                d += 1
            continue
        saddr = sblk_addrs[s - n_iblk_super]
        if saddr is None:
            continue
        _remember(ctx, seen, saddr)
        npages = ne // page_n if ne > page_n else 0
        bm_size = nd * ((npages + 7) // 8) if npages else 0
        ssize = 4 + 1 + 1 + so + hdr.block_offset_size + bm_size + nd * so + 4
        sbuf = ctx.read(saddr, ssize, "extensible array secondary block")
        _check_prefix(ctx, sbuf, saddr, b"EASB", hdr, "extensible array secondary block")
        sraw = np.frombuffer(sbuf, np.uint8)
        p = 6 + so + hdr.block_offset_size
        bitmap = sraw[p:p + bm_size]
        p += bm_size
        addrs = _addresses(ctx, sraw[p:p + nd * so])
        for j in range(nd):
            first = base + start + j * ne
            if first >= total:
                break
            _read_data_block(ctx, hdr, addrs[j], first, ne, bitmap, j * npages, out, seen)
    return hdr, out


def _addresses(ctx, raw):
    so = ctx.sizeof_offsets
    vals = [int.from_bytes(bytes(raw[i:i + so]), "little") for i in range(0, len(raw), so)]
    return [None if v == ctx.undefined else v for v in vals]


def _remember(ctx, seen, a):
    if a in seen:
        raise FormatError("extensible array block referenced twice", "extensible array",
                          ctx.absolute(a))
    seen.add(a)


def _check_prefix(ctx, buf, baddr, sig, hdr, structure):
    cur = ctx.cursor(baddr, len(buf), structure)
    cur.signature(sig)
    cur.version((0, 1))
    if cur.u8() != hdr.client_id:
        raise cur.error("client id differs from the header's")
    if cur.address() != hdr.address:
        raise cur.error("block does not point back to its header")
    checksum.verify(ctx, buf, structure, ctx.absolute(baddr))


def _read_data_block(ctx, hdr, daddr, first, ne, bitmap, bit0, out, seen):
    if daddr is None:
        return
    _remember(ctx, seen, daddr)
    so, es = ctx.sizeof_offsets, hdr.element_size
    total = out.shape[0]
    page_n = 1 << hdr.page_bits
    prefix = 4 + 1 + 1 + so + hdr.block_offset_size
    structure = "extensible array data block"
    if ne <= page_n:
        dsize = prefix + ne * es + 4
        buf = ctx.read(daddr, dsize, structure)
        _check_prefix(ctx, buf, daddr, b"EADB", hdr, structure)
        cnt = min(ne, total - first)
        out[first:first + cnt] = np.frombuffer(buf, np.uint8)[prefix:prefix + cnt * es].reshape(cnt, es)
        return
    buf = ctx.read(daddr, prefix + 4, structure)
    _check_prefix(ctx, buf, daddr, b"EADB", hdr, structure)
    if bitmap is None:
        raise FormatError("paged data block without a page bitmap", structure, ctx.absolute(daddr))
    page_bytes = page_n * es + 4
    for p in range(ne // page_n):
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
        out[pfirst:pfirst + cnt] = np.frombuffer(pbuf, np.uint8)[:cnt * es].reshape(cnt, es)
