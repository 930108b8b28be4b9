"""Level 1E: global heap collections ("GCOL"), spec III.E.

A collection is decoded once (``ctx.cached("gcol", addr, ...)``) into one bytes buffer plus
dense per-index offset/size tables, so that many heap IDs into the same collection (vlen
strings, region references) are resolved with array look-ups instead of re-parsing.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError

STRUCTURE = "global heap collection"
MAX_COLLECTION = 1 << 31      # refuse absurd collection sizes before reading them


@dataclass(frozen=True, eq=False)
class GlobalHeap:
    address: int
    version: int
    size: int
    data: bytes                 # the whole collection
    offsets: np.ndarray         # int64 per object index: start of its data in ``data``; -1 absent
    sizes: np.ndarray           # int64 per object index: object size
    refcounts: np.ndarray       # int64 per object index
    base: int                   # absolute file offset of ``data[0]``

    @classmethod
    def decode(cls, ctx, addr):
        """Decode the collection at relative address ``addr`` (not cached; see collection())."""
        if ctx.defined(addr, STRUCTURE) == 0:
            raise FormatError("a global heap collection at address 0", STRUCTURE,
                              ctx.absolute(addr))
        so = ctx.sizeof_lengths
        head = 8 + so
        ctx.check_range(addr, head, STRUCTURE)
        cur = ctx.cursor(addr, head, STRUCTURE)
        cur.signature(b"GCOL")
        version = cur.version((1,))
        cur.skip(3)
        size = cur.length()
        if size < head or size > MAX_COLLECTION:
            raise FormatError(f"invalid collection size {size}", STRUCTURE, ctx.absolute(addr))
        ctx.check_range(addr, size, STRUCTURE)
        data = bytes(ctx.read(addr, size, STRUCTURE))
        base = ctx.absolute(addr)
        obj_head = 8 + so
        found = {}
        pos = head
        while pos + obj_head <= size:
            index = int.from_bytes(data[pos:pos + 2], "little")
            refcount = int.from_bytes(data[pos + 2:pos + 4], "little")
            osize = int.from_bytes(data[pos + 8:pos + 8 + so], "little")
            if index == 0:          # free space: the rest of the collection
                break
            start = pos + obj_head
            if osize > size - start:
                raise FormatError(f"heap object {index} of {osize} bytes overruns the collection",
                                  STRUCTURE, base + pos)
            if index in found:
                raise FormatError(f"duplicate heap object index {index}", STRUCTURE, base + pos)
            found[index] = (start, osize, refcount)
            pos = start + ((osize + 7) & ~7)
        n = (max(found) + 1) if found else 1
        offsets = np.full(n, -1, np.int64)
        sizes = np.zeros(n, np.int64)
        refcounts = np.zeros(n, np.int64)
        for i, (s, z, r) in found.items():
            offsets[i], sizes[i], refcounts[i] = s, z, r
        return cls(addr, version, size, data, offsets, sizes, refcounts, base)

    def __len__(self):
        return int(np.count_nonzero(self.offsets >= 0))

    def get(self, index):
        """The bytes of object ``index``."""
        if not 0 < index < len(self.offsets) or self.offsets[index] < 0:
            raise FormatError(f"no heap object {index} in the collection", STRUCTURE, self.base)
        s = int(self.offsets[index])
        return self.data[s:s + int(self.sizes[index])]

    def locate(self, indexes):
        """Vectorised look-up: (starts, sizes) int64 arrays for an array of object indexes."""
        idx = np.asarray(indexes, np.int64)
        bad = (idx <= 0) | (idx >= len(self.offsets))
        if np.any(bad):
            raise FormatError(f"no heap object {int(idx[bad][0])} in the collection", STRUCTURE,
                              self.base)
        starts = self.offsets[idx]
        if np.any(starts < 0):
            raise FormatError(f"no heap object {int(idx[starts < 0][0])} in the collection",
                              STRUCTURE, self.base)
        return starts, self.sizes[idx]


def collection(ctx, addr):
    """The collection at ``addr``, decoded once per context."""
    return ctx.cached("gcol", addr, lambda: GlobalHeap.decode(ctx, addr))


def get_object(ctx, collection_address, index):
    """The bytes of heap object ``index`` of the collection at ``collection_address``."""
    return collection(ctx, collection_address).get(index)


MIN_COLLECTION = 4096    # the library never makes a smaller collection (and reads that much)


def collection_size(ctx, object_sizes):
    """Bytes of a collection holding objects of ``object_sizes`` (at least MIN_COLLECTION)."""
    head = 8 + ctx.sizeof_lengths
    n = head + sum(head + ((s + 7) & ~7) for s in object_sizes)
    return max(MIN_COLLECTION, n + (head if n < MIN_COLLECTION else 0))


def encode(ctx, objects, size=None):
    """A global heap collection (spec III.E) holding ``objects`` (bytes) as indexes 1..n,
    each with reference count 1 (libhdf5 writes 0 for objects no one counts; readers do not
    care), and the remaining space as the free-space object (index 0)."""
    import struct
    head = 8 + ctx.sizeof_lengths
    total = size if size is not None else collection_size(ctx, [len(o) for o in objects])
    out = bytearray(b"GCOL" + bytes((1, 0, 0, 0)) + ctx.pack_length(total))
    for i, obj in enumerate(objects, 1):
        obj = bytes(obj)
        out += struct.pack("<HH4x", i, 0) + ctx.pack_length(len(obj))
        out += obj + bytes((-len(obj)) % 8)
    free = total - len(out)
    if free >= head:
        out += struct.pack("<HH4x", 0, 0) + ctx.pack_length(free)
    if len(out) > total:
        raise ValueError("global heap objects exceed the collection size")
    return bytes(out) + bytes(total - len(out))
