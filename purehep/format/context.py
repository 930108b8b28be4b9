"""The reader context and the bounds-checked cursor every decoder parses with.

The context carries what the spec calls the file's global parameters (size of offsets, size of
lengths, base address) and the byte source, caches and options; decoders take it as ``ctx``.
"""
import struct

from ..errors import FormatError, TruncatedError

_U = {1: struct.Struct("<B"), 2: struct.Struct("<H"), 4: struct.Struct("<I"), 8: struct.Struct("<Q")}


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
        self.superblock = None
        self.sohm = None         # shared message table, decoded on first use
        self.file = None         # the hl File, for references and external links

    def absolute(self, addr):
        return self.base_address + addr

    def read(self, addr, n, structure):
        """Bytes of a structure at relative address ``addr`` (bounds-checked)."""
        return self.source.read(self.base_address + addr, n, structure)

    def cursor(self, addr, n, structure):
        """A Cursor over ``n`` bytes at relative address ``addr``."""
        return Cursor(self.read(addr, n, structure), self.base_address + addr, structure, self)

    def check_range(self, addr, n, structure):
        """Raise unless ``n`` bytes at ``addr`` lie inside the file."""
        start = self.base_address + addr
        if addr < 0 or n < 0 or start + n > self.source.size:
            raise TruncatedError(f"{n} bytes at address {addr} lie past the end of the file "
                                 f"({self.source.size} bytes)", structure, start)

    def cached(self, kind, addr, make):
        key = (kind, addr)
        value = self.cache.get(key)
        if value is None:
            value = make()
            self.cache[key] = value
        return value


class Cursor:
    """Sequential little-endian decoding of a buffer, each overrun a TruncatedError.

    ``base`` is the buffer's absolute file offset, used only to name locations in errors.
    """

    __slots__ = ("buf", "pos", "base", "structure", "ctx")

    def __init__(self, buf, base, structure, ctx=None, pos=0):
        self.buf = buf
        self.pos = pos
        self.base = base
        self.structure = structure
        self.ctx = ctx

    @property
    def offset(self):
        """Absolute file offset of the current position."""
        return self.base + self.pos

    @property
    def remaining(self):
        return len(self.buf) - self.pos

    def error(self, message, cls=FormatError):
        return cls(message, self.structure, self.offset)

    def need(self, n):
        if n < 0 or self.pos + n > len(self.buf):
            raise TruncatedError(f"needs {n} more bytes but only {len(self.buf) - self.pos} remain",
                                 self.structure, self.offset)

    def u8(self):
        self.need(1)
        v = self.buf[self.pos]
        self.pos += 1
        return v

    def u16(self):
        return self._unpack(2)

    def u32(self):
        return self._unpack(4)

    def u64(self):
        return self._unpack(8)

    def _unpack(self, n):
        self.need(n)
        v = _U[n].unpack_from(self.buf, self.pos)[0]
        self.pos += n
        return v

    def uint(self, n):
        """An unsigned little-endian integer of ``n`` bytes (any n >= 0)."""
        if n in _U:
            return self._unpack(n)
        self.need(n)
        v = int.from_bytes(self.buf[self.pos:self.pos + n], "little")
        self.pos += n
        return v

    def address(self):
        """An address of the file's size of offsets; None for the undefined address."""
        v = self.uint(self.ctx.sizeof_offsets)
        return None if v == self.ctx.undefined else v

    def length(self):
        return self.uint(self.ctx.sizeof_lengths)

    def bytes(self, n):
        self.need(n)
        v = self.buf[self.pos:self.pos + n]
        self.pos += n
        return v

    def skip(self, n):
        self.need(n)
        self.pos += n

    def align(self, n):
        """Advance to the next multiple of ``n`` bytes from the start of the buffer."""
        self.pos += (-self.pos) % n

    def cstring(self, limit=None):
        """Bytes up to a NUL (consumed, not returned); the NUL must lie within ``limit``."""
        end = len(self.buf) if limit is None else min(len(self.buf), self.pos + limit)
        buf = bytes(self.buf[self.pos:end])
        i = buf.find(b"\0")
        if i < 0:
            raise self.error("string is not null-terminated", TruncatedError)
        self.pos += i + 1
        return buf[:i]

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
