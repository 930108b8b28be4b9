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
            if size >= 0x80000000:  # libhdf5 reads a signed size; -1 means "no value"
                size = 0
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


def encode(fill):
    """Encode a Fill Value message (type 0x05), version 2 or 3 (spec IV.A.2.f).

    ``fill.defined`` with ``value`` None is the library's default fill value (zeros)."""
    import struct
    if fill.version == 3:
        flags = (fill.alloc_time & 0x03) | ((fill.fill_time & 0x03) << 2)
        if not fill.defined:
            flags |= 0x10
        elif fill.value is not None:
            flags |= 0x20
            return bytes((3, flags)) + struct.pack("<I", len(fill.value)) + bytes(fill.value)
        return bytes((3, flags))
    head = bytes((fill.version, fill.alloc_time, fill.fill_time, 1 if fill.defined else 0))
    if fill.version == 1 or fill.defined:
        value = bytes(fill.value or b"")
        return head + struct.pack("<I", len(value)) + value
    return head
