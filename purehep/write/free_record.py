"""The free space a writing session leaves, recorded for the next one past the end of the
file's address space.

HDF5 keeps free space across sessions only in files that persist it (superblock version 2 or
later with a File Space Info message, spec IV.A.2.x); other files lose at close the space
their session freed (libhdf5's too). purehep writes commits into unused space and frees the
space the last commit used only once the next is written (purehep.write.allocator), so a
session that replaces a dataset writes the new one at the end of the file: without a record,
every session would grow the file by that much. At close, purehep writes the free list to the
file offset of the end-of-file address, where no HDF5 reader looks (the superblock says the
file ends there; libhdf5 cuts such bytes off when it next closes the file for writing), and
the next purehep session that opens the file for writing takes it and cuts it off at once.

The record is taken only when it is whole (signature, checksum) and belongs to the same end
of file: a writer that allocated anything since moved the end of file (or wrote over the
record, or cut it off), and no writer that does not know the record allocates the space it
lists (nothing refers to it). Cutting it off at open makes sure a session that reuses the
space never leaves a stale record behind: the cut is on disk with the first commit's sync.

Layout, little-endian: the signature (16 bytes), the end-of-file address the list belongs to
(8), the number of blocks (8), each block's address and size (8 + 8, increasing, disjoint,
below the end of file), and the lookup3 checksum of all of it (4)."""
import struct

import numpy as np

from ..format import checksum
from ..format.superblock import superblock_size

SIGNATURE = b"PUREHEP-FREE-V1\x00"
HEAD = struct.Struct("<16sQQ")
MAX_BLOCKS = 1 << 16          # the biggest blocks are kept when there are more (1 MiB at most)
RECORDED = 4096               # recorded at close when at least this much is free


def kept(writer, paged):
    """Whether free space is recorded at close and taken at open: in a file of the file
    system, not paged, that does not persist free space itself."""
    space = writer.space
    return writer.sink.path is not None and not paged and not (space is not None and
                                                                space.persist)


def recorded(writer, sb, paged):
    """At open: the free blocks the last session recorded past the end of the file of
    ``writer`` (superblock ``sb``), cut off; None when there are none to take."""
    if not kept(writer, paged):
        return None
    protected = [(0, superblock_size(sb.version, writer.ctx)), (sb.root_address, 1)]
    if sb.extension_address is not None:
        protected.append((sb.extension_address, 1))
    return take(writer.sink, writer.absolute(sb.eof_address), sb.eof_address, protected)


def record(writer):
    """At close, after the last commit: ``writer``'s free blocks, for the next session."""
    free, eoa = writer.alloc.free.blocks, writer.alloc.eoa
    if eoa == writer.eoa_on_disk and kept(writer, writer.alloc.page) and \
            sum(n for _, n in free) >= RECORDED:
        writer.sink.write(writer.absolute(eoa), encode(eoa, free))


def encode(eoa, blocks):
    """The record of free ``blocks`` ([address, size], sorted) of a file ending at ``eoa``."""
    if len(blocks) > MAX_BLOCKS:
        blocks = sorted(sorted(blocks, key=lambda b: -b[1])[:MAX_BLOCKS])
    body = HEAD.pack(SIGNATURE, eoa, len(blocks)) + \
        np.asarray(blocks, "<u8").reshape(-1, 2).tobytes()
    return body + struct.pack("<I", checksum.lookup3(body))


def take(sink, at, eoa, protected):
    """The free blocks recorded at file offset ``at`` (that of address ``eoa``) for a file
    ending at ``eoa``, or None when there is no whole record for it there or a block meets
    one of the ``protected`` blocks ((address, size): the superblock, the root group's
    header); the bytes from ``at`` on are cut off either way when there is a record's
    signature."""
    if sink.size < at + HEAD.size + 4:
        return None
    signature, end, count = HEAD.unpack(bytes(sink.read(at, HEAD.size)))
    if signature != SIGNATURE:
        return None
    blocks = None
    n = HEAD.size + 16 * count + 4
    if end == eoa and count <= MAX_BLOCKS and sink.size >= at + n:
        raw = bytes(sink.read(at, n))
        if struct.unpack_from("<I", raw, n - 4)[0] == checksum.lookup3(raw[:n - 4]):
            blocks = _checked(np.frombuffer(raw, "<u8", 2 * count, HEAD.size).reshape(-1, 2),
                              eoa, protected)
    sink.shrink(at)
    return blocks


def _checked(table, eoa, protected):
    """The blocks as [address, size] lists when they are increasing, disjoint, not empty,
    below ``eoa`` and apart from the ``protected`` blocks; else None."""
    addrs, sizes = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
    ends = addrs + sizes
    if (sizes <= 0).any() or (sizes > eoa).any() or (addrs < 0).any() or \
            (len(ends) and ends[-1] > eoa) or (addrs[1:] < ends[:-1]).any():
        return None
    for a, n in protected:
        if ((addrs < a + n) & (a < ends)).any():
            return None
    return [[int(a), int(s)] for a, s in zip(addrs.tolist(), sizes.tolist())]
