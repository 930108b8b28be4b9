"""Structured chunks (sparse RFC section 2): sections, section checksums and the structured
chunk metadata that chunk index records carry.

A structured chunk is its sections back to back; a section that may hold metadata (the
layout's "sections containing metadata") is followed by a Jenkins lookup3 checksum (initial
value 0, little-endian u32) of its bytes when it is not empty, and the checksum counts as part
of the section (RFC Table 4). A filtered structured chunk filters each section (with its
checksum) through the section's own pipeline (RFC 2.2).

Metadata (RFC Tables 1 and 8, field order of the 2025 revision): offsets of sections 1..N-1
(u64 each); filtered chunks add the unfiltered sizes of sections 0..N-1 (u64) and their filter
masks (u32).
"""
import struct

import numpy as np

from ..errors import ChecksumError, FormatError
from . import checksum

OFFSET_SIZE = 8


def metadata_size(nsections, filtered):
    """Bytes of the structured chunk metadata of one chunk."""
    return 8 * (nsections - 1) + (12 * nsections if filtered else 0)


def encode_metadata(offsets, unfiltered=None, masks=None):
    out = struct.pack(f"<{len(offsets)}Q", *offsets)
    if unfiltered is not None:
        out += struct.pack(f"<{len(unfiltered)}Q", *unfiltered)
        out += struct.pack(f"<{len(masks)}I", *masks)
    return out


def decode_metadata_rows(raw, nsections, filtered):
    """Columns of the metadata in rows of a uint8 matrix (one chunk per row): offsets (n,
    N-1) uint64, unfiltered sizes (n, N) uint64 or None, masks (n, N) uint32 or None."""
    raw = np.ascontiguousarray(raw, np.uint8)
    n = raw.shape[0]
    k = 8 * (nsections - 1)
    offsets = raw[:, :k].copy().view("<u8").reshape(n, nsections - 1)
    if not filtered:
        return offsets.astype(np.uint64), None, None
    unf = raw[:, k:k + 8 * nsections].copy().view("<u8").reshape(n, nsections)
    masks = raw[:, k + 8 * nsections:k + 12 * nsections].copy().view("<u4").reshape(n, nsections)
    return offsets.astype(np.uint64), unf.astype(np.uint64), masks.astype(np.uint32)


def assemble(sections, metadata_sections, pipelines=None, element_size=1):
    """Build a structured chunk from its unfiltered sections (bytes, without checksums).

    ``pipelines`` maps section number -> filters (FilterInfo sequence). Returns (chunk bytes,
    offsets of sections 1..N-1, unfiltered sizes, filter masks)."""
    from ..filters import encode_pipeline
    parts, unfiltered, masks = [], [], []
    for i, sec in enumerate(sections):
        sec = bytes(sec)
        if i in metadata_sections and sec:
            sec += struct.pack("<I", checksum.lookup3(sec))
        unfiltered.append(len(sec))
        mask = 0
        filters = (pipelines or {}).get(i)
        if filters and sec:
            data, mask = encode_pipeline(sec, filters, element_size, len(sec))
            sec = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        parts.append(sec)
        masks.append(mask)
    offsets, pos = [], 0
    for p in parts[:-1]:
        pos += len(p)
        offsets.append(pos)
    return b"".join(parts), tuple(offsets), tuple(unfiltered), tuple(masks)


def split(raw, offsets, where=("structured chunk", None)):
    """The (possibly filtered) sections of a chunk's bytes given the offsets of sections
    1..N-1; raises FormatError (at ``where``, (structure, offset)) if the offsets are not
    ordered within the chunk."""
    bounds = [0] + [int(o) for o in offsets] + [len(raw)]
    for a, b in zip(bounds, bounds[1:]):
        if b < a:
            raise FormatError(f"section offsets {tuple(bounds[1:-1])} are not ordered within "
                              f"a chunk of {len(raw)} bytes", *where)
    return [raw[a:b] for a, b in zip(bounds, bounds[1:])]


def disassemble(raw, offsets, metadata_sections, unfiltered=None, masks=None, pipelines=None,
                element_size=1, where=("structured chunk", None), verify=True, limits=None):
    """The unfiltered sections of a chunk, checksums verified and removed. ``where`` =
    (structure name, file offset) names the chunk in errors; ``limits`` bounds each section's
    unfiltered size (checked before anything of that size is allocated)."""
    from ..filters import decode_pipeline
    structure, offset = where
    out = []
    for i, sec in enumerate(split(raw, offsets, where)):
        filters = (pipelines or {}).get(i)
        if filters and len(sec):
            mask = int(masks[i]) if masks is not None else 0
            size = int(unfiltered[i]) if unfiltered is not None else len(sec)
            if limits is not None and i < len(limits) and size > limits[i]:
                raise FormatError(f"section {i}: the index gives {size} unfiltered bytes, more "
                                  f"than such a section can hold ({limits[i]})", structure,
                                  offset)
            sec = decode_pipeline(sec, filters, mask, element_size, size,
                                  where=(f"{structure} section {i}", offset))
            sec = sec.tobytes() if isinstance(sec, np.ndarray) else bytes(sec)
            if unfiltered is not None and len(sec) != size:
                raise FormatError(f"section {i} unfilters to {len(sec)} bytes, the index says "
                                  f"{size}", structure, offset)
        else:
            sec = bytes(sec)
        if i in metadata_sections and len(sec):
            if len(sec) < 4:
                raise FormatError(f"section {i} of {len(sec)} bytes has no room for its "
                                  "checksum", structure, offset)
            body = sec[:-4]
            if verify:
                stored = struct.unpack("<I", sec[-4:])[0]
                computed = checksum.lookup3(body)
                if stored != computed:
                    raise ChecksumError(f"section {i} checksum mismatch (stored {stored:#010x}, "
                                        f"computed {computed:#010x})", structure, offset)
            sec = body
        out.append(sec)
    return out
