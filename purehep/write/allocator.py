"""File space of a file being changed: best fit from a free list of blocks no committed
structure refers to (purehep.write.free_list), else at the end of the file."""
import bisect

from ..io.sink import SYSTEM_PAGE
from .free_list import FreeList

# A metadata block of PAGE_CONTAINED bytes or less lies inside one page of the system's page
# cache (SYSTEM_PAGE): a later in-place patch of it is then one write inside one page, which
# is applied whole even when the process is killed during the write (Linux copies a write
# into the page cache page by page and stops between two pages for a fatal signal; a
# structure across two pages could be left half old, half new, and a v1 B-tree node or
# symbol table node has no checksum to tell). Bigger blocks are not moved to a page
# boundary: the space left before them costs too much (1.5x the file for many small chunked
# datasets with libver="earliest", whose chunk B-tree nodes are 2096 bytes); their patches
# are written a page at a time, the first page last (FileSink.patch). 1024 covers object
# headers of a few messages, symbol table nodes, group B-tree nodes and the index headers,
# for 0.2 % more file.
PAGE_CONTAINED = 1024


class Allocator:
    """File space: best fit from the free list (FreeList; the last free block is extended
    when it ends the file), else at the end of the file.

    A block the last commit referred to becomes free only when the next commit no longer
    does (``pending`` until ``commit``). A block allocated since the last commit (``fresh``)
    is referred to by nothing on disk, so it is free again once the stage that released it
    is done (``end_stage``: until then the session may still read it): a session that grows
    a structure many times between commits reuses its own space.

    ``alignment`` = (threshold, interval), libhdf5's H5Pset_alignment (h5py's
    alignment_threshold and alignment_interval): a block of threshold bytes or more starts at
    a multiple of interval (addresses relative to the base address, past the user block).

    ``meta_block``: libhdf5's metadata block size (H5Pset_meta_block_size, h5py's
    meta_block_size; 0: none): metadata is then taken from blocks of that size reserved at
    the end of the file, which raw data does not share, as libhdf5's metadata aggregator
    gives it (the rest of a block goes to the free list when the next is reserved or the
    file is closed, ``end_meta_block``). A paged file has pages instead.

    ``base``: the file offset of address 0, so that a metadata block of PAGE_CONTAINED bytes
    or less is put inside one system page of the file (see SYSTEM_PAGE).

    ``page``: the page size of a file that uses paged aggregation (0: none). Metadata and
    raw data then never share a page, as libhdf5 keeps them (its page buffer caches a page
    as one or the other): a block smaller than a page lies inside one page of its kind, a
    bigger one starts a run of whole pages; only pages this session opened are reused (the
    kind of the file's other pages is not known), and blocks are not grown in place."""

    def __init__(self, eoa, alignment=(1, 1), page=0, meta_block=0, base=0):
        self.eoa = eoa
        self.base = base          # where address 0 lies in the file (past a user block)
        self.alignment = alignment
        self.page = page
        self.meta_block = 0 if page else int(meta_block)
        self.block = None         # [start, end) left of the metadata block in use
        self.kinds = {}           # paged: page number -> "meta" / "raw", pages opened here
        self.opened = []          # their numbers, sorted
        self.free = FreeList()    # [address, size] blocks, by address and by size
        self.pending = []
        self.fresh = {}           # address -> size, allocated since the last commit
        self.recycled = set()     # fresh blocks released since the last commit
        self.staged = []          # fresh blocks released, free at the end of the stage

    def alloc(self, n, kind="meta"):
        return self.alloc_slot(n, 0, kind)[0]

    def alloc_slot(self, n, room=0, kind="raw"):
        """(address, size) of a block of ``n`` bytes and up to ``room`` more: the smallest
        free block that holds ``n`` gives what it has up to ``n + room``, the end of the file
        gives ``n + room`` (blocks of the alignment threshold or more start aligned). ``kind``
        ("meta" or "raw") matters in a paged file only."""
        n = max(int(n), 1)
        if self.page:
            got = self._paged(n, kind)
            self.fresh[got[0]] = got[1]
            self.recycled.discard(got[0])
            return got
        want = n + max(int(room), 0)
        got = self._take(n, want, kind)
        if got is None and kind == "meta" and self.meta_block:
            got = self._from_meta_block(n)
        if got is None:
            a = self._aligned((self.eoa + 7) & ~7, n, kind)
            if a > self.eoa:
                self.free.add(self.eoa, a - self.eoa)      # the gap: free, referred to by none
            self.eoa = a + want
            got = (a, want)
        self.fresh[got[0]] = got[1]
        self.recycled.discard(got[0])
        return got

    def _from_meta_block(self, n):
        """(address, n) from the metadata block in use, or from a new one at the end of the
        file (``meta_block`` bytes, or ``n`` when more)."""
        if self.block is None or self.block[1] - self.block[0] < n:
            self.end_meta_block()
            start = (self.eoa + 7) & ~7
            if start > self.eoa:
                self.free.add(self.eoa, start - self.eoa)
            self.eoa = start + max(n, self.meta_block)
            self.block = [start, self.eoa]
        a = self.block[0]
        self.block[0] += n
        return a, n

    def open_meta_block(self, used):
        """A new file whose first ``used`` bytes are its superblock and root group: they
        lie in its first metadata block, as in libhdf5's, the rest of which is in use."""
        if self.meta_block and used < self.meta_block and self.eoa <= self.meta_block:
            self.block = [used, self.meta_block]
            self.eoa = self.meta_block

    def end_meta_block(self):
        """The rest of the metadata block in use is free space like any other."""
        if self.block is not None and self.block[1] > self.block[0]:
            self.free.add(self.block[0], self.block[1] - self.block[0])
        self.block = None

    def _paged(self, n, kind):
        """(address, n) in a page of ``kind`` this session opened, else in new pages at the
        end of the file (the rest of a new page's first ``page`` bytes free for its kind)."""
        page = self.page
        if n < page:
            got = self._take_in_page(n, kind)
            if got is not None:
                return got
        start = -(-self.eoa // page) * page
        if start > self.eoa:
            self.free.add(self.eoa, start - self.eoa)      # the end of the last page: its kind's
        pages = -(-n // page)
        for p in range(start // page, start // page + pages):
            self.kinds[p] = kind
            self.opened.append(p)     # (pages open at the end of the file: in order)
        self.eoa = start + pages * page
        if n < page:
            self.free.add(start + n, page - n)
        return start, n

    def claim_tail(self, end, kind):
        """The space from ``end`` to the end of the file is free, in pages of ``kind`` (a new
        paged file: the rest of its last page, as libhdf5 fills it)."""
        if end >= self.eoa:
            return
        for p in range(end // self.page, -(-self.eoa // self.page)):
            if p not in self.kinds:
                self.kinds[p] = kind
                bisect.insort(self.opened, p)
        self.free.add(end, self.eoa - end)

    def _take_in_page(self, n, kind):
        """A block of ``n`` bytes inside one page of ``kind`` from the free list, or None."""
        page, free, opened = self.page, self.free, self.opened
        for a, s in free:
            j = bisect.bisect_left(opened, a // page)
            for p in opened[j:bisect.bisect_right(opened, (a + s - 1) // page)]:
                lo, hi = max(a, p * page), min(a + s, (p + 1) * page)
                if hi - lo >= n and self.kinds[p] == kind:
                    free.take(a, lo, n)
                    return lo, n
        return None

    def _aligned(self, a, n, kind="raw"):
        """Where a block of ``n`` bytes free from ``a`` on starts: aligned as asked, and a
        metadata block of PAGE_CONTAINED bytes or less not across two system pages."""
        threshold, interval = self.alignment
        a = -(-a // interval) * interval if interval > 1 and n >= threshold else a
        if kind == "meta" and n <= PAGE_CONTAINED and self._across(a, n):
            a = -(-(a + self.base) // SYSTEM_PAGE) * SYSTEM_PAGE - self.base
        return a

    def _across(self, a, n):
        """True when [a, a + n) spans two system pages of the file."""
        return (a + self.base) // SYSTEM_PAGE != (a + self.base + n - 1) // SYSTEM_PAGE

    def _take(self, n, want, kind):
        """(address, size) from the smallest free block that holds ``n`` bytes where they
        may start (``_aligned``), up to ``want``; else from the free block ending the file,
        extended; else None."""
        free = self.free
        for a, s in free.fitting(n):
            start = self._aligned(a, n, kind)
            if start + n <= a + s:
                k = min(a + s - start, want)
                free.take(a, start, k)
                return start, k
        if free and free[-1][0] + free[-1][1] >= self.eoa:     # the free end of the file
            a = free[-1][0]
            start = self._aligned(a, n, kind)
            free.resize(len(free) - 1, a, start - a)
            self.eoa = start + want
            return start, want
        return None

    def extend(self, addr, n, new):
        """Grow the block at ``addr`` allocated since the last commit from ``n`` to ``new``
        bytes where it stands, if the space after it is free or the end of the file (and a
        block of PAGE_CONTAINED bytes or less stays inside its system page)."""
        if self.fresh.get(addr) != n or self.page:
            return False
        if new <= PAGE_CONTAINED and self._across(addr, new):
            return False
        end, need = addr + n, new - n
        free = self.free
        i = free.after(end)
        if i is not None and (free[i][1] >= need or end + free[i][1] >= self.eoa):
            free.resize(i, end + need, max(free[i][1] - need, 0))
        elif end < self.eoa:
            return False
        self.eoa = max(self.eoa, addr + new)
        self.fresh[addr] = new
        return True

    def release(self, addr, n):
        if addr is None or n <= 0:
            return
        addr, n = int(addr), int(n)
        if self.fresh.get(addr) == n:
            del self.fresh[addr]
            self.recycled.add(addr)
            self.staged.append((addr, n))
        elif addr not in self.recycled:        # (a fresh block released twice: once)
            self.pending.append((addr, n))

    def release_unused(self, addr, n):
        """Free at once a block allocated since the last commit that nothing staged refers
        to (the raw data of an object unlinked before it was staged)."""
        if self.fresh.get(addr) == n:
            del self.fresh[addr]
            self.recycled.add(addr)
            self.free.add(addr, n)

    def free_now(self, addr, n):
        """Free at once a block that no committed structure refers to nor will (the unused
        end of a chunk slot at close)."""
        self.free.add(int(addr), int(n))

    def end_stage(self):
        """The stage is written: the fresh blocks it released are free (returned, so that
        in-place patches staged for what they held can be dropped)."""
        freed, self.staged = self.staged, []
        for addr, n in freed:
            self.free.add(addr, n)
        return freed

    def commit(self):
        """The last commit is on disk: the blocks it stopped referring to are free."""
        self.end_stage()
        for a, s in sorted(self.pending):
            if not self.free.overlaps(a, s):      # (released twice: once)
                self.free.add(a, s)
        self.pending = []
        self.fresh = {}
        self.recycled = set()

    def cut_free_end(self):
        """Drop the free block that ends the file, if any (a paged file keeps whole pages):
        the new end of the file, or None when it does not change."""
        self.end_meta_block()
        free = self.free
        if not free or free[-1][0] + free[-1][1] < self.eoa:
            return None
        start = addr = free[-1][0]
        if self.page:
            addr = -(-addr // self.page) * self.page
            if addr >= self.eoa:
                return None
        free.resize(len(free) - 1, start, addr - start)
        self.eoa = addr
        return addr

    @property
    def free_bytes(self):
        return self.free.total


class BlockMeta:
    """Metadata blocks of one flush, each allocated separately (Emitter's ``meta``)."""

    def __init__(self, allocator):
        self.allocator = allocator
        self.blocks = {}
        self.starts = []
        self.owner = None         # blocks are recorded against the structure being built
        self.owned = {}

    def alloc(self, n, kind="meta"):
        """A block of ``n`` bytes (``kind`` "raw" for global heap collections, which a paged
        file keeps in raw data pages, as libhdf5 does)."""
        a = self.allocator.alloc(n, kind=kind)
        self.blocks[a] = bytearray(n)
        bisect.insort(self.starts, a)
        if self.owner is not None:
            self.owned.setdefault(self.owner, []).append((a, n))
        return a

    def put(self, addr, data):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            raise AssertionError(f"write at {addr} outside the allocated blocks")
        start = self.starts[i]
        blk = self.blocks[start]
        pos = addr - start
        data = bytes(data)
        if pos + len(data) > len(blk):
            raise AssertionError(f"write of {len(data)} bytes at {addr} outside its block")
        blk[pos:pos + len(data)] = data


