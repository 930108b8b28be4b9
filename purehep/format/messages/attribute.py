"""Attribute message (spec IV.A.2.m), versions 1-3: name, datatype, dataspace and raw value.

The value stays raw here; ``purehep.format.convert`` turns it into numpy values on access.
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
        cur.u8()  # the name's character set: names decode as UTF-8 either way (see name_text)
    pad = version == 1
    name_raw = bytes(_field(cur, name_size, pad)[0])
    name = name_text(name_raw.split(b"\0", 1)[0])
    datatype = _message(cur, 0x03, type_size, pad, flags & 0x01)
    dataspace = _message(cur, 0x01, space_size, pad, flags & 0x02)
    if datatype is None or dataspace is None:
        raise cur.error("attribute without a datatype or dataspace")
    nbytes = datatype.size * dataspace.size
    start = cur.offset
    data = bytes(cur.bytes(nbytes))
    return Attribute(name, datatype, dataspace, data, start)


DECODERS = {0x0C: decode}


def name_text(raw):
    """An attribute or link name as a str: its bytes decoded as UTF-8 whatever the character
    set field says, since h5py stores non-ASCII attribute names as UTF-8 bytes under the ASCII
    flag (libhdf5's default creation property list) and decodes every name as UTF-8; bytes
    that are not UTF-8 survive as surrogate escapes."""
    return bytes(raw).decode("utf-8", "surrogateescape")


def encode(name, datatype, dataspace, data, version=3, charset=0):
    """Encode an Attribute message (spec IV.A.2.m) from the encoded datatype and dataspace
    message bodies and the raw value bytes. Version 1 pads the name, datatype and dataspace
    to multiples of 8 bytes; version 3 stores the name's character set (0 ASCII, 1 UTF-8) and
    no padding. The name is always stored as UTF-8 bytes; the default character set is ASCII
    for every name, as h5py writes them (it creates attributes with libhdf5's default
    attribute creation property list)."""
    import struct
    raw = name.encode("utf-8", "surrogateescape") + b"\0"
    if version == 1:
        def pad(b):
            return b + bytes((-len(b)) % 8)
        return (struct.pack("<BBHHH", 1, 0, len(raw), len(datatype), len(dataspace))
                + pad(raw) + pad(datatype) + pad(dataspace) + bytes(data))
    if version != 3:
        raise ValueError(f"purehep writes attribute message versions 1 and 3, not {version}")
    return (struct.pack("<BBHHHB", 3, 0, len(raw), len(datatype), len(dataspace), charset)
            + raw + datatype + dataspace + bytes(data))
