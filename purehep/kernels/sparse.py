"""Kernels of sparse (structured chunk) storage, vectorised with numpy: coordinate -> chunk
bucketing and the block decomposition of a chunk's defined elements (hyperslab selection
encoding); and a loop kernel gathering the point lists of many chunks into CSR arrays."""
import numpy as np

from ._jit import loop


def chunk_keys(coords, chunk, grid):
    """Per point: row-major index of its chunk in ``grid`` and of its position in the chunk."""
    n, rank = coords.shape
    ckey = np.zeros(n, np.int64)
    lkey = np.zeros(n, np.int64)
    for d in range(rank):
        q = coords[:, d] // chunk[d]
        ckey = ckey * grid[d] + q
        lkey = lkey * chunk[d] + (coords[:, d] - q * chunk[d])
    return ckey, lkey


def row_runs(lin, last):
    """Runs of consecutive row-major indices (sorted, unique) that stay within one row of
    length ``last``: (first, final) index arrays, inclusive."""
    if lin.shape[0] == 0:
        return lin[:0].copy(), lin[:0].copy()
    cont = (lin[1:] == lin[:-1] + 1) & ((lin[:-1] + 1) % last != 0)
    starts = np.concatenate(([0], np.flatnonzero(~cont) + 1))
    ends = np.concatenate((starts[1:] - 1, [lin.shape[0] - 1]))
    return lin[starts], lin[ends]


def merge_axis(lo, hi, order, k):
    """Merge blocks (``lo``/``hi`` inclusive corners, visited in ``order``, which sorts them
    by every field but lo[k] and then by lo[k]) that are adjacent along axis ``k`` and equal
    elsewhere. Returns the merged corners."""
    if lo.shape[0] == 0:
        return lo.copy(), hi.copy()
    lo_o, hi_o = lo[order], hi[order]
    other = np.arange(lo.shape[1]) != k
    same = ((lo_o[1:][:, other] == lo_o[:-1][:, other]).all(axis=1)
            & (hi_o[1:][:, other] == hi_o[:-1][:, other]).all(axis=1)
            & (lo_o[1:, k] == hi_o[:-1, k] + 1))
    starts = np.concatenate(([0], np.flatnonzero(~same) + 1))
    ends = np.concatenate((starts[1:] - 1, [lo.shape[0] - 1]))
    olo = lo_o[starts].copy()
    ohi = hi_o[starts].copy()
    ohi[:, k] = hi_o[ends, k]
    return olo, ohi


def blocks_to_linear(lo, hi, dims):
    """Row-major indices (within ``dims``) of every element of the blocks, block by block."""
    m, rank = lo.shape
    ext = hi - lo + 1
    cnt = np.prod(ext, axis=1) if m else np.zeros(0, np.int64)
    total = int(cnt.sum())
    block = np.repeat(np.arange(m), cnt)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    out = np.zeros(total, np.int64)
    stride = 1
    for d in range(rank - 1, -1, -1):
        e = ext[block, d]
        out += (lo[block, d] + local % e) * stride
        local //= e
        stride *= int(dims[d])
    return out


@loop
def points_csr(coords, first, counts, values, value_first, origins, chunk, shape, indptr,
               indices, data):
    """CSR arrays of 2-D chunks whose defined elements are point lists: chunk ``i`` lists
    ``counts[i]`` points as (row, column) pairs in ``coords`` from ``first[i]`` and their
    values in ``values`` from ``value_first[i]``; ``origins`` (m, 2) holds its first
    element. Chunks come in row-major order of their origins, so that a row's entries come
    out by column when each chunk lists its points in row-major order. Points past
    ``shape`` (the edge chunks' outside) are left out. Fills ``indptr`` (rows + 1, zeroed),
    ``indices`` and ``data``; returns (entries, sorted: every chunk's points strictly
    row-major), or (-1, False) when a point lies outside its chunk."""
    for i in range(first.shape[0]):
        at = first[i]
        for k in range(counts[i]):
            r = np.int64(coords[at + 2 * k])
            c = np.int64(coords[at + 2 * k + 1])
            if r >= chunk[0] or c >= chunk[1]:
                return -1, False
            r += origins[i, 0]
            if r < shape[0] and c + origins[i, 1] < shape[1]:
                indptr[r + 1] += 1
    for r in range(shape[0]):
        indptr[r + 1] += indptr[r]
    fill = indptr[:-1].copy()
    ordered = True
    for i in range(first.shape[0]):
        at = first[i]
        last = -1
        for k in range(counts[i]):
            r = np.int64(coords[at + 2 * k])
            c = np.int64(coords[at + 2 * k + 1])
            if r * chunk[1] + c <= last:
                ordered = False
            last = r * chunk[1] + c
            r += origins[i, 0]
            c += origins[i, 1]
            if r < shape[0] and c < shape[1]:
                p = fill[r]
                fill[r] = p + 1
                indices[p] = c
                data[p] = values[value_first[i] + k]
    return indptr[shape[0]], ordered
