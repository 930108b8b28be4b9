"""Object headers of objects already in the file, rewritten around new messages (spec
III.A.1/III.A.2): chunk 0 keeps its place and size; what no longer fits goes to a new
continuation block."""
import struct

from ..format import checksum

NIL, DATASPACE, LINK_INFO, DATATYPE, FILL_OLD, FILL, LINK, EXTERNAL_FILES, LAYOUT = \
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08
GROUP_INFO, FILTERS, ATTRIBUTE, CONTINUATION, STAB, ATTR_INFO, REFCOUNT = \
    0x0A, 0x0B, 0x0C, 0x10, 0x11, 0x15, 0x16
GROUP_LEAF_K, GROUP_INTERNAL_K = 4, 16
CONSTANT, SHARED, DONT_SHARE = 0x01, 0x02, 0x04        # header message flags (spec IV.A.1.a)


def _pad8(n):
    return n + (-n) % 8


def rebuild_messages(header, replace_types, extra, keep_refcount=None):
    """The header's messages (type, flags, body, creation order) with every message of the
    types in ``replace_types`` replaced by ``extra[type]`` (at the first one's place, or at
    the end); NIL and continuation messages are dropped (the layout is redone)."""
    out, done = [], set()
    for m in header.messages:
        if m.type in (NIL, CONTINUATION):
            continue
        if m.type in replace_types:
            if m.type not in done:
                done.add(m.type)
                out.extend(extra.get(m.type, []))
            continue
        out.append((m.type, m.flags, bytes(m.data), m.creation_order))
    for t in replace_types:
        if t not in done:
            out.extend(extra.get(t, []))
    return out


class HeaderLayout:
    """Chunk 0 of an existing header (its size is fixed) and what it needs around it."""

    def __init__(self, ctx, header):
        self.ctx, self.header = ctx, header
        addr = header.address
        if header.version == 1:
            raw = bytes(ctx.read(addr, 16, "object header"))
            self.chunk0 = struct.unpack_from("<I", raw, 8)[0]
            self.prefix = 16
        else:
            flags = header.flags
            pre = 6 + (16 if flags & 0x20 else 0) + (4 if flags & 0x10 else 0)
            width = 1 << (flags & 0x03)
            raw = bytes(ctx.read(addr, pre + width, "object header"))
            self.chunk0 = int.from_bytes(raw[pre:pre + width], "little")
            self.prefix_bytes = raw
            self.prefix = pre + width
        self.old_blocks = []
        so, sl = ctx.sizeof_offsets, ctx.sizeof_lengths
        for m in header.messages:
            if m.type == CONTINUATION:
                a = int.from_bytes(bytes(m.data[:so]), "little")
                n = int.from_bytes(bytes(m.data[so:so + sl]), "little")
                self.old_blocks.append((a, n))

    def encode(self, msgs, alloc, refcount):
        """(chunk 0 bytes, [(address, continuation block bytes)])."""
        if self.header.version == 1:
            return self._encode_v1(msgs, alloc, refcount)
        return self._encode_v2(msgs, alloc)

    def _encode_v1(self, msgs, alloc, refcount):
        ctx = self.ctx
        cont_size = 8 + _pad8(ctx.sizeof_offsets + ctx.sizeof_lengths)
        sizes = [8 + _pad8(len(m[2])) for m in msgs]
        for m, s in zip(msgs, sizes):
            if s - 8 > 0xFFFF:
                raise ValueError(f"header message of type {m[0]:#x} is too large ({s} bytes)")

        def enc(m):
            body = bytes(m[2])
            size = _pad8(len(body))
            return struct.pack("<HHB3x", m[0], size, m[1]) + body + bytes(size - len(body))

        def nil(n):     # a NIL message filling n bytes (n >= 8, a multiple of 8)
            return struct.pack("<HHB3x", 0, n - 8, 0) + bytes(n - 8)

        blocks = []
        count = 0
        if sum(sizes) <= self.chunk0:
            first, rest = list(msgs), []
        else:
            room, used, k = self.chunk0 - cont_size, 0, 0
            while k < len(msgs) and used + sizes[k] <= room:
                used += sizes[k]
                k += 1
            first, rest = list(msgs[:k]), list(msgs[k:])
        body = b"".join(enc(m) for m in first)
        count += len(first)
        if rest:
            data = b"".join(enc(m) for m in rest)
            addr = alloc(len(data))
            blocks.append((addr, data))
            count += len(rest)
            gap = self.chunk0 - len(body) - cont_size
            if gap:
                body += nil(gap)
                count += 1
            cont = ctx.pack_address(addr) + ctx.pack_length(len(data))
            body += enc((CONTINUATION, 0, cont))
            count += 1
        else:
            gap = self.chunk0 - len(body)
            if gap:
                body += nil(gap)
                count += 1
        if len(body) != self.chunk0:
            raise AssertionError("object header chunk 0 changed size")
        prefix = struct.pack("<BBHII4x", 1, 0, count, refcount, self.chunk0)
        return prefix + body, blocks

    def _encode_v2(self, msgs, alloc):
        ctx = self.ctx
        ordered = bool(self.header.flags & 0x04)
        hsize = 6 if ordered else 4

        def enc(m):
            body = bytes(m[2])
            if len(body) > 0xFFFF:
                raise ValueError(f"header message of type {m[0]:#x} is too large")
            if ordered:
                order = m[3] if len(m) > 3 and m[3] is not None else 0
                return struct.pack("<BHBH", m[0], len(body), m[1], order) + body
            return struct.pack("<BHB", m[0], len(body), m[1]) + body

        def fill(n):    # n bytes of free space: a NIL message, or a gap shorter than a header
            if n >= hsize:
                return enc((NIL, 0, bytes(n - hsize), 0))
            return bytes(n)

        sizes = [hsize + len(m[2]) for m in msgs]
        cont_size = hsize + ctx.sizeof_offsets + ctx.sizeof_lengths
        blocks = []
        if sum(sizes) <= self.chunk0:
            body = b"".join(enc(m) for m in msgs)
            body += fill(self.chunk0 - len(body))
        else:
            room, used, k = self.chunk0 - cont_size, 0, 0
            while k < len(msgs) and used + sizes[k] <= room:
                used += sizes[k]
                k += 1
            body = b"".join(enc(m) for m in msgs[:k])
            data = b"OCHK" + b"".join(enc(m) for m in msgs[k:])
            data += struct.pack("<I", checksum.lookup3(data))
            addr = alloc(len(data))
            blocks.append((addr, data))
            gap = self.chunk0 - len(body) - cont_size
            body += fill(gap) if gap >= hsize else b""
            body += enc((CONTINUATION, 0, ctx.pack_address(addr) + ctx.pack_length(len(data)),
                         0))
            body += bytes(self.chunk0 - len(body))
        if len(body) != self.chunk0:
            raise AssertionError("object header chunk 0 changed size")
        out = self.prefix_bytes + body
        return out + struct.pack("<I", checksum.lookup3(out)), blocks


