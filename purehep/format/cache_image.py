"""The metadata cache image (libhdf5 1.10+): a block holding serialized metadata cache entries,
written at close when a file is created with the cache-image option, and pointed at by the
metadata cache image message (0x18) of the superblock extension.

The format spec text registers the message but does not describe the block; this follows the
layout libhdf5 writes (its H5Cimage.c), checked against libhdf5's test file
h5clear_mdc_image.h5. Entries marked dirty hold the only current copy of their metadata: the
bytes at their home addresses may be stale or never written (the root object header of
h5clear_mdc_image.h5 is zeros on disk), so a reader reads metadata through the image.

Block: signature "MDCI", version 0, flags (bit 0: a resize status follows, which libhdf5 never
writes), image length (Size of Lengths), number of entries (u32), the entries, and a Jenkins
lookup3 checksum of everything before it. Entry: cache type id (u8), flags (u8: dirty 0x01, in
LRU 0x02, flush-dependency parent 0x04, child 0x08), ring (u8), age (u8), flush-dependency
child count, dirty child count and parent count (u16 each), LRU rank (i32), address (Size of
Offsets), length (Size of Lengths), one address per flush-dependency parent, then ``length``
bytes: the entry's serialized metadata, exactly as it would stand at its address.
"""
from dataclasses import dataclass

from . import checksum

SIGNATURE = b"MDCI"
HAVE_RESIZE_STATUS = 0x01


@dataclass(frozen=True)
class CacheImageEntry:
    type_id: int
    flags: int
    address: int            # relative to the base address, as every file address
    data: bytes

    @property
    def dirty(self):
        return bool(self.flags & 0x01)


def decode(ctx, address, length):
    """The entries of the cache image block of ``length`` bytes at ``address``."""
    ctx.check_range(address, length, "metadata cache image")
    cur = ctx.cursor(address, length, "metadata cache image")
    cur.signature(SIGNATURE)
    cur.version((0,))
    flags = cur.u8()
    if flags & HAVE_RESIZE_STATUS:
        raise cur.error("cache image with a resize status (libhdf5 never writes one)")
    image_length = cur.length()
    if image_length != length:
        raise cur.error(f"image length {image_length} differs from the message's {length}")
    count = cur.u32()
    if length < 4 or count > length:
        raise cur.error(f"{count} entries cannot fit in {length} bytes")
    checksum.verify(ctx, cur.buf, "metadata cache image", cur.base)
    entries = []
    for _ in range(count):
        type_id, eflags = cur.u8(), cur.u8()
        cur.skip(2)                             # ring, age
        cur.skip(4)                             # child and dirty child counts
        parents = cur.u16()
        cur.skip(4)                             # LRU rank
        addr, size = cur.address(), cur.length()
        if addr is None:
            raise cur.error("cache image entry at the undefined address")
        cur.skip(parents * ctx.sizeof_offsets)
        if size > cur.remaining - 4:
            raise cur.error(f"cache image entry of {size} bytes overruns the image")
        entries.append(CacheImageEntry(type_id, eflags, addr, bytes(cur.bytes(size))))
    if cur.remaining != 4:
        raise cur.error(f"{cur.remaining - 4} bytes between the last entry and the checksum")
    return entries
