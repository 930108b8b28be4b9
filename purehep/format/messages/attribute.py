"""Attribute message (spec IV.A.2.m), versions 1-3: name, datatype, dataspace and raw value.

The value stays raw here; ``purehep.convert`` turns it into numpy values on access.
"""
from dataclasses import dataclass

from .. import messages as _messages


@dataclass(frozen=True)
class Attribute:
    name: str
    datatype: object
    dataspace: object
    data: bytes
    offset: int                 # absolute offset of the value bytes


def _field(cur, size, pad):
    """(bytes, absolute offset) of the next field, skipping v1's padding to 8 bytes."""
    start = cur.offset
    body = cur.bytes(size)
    if pad:
        cur.skip(min((-size) % 8, cur.remaining))
    return body, start


def _message(cur, mtype, size, pad, shared):
    body, start = _field(cur, size, pad)
    if not shared:
        return _messages.decode_body(cur.ctx, mtype, body, start)
    from ..object_header import RawMessage
    return _messages.decode(cur.ctx, RawMessage(mtype, 0x02, body, start))


def decode(cur):
    version = cur.version((1, 2, 3))
    flags = cur.u8() if version >= 2 else (cur.skip(1) or 0)
    name_size, type_size, space_size = cur.u16(), cur.u16(), cur.u16()
    if version == 3:
        cur.skip(1)       # the name's character set (the name is read as UTF-8 either way)
    pad = version == 1
    name_raw = bytes(_field(cur, name_size, pad)[0])
    # UTF-8 whatever the character set says (ASCII is a subset), as h5py reads names; version
    # 1 and 2 messages have no character set field and hold UTF-8 names too
    name = name_raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
    datatype = _message(cur, 0x03, type_size, pad, flags & 0x01)
    dataspace = _message(cur, 0x01, space_size, pad, flags & 0x02)
    if datatype is None or dataspace is None:
        raise cur.error("attribute without a datatype or dataspace")
    nbytes = datatype.size * dataspace.size
    start = cur.offset
    data = bytes(cur.bytes(nbytes))
    return Attribute(name, datatype, dataspace, data, start)


DECODERS = {0x0C: decode}


def encode(name, datatype, dataspace, data, version=3):
    """Encode an Attribute message (spec IV.A.2.m) from the encoded datatype and dataspace
    message bodies and the raw value bytes. Version 1 pads the name, datatype and dataspace
    to multiples of 8 bytes; version 3 stores the name's character set and no padding."""
    import struct
    raw = name.encode("utf-8", "surrogateescape") + b"\0"
    charset = 0 if raw.isascii() else 1
    if version == 1:
        def pad(b):
            return b + bytes((-len(b)) % 8)
        return (struct.pack("<BBHHH", 1, 0, len(raw), len(datatype), len(dataspace))
                + pad(raw) + pad(datatype) + pad(dataspace) + bytes(data))
    if version != 3:
        raise ValueError(f"purehep writes attribute message versions 1 and 3, not {version}")
    return (struct.pack("<BBHHHB", 3, 0, len(raw), len(datatype), len(dataspace), charset)
            + raw + datatype + dataspace + bytes(data))
