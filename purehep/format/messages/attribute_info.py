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
