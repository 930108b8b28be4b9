"""Fixed Array chunk index (spec VII.C): header FAHD, data block FADB, data block pages.

The data block is paged when the maximum number of entries exceeds 2**page_bits; it then
holds a page bitmap (most significant bit first) instead of the elements, and the pages
(elements + checksum each) follow the data block contiguously. Structures are checksummed;
the elements are returned as one uint8 matrix (max entries, entry size), uninitialized pages
as rows of 0xFF (the undefined address).
"""
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError
from . import checksum

MAX_ENTRIES = 1 << 40


@dataclass(frozen=True)
class FixedArrayHeader:
    address: int
    client_id: int
    entry_size: int
    page_bits: int
    max_entries: int
    data_block_address: int | None

    @classmethod
    def decode(cls, ctx, addr):
        so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
        n = 4 + 4 + sl + so + 4
        buf = ctx.read(addr, n, "fixed array header")
        cur = ctx.cursor(addr, n, "fixed array header")
        cur.signature(b"FAHD")
        cur.version((0, 1))
        client = cur.u8()
        esize = cur.u8()
        page_bits = cur.u8()
        max_entries = cur.length()
        dblk = cur.address()
        checksum.verify(ctx, buf, "fixed array header", ctx.absolute(addr))
        if esize == 0 or page_bits > 40 or max_entries > MAX_ENTRIES:
            raise cur.error(f"implausible fixed array header (entry size {esize}, page bits "
                            f"{page_bits}, {max_entries} entries)")
        return cls(addr, client, esize, page_bits, max_entries, dblk)


def read_elements(ctx, addr):
    """(header, uint8 array (max_entries, entry_size)) of the fixed array at ``addr``."""
    hdr = FixedArrayHeader.decode(ctx, addr)
    so = ctx.sizeof_offsets
    es, n = hdr.entry_size, hdr.max_entries
    out = np.full((n, es), 0xFF, np.uint8)
    if hdr.data_block_address is None or n == 0:
        return hdr, out
    daddr = hdr.data_block_address
    page_n = 1 << hdr.page_bits
    paged = n > page_n
    prefix = 4 + 1 + 1 + so
    npages = -(-n // page_n) if paged else 0
    bitmap_size = (npages + 7) // 8
    dsize = prefix + (bitmap_size if paged else n * es) + 4
    buf = ctx.read(daddr, dsize, "fixed array data block")
    cur = ctx.cursor(daddr, dsize, "fixed array data block")
    cur.signature(b"FADB")
    cur.version((0, 1))
    if cur.u8() != hdr.client_id:
        raise cur.error("data block client id differs from the header's")
    if cur.address() != addr:
        raise cur.error("data block does not point back to its header")
    checksum.verify(ctx, buf, "fixed array data block", ctx.absolute(daddr))
    raw = np.frombuffer(buf, np.uint8)
    if not paged:
        out[:] = raw[prefix:prefix + n * es].reshape(n, es)
        return hdr, out
    from ..kernels.chunkindex import bitmap_expand
    init = bitmap_expand(raw[prefix:prefix + bitmap_size], npages)
    page_bytes = page_n * es + 4
    for p in np.flatnonzero(init):
        p = int(p)
        first = p * page_n
        cnt = min(page_n, n - first)
        paddr = daddr + dsize + p * page_bytes
        pbuf = ctx.read(paddr, cnt * es + 4, "fixed array data block page")
        checksum.verify(ctx, pbuf, "fixed array data block page", ctx.absolute(paddr))
        out[first:first + cnt] = np.frombuffer(pbuf, np.uint8)[:cnt * es].reshape(cnt, es)
    return hdr, out
