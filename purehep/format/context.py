"""The reader context and the bounds-checked cursor every decoder parses with.

The context carries what the spec calls the file's global parameters (size of offsets, size of
lengths, base address) and the byte source, caches and options; decoders take it as ``ctx``.
"""
import struct

from ..errors import FormatError, TruncatedError
from ..io.lock import phil

_UNPACK = {1: struct.Struct("<B").unpack_from, 2: struct.Struct("<H").unpack_from,
           4: struct.Struct("<I").unpack_from, 8: struct.Struct("<Q").unpack_from}
_U16, _U32, _U64 = _UNPACK[2], _UNPACK[4], _UNPACK[8]


class Context:
    """What every decoder needs to know about the file it reads."""

    def __init__(self, source, sizeof_offsets=8, sizeof_lengths=8, base_address=0,
                 verify_checksums=True, path=None):
        self.source = source
        self.sizeof_offsets = sizeof_offsets
        self.sizeof_lengths = sizeof_lengths
        self.base_address = base_address
        self.verify_checksums = verify_checksums
        self.path = path
        self.undefined = (1 << (8 * sizeof_offsets)) - 1
        self.cache = {}          # (kind, address) -> decoded structure
        self.hits = self.misses = 0     # lookups of ``cached`` (purehep.hl.mdc)
        self.superblock = None
        self.sohm = None         # shared message table, decoded on first use
        self.writable = False    # the file is open for writing (unknown messages checked)

    def absolute(self, addr):
        return self.base_address + addr

    # -- encoding (the writer's side of the same parameters) --------------------------------
    def pack_address(self, addr):
        """An address field: Size of Offsets bytes; None encodes the undefined address."""
        return (self.undefined if addr is None else addr).to_bytes(self.sizeof_offsets, "little")

    def pack_length(self, n):
        """A length field: Size of Lengths bytes."""
        return int(n).to_bytes(self.sizeof_lengths, "little")

    def defined(self, addr, structure):
        """``addr``, unless it is the undefined address (None): then a FormatError naming
        the structure, placed at the undefined address itself."""
        if addr is None:
            raise FormatError("the address is undefined (all bits set)", structure,
                              self.undefined)
        return addr

    def read(self, addr, n, structure):
        """Bytes of a structure at relative address ``addr`` (bounds-checked), as a copy the
        caller owns: decoded structures then never pin a buffer in memory."""
        return bytes(self.view(addr, n, structure))

    def view(self, addr, n, structure):
        """``read`` without the copy (a view where the source is a buffer in memory), for
        callers that copy what they need out of it at once."""
        if addr is None:
            self.defined(addr, structure)
        return self.source.read(self.base_address + addr, n, structure)

    def read_small(self, addr, n, structure):
        """``read`` for scattered small reads (see ``ByteSource.read_small``)."""
        if addr is None:
            self.defined(addr, structure)
        return self.source.read_small(self.base_address + addr, n, structure)

    def cursor(self, addr, n, structure):
        """A Cursor over ``n`` bytes at relative address ``addr``."""
        return Cursor(self.read(addr, n, structure), self.base_address + addr, structure, self)

    def check_range(self, addr, n, structure):
        """Raise unless ``n`` bytes at ``addr`` lie inside the file."""
        start = self.base_address + self.defined(addr, structure)
        if addr < 0 or n < 0 or start + n > self.source.size:
            raise TruncatedError(f"{n} bytes at address {addr} lie past the end of the file "
                                 f"({self.source.size} bytes)", structure, start)

    def cached(self, kind, addr, make):
        """The decoded structure ``kind`` at ``addr``, made on first use under ``phil`` (so
        that threads sharing the file decode it once). Lookups are counted as hits and
        misses (a hit counted by threads at once may be counted once)."""
        key = (kind, addr)
        value = self.cache.get(key)
        if value is None:
            with phil:
                value = self.cache.get(key)
                if value is None:
                    self.misses += 1
                    value = make()
                    self.cache[key] = value
                    return value
        self.hits += 1
        return value


class Cursor:
    """Sequential little-endian decoding of a buffer, each overrun a TruncatedError.

    ``base`` is the buffer's absolute file offset, used only to name locations in errors.
    """

    __slots__ = ("buf", "pos", "base", "structure", "ctx", "end")

    def __init__(self, buf, base, structure, ctx=None, pos=0):
        self.buf = buf
        self.pos = pos
        self.base = base
        self.structure = structure
        self.ctx = ctx
        self.end = len(buf)

    @property
    def offset(self):
        """Absolute file offset of the current position."""
        return self.base + self.pos

    @property
    def remaining(self):
        return self.end - self.pos

    def error(self, message, cls=FormatError):
        return cls(message, self.structure, self.offset)

    def need(self, n):
        if n < 0 or self.pos + n > self.end:
            raise TruncatedError(f"needs {n} more bytes but only {self.end - self.pos} remain",
                                 self.structure, self.offset)

    def u8(self):
        pos = self.pos
        if pos >= self.end:
            self.need(1)
        self.pos = pos + 1
        return self.buf[pos]

    def u16(self):
        pos = self.pos
        if pos + 2 > self.end:
            self.need(2)
        self.pos = pos + 2
        return _U16(self.buf, pos)[0]

    def u32(self):
        pos = self.pos
        if pos + 4 > self.end:
            self.need(4)
        self.pos = pos + 4
        return _U32(self.buf, pos)[0]

    def u64(self):
        pos = self.pos
        if pos + 8 > self.end:
            self.need(8)
        self.pos = pos + 8
        return _U64(self.buf, pos)[0]

    def uint(self, n):
        """An unsigned little-endian integer of ``n`` bytes (any n >= 0)."""
        pos = self.pos
        if pos + n > self.end or n < 0:
            self.need(n)
        self.pos = pos + n
        unpack = _UNPACK.get(n)
        if unpack is not None:
            return unpack(self.buf, pos)[0]
        return int.from_bytes(self.buf[pos:pos + n], "little")

    def address(self):
        """An address of the file's size of offsets; None for the undefined address."""
        v = self.uint(self.ctx.sizeof_offsets)
        return None if v == self.ctx.undefined else v

    def length(self):
        return self.uint(self.ctx.sizeof_lengths)

    def bytes(self, n):
        pos = self.pos
        if pos + n > self.end or n < 0:
            self.need(n)
        self.pos = pos + n
        return self.buf[pos:pos + n]

    def skip(self, n):
        if self.pos + n > self.end or n < 0:
            self.need(n)
        self.pos += n

    def align(self, n):
        """Advance to the next multiple of ``n`` bytes from the start of the buffer."""
        self.pos += (-self.pos) % n

    def cstring(self, limit=None):
        """Bytes up to a NUL (consumed, not returned); the NUL must lie within ``limit``."""
        end = self.end if limit is None else min(self.end, self.pos + limit)
        pos, buf = self.pos, self.buf
        if isinstance(buf, (bytes, bytearray)):     # (searched in place: no copy of the rest)
            i = buf.find(b"\0", pos, end)
        else:                                      # windows of growing size
            i, at, size = -1, pos, 64
            while i < 0 and at < end:
                i = bytes(buf[at:min(end, at + size)]).find(b"\0")
                i, at, size = (i + at if i >= 0 else -1), at + size, size * 4
        if i < 0:
            raise self.error("string is not null-terminated", TruncatedError)
        self.pos = i + 1
        return bytes(buf[pos:i])

    def signature(self, expected):
        sig = bytes(self.bytes(len(expected)))
        if sig != expected:
            self.pos -= len(expected)
            raise self.error(f"bad signature {sig!r}, expected {expected!r}")

    def version(self, allowed):
        v = self.u8()
        if v not in allowed:
            self.pos -= 1
            raise self.error(f"unsupported version {v}")
        return v
