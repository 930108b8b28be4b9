"""Kernels of sparse (structured chunk) storage: coordinate -> chunk bucketing and the block
decomposition of a chunk's defined elements (hyperslab selection encoding)."""
import numpy as np

from ._jit import njit


@njit
def chunk_keys(coords, chunk, grid):
    """Per point: row-major index of its chunk in ``grid`` and of its position in the chunk."""
    n, rank = coords.shape
    ckey = np.empty(n, np.int64)
    lkey = np.empty(n, np.int64)
    for i in range(n):
        c = 0
        loc = 0
        for d in range(rank):
            x = coords[i, d]
            q = x // chunk[d]
            c = c * grid[d] + q
            loc = loc * chunk[d] + (x - q * chunk[d])
        ckey[i] = c
        lkey[i] = loc
    return ckey, lkey


@njit
def row_runs(lin, last):
    """Runs of consecutive row-major indices (sorted, unique) that stay within one row of
    length ``last``: (first, final) index arrays, inclusive."""
    n = lin.shape[0]
    first = np.empty(n, np.int64)
    final = np.empty(n, np.int64)
    m = 0
    i = 0
    while i < n:
        a = lin[i]
        b = a
        while i + 1 < n and lin[i + 1] == b + 1 and (b + 1) % last != 0:
            i += 1
            b = lin[i]
        first[m] = a
        final[m] = b
        m += 1
        i += 1
    return first[:m], final[:m]


@njit
def merge_axis(lo, hi, order, k):
    """Merge blocks (``lo``/``hi`` inclusive corners, visited in ``order``, which sorts them
    by every field but lo[k] and then by lo[k]) that are adjacent along axis ``k`` and equal
    elsewhere. Returns the merged corners."""
    m, rank = lo.shape
    olo = np.empty_like(lo)
    ohi = np.empty_like(hi)
    out = -1
    for j in range(m):
        i = order[j]
        same = out >= 0
        if same:
            for d in range(rank):
                if d == k:
                    continue
                if lo[i, d] != olo[out, d] or hi[i, d] != ohi[out, d]:
                    same = False
                    break
        if same and lo[i, k] == ohi[out, k] + 1:
            ohi[out, k] = hi[i, k]
            continue
        out += 1
        for d in range(rank):
            olo[out, d] = lo[i, d]
            ohi[out, d] = hi[i, d]
    return olo[:out + 1], ohi[:out + 1]


@njit
def blocks_to_linear(lo, hi, dims):
    """Row-major indices (within ``dims``) of every element of the blocks, block by block."""
    m, rank = lo.shape
    total = 0
    for b in range(m):
        cnt = 1
        for d in range(rank):
            cnt *= hi[b, d] - lo[b, d] + 1
        total += cnt
    out = np.empty(total, np.int64)
    pos = 0
    idx = np.empty(rank, np.int64)
    for b in range(m):
        for d in range(rank):
            idx[d] = lo[b, d]
        done = False
        while not done:
            v = 0
            for d in range(rank):
                v = v * dims[d] + idx[d]
            out[pos] = v
            pos += 1
            d = rank - 1
            while d >= 0:
                idx[d] += 1
                if idx[d] <= hi[b, d]:
                    break
                idx[d] = lo[b, d]
                d -= 1
            if d < 0:
                done = True
    return out
