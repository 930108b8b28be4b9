"""External Data Files message (spec IV.A.2.h): raw data kept in other files."""
from dataclasses import dataclass

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


def decode(cur):
    cur.version((1,))
    cur.skip(3)
    cur.u16()  # allocated slots
    used = cur.u16()
    heap = cur.address()
    slots = tuple(ExternalFile(cur.length(), cur.length(), cur.length()) for _ in range(used))
    return ExternalFiles(heap, slots)


DECODERS = {0x07: decode}
