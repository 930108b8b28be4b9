"""External Data Files message (spec IV.A.2.h): raw data kept in other files."""
import struct
from dataclasses import dataclass, field

MAX_SLOTS = 1 << 16


@dataclass(frozen=True)
class ExternalFile:
    name_offset: int
    offset: int
    size: int


@dataclass(frozen=True)
class ExternalFiles:
    heap_address: int
    slots: tuple
    offset: int | None = field(default=None, compare=False)   # of the decoded message body


def decode(cur):
    cur.version((1,))
    cur.skip(3)
    cur.u16()  # allocated slots
    used = cur.u16()
    heap = cur.address()
    slots = tuple(ExternalFile(cur.length(), cur.length(), cur.length()) for _ in range(used))
    return ExternalFiles(heap, slots, cur.base)


def encode(ext, ctx):
    """Version 1; allocated slots = used slots, as libhdf5 writes them; a size of
    ``ctx``'s all-ones length means "to the end of the file" (H5F_UNLIMITED)."""
    out = bytearray((1, 0, 0, 0)) + struct.pack("<HH", len(ext.slots), len(ext.slots))
    out += ctx.pack_address(ext.heap_address)
    for slot in ext.slots:
        out += ctx.pack_length(slot.name_offset) + ctx.pack_length(slot.offset) + \
            ctx.pack_length(slot.size)
    return bytes(out)


DECODERS = {0x07: decode}
