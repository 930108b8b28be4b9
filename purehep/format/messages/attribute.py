"""Attribute message (spec IV.A.2.m), versions 1-3: name, datatype, dataspace and raw value.

The value stays raw here; ``purehep.format.convert`` turns it into numpy values on access.
"""
from dataclasses import dataclass

from .. import messages as _messages

TYPE_SHARED = 0x01          # flags bit 0 (versions 2 and 3): the datatype is a shared message


@dataclass(frozen=True)
class Attribute:
    name: str
    datatype: object
    dataspace: object
    data: bytes
    offset: int                 # absolute offset of the value bytes
    type_address: int | None = None     # the committed datatype's header, if shared with one


def _field(cur, size, pad):
    """(bytes, absolute offset) of the next field, skipping v1's padding to 8 bytes."""
    start = cur.offset
    body = cur.bytes(size)
    if pad:
        cur.skip(min((-size) % 8, cur.remaining))
    return body, start


def _message(cur, mtype, size, pad, shared):
    """(decoded message, committed header address or None) of the datatype / dataspace
    field; a shared one (the attribute's flags) is resolved to where it is kept."""
    body, start = _field(cur, size, pad)
    if not shared:
        return _messages.decode_body(cur.ctx, mtype, body, start), None
    from ..object_header import RawMessage
    raw = RawMessage(mtype, 0x02, body, start)
    return _messages.decode(cur.ctx, raw), _messages.committed_address(cur.ctx, raw)


def decode(cur):
    version = cur.version((1, 2, 3))
    flags = cur.u8() if version >= 2 else (cur.skip(1) or 0)
    name_size, type_size, space_size = cur.u16(), cur.u16(), cur.u16()
    if version == 3:
        cur.u8()  # the name's character set: names decode as UTF-8 either way (see name_text)
    pad = version == 1
    name_raw = bytes(_field(cur, name_size, pad)[0])
    name = name_text(name_raw.split(b"\0", 1)[0])
    datatype, type_address = _message(cur, 0x03, type_size, pad, flags & TYPE_SHARED)
    dataspace = _message(cur, 0x01, space_size, pad, flags & 0x02)[0]
    if datatype is None or dataspace is None:
        raise cur.error("attribute without a datatype or dataspace")
    nbytes = datatype.size * dataspace.size
    start = cur.offset
    data = bytes(cur.bytes(nbytes))
    return Attribute(name, datatype, dataspace, data, start, type_address)


DECODERS = {0x0C: decode}


def name_text(raw):
    """An attribute or link name as a str: its bytes decoded as UTF-8 whatever the character
    set field says, since h5py stores non-ASCII attribute names as UTF-8 bytes under the ASCII
    flag (libhdf5's default creation property list) and decodes every name as UTF-8; bytes
    that are not UTF-8 survive as surrogate escapes."""
    return bytes(raw).decode("utf-8", "surrogateescape")


def encode(name, datatype, dataspace, data, version=3, charset=0, flags=0):
    """Encode an Attribute message (spec IV.A.2.m) from the encoded datatype and dataspace
    message bodies and the raw value bytes. Version 1 pads the name, datatype and dataspace
    to multiples of 8 bytes and has no flags; versions 2 and 3 have no padding and the flags
    (TYPE_SHARED: ``datatype`` is a shared message, a committed type's); version 3 stores the
    name's character set (0 ASCII, 1 UTF-8). The name is always stored as UTF-8 bytes; the
    default character set is ASCII for every name, as h5py writes them (it creates attributes
    with libhdf5's default attribute creation property list)."""
    import struct
    raw = name.encode("utf-8", "surrogateescape") + b"\0"
    if version == 1:
        if flags:
            raise ValueError("a version 1 attribute message has no flags (shared parts)")

        def pad(b):
            return b + bytes((-len(b)) % 8)
        return (struct.pack("<BBHHH", 1, 0, len(raw), len(datatype), len(dataspace))
                + pad(raw) + pad(datatype) + pad(dataspace) + bytes(data))
    if version == 2:
        head = struct.pack("<BBHHH", 2, flags, len(raw), len(datatype), len(dataspace))
    elif version == 3:
        head = struct.pack("<BBHHHB", 3, flags, len(raw), len(datatype), len(dataspace),
                           charset)
    else:
        raise ValueError(f"attribute message versions are 1, 2 and 3, not {version}")
    return head + raw + datatype + dataspace + bytes(data)
