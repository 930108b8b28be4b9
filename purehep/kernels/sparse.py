"""Kernels of sparse (structured chunk) storage, vectorised with numpy: coordinate -> chunk
bucketing and the block decomposition of a chunk's defined elements (hyperslab selection
encoding); and a loop kernel gathering the point lists of many chunks into CSR arrays."""
import numpy as np

from ._jit import loop
from .checksum import lookup3_matches


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
def points_csr(buf, coords, values, sec0, cat, vat, counts, origins, bands, chunk, shape, at,
               verify, cursor, indptr, indices, data):
    """CSR arrays of 2-D chunks whose defined elements are point lists in row-major order,
    read where they lie in the uint8 array ``buf``: chunk ``i``'s section 0 is
    ``buf[sec0[i]:vat[i]]``, its last 4 bytes the lookup3 checksum of the rest (sparse RFC
    Table 4); it lists ``counts[i]`` points as (row, column) pairs from byte ``cat[i]`` and
    their values from byte ``vat[i]``. ``coords`` and ``values`` view ``buf`` as
    little-endian unsigned integers of the coordinate and value sizes at every byte shift
    (element [s, j] at byte s + j * size, so that nothing need be aligned: the loads are
    unaligned, which x86-64, AArch64 and POWER do in hardware). Chunks come in row-major
    order of their origins ``origins[i]``; ``bands`` holds the first chunk of each row of
    chunks, then the end of the last. Each row of chunks has its checksums verified (unless
    ``verify`` is false: the file was opened so), then is merged row by row (each chunk's
    next points are the row's, by column), so the output is written in order from entry
    ``at``. Points past ``shape`` (the edge chunks' outside) are left out. Sets
    ``indptr[r + 1]`` (the end of row r) for the rows the bands cover, writes ``indices``
    and ``data``; ``cursor`` is scratch of one entry per chunk. Returns the number of
    entries written, -1 when a chunk lists a point outside it or out of row-major order
    (for the caller's general path), -2 - i when chunk i's checksum differs."""
    rows, cols, height, width = shape[0], shape[1], chunk[0], chunk[1]
    enc, isz = coords.shape[0], values.shape[0]
    # (divided once: divisions in the merge loop cost more than the rest of it)
    cshift, cfirst, vshift, vfirst = cat % enc, cat // enc, vat % isz, vat // isz
    p = at
    for b in range(bands.shape[0] - 1):
        lo, hi = bands[b], bands[b + 1]
        for i in range(lo, hi):
            if verify and not lookup3_matches(buf, sec0[i], vat[i] - 4):
                return -2 - i
            cursor[i] = 0
        top = origins[lo, 0]
        for r in range(height):
            inside = top + r < rows
            for i in range(lo, hi):     # (locals: the stores below may alias the inputs)
                k, n, left = cursor[i], counts[i], origins[i, 1]
                cs, cj, vs, vj = cshift[i], cfirst[i], vshift[i], vfirst[i]
                last = -1
                while k < n and coords[cs, cj + 2 * k] == r:
                    c = np.int64(coords[cs, cj + 2 * k + 1])
                    if c >= width or c <= last:
                        return -1
                    last = c
                    if inside and c + left < cols:
                        indices[p] = c + left
                        data[p] = values[vs, vj + k]
                        p += 1
                    k += 1
                if k < n and coords[cs, cj + 2 * k] <= r:
                    return -1
                cursor[i] = k
            if inside:
                indptr[top + r + 1] = p
        for i in range(lo, hi):
            if cursor[i] != counts[i]:
                return -1
    return p - at
