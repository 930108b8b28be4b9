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

from ..errors import ChecksumError
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
    """(header, uint8 array (max_entries, entry_size)) of the fixed array at ``addr``."""
    arr = Elements(ctx, addr)
    return arr.header, arr.all()


BATCH_PAGES = 1024       # pages verified together at most while lookup3 runs as plain Python


class Elements:
    """Random access to the elements of the fixed array at ``addr``: the header and the
    data block (with its page bitmap when paged) are read here; ``block(i)`` reads only the
    page holding element ``i`` (once: pages are kept), or, while lookup3 runs as plain
    Python, maybe the other pages of its run of BATCH_PAGES with it (``checksum.Batches``)."""

    def __init__(self, ctx, addr):
        self.ctx = ctx
        self.header = hdr = FixedArrayHeader.decode(ctx, addr)
        self.entry_size = hdr.entry_size
        self.page_bits = hdr.page_bits
        self.page_n = 1 << hdr.page_bits
        self._pages = {}
        self.npages = self.full = 0
        if hdr.data_block_address is None or hdr.max_entries == 0:
            self.present = None
            return
        daddr = hdr.data_block_address
        prefix, self.npages, self.dsize, _ = hdr.data_block_layout(ctx)
        buf = ctx.read(daddr, self.dsize, "fixed array data block")
        hdr.check_data_block(ctx, buf, daddr)
        checksum.verify(ctx, buf, "fixed array data block", ctx.absolute(daddr))
        n, es = hdr.max_entries, hdr.entry_size
        if not self.npages:
            self.present = np.ones(1, bool)
            self._pages[0] = memoryview(buf)[prefix:prefix + n * es]
            return
        from ..kernels.chunkindex import bitmap_expand
        self.present = bitmap_expand(np.frombuffer(buf, np.uint8, (self.npages + 7) // 8, prefix),
                                     self.npages)
        self.full = n >> hdr.page_bits                   # pages holding page_n elements
        self.page_bytes = self.page_n * es + 4
        self._batches = checksum.Batches(ctx, self.page_bytes, "fixed array data block page")

    def block(self, i):
        """(first element index, bytes holding the elements from it on) of the page (or
        unpaged data block) holding element ``i``; None when the array has no data block
        or the page is unset."""
        p = i >> self.page_bits if self.npages else 0
        buf = self._pages.get(p)
        if buf is None:
            if self.present is None or not self.present[p]:
                return None
            if p < self.full:
                run = p // BATCH_PAGES
                self._pages.update(self._batches.load(
                    run, min(BATCH_PAGES, self.full - run * BATCH_PAGES), p,
                    self._page_address(p), lambda: self._unloaded(run)))
                buf = self._pages[p]
            else:
                buf = self._pages[p] = self._read_page(p)
        return p * self.page_n, buf

    def _page_address(self, p):
        return self.header.data_block_address + self.dsize + p * self.page_bytes

    def _unloaded(self, run):
        """{page: address} of the set full pages of run ``run`` of BATCH_PAGES not loaded."""
        a = run * BATCH_PAGES
        b = min(a + BATCH_PAGES, self.full)
        return {int(q): self._page_address(int(q)) for q in np.flatnonzero(self.present[a:b]) + a
                if int(q) not in self._pages}

    def all(self):
        """The elements up to the last set page (those after it are undefined, and a header
        may claim any number): a uint8 array (n, entry_size), unset pages in between as rows
        of 0xFF (the undefined address)."""
        hdr = self.header
        if self.present is None or not self.present.any():
            return np.zeros((0, hdr.entry_size), np.uint8)
        if not self.npages:
            return self._rows(self._pages[0])
        last = int(np.flatnonzero(self.present)[-1])
        n = min(hdr.max_entries, (last + 1) * self.page_n)
        self.ctx.check_range(hdr.data_block_address + self.dsize,
                             (last + 1) * self.page_bytes,
                             "fixed array data block pages")
        out = np.full((n, hdr.entry_size), 0xFF, np.uint8)
        for first, rows in self.blocks():
            out[first:first + len(rows)] = rows
        return out

    def blocks(self):
        """(first element index, uint8 rows) of every set page, in order. The pages are
        read in one piece and their checksums verified together."""
        if self.present is None:
            return
        if not self.npages:
            yield 0, self._rows(self._pages[0])
            return
        hdr, ctx = self.header, self.ctx
        es, pn, full = hdr.entry_size, self.page_n, self.full
        pb = self.page_bytes
        start = hdr.data_block_address + self.dsize
        mat = np.frombuffer(ctx.read(start, full * pb, "fixed array data block pages"),
                            np.uint8).reshape(full, pb)
        if ctx.verify_checksums and full:
            from ..kernels.checksum import lookup3_batch
            bad = np.flatnonzero(self.present[:full] & (lookup3_batch(mat[:, :-4]) !=
                                 mat[:, -4:].copy().view("<u4").reshape(-1)))
            if len(bad):
                raise ChecksumError("checksum mismatch", "fixed array data block page",
                                    ctx.absolute(start + int(bad[0]) * pb))
        for p in np.flatnonzero(self.present):
            p = int(p)
            yield p * pn, (mat[p, :-4].reshape(pn, es) if p < full else
                           self._rows(self._read_page(p)[:-4]))

    def _rows(self, buf):
        """The elements ``buf`` holds (and nothing else) as a uint8 matrix (count, entry
        size)."""
        return np.frombuffer(buf, np.uint8).reshape(-1, self.entry_size)

    def _read_page(self, p):
        """The bytes of page ``p`` (the last, when it holds fewer than page_n elements),
        verified."""
        hdr, ctx = self.header, self.ctx
        cnt = min(self.page_n, hdr.max_entries - p * self.page_n)
        paddr = self._page_address(p)
        pbuf = ctx.read(paddr, cnt * hdr.entry_size + 4, "fixed array data block page")
        checksum.verify(ctx, pbuf, "fixed array data block page", ctx.absolute(paddr))
        return pbuf
