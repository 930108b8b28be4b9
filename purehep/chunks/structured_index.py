"""Chunk indexes of structured chunks (sparse RFC section 4): single chunk (index information
in the layout message, Tables 19/20), fixed array and extensible array with client ids 2
(structured) and 3 (filtered structured), elements = address, chunk size, structured chunk
metadata (Tables 24/25), and version 2 B-trees of record types 12/13 (Tables 26/27).

``load`` decodes an index into a ``SparseTable`` (numpy columns); versions 0 and 1 are read
(purehep.write.structured writes them).
"""
import math
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError
from ..format import btree2, extensible_array, fixed_array, structured_chunk as SC
from ..format.messages import layout as L
from .table import scaled_from_linear

CLIENT_STRUCT, CLIENT_STRUCT_FILTERED = 2, 3


@dataclass
class SparseTable:
    scaled: np.ndarray          # (n, rank) int64 chunk grid positions
    addresses: np.ndarray       # (n,) uint64
    sizes: np.ndarray           # (n,) int64 stored chunk bytes
    offsets: np.ndarray         # (n, N-1) uint64 section offsets
    unfiltered: np.ndarray | None = None   # (n, N) uint64 (filtered chunks)
    masks: np.ndarray | None = None        # (n, N) uint32

    def __len__(self):
        return len(self.addresses)

    def select(self, keep):
        return SparseTable(self.scaled[keep], self.addresses[keep], self.sizes[keep],
                           self.offsets[keep],
                           None if self.unfiltered is None else self.unfiltered[keep],
                           None if self.masks is None else self.masks[keep])

    def record(self, i):
        """(address, size, offsets, unfiltered sizes, masks) of row ``i`` as Python values."""
        return (int(self.addresses[i]), int(self.sizes[i]),
                tuple(int(x) for x in self.offsets[i]),
                None if self.unfiltered is None else tuple(int(x) for x in self.unfiltered[i]),
                None if self.masks is None else tuple(int(x) for x in self.masks[i]))


def empty(rank, nsections, filtered):
    n = nsections
    return SparseTable(np.zeros((0, rank), np.int64), np.zeros(0, np.uint64),
                       np.zeros(0, np.int64), np.zeros((0, n - 1), np.uint64),
                       np.zeros((0, n), np.uint64) if filtered else None,
                       np.zeros((0, n), np.uint32) if filtered else None)


def layout_size(layout):
    n = layout.element_size
    for c in layout.chunk_shape:
        n *= int(c)
    return n


def size_len(layout):
    return L.struct_chunk_size_len(layout_size(layout), layout.offset_size or 8,
                                   layout.nsections)


def _uint_cols(raw, a, b):
    buf = np.zeros((raw.shape[0], 8), np.uint8)
    buf[:, :b - a] = raw[:, a:b]
    return buf.view("<u8").reshape(-1).astype(np.uint64)


def decode_elements(ctx, raw, width, nsections, filtered):
    """(addresses, sizes, offsets, unfiltered, masks) of array elements / record tails."""
    so = ctx.sizeof_offsets
    raw = np.ascontiguousarray(raw, np.uint8)
    addr = _uint_cols(raw, 0, so)
    size = _uint_cols(raw, so, so + width).astype(np.int64)
    offs, unf, masks = SC.decode_metadata_rows(raw[:, so + width:], nsections, filtered)
    return addr, size, offs, unf, masks



def load(ctx, layout, shape, maxshape, filtered):
    """The SparseTable of a structured-chunk dataset's index."""
    rank = len(layout.chunk_shape)
    n = layout.nsections
    width = size_len(layout)
    es = ctx.sizeof_offsets + width + SC.metadata_size(n, filtered)
    where = ctx.absolute(layout.address) if layout.address is not None else None
    if layout.address is None:
        return empty(rank, n, filtered)
    if layout.index_type == L.SINGLE:
        info = layout.index_info
        unf = info.get("unfiltered_sizes")
        masks = info.get("filter_masks")
        if filtered and unf is None:
            raise FormatError("filtered single-chunk index without section sizes and masks "
                              "(layout flag bit 1 is clear)", "data layout message", layout.offset)
        return SparseTable(np.zeros((1, rank), np.int64),
                           np.array([layout.address], np.uint64),
                           np.array([info["chunk_size"]], np.int64),
                           np.array([info["offsets"]], np.uint64).reshape(1, n - 1),
                           np.array([unf], np.uint64) if filtered else None,
                           np.array([masks], np.uint32) if filtered else None)
    client = CLIENT_STRUCT_FILTERED if filtered else CLIENT_STRUCT
    index = None                  # row k is element k, unless the array says otherwise
    if layout.index_type == L.FIXED_ARRAY:
        hdr, raw = fixed_array.read_elements(ctx, layout.address)
        name = "fixed array header"
        grid = [-(-int(m) // c) for m, c in zip(maxshape, layout.chunk_shape)]
        if math.prod(grid) != hdr.max_entries:
            raise FormatError(f"fixed array holds {hdr.max_entries} entries but the chunk grid "
                              f"of the maximum dimensions has {math.prod(grid)}", name, where)
        order, dims = list(range(rank)), grid
    elif layout.index_type == L.EXTENSIBLE_ARRAY:
        hdr, index, raw = extensible_array.read_elements(ctx, layout.address)
        name = "extensible array header"
        unlim = [d for d, m in enumerate(maxshape) if m is None]
        udim = unlim[0] if unlim else 0
        grid = [1 if m is None else -(-int(m) // c) for m, c in zip(maxshape, layout.chunk_shape)]
        order = [udim] + [d for d in range(rank) if d != udim]
        dims = [grid[d] for d in order]
        dims[0] = max(1, -(-hdr.max_index_set // max(1, math.prod(dims[1:]))))
    elif layout.index_type == L.BTREE2:
        return _load_btree2(ctx, layout, rank, n, width, filtered, where)
    else:
        raise FormatError(f"chunk index type {layout.index_type} cannot index structured chunks",
                          "data layout message", layout.offset)
    if hdr.client_id != client:
        raise FormatError(f"client id {hdr.client_id}, expected {client} for "
                          f"{'filtered ' if filtered else ''}structured chunks", name, where)
    esize = getattr(hdr, "entry_size", None) or getattr(hdr, "element_size", None)
    if esize != es:
        raise FormatError(f"element size {esize}, expected {es} (address, {width}-byte chunk "
                          f"size, metadata of {n} sections)", name, where)
    addr, size, offs, unf, masks = decode_elements(ctx, raw, width, n, filtered)
    keep = np.flatnonzero(addr != np.uint64(ctx.undefined))
    linear = keep if index is None else index[keep]
    scaled = scaled_from_linear(linear, dims, order, (name, where))
    return SparseTable(scaled, addr[keep], size[keep], offs[keep],
                       None if unf is None else unf[keep], None if masks is None else masks[keep])


def _load_btree2(ctx, layout, rank, n, width, filtered, where):
    rctx = btree2.ChunkRecordContext(rank, width, n)
    tree = btree2.BTree2.decode(ctx, layout.address, record_context=rctx)
    want = 13 if filtered else 12
    if tree.type != want:
        raise FormatError(f"v2 B-tree of type {tree.type}, expected {want}", "v2 B-tree header",
                          where)
    raw = np.ascontiguousarray(tree.record_bytes()).reshape(-1, tree.record_size)
    so = ctx.sizeof_offsets
    head = np.concatenate([raw[:, :so + width], raw[:, so + width + 8 * rank:]], axis=1)
    addr, size, offs, unf, masks = decode_elements(ctx, head, width, n, filtered)
    sc = raw[:, so + width:so + width + 8 * rank].copy().view("<u8").reshape(-1, rank)
    keep = addr != np.uint64(ctx.undefined)
    return SparseTable(sc.astype(np.int64)[keep], addr[keep], size[keep], offs[keep],
                       None if unf is None else unf[keep], None if masks is None else masks[keep])
