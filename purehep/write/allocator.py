"""File space of a file being changed: first fit from a free list of blocks no committed
structure refers to, else at the end of the file."""
import bisect


class Allocator:
    """File space: first fit from the free list, else at the end of the file. Blocks released
    during a flush become free when that flush has committed (``commit``)."""

    def __init__(self, eoa):
        self.eoa = eoa
        self.free = []            # sorted [address, size]
        self.pending = []

    def alloc(self, n, reuse=True):
        n = max(int(n), 1)
        if reuse:
            for i, (a, s) in enumerate(self.free):
                if s >= n:
                    if s == n:
                        del self.free[i]
                    else:
                        self.free[i] = [a + n, s - n]
                    return a
        a = (self.eoa + 7) & ~7
        self.eoa = a + n
        return a

    def release(self, addr, n):
        if addr is not None and n > 0:
            self.pending.append((int(addr), int(n)))

    def commit(self):
        blocks = sorted(self.free + [list(b) for b in self.pending])
        self.pending = []
        merged = []
        for a, s in blocks:
            if merged and a < merged[-1][0] + merged[-1][1]:
                continue                          # released twice: keep the first
            if merged and merged[-1][0] + merged[-1][1] == a:
                merged[-1][1] += s
            else:
                merged.append([a, s])
        self.free = merged

    @property
    def free_bytes(self):
        return sum(s for _, s in self.free)


class BlockMeta:
    """Metadata blocks of one flush, each allocated separately (Emitter's ``meta``)."""

    def __init__(self, allocator):
        self.allocator = allocator
        self.blocks = {}
        self.starts = []
        self.owner = None         # blocks are recorded against the structure being built
        self.owned = {}

    def alloc(self, n):
        a = self.allocator.alloc(n)
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


