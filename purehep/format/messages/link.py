"""Link message (spec IV.A.2.g): hard, soft, external and user-defined links."""
from dataclasses import dataclass

from .attribute import name_text

HARD, SOFT, EXTERNAL = 0, 1, 64


@dataclass(frozen=True)
class Link:
    name: str
    type: int
    address: int | None = None      # hard
    target: str | None = None       # soft: path; external: object path
    filename: str | None = None     # external
    creation_order: int | None = None
    raw: bytes | None = None        # user-defined link data
    charset: int = 0                # of the name: 0 ASCII, 1 UTF-8 (names decode as UTF-8)


def decode(cur):
    cur.version((1,))
    flags = cur.u8()
    ltype = cur.u8() if flags & 0x08 else HARD
    order = cur.u64() if flags & 0x04 else None
    cset = cur.u8() if flags & 0x10 else 0
    name_len = cur.uint(1 << (flags & 0x03))
    if name_len == 0:
        raise cur.error("link name of length 0")
    name = name_text(cur.bytes(name_len))
    if ltype == HARD:
        return Link(name, HARD, address=cur.address(), creation_order=order, charset=cset)
    size = cur.u16()
    data = bytes(cur.bytes(size))
    if ltype == SOFT:
        return Link(name, SOFT, target=data.decode("utf-8", "surrogateescape"),
                    creation_order=order, charset=cset)
    if ltype == EXTERNAL:
        if not data:
            raise cur.error("empty external link information")
        parts = data[1:].split(b"\0")
        if len(parts) < 2:
            raise cur.error("external link information is not two null-terminated strings")
        return Link(name, EXTERNAL, target=parts[1].decode("utf-8", "surrogateescape"),
                    filename=parts[0].decode("utf-8", "surrogateescape"), creation_order=order,
                    charset=cset)
    return Link(name, ltype, creation_order=order, raw=data, charset=cset)


DECODERS = {0x06: decode}


def _name_bytes(name):
    raw = name.encode("utf-8", "surrogateescape")
    return raw, (0 if raw.isascii() else 1)


def encode(link, ctx):
    """Encode a Link message (spec IV.A.2.g). The character set field is stored only for
    non-ASCII names, the creation order only when ``creation_order`` is not None."""
    import struct
    raw, charset = _name_bytes(link.name)
    n = len(raw)
    width = 0 if n < 1 << 8 else 1 if n < 1 << 16 else 2
    flags = width
    if link.type != HARD:
        flags |= 0x08
    if link.creation_order is not None:
        flags |= 0x04
    if charset:
        flags |= 0x10
    out = bytearray((1, flags))
    if link.type != HARD:
        out.append(link.type)
    if link.creation_order is not None:
        out += struct.pack("<Q", link.creation_order)
    if charset:
        out.append(charset)
    out += n.to_bytes(1 << width, "little") + raw
    if link.type == HARD:
        out += ctx.pack_address(link.address)
    elif link.type == SOFT:
        target = link.target.encode("utf-8", "surrogateescape")
        out += struct.pack("<H", len(target)) + target
    elif link.type == EXTERNAL:
        info = (b"\0" + link.filename.encode("utf-8", "surrogateescape") + b"\0"
                + link.target.encode("utf-8", "surrogateescape") + b"\0")
        out += struct.pack("<H", len(info)) + info
    else:
        data = bytes(link.raw or b"")
        out += struct.pack("<H", len(data)) + data
    return bytes(out)
