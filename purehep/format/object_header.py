"""Level 2A: data object headers, versions 1 and 2, with continuation blocks.

Spec: "IV.A.1.a Version 1 Data Object Header Prefix", "IV.A.1.b Version 2 Data Object Header
Prefix" and "IV.A.2.q Object Header Continuation Message". Messages are kept as raw bytes and
decoded on demand by ``messages.decode``.
"""
import struct
from dataclasses import dataclass, field

from ..errors import FormatError
from . import checksum
from .context import Cursor

CONTINUATION = 0x10
_V2_PLAIN = struct.Struct("<BHB")        # message type, size, flags
_V2_ORDERED = struct.Struct("<BHBH")     # ... and creation order
MAX_BLOCKS = 1 << 16      # continuation blocks one header may chain (cycle and bomb guard)


@dataclass(frozen=True)
class RawMessage:
    """One header message: its type, flags, creation order (v2) and undecoded body."""
    type: int
    flags: int
    data: memoryview
    offset: int               # absolute file offset of the body
    creation_order: int | None = None

    @property
    def shared(self):
        return bool(self.flags & 0x02)


@dataclass
class ObjectHeader:
    address: int
    version: int
    flags: int = 0
    refcount: int = 1
    times: dict | None = None           # access/modification/change/birth (v2, flag bit 5)
    attr_phase_change: tuple | None = None  # (max compact, min dense), v2 flag bit 4
    messages: list = field(default_factory=list)

    @property
    def tracks_attribute_order(self):
        return bool(self.flags & 0x04)

    @property
    def indexes_attribute_order(self):
        return bool(self.flags & 0x08)

    def find(self, mtype):
        """All raw messages of one type, in header order."""
        return [m for m in self.messages if m.type == mtype]

    def first(self, mtype):
        for m in self.messages:
            if m.type == mtype:
                return m
        return None

    @classmethod
    def decode(cls, ctx, addr):
        if addr is None:
            raise FormatError("undefined object header address", "object header")
        ctx.check_range(addr, 16, "object header")
        first = bytes(ctx.read(addr, 4, "object header"))
        if first == b"OHDR":
            return _decode_v2(ctx, addr)
        if first[0] == 1:
            return _decode_v1(ctx, addr)
        raise FormatError(f"not an object header (first bytes {first!r})", "object header",
                          ctx.absolute(addr))


def _walk_continuations(ctx, header, pending, parse_block):
    seen = set()
    while pending:
        if len(seen) >= MAX_BLOCKS:
            raise FormatError("too many continuation blocks", "object header",
                              ctx.absolute(header.address))
        addr, length = pending.pop(0)
        if addr in seen:
            raise FormatError(f"continuation block at {addr} is referenced twice (cycle)",
                              "object header continuation", ctx.absolute(addr))
        seen.add(addr)
        parse_block(addr, length)


def _continuation_target(cur, msg):
    body = Cursor(msg.data, msg.offset, "object header continuation message", cur.ctx)
    addr, length = body.address(), body.length()
    if addr is None:
        raise body.error("continuation address is undefined")
    return addr, length


def _decode_v1(ctx, addr):
    cur = ctx.cursor(addr, 16, "object header")
    cur.version((1,))
    cur.skip(1)
    nmessages = cur.u16()
    refcount = cur.u32()
    size = cur.u32()
    header = ObjectHeader(addr, 1, refcount=refcount)
    pending = [(addr + 16, size)]

    def parse_block(baddr, length):
        blk = ctx.cursor(baddr, length, "object header (v1) message block")
        while blk.remaining >= 8:
            mtype, msize, mflags = blk.u16(), blk.u16(), blk.u8()
            blk.skip(3)
            if msize > blk.remaining:
                raise blk.error(f"message of type {mtype:#x} and size {msize} overruns its block")
            msg = RawMessage(mtype, mflags, blk.bytes(msize), blk.offset - msize)
            header.messages.append(msg)
            if mtype == CONTINUATION:
                pending.append(_continuation_target(blk, msg))
            if len(header.messages) > max(nmessages, 1) * 4 + 1024:
                raise blk.error("more messages than the header declares")
            blk.align(8)

    _walk_continuations(ctx, header, pending, parse_block)
    return header


def _decode_v2(ctx, addr):
    cur = ctx.cursor(addr, min(64, ctx.source.size - ctx.absolute(addr)), "object header")
    cur.skip(4)
    cur.version((2,))
    flags = cur.u8()
    header = ObjectHeader(addr, 2, flags)
    if flags & 0x20:
        header.times = dict(zip(("access", "modification", "change", "birth"),
                                (cur.u32(), cur.u32(), cur.u32(), cur.u32())))
    if flags & 0x10:
        header.attr_phase_change = (cur.u16(), cur.u16())
    size = cur.uint(1 << (flags & 0x03))
    prefix = cur.pos
    track_order = bool(flags & 0x04)
    total = prefix + size + 4
    ctx.check_range(addr, total, "object header")
    whole = ctx.read(addr, total, "object header")
    checksum.verify(ctx, whole, "object header", ctx.absolute(addr))
    pending = []

    head = _V2_ORDERED if track_order else _V2_PLAIN
    hsize = head.size

    def parse_messages(blk, end):
        buf, pos, base, append = blk.buf, blk.pos, blk.base, header.messages.append
        while end - pos >= hsize:
            fields = head.unpack_from(buf, pos)
            mtype, msize, mflags = fields[0], fields[1], fields[2]
            pos += hsize
            if msize > end - pos:
                blk.pos = pos
                raise blk.error(f"message of type {mtype:#x} and size {msize} overruns its block")
            msg = RawMessage(mtype, mflags, buf[pos:pos + msize], base + pos,
                             fields[3] if track_order else None)
            pos += msize
            append(msg)
            if mtype == CONTINUATION:
                pending.append(_continuation_target(blk, msg))

    parse_messages(Cursor(whole, ctx.absolute(addr), "object header", ctx, prefix), prefix + size)

    def parse_block(baddr, length):
        blk = ctx.cursor(baddr, length, "object header continuation block")
        blk.signature(b"OCHK")
        checksum.verify(ctx, blk.buf, "object header continuation block", blk.base)
        parse_messages(blk, length - 4)

    _walk_continuations(ctx, header, pending, parse_block)
    return header
