"""Fill Value messages: the old one (spec IV.A.2.e, type 0x04) and versions 1-3 of the new
one (spec IV.A.2.f, type 0x05)."""
from dataclasses import dataclass

ALLOC_EARLY, ALLOC_LATE, ALLOC_INCREMENTAL = 1, 2, 3
FILL_ON_ALLOC, FILL_NEVER, FILL_IF_SET = 0, 1, 2


@dataclass(frozen=True)
class FillValue:
    version: int
    value: bytes | None           # None when no fill value is defined (zeros are used)
    alloc_time: int = ALLOC_LATE
    fill_time: int = FILL_IF_SET
    defined: bool = False


def decode_old(cur):
    size = cur.u32()
    value = bytes(cur.bytes(size)) if size else None
    return FillValue(0, value, defined=value is not None)


def decode(cur):
    version = cur.version((1, 2, 3))
    if version < 3:
        alloc, fill_time, defined = cur.u8(), cur.u8(), cur.u8()
        value = None
        if version == 1 or defined:
            size = cur.u32()
            value = bytes(cur.bytes(size)) if size else None
        return FillValue(version, value, alloc, fill_time, bool(defined))
    flags = cur.u8()
    value = None
    if flags & 0x20:
        size = cur.u32()
        value = bytes(cur.bytes(size)) if size else None
    undefined = bool(flags & 0x10)
    return FillValue(3, value, flags & 0x03, (flags >> 2) & 0x03, not undefined)


DECODERS = {0x04: decode_old, 0x05: decode}
