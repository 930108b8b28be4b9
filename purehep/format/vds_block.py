"""Level 1F: the global heap block of a virtual dataset (spec III.F): the mappings from source
dataset selections to virtual dataset selections.

Version 1 (libhdf5 1.14+/2.0, observed in files h5py writes; not in the spec text) puts a
flags byte before each entry's names: 0x01 the source file name is that of an earlier entry,
given by its index (Size of Lengths bytes); 0x02 likewise for the source dataset name; 0x04 the
source is the virtual dataset's own file (no name stored, as "." in version 0).
"""
from dataclasses import dataclass

from ..errors import ChecksumError
from . import checksum, selection
from .context import Cursor

STRUCTURE = "virtual dataset global heap block"
SHARED_FILE, SHARED_DATASET, SAME_FILE = 0x01, 0x02, 0x04


@dataclass(frozen=True)
class VirtualMapping:
    source_file: str            # "." for the virtual dataset's own file
    source_dataset: str
    source_selection: selection.Selection
    virtual_selection: selection.Selection


def decode(ctx, data, offset):
    """The mappings of one block (``data`` is the whole global heap object)."""
    cur = Cursor(data, offset, STRUCTURE, ctx)
    version = cur.version((0, 1))
    count = cur.length()
    if count > len(data):
        raise cur.error(f"{count} entries cannot fit in {len(data)} bytes")
    entries = []
    for _ in range(count):
        flags = cur.u8() if version >= 1 else 0
        file = _name(cur, flags, SHARED_FILE, entries, "source_file")
        if flags & SAME_FILE:
            file = "."
        dset = _name(cur, flags, SHARED_DATASET, entries, "source_dataset")
        ssel = selection.decode(cur)
        vsel = selection.decode(cur)
        entries.append(VirtualMapping(file, dset, ssel, vsel))
    end = cur.pos
    stored = cur.u32()
    if ctx.verify_checksums and stored != checksum.lookup3(data[:end]):
        raise ChecksumError("checksum mismatch", STRUCTURE, offset)
    return entries


def encode(ctx, mappings, version):
    """A block of ``mappings`` (VirtualMapping), version 0 or 1. Version 1 flags the virtual
    dataset's own file (SAME_FILE) and, as libhdf5 does for names given separately, shares no
    names between entries."""
    return encode_entries(ctx, [encode_entry(m, version) for m in mappings], version)


def encode_entry(mapping, version):
    """The bytes of one entry of a version 0 or 1 block (names and the two selections)."""
    out = bytearray()
    same = mapping.source_file == "."
    if version >= 1:
        out.append(SAME_FILE if same else 0)
    if not (same and version >= 1):
        out += mapping.source_file.encode("utf-8", "surrogateescape") + b"\0"
    out += mapping.source_dataset.encode("utf-8", "surrogateescape") + b"\0"
    out += selection.encode(mapping.source_selection)
    out += selection.encode(mapping.virtual_selection)
    return bytes(out)


def encode_entries(ctx, entries, version):
    """A block of already encoded entries (:func:`encode_entry`), its checksum appended."""
    import struct
    out = b"".join([bytes((version,)), ctx.pack_length(len(entries))] + entries)
    return out + struct.pack("<I", checksum.lookup3(out))


def _name(cur, flags, shared_bit, entries, field):
    if flags & shared_bit:
        index = cur.length()
        if index >= len(entries):
            raise cur.error(f"entry refers to a later entry ({index}) for its {field}")
        return getattr(entries[index], field)
    if field == "source_file" and flags & SAME_FILE:
        return "."
    return cur.cstring().decode("utf-8", "surrogateescape")
