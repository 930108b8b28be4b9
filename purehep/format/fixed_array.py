"""Fixed Array chunk index (spec VII.C): header FAHD, data block FADB, data block pages.

The data block is paged when the maximum number of entries exceeds 2**page_bits; it then
holds a page bitmap (most significant bit first) instead of the elements, and the pages
(elements + checksum each) follow the data block contiguously. Structures are checksummed;
the elements are returned as one uint8 matrix (entries, entry size), uninitialized pages as
rows of 0xFF (the undefined address), those after the last initialized page left out.

``encode`` writes an array of already-encoded elements (any client: dense chunks 0/1,
structured chunks 2/3); the element encoding belongs to the index that uses the array.
"""
from dataclasses import dataclass
import struct

import numpy as np

from ..errors import FormatError
from . import checksum
from .context import Cursor

MAX_ENTRIES = 1 << 40


@dataclass(frozen=True)
class FixedArrayHeader:
    address: int
    client_id: int
    entry_size: int
    page_bits: int
    max_entries: int
    data_block_address: int | None
    version: int = 0

    @staticmethod
    def size(ctx):
        return 4 + 4 + ctx.sizeof_lengths + ctx.sizeof_offsets + 4

    @classmethod
    def decode(cls, ctx, addr):
        n = cls.size(ctx)
        buf = ctx.read(addr, n, "fixed array header")
        cur = ctx.cursor(addr, n, "fixed array header")
        cur.signature(b"FAHD")
        version = cur.version((0, 1))
        client = cur.u8()
        esize = cur.u8()
        page_bits = cur.u8()
        max_entries = cur.length()
        dblk = cur.address()
        checksum.verify(ctx, buf, "fixed array header", ctx.absolute(addr))
        if esize == 0 or page_bits > 40 or max_entries > MAX_ENTRIES:
            raise cur.error(f"implausible fixed array header (entry size {esize}, page bits "
                            f"{page_bits}, {max_entries} entries)")
        return cls(addr, client, esize, page_bits, max_entries, dblk, version)

    def encode(self, ctx):
        body = (b"FAHD" + bytes((self.version, self.client_id, self.entry_size, self.page_bits))
                + ctx.pack_length(self.max_entries) + ctx.pack_address(self.data_block_address))
        return _sealed(body)

    def data_block_layout(self, ctx):
        """(prefix bytes, pages, data block bytes without its pages, pages' bytes) of the data
        block: the prefix is signature, version, client id and header address; a paged block
        holds the page bitmap where an unpaged one holds the elements."""
        n, es = self.max_entries, self.entry_size
        page_n = 1 << self.page_bits
        npages = -(-n // page_n) if n > page_n else 0
        prefix = 4 + 1 + 1 + ctx.sizeof_offsets
        dsize = prefix + ((npages + 7) // 8 if npages else n * es) + 4
        return prefix, npages, dsize, (n * es + 4 * npages if npages else 0)

    def check_data_block(self, ctx, buf, daddr):
        """Check a data block's prefix (signature, version, client id, back pointer)."""
        cur = Cursor(buf, ctx.absolute(daddr), "fixed array data block", ctx)
        cur.signature(b"FADB")
        cur.version((0, 1))
        if cur.u8() != self.client_id:
            raise cur.error("data block client id differs from the header's")
        if cur.address() != self.address:
            raise cur.error("data block does not point back to its header")


def _sealed(body):
    return body + struct.pack("<I", checksum.lookup3(body))


def encode(ctx, elements, entry_size, client_id, page_bits, alloc, version=0):
    """A fixed array holding ``elements`` (encoded, ``entry_size`` bytes each): allocates the
    header, then the data block (with its pages when more than 2**page_bits entries) through
    ``alloc(nbytes) -> address``; returns (header address, [(address, bytes)])."""
    n = len(elements)
    haddr = alloc(FixedArrayHeader.size(ctx))
    page_n = 1 << page_bits
    prefix = b"FADB" + bytes((version, client_id)) + ctx.pack_address(haddr)
    blocks = []
    if n <= page_n:
        body = _sealed(prefix + b"".join(elements))
        daddr = alloc(len(body))
        blocks.append((daddr, body))
    else:
        npages = -(-n // page_n)
        bitmap = bytearray((npages + 7) // 8)
        for pg in range(npages):
            bitmap[pg >> 3] |= 0x80 >> (pg & 7)
        body = _sealed(prefix + bytes(bitmap))
        page_bytes = page_n * entry_size + 4
        daddr = alloc(len(body) + npages * page_bytes)
        blocks.append((daddr, body))
        for pg in range(npages):
            blocks.append((daddr + len(body) + pg * page_bytes,
                           _sealed(b"".join(elements[pg * page_n:(pg + 1) * page_n]))))
    hdr = FixedArrayHeader(haddr, client_id, entry_size, page_bits, n, daddr, version)
    return haddr, [(haddr, hdr.encode(ctx))] + blocks


def read_elements(ctx, addr):
    """(header, uint8 array (entries, entry_size)) of the fixed array at ``addr``: row i is
    entry i; the entries after the last initialized page (all of them when there is no data
    block) are left out, being undefined."""
    hdr = FixedArrayHeader.decode(ctx, addr)
    es, n = hdr.entry_size, hdr.max_entries
    if hdr.data_block_address is None or n == 0:
        return hdr, np.zeros((0, es), np.uint8)
    daddr = hdr.data_block_address
    page_n = 1 << hdr.page_bits
    prefix, npages, dsize, _ = hdr.data_block_layout(ctx)
    paged = npages > 0
    bitmap_size = (npages + 7) // 8
    buf = ctx.read(daddr, dsize, "fixed array data block")
    hdr.check_data_block(ctx, buf, daddr)
    checksum.verify(ctx, buf, "fixed array data block", ctx.absolute(daddr))
    raw = np.frombuffer(buf, np.uint8)
    if not paged:
        return hdr, raw[prefix:prefix + n * es].reshape(n, es).copy()
    from ..kernels.chunkindex import bitmap_expand
    init = np.flatnonzero(bitmap_expand(raw[prefix:prefix + bitmap_size], npages))
    if not len(init):
        return hdr, np.zeros((0, es), np.uint8)
    page_bytes = page_n * es + 4
    last = int(init[-1])       # the rows up to the last page in use (which lies in the file)
    ctx.check_range(daddr + dsize + last * page_bytes, min(page_n, n - last * page_n) * es + 4,
                    "fixed array data block page")
    out = np.full((min(n, (last + 1) * page_n), es), 0xFF, np.uint8)
    for p in init:
        p = int(p)
        first = p * page_n
        cnt = min(page_n, n - first)
        paddr = daddr + dsize + p * page_bytes
        pbuf = ctx.read(paddr, cnt * es + 4, "fixed array data block page")
        checksum.verify(ctx, pbuf, "fixed array data block page", ctx.absolute(paddr))
        out[first:first + cnt] = np.frombuffer(pbuf, np.uint8)[:cnt * es].reshape(cnt, es)
    return hdr, out
