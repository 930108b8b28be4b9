"""Attribute Info message (spec IV.A.2.v): where an object keeps dense attributes."""
from dataclasses import dataclass


@dataclass(frozen=True)
class AttributeInfo:
    track_order: bool
    index_order: bool
    max_creation_index: int | None
    fractal_heap_address: int | None
    name_index_address: int | None
    creation_order_index_address: int | None

    @property
    def dense(self):
        return self.fractal_heap_address is not None


def decode(cur):
    cur.version((0,))
    flags = cur.u8()
    max_index = cur.u16() if flags & 0x01 else None
    heap = cur.address()
    name_index = cur.address()
    order_index = cur.address() if flags & 0x02 else None
    return AttributeInfo(bool(flags & 0x01), bool(flags & 0x02), max_index, heap, name_index,
                         order_index)


DECODERS = {0x15: decode}


def encode(info, ctx):
    """Encode an Attribute Info message (spec IV.A.2.v)."""
    import struct
    flags = (0x01 if info.track_order else 0) | (0x02 if info.index_order else 0)
    out = bytearray((0, flags))
    if info.track_order:
        out += struct.pack("<H", info.max_creation_index or 0)
    out += ctx.pack_address(info.fractal_heap_address)
    out += ctx.pack_address(info.name_index_address)
    if info.index_order:
        out += ctx.pack_address(info.creation_order_index_address)
    return bytes(out)
