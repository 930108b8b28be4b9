"""Chunk-to-selection copy kernel: copies the selected part of many chunks into one output.

Selections are per dimension: either a dense run ``start .. start+n`` or a sorted, unique
coordinate array. For each touched chunk ``t`` and dimension ``d``, the selected coordinates
inside the chunk are positions ``lo[d] .. hi[d]`` of the dimension's selection; their offsets
inside the chunk are ``coord - scaled[t, d] * chunk[d]``.

Arguments (all int64 unless said):
  src        uint8 1-D: the bytes holding the chunks (a file map, or a scratch buffer)
  src_pos    (T,) byte offset of each chunk in ``src``; -1 = skip (unallocated)
  scaled     (T, rank) the chunks' scaled offsets (chunk grid coordinates)
  upos       (T, rank) index of the chunk in its dimension's list of touched chunk indices
  rlo, rhi   concatenated per-dimension arrays: selection position range per touched index
             (explicit dimensions only; a dense dimension's range is computed)
  ubase      (rank,) start of each dimension in rlo/rhi
  count      (rank,) number of selected coordinates of each dimension
  coords     concatenated per-dimension coordinates (explicit dimensions only)
  cbase      (rank,) start of each dimension in ``coords``; -1 for a dense dimension
  start      (rank,) first coordinate of each dense dimension
  chunk      (rank,) chunk dimensions (elements)
  cstrides   (rank,) chunk strides in bytes; ostrides: output strides in bytes
  out        uint8 1-D: the C-contiguous output bytes; itemsize: element size in bytes
"""
import numpy as np

from ._jit import njit


@njit
def _copy_one(src, p, sc, upos, t, rlo, rhi, ubase, coords, cbase, start, count, chunk, cstrides,
              out, ostrides, itemsize, lo, hi, idx, origin):
    """Copy the selected part of one chunk (bytes at src[p:], grid position ``sc``)."""
    rank = chunk.shape[0]
    last = rank - 1
    for d in range(rank):
        origin[d] = sc[d] * chunk[d]
        if cbase[d] < 0:
            a = origin[d] if origin[d] > start[d] else start[d]
            e = origin[d] + chunk[d]
            if e > start[d] + count[d]:
                e = start[d] + count[d]
            lo[d] = a - start[d]
            hi[d] = e - start[d]
        else:
            u = ubase[d] + upos[t, d]
            lo[d] = rlo[u]
            hi[d] = rhi[u]
        if hi[d] <= lo[d]:
            return
        idx[d] = lo[d]
    ilo = lo[last]
    ihi = hi[last]
    cl = cbase[last]
    if cl < 0:
        first = start[last] + ilo - origin[last]
        contiguous = True
    else:
        first = coords[cl + ilo] - origin[last]
        contiguous = (coords[cl + ihi - 1] - coords[cl + ilo]) == (ihi - 1 - ilo)
    run = (ihi - ilo) * itemsize
    while True:
        s = p
        o = ilo * ostrides[last]
        for d in range(last):
            if cbase[d] < 0:
                off = start[d] + idx[d] - origin[d]
            else:
                off = coords[cbase[d] + idx[d]] - origin[d]
            s += off * cstrides[d]
            o += idx[d] * ostrides[d]
        if contiguous:
            s += first * itemsize
            out[o:o + run] = src[s:s + run]
        else:
            for i in range(ilo, ihi):
                ss = s + (coords[cl + i] - origin[last]) * itemsize
                for b in range(itemsize):
                    out[o + b] = src[ss + b]
                o += itemsize
        d = last - 1
        while d >= 0:
            idx[d] += 1
            if idx[d] < hi[d]:
                break
            idx[d] = lo[d]
            d -= 1
        if d < 0:
            break


@njit
def copy_chunks(src, src_pos, scaled, upos, rlo, rhi, ubase, coords, cbase, start, count,
                chunk, cstrides, out, ostrides, itemsize):
    """Chunk t's bytes start at src[src_pos[t]] (skipped if < 0); its grid position is
    scaled[t]."""
    rank = chunk.shape[0]
    lo = np.empty(rank, np.int64)
    hi = np.empty(rank, np.int64)
    idx = np.empty(rank, np.int64)
    origin = np.empty(rank, np.int64)
    for t in range(src_pos.shape[0]):
        if src_pos[t] >= 0:
            _copy_one(src, src_pos[t], scaled[t], upos, t, rlo, rhi, ubase, coords, cbase, start,
                      count, chunk, cstrides, out, ostrides, itemsize, lo, hi, idx, origin)


@njit
def copy_table_chunks(src, base, rows, t0, t1, tab_addr, tab_scaled, upos, rlo, rhi, ubase,
                      coords, cbase, start, count, chunk, cstrides, out, ostrides, itemsize):
    """Like copy_chunks for touched chunks t0..t1, reading each chunk's address and grid
    position from the decoded index through ``rows`` (-1 = unallocated): no per-chunk
    temporaries. Chunk bytes start at src[base + tab_addr[row]]."""
    rank = chunk.shape[0]
    lo = np.empty(rank, np.int64)
    hi = np.empty(rank, np.int64)
    idx = np.empty(rank, np.int64)
    origin = np.empty(rank, np.int64)
    for t in range(t0, t1):
        r = rows[t]
        if r >= 0:
            _copy_one(src, base + np.int64(tab_addr[r]), tab_scaled[r], upos, t, rlo, rhi, ubase,
                      coords, cbase, start, count, chunk, cstrides, out, ostrides, itemsize, lo,
                      hi, idx, origin)
