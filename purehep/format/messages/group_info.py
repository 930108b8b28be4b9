"""Group Info message (spec IV.A.2.k): compact/dense thresholds and size estimates."""
from dataclasses import dataclass


@dataclass(frozen=True)
class GroupInfo:
    max_compact: int = 8
    min_dense: int = 6
    est_entries: int = 4
    est_name_length: int = 8


def decode(cur):
    cur.version((0,))
    flags = cur.u8()
    info = {}
    if flags & 0x01:
        info["max_compact"], info["min_dense"] = cur.u16(), cur.u16()
    if flags & 0x02:
        info["est_entries"], info["est_name_length"] = cur.u16(), cur.u16()
    return GroupInfo(**info)


DECODERS = {0x0A: decode}


def encode(info):
    """Encode a Group Info message (spec IV.A.2.k); default values are not stored."""
    import struct
    flags = 0
    out = b""
    if (info.max_compact, info.min_dense) != (8, 6):
        flags |= 0x01
        out += struct.pack("<HH", info.max_compact, info.min_dense)
    if (info.est_entries, info.est_name_length) != (4, 8):
        flags |= 0x02
        out += struct.pack("<HH", info.est_entries, info.est_name_length)
    return bytes((0, flags)) + out
