"""The free blocks of a file being changed (purehep.write.allocator), kept two ways: by
address, to merge a freed block with its free neighbours, and by size, for best fit.

Best fit (the smallest free block that holds a request) rather than first fit (the free
block lowest in the file): a file whose chunks are rewritten in every session frees blocks
of about the size its next chunks need, a few bytes more or less; first fit gives a chunk
the first block big enough, often one a later, bigger chunk needed, which then goes to the
end of the file. Best fit keeps the big blocks for the big requests (Wilson, Johnstone,
Neely and Boles, "Dynamic Storage Allocation: A Survey and Critical Review", 1995: best
fit and address-ordered first fit fragment least). Finding the block is a binary search
of the size index (``bisect``), not a walk over the list."""
import bisect


class FreeList:
    """Disjoint free blocks: ``blocks``, [address, size] lists sorted by address (no two
    touch: they are merged); ``sizes``, (size, address) pairs sorted."""

    def __init__(self, blocks=()):
        self.blocks = []
        self.sizes = []
        for a, n in sorted(blocks):
            self.add(a, n)

    def __len__(self):
        return len(self.blocks)

    def __iter__(self):
        return iter(self.blocks)

    def __getitem__(self, i):
        return self.blocks[i]

    @property
    def total(self):
        return sum(n for _, n in self.blocks)

    def add(self, addr, n):
        """Free [addr, addr + n), merged with the free blocks it touches."""
        blocks = self.blocks
        i = bisect.bisect_left(blocks, [addr, 0])
        if i > 0 and blocks[i - 1][0] + blocks[i - 1][1] == addr:
            i -= 1
            addr, n = blocks[i][0], blocks[i][1] + n
            self._unsize(*blocks.pop(i))
        if i < len(blocks) and addr + n == blocks[i][0]:
            n += blocks[i][1]
            self._unsize(*blocks.pop(i))
        blocks.insert(i, [addr, n])
        bisect.insort(self.sizes, (n, addr))

    def take(self, addr, start, k):
        """Take [start, start + k) out of the free block at ``addr``; what is left of the
        block before and after it stays free."""
        i = bisect.bisect_left(self.blocks, [addr, 0])
        a, s = self.blocks.pop(i)
        self._unsize(a, s)
        for piece in ([start + k, a + s - start - k], [a, start - a]):
            if piece[1] > 0:
                self.blocks.insert(i, piece)
                bisect.insort(self.sizes, (piece[1], piece[0]))

    def resize(self, i, addr, n):
        """Block ``i`` becomes [addr, addr + n) (inside the old one; n 0: gone)."""
        self._unsize(*self.blocks[i])
        if n > 0:
            self.blocks[i] = [addr, n]
            bisect.insort(self.sizes, (n, addr))
        else:
            del self.blocks[i]

    def fitting(self, n):
        """(address, size) of the free blocks of ``n`` bytes or more, smallest first."""
        sizes = self.sizes
        for j in range(bisect.bisect_left(sizes, (n, -1)), len(sizes)):
            yield sizes[j][1], sizes[j][0]

    def overlaps(self, addr, n):
        """True when [addr, addr + n) meets a free block."""
        blocks = self.blocks
        i = bisect.bisect_right(blocks, [addr, float("inf")])
        return (i > 0 and blocks[i - 1][0] + blocks[i - 1][1] > addr) or \
            (i < len(blocks) and blocks[i][0] < addr + n)

    def after(self, end):
        """The index of the free block starting at ``end``, or None."""
        i = bisect.bisect_left(self.blocks, [end, 0])
        return i if i < len(self.blocks) and self.blocks[i][0] == end else None

    def _unsize(self, addr, n):
        sizes = self.sizes
        del sizes[bisect.bisect_left(sizes, (n, addr))]
