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

The numpy form copies the chunks lying wholly inside a dense selection with one fancy-index
assignment into a blocked view of the output, batch by batch, and every other chunk with one
slicing assignment each (about 10 us a chunk); the compiled loop takes over when a process has
copied enough chunks one by one to repay loading it.
"""
import numpy as np

from ._jit import loop

_SECONDS_PER_CHUNK = 10e-6    # the numpy form's cost per chunk copied by slicing
_GATHER_BYTES = 1 << 20       # bytes gathered per batch of whole chunks


def copy_chunks(src, src_pos, scaled, upos, rlo, rhi, ubase, coords, cbase, start, count,
                chunk, cstrides, out, ostrides, itemsize):
    """Chunk t's bytes start at src[src_pos[t]] (skipped if < 0); its grid position is
    scaled[t]."""
    args = (rlo, rhi, ubase, coords, cbase, start, count, chunk)
    plan = _Plan(src_pos, scaled, upos, *args)
    if _copy_chunks_loop.worth(plan.sliced * _SECONDS_PER_CHUNK):
        _copy_chunks_loop(src, src_pos, scaled, upos, rlo, rhi, ubase, coords, cbase, start,
                          count, chunk, cstrides, out, ostrides, itemsize)
    else:
        plan.run(src, out, itemsize)


def copy_table_chunks(src, base, rows, t0, t1, tab_addr, tab_scaled, upos, rlo, rhi, ubase,
                      coords, cbase, start, count, chunk, cstrides, out, ostrides, itemsize):
    """Like copy_chunks for touched chunks t0..t1, reading each chunk's address and grid
    position from the decoded index through ``rows`` (-1 = unallocated). Chunk bytes start
    at src[base + tab_addr[row]]."""
    r = rows[t0:t1]
    keep = np.flatnonzero(r >= 0)
    rk = r[keep]
    src_pos = tab_addr[rk].astype(np.int64) + base
    up = upos[t0:t1][keep] if upos.shape[0] else upos
    plan = _Plan(src_pos, tab_scaled[rk], up, rlo, rhi, ubase, coords, cbase, start, count,
                 chunk)
    if _copy_table_chunks_loop.worth(plan.sliced * _SECONDS_PER_CHUNK):
        _copy_table_chunks_loop(src, base, rows, t0, t1, tab_addr, tab_scaled, upos, rlo, rhi,
                                ubase, coords, cbase, start, count, chunk, cstrides, out,
                                ostrides, itemsize)
    else:
        plan.run(src, out, itemsize)


class _Plan:
    """The numpy form: which chunks go whole into a blocked view of the output (``whole``),
    which are copied one by one (``sliced`` of them)."""

    def __init__(self, src_pos, scaled, upos, rlo, rhi, ubase, coords, cbase, start, count,
                 chunk):
        keep = src_pos >= 0
        if not keep.all():
            src_pos, scaled = src_pos[keep], scaled[keep]
            upos = upos[keep] if upos.shape[0] else upos
        self.src_pos, self.scaled, self.upos = src_pos, scaled, upos
        self.sel = (rlo, rhi, ubase, coords, cbase, start, count, chunk)
        self.whole = np.zeros(len(src_pos), bool)
        if (cbase < 0).all() and len(src_pos):
            origin = scaled * chunk
            self.whole = ((origin >= start) & (origin + chunk <= start + count)).all(axis=1)
        self.sliced = len(src_pos) - int(self.whole.sum())

    def run(self, src, out, itemsize):
        rlo, rhi, ubase, coords, cbase, start, count, chunk = self.sel
        rank = chunk.shape[0]
        cs = tuple(int(c) for c in chunk) + (itemsize,)
        cn = int(np.prod(cs))
        outnd = out.reshape(tuple(int(c) for c in count) + (itemsize,))
        if self.sliced < len(self.src_pos):
            _copy_whole(src, self.src_pos[self.whole], self.scaled[self.whole], start, chunk,
                        outnd, cs, cn)
        for t in np.flatnonzero(~self.whole):
            p, sc = int(self.src_pos[t]), self.scaled[t]
            csel, osel = [], []
            arrays = False
            for d in range(rank):
                o = int(sc[d]) * cs[d]
                if cbase[d] < 0:
                    s0 = int(start[d])
                    lo, hi = max(o, s0) - s0, min(o + cs[d], s0 + int(count[d])) - s0
                    part = slice(s0 + lo - o, s0 + hi - o)
                else:
                    u = int(ubase[d] + self.upos[t, d])
                    lo, hi = int(rlo[u]), int(rhi[u])
                    part = coords[cbase[d] + lo:cbase[d] + hi] - o
                    if hi > lo and int(part[-1] - part[0]) == hi - lo - 1:
                        part = slice(int(part[0]), int(part[-1]) + 1)
                    else:
                        arrays = True
                if hi <= lo:
                    break
                csel.append(part)
                osel.append(slice(lo, hi))
            else:
                if arrays:
                    csel = np.ix_(*[np.arange(c.start, c.stop) if isinstance(c, slice) else c
                                    for c in csel])
                outnd[tuple(osel)] = src[p:p + cn].reshape(cs)[tuple(csel)]


def _copy_whole(src, pos, scaled, start, chunk, outnd, cs, cn):
    """Whole chunks (every element inside the dense selection) into a blocked view of the
    output: dimension d split into (blocks, chunk[d]) from the first chunk boundary."""
    rank = chunk.shape[0]
    first = -(-start // chunk)                      # first chunk index starting in the box
    off = first * chunk - start
    nblk = (np.asarray(outnd.shape[:rank]) - off) // chunk
    view = outnd[tuple(slice(int(o), int(o + b * c)) for o, b, c in zip(off, nblk, chunk))]
    view = view.reshape(sum(((int(b), int(c)) for b, c in zip(nblk, chunk)), ()) + cs[-1:])
    view = view.transpose(tuple(range(0, 2 * rank, 2)) + tuple(range(1, 2 * rank, 2))
                          + (2 * rank,))
    blocks = scaled - first
    if cn >= _GATHER_BYTES:           # big chunks: one slice each (no per-byte index)
        for i in range(len(pos)):
            p0 = int(pos[i])
            view[tuple(int(b) for b in blocks[i])] = src[p0:p0 + cn].reshape(cs)
        return
    per = max(1, _GATHER_BYTES // cn)
    span = np.arange(cn, dtype=np.int64)
    for a in range(0, len(pos), per):
        p = pos[a:a + per]
        if len(p) == 1 or (np.diff(p) == cn).all():
            data = src[int(p[0]):int(p[0]) + len(p) * cn]
        else:
            data = src[(p[:, None] + span).reshape(-1)]
        view[tuple(blocks[a:a + per].T)] = data.reshape((len(p),) + cs)


@loop
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


@loop
def _copy_chunks_loop(src, src_pos, scaled, upos, rlo, rhi, ubase, coords, cbase, start, count,
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


@loop
def _copy_table_chunks_loop(src, base, rows, t0, t1, tab_addr, tab_scaled, upos, rlo, rhi, ubase,
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
