"""Bulk decoding of chunk index records (spec Appendix C; III.A.1 type-1 keys; III.A.2 types
10/11) from uint8 record matrices into numpy columns, with numpy column gathers."""
import numpy as np


def le_column(raw, pos, width):
    """The little-endian unsigned field of ``width`` bytes at byte ``pos`` of every row of
    ``raw`` (n, record size), as uint64."""
    n = raw.shape[0]
    if width == 8:
        return np.ascontiguousarray(raw[:, pos:pos + 8]).view("<u8").reshape(n)
    wide = np.zeros((n, 8), np.uint8)
    wide[:, :width] = raw[:, pos:pos + width]
    return wide.view("<u8").reshape(n)


def decode_records(raw, addr_pos, sizeof_addr, size_pos, size_width, mask_pos, scaled_pos,
                   ndims, scaled_width):
    """Columns of ``raw`` (n, record_size): address (uint64), size (int64), filter mask
    (uint32), scaled/element offsets (n, ndims) int64.

    A position of -1 means the field is absent (size then 0, mask 0, scaled 0).
    """
    n = raw.shape[0]
    addr = le_column(raw, addr_pos, sizeof_addr).copy()
    size = le_column(raw, size_pos, size_width).astype(np.int64) if size_pos >= 0 else \
        np.zeros(n, np.int64)
    mask = le_column(raw, mask_pos, 4).astype(np.uint32) if mask_pos >= 0 else \
        np.zeros(n, np.uint32)
    scaled = np.zeros((n, ndims), np.int64)
    if scaled_pos >= 0:
        for d in range(ndims):
            scaled[:, d] = le_column(raw, scaled_pos + d * scaled_width, scaled_width)
    return addr, size, mask, scaled


def bitmap_expand(bitmap, nbits):
    """Bits of an HDF5 bitmap (most significant bit of each byte first) as booleans."""
    return np.unpackbits(np.asarray(bitmap, np.uint8))[:nbits].astype(bool)
