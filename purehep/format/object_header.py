"""Level 2A: data object headers, versions 1 and 2, with continuation blocks.

Spec: "IV.A.1.a Version 1 Data Object Header Prefix", "IV.A.1.b Version 2 Data Object Header
Prefix" and "IV.A.2.q Object Header Continuation Message". Messages are kept as raw bytes and
decoded on demand by ``messages.decode``.
"""
import struct
from dataclasses import dataclass, field

from ..errors import FormatError, UnsupportedFeatureError
from . import checksum
from .context import Cursor

CONTINUATION = 0x10
DATASPACE, DATATYPE, LAYOUT, LINK_INFO, LINK, GROUP_INFO, SYMBOL_TABLE = \
    0x01, 0x03, 0x08, 0x02, 0x06, 0x0A, 0x11
_V2_PLAIN = struct.Struct("<BHB")        # message type, size, flags
_V2_ORDERED = struct.Struct("<BHBH")     # ... and creation order
MAX_BLOCKS = 1 << 16      # continuation blocks one header may chain (cycle and bomb guard)
# The message types libhdf5 understands: those spec IV.A.2 registers (0x00-0x18), less 0x09,
# the "bogus" message only libhdf5's test builds know (its test file tbogus.h5 uses it).
KNOWN_TYPES = frozenset(range(0x19)) - {0x09}
FAIL_IF_UNKNOWN_FOR_WRITE, FAIL_IF_UNKNOWN = 0x08, 0x80     # message flags bits 3 and 7
DONT_SHARE, MARK_IF_UNKNOWN = 0x04, 0x10                   # message flags bits 2 and 4


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

    def check_unknown(self, ctx, writable):
        """Refuse the object as libhdf5 does (spec IV.A.1.a, message flags): a message of a
        type the library does not understand, flagged "fail if unknown" (bit 7), or "fail if
        unknown and open for write" (bit 3) when the file is open for writing."""
        for m in self.messages:
            if m.type in KNOWN_TYPES:
                continue
            if m.flags & FAIL_IF_UNKNOWN or (writable and m.flags & FAIL_IF_UNKNOWN_FOR_WRITE):
                raise UnsupportedFeatureError(
                    f"object header at offset {ctx.absolute(self.address)}: unknown message "
                    f"(type {m.type:#x}, at offset {m.offset}) with 'fail if unknown' flag "
                    f"found ({m.flags:#04x})")

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
        ctx.defined(addr, "object header")
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


# --- encoding ----------------------------------------------------------------------------------
# A message to encode is (type, flags, body) or (type, flags, body, creation order); ``room``
# adds a NIL message of that many body bytes: free space for later header messages (modify mode
# writes new messages there instead of adding a continuation block).

V1_PREFIX = 16        # version, reserved, count, refcount, size, then padding to 8 bytes
V1_MESSAGE_HEADER = 8


def _v1_pad(n):
    return n + ((-n) % 8)


def v1_size(messages, room=0):
    """Bytes of a version 1 object header holding ``messages`` (and ``room`` NIL bytes)."""
    n = V1_PREFIX + sum(V1_MESSAGE_HEADER + _v1_pad(len(m[2])) for m in messages)
    return n + (V1_MESSAGE_HEADER + _v1_pad(room) if room else 0)


def encode_v1(messages, refcount=1, room=0):
    """A version 1 object header (spec IV.A.1.a): one chunk, messages aligned to 8 bytes."""
    body = bytearray()
    count = 0
    for m in list(messages) + ([(0, 0, bytes(_v1_pad(room)))] if room else []):
        data = bytes(m[2])
        size = _v1_pad(len(data))
        if size > 0xFFFF:
            raise ValueError(f"header message of type {m[0]:#x} is {size} bytes (limit 65535)")
        body += struct.pack("<HHB3x", m[0], size, m[1]) + data + bytes(size - len(data))
        count += 1
    prefix = struct.pack("<BBHII4x", 1, 0, count, refcount, len(body))
    return prefix + bytes(body)


def v2_prefix_size(chunk_size, times=None, phase_change=None):
    width = 1 if chunk_size < 1 << 8 else 2 if chunk_size < 1 << 16 else \
        4 if chunk_size < 1 << 32 else 8
    return 4 + 1 + 1 + (16 if times else 0) + (4 if phase_change else 0) + width


def v2_chunk_size(messages, track_order=False, room=0):
    head = 6 if track_order else 4
    n = sum(head + len(m[2]) for m in messages)
    return n + (head + room if room else 0)


def v2_size(messages, track_order=False, room=0, times=None, phase_change=None):
    """Bytes of a version 2 object header (one chunk) holding ``messages``."""
    chunk = v2_chunk_size(messages, track_order, room)
    return v2_prefix_size(chunk, times, phase_change) + chunk + 4


def encode_v2(messages, track_order=False, index_order=False, times=None, phase_change=None,
              room=0):
    """A version 2 object header (spec IV.A.1.b), one chunk, checksummed.

    ``times`` = (access, modification, change, birth) seconds; ``phase_change`` = (maximum
    compact, minimum dense) attribute counts when not the defaults (8, 6); ``track_order``
    (flag bit 2) makes every message carry its creation order."""
    chunk = bytearray()
    for m in list(messages) + ([(0, 0, bytes(room), 0)] if room else []):
        data = bytes(m[2])
        if len(data) > 0xFFFF:
            raise ValueError(f"header message of type {m[0]:#x} is {len(data)} bytes (limit 65535)")
        if track_order:
            order = m[3] if len(m) > 3 and m[3] is not None else 0
            chunk += struct.pack("<BHBH", m[0], len(data), m[1], order)
        else:
            chunk += struct.pack("<BHB", m[0], len(data), m[1])
        chunk += data
    n = len(chunk)
    code = 0 if n < 1 << 8 else 1 if n < 1 << 16 else 2 if n < 1 << 32 else 3
    flags = code | (0x04 if track_order else 0) | (0x08 if index_order else 0)
    if phase_change:
        flags |= 0x10
    if times:
        flags |= 0x20
    out = bytearray(b"OHDR") + bytes((2, flags))
    if times:
        out += struct.pack("<4I", *times)
    if phase_change:
        out += struct.pack("<HH", *phase_change)
    out += n.to_bytes(1 << code, "little") + chunk
    out += struct.pack("<I", checksum.lookup3(bytes(out)))
    return bytes(out)


def header_of(ctx, address):
    """The object header at ``address``, refused (UnsupportedFeatureError) when it holds an
    unknown message flagged to fail, as libhdf5 refuses to open such objects."""
    header = ctx.cached("ohdr", address, lambda: ObjectHeader.decode(ctx, address))
    header.check_unknown(ctx, ctx.writable)
    return header


def object_kind(header):
    """"dataset", "group" or "datatype": what the messages of ``header`` make the object."""
    types = {m.type for m in header.messages}
    if LAYOUT in types:
        return "dataset"
    if types & {SYMBOL_TABLE, LINK_INFO, LINK, GROUP_INFO}:
        return "group"
    if DATATYPE in types:
        return "datatype"
    return "group"  # an object header with nothing else is an (empty) old group
