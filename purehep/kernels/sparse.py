"""Kernels of sparse (structured chunk) storage, vectorised with numpy: coordinate -> chunk
bucketing and the block decomposition of a chunk's defined elements (hyperslab selection
encoding); and a loop kernel gathering the point lists of many chunks into CSR arrays."""
import numpy as np

from ._jit import loop
from .checksum import lookup3_first_mismatch


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
def points_csr(buf, words, pairs, values, sec0, cat, vat, counts, origins, bands, chunk,
               shape, at, verify, indptr, indices, data):
    """CSR arrays of 2-D chunks whose defined elements are point lists in row-major order,
    read where they lie in the uint8 array ``buf``: chunk ``i``'s section 0 is
    ``buf[sec0[i]:vat[i]]``, its last 4 bytes the lookup3 checksum of the rest (sparse RFC
    Table 4); it lists ``counts[i]`` points as (row, column) pairs of coordinates of 2 or
    4 bytes from byte ``cat[i]``, and their values from byte ``vat[i]``. ``words``,
    ``pairs`` and ``values`` are tuples of views of ``buf`` as little-endian unsigned
    integers of 4 bytes, of a pair's size (a pair is one word: the row in its low half)
    and of the value size, one per byte shift (``pairs[s][j]`` at byte s + j * size, so
    that nothing need be aligned: the loads are unaligned, which x86-64, AArch64 and POWER
    do in hardware). Chunks come in row-major order of their origins ``origins[i]``;
    ``bands`` holds the first chunk of each row of chunks, then the end of the last. For
    each row of chunks: the checksums are verified (unless ``verify`` is false: the file
    was opened so; :func:`lookup3_first_mismatch`, two chunks at a time), each chunk's
    points checked and its row ends found (:func:`_row_ends`, one pass), every
    (chunk, row) given its place in the output, from entry ``at`` on, then each chunk's
    points written there (:func:`_scatter`). Points past ``shape`` (the edge chunks'
    outside) are left out. Sets ``indptr[r + 1]`` (the end of row r) for the rows the bands
    cover, writes ``indices`` and ``data``. Returns the number of entries written, -1 when
    a chunk lists a point outside it or out of row-major order (for the caller's general
    path), -2 - i when chunk i's checksum differs."""
    rows, cols, height = shape[0], shape[1], chunk[0]
    psz, isz = len(pairs), len(values)
    pshift, pfirst, vshift, vfirst = cat % psz, cat // psz, vat % isz, vat // isz
    sums = vat - 4
    wide = 1
    for b in range(bands.shape[0] - 1):
        wide = max(wide, bands[b + 1] - bands[b])
    ends = np.empty((wide, height + 1), np.int64)
    kept = np.empty((wide, height + 1), np.int64)
    base = np.empty((wide, height), np.int64)
    p = at
    for b in range(bands.shape[0] - 1):
        lo, hi = bands[b], bands[b + 1]
        for i0 in range(lo, hi, 2):     # (two chunks checksummed at once, then read while
            i1 = min(i0 + 2, hi)          # in cache)
            if verify:
                bad = lookup3_first_mismatch(buf, words, sec0[i0:i1], sums[i0:i1])
                if bad >= 0:
                    return -2 - (i0 + bad)
            for i in range(i0, i1):
                pts = pairs[pshift[i]][pfirst[i]:pfirst[i] + counts[i]]
                if not _row_ends(pts, chunk, ends[i - lo]):
                    return -1
                if origins[i, 1] + chunk[1] > cols:
                    _kept(pts, ends[i - lo], cols - origins[i, 1], kept[i - lo])
                else:
                    kept[i - lo] = ends[i - lo]
        top = origins[lo, 0]
        inside = max(0, min(height, rows - top))
        for r in range(inside):
            for j in range(hi - lo):
                start = ends[j, r]
                base[j, r] = p - start
                p += max(kept[j, r + 1] - start, 0)
            indptr[top + r + 1] = p
        for i in range(lo, hi):
            pts = pairs[pshift[i]][pfirst[i]:]
            vals = values[vshift[i]][vfirst[i]:]
            if origins[i, 1] + chunk[1] <= cols:    # (all its points kept: one pass)
                n = ends[i - lo, inside]
                _scatter(pts[:n], vals[:n], 0, origins[i, 1], base[i - lo], indices, data)
            else:                                   # (an edge chunk: row by row)
                for r in range(inside):
                    k0, k1 = ends[i - lo, r], kept[i - lo, r + 1]
                    if k1 > k0:
                        _scatter(pts[k0:k1], vals[k0:k1], k0, origins[i, 1], base[i - lo],
                                 indices, data)
    return p - at


@loop
def _row_ends(pts, chunk, ends):
    """``ends[r + 1]``: the end (point index) of row r of the points ``pts`` (pair words:
    row in the low half, column in the high half); ``ends[0]`` is 0. True when the points
    lie in a chunk of extent ``chunk`` in strict row-major order (else ``ends`` is not
    meaningful). One pass without early exits: the order and the extent are reductions."""
    half = np.uint64(pts.itemsize * 4)
    low = (np.uint64(1) << half) - np.uint64(1)
    height = np.uint64(chunk[0])
    ends[:] = 0
    later = True
    right = np.uint64(0)
    prev = np.uint64(0)
    for k in range(pts.shape[0]):
        x = np.uint64(pts[k])
        key = ((x & low) << half) + (x >> half)     # (the row-major key: row above column)
        later &= k == 0 or key > prev
        prev = key
        right = max(right, x >> half)
        ends[min(x & low, height - np.uint64(1)) + np.uint64(1)] = k + 1
    for r in range(ends.shape[0] - 1):
        ends[r + 1] = max(ends[r + 1], ends[r])
    return later and (pts.shape[0] == 0 or ((prev >> half) < height and right < chunk[1]))


@loop
def _kept(pts, ends, width, kept):
    """``kept[r + 1]``: the end of row r's points left of column ``width`` (the dataset's
    edge, from the chunk's left), or ``ends[r]`` when it has none; ``kept[0]`` is 0."""
    half = np.uint64(pts.itemsize * 4)
    kept[0] = 0
    for r in range(ends.shape[0] - 1):
        k = ends[r]
        while k < ends[r + 1] and np.int64(np.uint64(pts[k]) >> half) < width:
            k += 1
        kept[r + 1] = k


@loop
def _scatter(pts, vals, first, left, base, indices, data):
    """The points ``pts`` (values ``vals``), numbered from ``first``, to their places: point
    k of row r at ``base[r] + first + k``, its column plus ``left`` in ``indices``. (No
    test per point: a branch in this loop cost ~20 % of the kernel.)"""
    half = np.uint64(pts.itemsize * 4)
    low = (np.uint64(1) << half) - np.uint64(1)
    for k in range(pts.shape[0]):
        x = np.uint64(pts[k])
        q = np.uint64(base[x & low] + first + k)    # (unsigned: no negative-index handling)
        indices[q] = np.int64(x >> half) + left
        data[q] = vals[k]
