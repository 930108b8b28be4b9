"""Link Info message (spec IV.A.2.c): where a new-style group keeps dense links.

The Attribute Info message (IV.A.2.v) has the same fields with a 2-byte maximum creation
index instead of 8; both are decoded and encoded here, parameterised by that width.
"""
import struct
from dataclasses import dataclass

TRACKED, INDEXED = 0x01, 0x02


@dataclass(frozen=True)
class LinkInfo:
    track_order: bool
    index_order: bool
    max_creation_index: int | None
    fractal_heap_address: int | None
    name_index_address: int | None
    creation_order_index_address: int | None

    @property
    def dense(self):
        return self.fractal_heap_address is not None


def decode_info(cur, cls, index_size):
    """Decode a Link Info or Attribute Info body into ``cls``."""
    cur.version((0,))
    flags = cur.u8()
    max_index = cur.uint(index_size) if flags & TRACKED else None
    heap = cur.address()
    name_index = cur.address()
    order_index = cur.address() if flags & INDEXED else None
    return cls(bool(flags & TRACKED), bool(flags & INDEXED), max_index, heap, name_index,
               order_index)


def encode_info(info, ctx, index_size):
    flags = (TRACKED if info.track_order else 0) | (INDEXED if info.index_order else 0)
    out = bytearray((0, flags))
    if info.track_order:
        out += struct.pack({2: "<H", 8: "<Q"}[index_size], info.max_creation_index or 0)
    out += ctx.pack_address(info.fractal_heap_address)
    out += ctx.pack_address(info.name_index_address)
    if info.index_order:
        out += ctx.pack_address(info.creation_order_index_address)
    return bytes(out)


def decode(cur):
    return decode_info(cur, LinkInfo, 8)


def encode(info, ctx):
    """Encode a Link Info message (spec IV.A.2.c)."""
    return encode_info(info, ctx, 8)


DECODERS = {0x02: decode}
