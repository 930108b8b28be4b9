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
    fields = [("a", addr_pos, sizeof_addr), ("s", size_pos, size_width), ("m", mask_pos, 4)] + \
        [(f"o{d}", scaled_pos + d * scaled_width, scaled_width) for d in range(ndims)
         if scaled_pos >= 0]
    fields = [f for f in fields if f[1] >= 0]
    if all(w in (1, 2, 4, 8) for _, _, w in fields):
        # one structured view of the rows: a field per column, no copies until astype
        rec = np.ascontiguousarray(raw).view(np.dtype({
            "names": [f[0] for f in fields], "formats": [f"<u{f[2]}" for f in fields],
            "offsets": [f[1] for f in fields], "itemsize": raw.shape[1]})).reshape(n)
        col = rec.__getitem__
    else:
        cols = {name: le_column(raw, pos, width) for name, pos, width in fields}
        col = cols.__getitem__
    addr = col("a").astype(np.uint64)
    size = col("s").astype(np.int64) if size_pos >= 0 else np.zeros(n, np.int64)
    mask = col("m").astype(np.uint32) if mask_pos >= 0 else np.zeros(n, np.uint32)
    scaled = np.zeros((n, ndims), np.int64)
    if scaled_pos >= 0:
        for d in range(ndims):
            scaled[:, d] = col(f"o{d}")
    return addr, size, mask, scaled


def bitmap_expand(bitmap, nbits):
    """Bits of an HDF5 bitmap (most significant bit of each byte first) as booleans."""
    return np.unpackbits(np.asarray(bitmap, np.uint8))[:nbits].astype(bool)
