"""Metadata checksums (spec: "Appendix C: Jenkins' lookup3 Hash Function for Checksums").

Buffers are hashed in plain Python until a process has hashed enough to repay loading the
compiled kernel (see ``kernels.checksum``): opening and walking small files never imports
numba.
"""
import struct

from ..errors import ChecksumError
from ..kernels.checksum import lookup3


def verify(ctx, buf, structure, offset):
    """Check the lookup3 checksum stored in the last 4 bytes of ``buf`` (a whole structure)."""
    if not ctx.verify_checksums:
        return
    stored = struct.unpack_from("<I", buf, len(buf) - 4)[0]
    computed = lookup3(memoryview(buf)[:len(buf) - 4])
    if stored != computed:
        raise ChecksumError(f"checksum mismatch (stored {stored:#010x}, computed {computed:#010x})",
                            structure, offset)
