"""Link message (spec IV.A.2.g): hard, soft, external and user-defined links."""
from dataclasses import dataclass

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


def decode(cur):
    cur.version((1,))
    flags = cur.u8()
    ltype = cur.u8() if flags & 0x08 else HARD
    order = cur.u64() if flags & 0x04 else None
    charset = cur.u8() if flags & 0x10 else 0
    name_len = cur.uint(1 << (flags & 0x03))
    if name_len == 0:
        raise cur.error("link name of length 0")
    name = bytes(cur.bytes(name_len)).decode("utf-8" if charset else "ascii", "surrogateescape")
    if ltype == HARD:
        return Link(name, HARD, address=cur.address(), creation_order=order)
    size = cur.u16()
    data = bytes(cur.bytes(size))
    if ltype == SOFT:
        return Link(name, SOFT, target=data.decode("utf-8", "surrogateescape"), creation_order=order)
    if ltype == EXTERNAL:
        if not data:
            raise cur.error("empty external link information")
        parts = data[1:].split(b"\0")
        if len(parts) < 2:
            raise cur.error("external link information is not two null-terminated strings")
        return Link(name, EXTERNAL, target=parts[1].decode("utf-8", "surrogateescape"),
                    filename=parts[0].decode("utf-8", "surrogateescape"), creation_order=order)
    return Link(name, ltype, creation_order=order, raw=data)


DECODERS = {0x06: decode}
