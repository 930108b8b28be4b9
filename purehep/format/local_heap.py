"""Level 1D: local heaps ("HEAP"), the name store of symbol-table groups and external files."""
from dataclasses import dataclass

from ..errors import FormatError


@dataclass(frozen=True)
class LocalHeap:
    address: int
    data_size: int
    free_list_offset: int | None
    data_address: int
    data: bytes

    @classmethod
    def decode(cls, ctx, addr):
        size = 8 + 2 * ctx.sizeof_lengths + ctx.sizeof_offsets
        cur = ctx.cursor(addr, size, "local heap")
        cur.signature(b"HEAP")
        cur.version((0,))
        cur.skip(3)
        data_size = cur.length()
        free = cur.length()
        data_addr = cur.address()
        if data_addr is None:
            raise cur.error("data segment address is undefined")
        data = bytes(ctx.read(data_addr, data_size, "local heap data segment"))
        return cls(addr, data_size, None if free == ctx.undefined else free, data_addr, data)

    def string(self, offset, ctx=None):
        """The null-terminated string at ``offset`` in the data segment."""
        end = self.data.find(b"\0", offset)
        if offset < 0 or offset >= len(self.data) or end < 0:
            absolute = ctx.absolute(self.data_address) + offset if ctx else None
            raise FormatError(f"string offset {offset} is outside the data segment "
                              f"({len(self.data)} bytes) or unterminated", "local heap", absolute)
        return self.data[offset:end]


def local_heap(ctx, addr):
    return ctx.cached("heap", addr, lambda: LocalHeap.decode(ctx, addr))


FREE_NULL = 1     # the library's "end of free list" offset


def heap_data(names):
    """(data segment bytes, {name: offset}) for a local heap holding the empty string at
    offset 0 and then each name, null-terminated and padded to 8 bytes (spec III.D)."""
    data = bytearray(8)
    offsets = {b"": 0}
    for name in names:
        if name in offsets:
            continue
        offsets[name] = len(data)
        raw = name + b"\0"
        data += raw + bytes((-len(raw)) % 8)
    return bytes(data), offsets


def encode(ctx, data_size, data_address, free_list_offset=None):
    """The local heap header ("HEAP", version 0); ``free_list_offset`` None = empty list."""
    return (b"HEAP" + bytes(4) + ctx.pack_length(data_size)
            + ctx.pack_length(FREE_NULL if free_list_offset is None else free_list_offset)
            + ctx.pack_address(data_address))


def header_size(ctx):
    return 8 + 2 * ctx.sizeof_lengths + ctx.sizeof_offsets
