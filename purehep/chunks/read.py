"""The chunked read path: selection -> touched chunks -> decode (thread pool) -> copy kernel.

No per-element Python: the selection is described per dimension (a dense run or a sorted
coordinate array), the touched chunks are found with array operations on the decoded index,
and ``kernels.copy.copy_chunks`` moves each chunk's overlap into the preallocated output.
Unfiltered chunks are gathered by few reads (a buffer in memory: in place) and copied by the
same kernel.
"""
import itertools
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import FormatError, TruncatedError
from ..filters import check_pipeline
from ..io import memory
from . import SMALL_BOX_CHUNKS
from ..format.messages.layout import DONT_FILTER_PARTIAL_EDGE_CHUNKS

_pools = {}
_pools_lock = threading.Lock()
PARALLEL_MIN_BYTES = 1 << 20
DIRECT_CHUNK_BYTES = 64 << 10
GATHER_BATCH = 16 << 20     # bytes of unfiltered chunks gathered at once (_copy_gathered)
IN_PLACE_BYTES = 1 << 20    # runs of chunks read straight into the output (_read_in_place)


def _pool(n):
    with _pools_lock:
        p = _pools.get(n)
        if p is None:
            p = _pools[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="purehep-chunks")
        return p


def _dimension(st, d, c):
    """(dense, start, n, coords, touched chunk indices, lo, hi) of dimension d's selection."""
    size, ch = st.shape[d], st.chunk_shape[d]
    if c is None:
        start, n, arr = 0, size, None
    else:
        arr = np.asarray(c, dtype=np.int64).reshape(-1)
        n = arr.shape[0]
        if n == 0:
            return True, 0, 0, None, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        if arr[0] < 0 or arr[-1] >= size:
            raise IndexError(f"coordinates {int(arr[0])}..{int(arr[-1])} out of range for "
                             f"dimension {d} of size {size}")
        start = int(arr[0])
        if int(arr[-1]) - start == n - 1:
            arr = None              # consecutive: a dense run
    if n == 0:
        return True, 0, 0, None, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if arr is None:
        # a dense run: touched chunks k0..k1, ranges computed by the kernel
        return True, start, n, None, range(start // ch, (start + n - 1) // ch + 1), None, None
    if np.any(np.diff(arr) <= 0):
        raise ValueError(f"coordinates of dimension {d} are not sorted and unique")
    k = arr // ch
    bounds = np.flatnonzero(np.diff(k)) + 1
    lo = np.concatenate(([0], bounds)).astype(np.int64)
    hi = np.concatenate((bounds, [n])).astype(np.int64)
    return False, start, n, arr, k[lo], lo, hi


def read_selection(st, coords):
    rank = st.rank
    if coords is not None and len(coords) != rank:
        raise ValueError(f"{len(coords)} coordinate arrays for a rank-{rank} dataset")
    dims = [_dimension(st, d, None if coords is None else coords[d]) for d in range(rank)]
    out_shape = tuple(dm[2] for dm in dims)
    dtype = st.dtype
    if any(n == 0 for n in out_shape):
        return memory.empty(out_shape, dtype, "chunked dataset read")
    zero_fill = not st.fill.tobytes().strip(b"\0")
    # the output first, before any per-chunk arrays: a read too large fails here, cleanly
    out = memory.full(out_shape, st.fill, dtype, "chunked dataset read") if zero_fill else \
        memory.empty(out_shape, dtype, "chunked dataset read")

    lens = [len(dm[4]) for dm in dims]
    explicit = [d for d in range(rank) if not dims[d][0]]
    grid = st.grid
    full_grid = not explicit and all(int(dims[d][4][0]) == 0 and lens[d] == grid[d]
                                     for d in range(rank))
    if full_grid:
        # every chunk of the grid, in row-major order: rows come straight from the lookup
        scaled = None
        upos = None
        rows = st.rows_for_grid()
    else:
        if rank == 1:
            scaled = np.asarray(dims[0][4], np.int64).reshape(-1, 1)
            upos = np.arange(lens[0], dtype=np.int64).reshape(-1, 1) if explicit else None
        else:
            grid_pos = np.indices(lens, dtype=np.int64).reshape(rank, -1)
            scaled = np.empty((grid_pos.shape[1], rank), np.int64)
            for d in range(rank):
                u = dims[d][4]
                scaled[:, d] = (grid_pos[d] + u[0]) if isinstance(u, range) else u[grid_pos[d]]
            upos = grid_pos.T.copy() if explicit else None
            del grid_pos
        rows = st.rows_for(scaled)
    allpresent = bool((rows >= 0).all())
    present = None if allpresent else np.flatnonzero(rows >= 0)

    if not allpresent and not zero_fill:
        out[...] = st.fill
    if present is not None and not len(present):
        return out

    # per-dimension selection description for the kernel (see kernels.copy)
    ubase = np.zeros(rank, np.int64)
    cbase = np.full(rank, -1, np.int64)
    start = np.zeros(rank, np.int64)
    count = np.asarray(out_shape, np.int64)
    rlo, rhi, carr = [], [], []
    pos_u = pos_c = 0
    for d, (dense, s0, n, arr, u, lo, hi) in enumerate(dims):
        start[d] = s0
        if not dense:
            ubase[d] = pos_u
            pos_u += len(u)
            rlo.append(lo)
            rhi.append(hi)
            cbase[d] = pos_c
            pos_c += n
            carr.append(arr)

    def cat(parts):
        if not parts:
            return np.zeros(1, np.int64)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    sel = dict(rlo=cat(rlo), rhi=cat(rhi), ubase=ubase, coords=cat(carr), cbase=cbase,
               start=start, count=count)
    if upos is None:
        upos = np.zeros((0, rank), np.int64)   # unused: every dimension is dense
    rows = np.ascontiguousarray(rows, np.int64)
    chunk = np.asarray(st.chunk_shape, np.int64)
    isz = st.itemsize
    cstr = np.empty(rank, np.int64)
    ostr = np.empty(rank, np.int64)
    acc_c = acc_o = isz
    for d in range(rank - 1, -1, -1):
        cstr[d] = acc_c
        ostr[d] = acc_o
        acc_c *= st.chunk_shape[d]
        acc_o *= out_shape[d]
    geom = (sel, chunk, cstr, ostr, isz)
    outb = out.reshape(-1).view(np.uint8)

    t = st.table
    ctx = st.ctx
    if not st.filters and not ctx.source.prefetch_batch:
        del scaled, present
        _copy_gathered(st, outb, rows, upos, geom)
        return out
    prow = rows if present is None else rows[present]
    upos_p = upos if present is None or not upos.shape[0] else upos[present]
    del rows, scaled, present
    _fetch_decode_copy(st, outb, t.scaled[prow], upos_p, t.addresses[prow], t.sizes[prow],
                       t.masks[prow], geom)
    return out


def _fetch_decode_copy(st, outb, scaled, upos, addrs, sizes, masks, geom):
    """_decode_and_copy, the stored bytes of the chunks first fetched ahead by the source
    (``ByteSource.prefetch``: a remote source asks for them all at once) in batches of at
    most ``prefetch_batch`` bytes; sources that fetch nothing ahead go straight on."""
    source = st.ctx.source
    if not source.prefetch_batch:
        _decode_and_copy(st, outb, scaled, upos, addrs, sizes, masks, geom)
        return
    for a, b, ranges in _prefetch_batches(st, addrs, sizes, source.prefetch_batch):
        with source.prefetch(ranges):
            _decode_and_copy(st, outb, scaled[a:b], _rows(upos, a, b), addrs[a:b], sizes[a:b],
                             masks[a:b], geom)


def stored_ranges(st, addrs, sizes):
    """The absolute ``(offset, n)`` of each chunk's stored bytes that a read will fetch:
    all but the filtered chunks already in the decoded-chunk cache."""
    cache = st.cache if st.filters else None
    base, cn = st.ctx.base_address, st.chunk_nbytes
    return [(base + int(a), int(n) or cn) for a, n in zip(addrs, sizes)
            if cache is None or cache.get(int(a)) is None]


def _prefetch_batches(st, addrs, sizes, batch):
    """(a, b, the ranges of chunks a..b) over the chunks, each batch's stored bytes at most
    ``batch`` (or one chunk)."""
    cum = np.cumsum(np.where(sizes > 0, sizes, st.chunk_nbytes).astype(np.int64))
    a, n = 0, len(addrs)
    while a < n:
        before = int(cum[a - 1]) if a else 0
        b = max(a + 1, int(np.searchsorted(cum, before + batch, "right")))
        yield a, b, stored_ranges(st, addrs[a:b], sizes[a:b])
        a = b


def _kernel(src, src_pos, scaled, upos, outb, geom):
    from ..kernels.copy import copy_chunks
    sel, chunk, cstr, ostr, isz = geom
    copy_chunks(src, src_pos, scaled, upos, sel["rlo"], sel["rhi"], sel["ubase"], sel["coords"],
                sel["cbase"], sel["start"], sel["count"], chunk, cstr, outb, ostr, isz)


def _rows(upos, a, b):
    """Rows a..b of ``upos`` (an empty placeholder when no dimension is explicit)."""
    return upos[a:b] if upos.shape[0] else upos


def _split(n, parts):
    parts = max(1, min(parts, n))
    edges = np.linspace(0, n, parts + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _run(st, tasks):
    if st.threads == 1 or len(tasks) == 1:
        for f in tasks:
            f()
        return
    futures = [_pool(st.threads).submit(f) for f in tasks]
    err = None
    for fu in futures:
        try:
            fu.result()
        except BaseException as e:   # wait for all, then raise the first error
            err = err or e
    if err is not None:
        raise err


def _copy_gathered(st, outb, rows, upos, geom):
    """Unfiltered chunks of a local source: their stored bytes gathered
    (``ByteSource.gather``: the buffer itself in memory, a few coalesced reads of a file), at
    most GATHER_BATCH bytes at a time, and copied into place by the kernel from the decoded
    index's grid positions (no per-chunk temporaries)."""
    from ..kernels.copy import copy_table_chunks
    ctx = st.ctx
    _check_inside(st, rows)
    sel, chunk, cstr, ostr, isz = geom
    t, cn = st.table, st.chunk_nbytes
    parts = st.threads if outb.nbytes >= PARALLEL_MIN_BYTES else 1
    if not ctx.source.zero_copy:
        rows = _read_in_place(st, outb, rows, upos, geom, parts)
    per = max(1, GATHER_BATCH // max(cn, 1))
    for a in range(0, rows.shape[0], per):
        r = rows[a:a + per]
        held = np.flatnonzero(r >= 0)
        if not len(held):
            continue
        local = np.full(len(r), -1, np.int64)
        local[held] = np.arange(len(held))
        scaled = t.scaled[r[held]]
        up = upos[a:a + per] if upos.shape[0] else upos
        with ctx.source.gathered(t.addresses[r[held]].astype(np.int64) + ctx.base_address,
                                 np.full(len(held), cn, np.int64), "raw data chunk") \
                as (buf, pos):

            def run(u, v, buf=buf, pos=pos, local=local, scaled=scaled, up=up):
                copy_table_chunks(buf, np.int64(0), local, u, v, pos, scaled, up,
                                  sel["rlo"], sel["rhi"], sel["ubase"], sel["coords"],
                                  sel["cbase"], sel["start"], sel["count"], chunk, cstr,
                                  outb, ostr, isz)

            _run(st, [(lambda u=u, v=v: run(u, v)) for u, v in _split(len(r), parts)])


def _read_in_place(st, outb, rows, upos, geom, parts):
    """Read the chunks of ``rows`` that land whole as one run of the output's bytes straight
    into the output, where they also lie side by side in the file in runs of IN_PLACE_BYTES
    or more (a contiguous dataset chunked, as most are written): one ``readinto`` per run
    (cut in ``parts`` pieces for the thread pool), no copy through a buffer. Returns
    ``rows`` with those chunks marked done (-1: the kernel skips them)."""
    t, cn, base = st.table, st.chunk_nbytes, st.ctx.base_address
    held = np.flatnonzero(rows >= 0)
    if len(held) * cn < IN_PLACE_BYTES:
        return rows
    target = _contiguous_target(st, t.scaled[rows[held]], upos, geom)
    if target is None:
        return rows
    held, target = held[target >= 0], target[target >= 0]
    addr = t.addresses[rows[held]].astype(np.int64) + base
    order = np.argsort(addr, kind="stable")
    held, target, addr = held[order], target[order], addr[order]
    cut = np.flatnonzero((np.diff(addr) != cn) | (np.diff(target) != cn)) + 1
    first, stop = np.concatenate(([0], cut)), np.concatenate((cut, [len(addr)]))
    long = (stop - first) * cn >= IN_PLACE_BYTES
    if not long.any():
        return rows
    piece = max(cn, -(-int(((stop - first)[long]).sum()) * cn // parts))
    tasks = []
    for a, b in zip(first[long].tolist(), stop[long].tolist()):
        at, to, n = int(addr[a]), int(target[a]), (b - a) * cn
        for k in range(0, n, piece):
            m = min(piece, n - k)
            tasks.append(lambda at=at + k, to=to + k, m=m: st.ctx.source.readinto(
                at, outb[to:to + m], "raw data chunk"))
    _run(st, tasks)
    rows = rows.copy()
    rows[held[np.repeat(long, stop - first)]] = -1
    return rows


def _check_inside(st, rows):
    """A TruncatedError naming the first chunk of ``rows`` that lies past the end of the
    file."""
    size = st.ctx.source.size
    bad = st.rows_past_eof(size)
    if len(bad):
        hit = np.intersect1d(bad, rows)
        if len(hit):
            t, i = st.table, int(hit[0])
            raise TruncatedError(f"chunk at {(t.scaled[i] * np.asarray(st.chunk_shape)).tolist()} "
                                 f"({st.chunk_nbytes} bytes) lies past the end of the file "
                                 f"({size} bytes)", "raw data chunk",
                                 st.ctx.absolute(int(t.addresses[i])))


def _decode_and_copy(st, outb, scaled, upos, addrs, sizes, masks, geom):
    """Read each chunk, undo its filters (thread pool), copy batches with the kernel."""
    check_pipeline(st.filters)
    cn = st.chunk_nbytes
    n = len(addrs)
    chunk = np.asarray(st.chunk_shape, np.int64)
    unfiltered_edge = np.zeros(n, bool)
    if st.filters and st.layout.flags & DONT_FILTER_PARTIAL_EDGE_CHUNKS:
        unfiltered_edge = np.any((scaled + 1) * chunk > np.asarray(st.shape, np.int64), axis=1)

    def decoded(i):
        return decode_chunk(st, int(addrs[i]), int(sizes[i]), int(masks[i]), scaled[i],
                            not unfiltered_edge[i])

    zero = np.zeros(1, np.int64)

    target = _contiguous_target(st, scaled, upos, geom) if cn >= DIRECT_CHUNK_BYTES and \
        st.filters else None

    def task(a, b):
        if cn >= DIRECT_CHUNK_BYTES:      # big chunks: copy each straight from its buffer
            for i in range(a, b):
                if target is not None and target[i] >= 0 and not unfiltered_edge[i]:
                    decode_chunk_into(st, int(addrs[i]), int(sizes[i]), int(masks[i]),
                                      scaled[i], outb[target[i]:target[i] + cn])
                    continue
                _kernel(decoded(i), zero, scaled[i:i + 1], _rows(upos, i, i + 1), outb, geom)
            return
        nb = b - a                        # small chunks: gather a batch, one kernel call
        scratch = np.empty(nb * cn, np.uint8)
        for k in range(nb):
            scratch[k * cn:(k + 1) * cn] = decoded(a + k)[:cn]
        _kernel(scratch, np.arange(nb, dtype=np.int64) * cn, scaled[a:b], _rows(upos, a, b), outb,
                geom)

    from . import SCRATCH_BYTES
    per = max(1, SCRATCH_BYTES // max(cn, 1))
    if st.threads > 1:
        per = max(1, min(per, -(-n // (4 * st.threads))))
    tasks = [(lambda a=a, b=min(a + per, n): task(a, b)) for a in range(0, n, per)]
    _run(st, tasks)


def _contiguous_target(st, scaled, upos, geom):
    """Per chunk, the byte offset in the output where the whole chunk lands as one run of
    bytes (every dimension but the first covered whole by the chunk), or -1; None when no
    chunk can (an explicit index list in the selection)."""
    sel, chunk, cstr, ostr, isz = geom
    if upos.shape[0] or (sel["cbase"] >= 0).any():
        return None
    start, count = sel["start"], sel["count"]
    if (chunk[1:] != count[1:]).any():
        return None
    origin = scaled * chunk
    inside = ((origin >= start) & (origin + chunk <= start + count)).all(axis=1)
    return np.where(inside, (origin[:, 0] - start[0]) * ostr[0], -1)


def decode_chunk_into(st, addr, size, mask, scaled, out):
    """Read the filtered chunk at ``addr`` and decode it straight into the uint8 array
    ``out`` (its place in the read's output). The stored bytes are a view where the source
    can give one (a buffer in memory): whatever the filters give ends up copied into ``out``."""
    from ..filters import decode_pipeline
    where = _chunk_name(st, scaled)
    decode_pipeline(st.ctx.view(addr, size, where), st.filters, mask, st.itemsize,
                    st.chunk_nbytes, (where, st.ctx.absolute(addr)), out=out)


def decode_chunk(st, addr, size, mask, scaled, filtered=True):
    """The bytes of one chunk as a uint8 array of at least ``chunk_nbytes`` (its filters
    undone unless ``filtered`` is False: an unfiltered partial edge chunk)."""
    ctx, cn = st.ctx, st.chunk_nbytes
    if st.filters and filtered:
        cache = st.cache
        data = cache.get(addr) if cache is not None else None
        if data is not None:
            return data
        from ..filters import decode_pipeline
        where = _chunk_name(st, scaled)
        data = decode_pipeline(ctx.read(addr, size, where), st.filters, mask, st.itemsize, cn,
                               (where, ctx.absolute(addr)))
    else:
        whole = getattr(ctx.source, "array", None)
        start = ctx.base_address + addr
        if whole is not None and 0 <= start and start + cn <= ctx.source.size:
            return whole[start:start + cn]  # an unfiltered chunk of a buffer in memory
        data = ctx.read(addr, min(size, cn) if size else cn, "raw data chunk")
    arr = data.reshape(-1).view(np.uint8) if isinstance(data, np.ndarray) else \
        np.frombuffer(data, np.uint8)
    if arr.size < cn:
        raise FormatError(f"chunk holds {arr.size} bytes after decoding, expected {cn}",
                          _chunk_name(st, scaled), ctx.absolute(addr))
    if st.filters and filtered and st.cache is not None:
        st.cache.put(addr, arr)
    return arr


def _chunk_name(st, scaled):
    return f"raw data chunk at {[int(p) * c for p, c in zip(scaled, st.chunk_shape)]}"


def box_reader(st):
    """A function ``(starts, stops) -> the elements of that box`` for small reads (None when
    the box touches more than SMALL_BOX_CHUNKS chunks: ``read`` is the path for those). Each
    touched chunk is found with ``st.record_at`` (no whole-index decode) and read where it
    lies (unfiltered chunks of a local source: only the bytes the box needs when it is one
    run of them), taken from the decoded-chunk cache, or read and decoded; its overlap is copied by numpy slicing, with no coordinate
    arrays and no thread pool. Unallocated chunks read as the fill value."""
    cs, dtype, cn, shape = st.chunk_shape, st.dtype, st.chunk_nbytes, st.shape
    raw_edges = bool(st.filters) and bool(st.layout.flags & DONT_FILTER_PARTIAL_EDGE_CHUNKS)
    source = st.ctx.source
    local = not st.filters and not source.prefetch_batch   # unfiltered, read where it lies
    base = st.ctx.base_address
    last = (-1, None)             # the chunk read last: row-by-row reads stay in one chunk
    fetch_ahead = source.prefetch if source.prefetch_batch else None
    itemsize = dtype.itemsize
    # (the lookup itself unless the index is decoded already: the same records)
    record_at = st.finder() if st._table is None else st.record_at
    read_small = source.read_small
    one, c0 = len(cs) == 1, cs[0]
    strides = [math.prod(cs[d + 1:]) for d in range(len(cs))]   # elements per step in a chunk

    def chunk_at(pos):
        """The chunk at grid position ``pos`` (file dtype, chunk shape), or None:
        unallocated."""
        nonlocal last
        rec = record_at(pos)
        if rec is None:
            return None
        addr, size, mask = rec
        if local and 0 <= base + addr and base + addr + cn <= source.size:
            return np.frombuffer(st.ctx.read_small(addr, cn, "raw data chunk"),
                                 dtype).reshape(cs)
        prev = last               # one read of the pair: other threads may replace it
        if prev[0] == addr:
            return prev[1]
        filtered = not (raw_edges and any((p + 1) * c > n for p, c, n in zip(pos, cs, shape)))
        if fetch_ahead is None:
            data = decode_chunk(st, addr, size, mask, pos, filtered)
        else:                     # a remote source: one request for the chunk's bytes
            with fetch_ahead(stored_ranges(st, [addr], [size])):
                data = decode_chunk(st, addr, size, mask, pos, filtered)
        chunk = data[:cn].view(dtype).reshape(cs)
        if st.cache is not None and st.cache.get(addr) is data:
            last = (addr, chunk)
        return chunk

    def run_of(pos, first, n, out_shape):
        """The ``n`` elements from element ``first`` of the unfiltered chunk at ``pos`` (read
        alone) as an array of ``out_shape`` (a list); False when its address lies outside the
        file."""
        rec = record_at(pos)
        if rec is None:
            return np.full(out_shape, st.fill, dtype)
        at = base + rec[0]
        if not (0 <= at and at + cn <= source.size):
            return False
        got = np.frombuffer(read_small(at + first * itemsize, n * itemsize, "raw data chunk"),
                            dtype).copy()
        return got if len(out_shape) == 1 else got.reshape(out_shape)

    def read(starts, stops, shape=None):
        """The box [starts, stops) as an array of ``shape`` (a list of as many elements;
        by default the box's own shape), or None (more than SMALL_BOX_CHUNKS chunks)."""
        if one and local:        # the commonest small read: ds[a:b] inside one chunk
            s, e = starts[0], stops[0]
            p = s // c0
            if (e - 1) // c0 == p:
                got = run_of((p,), s - p * c0, e - s, [e - s] if shape is None else shape)
                if got is not False:
                    return got
        pos, ext = [], []
        # the box as one run of the chunk's bytes in C order (unfiltered chunks): every
        # dimension before the first one selected more than once selected once, every one
        # after it whole
        first, n, run, several = 0, 1, local, False
        for s, e, c, stride in zip(starts, stops, cs, strides):
            p = s // c
            if (e - 1) // c != p:
                return read_several(starts, stops, shape)
            pos.append(p)
            k = e - s
            ext.append(k)
            first += (s - p * c) * stride
            n *= k
            if several:
                run = run and k == c
            else:
                several = k > 1
        if run:
            got = run_of(pos, first, n, ext if shape is None else shape)
            if got is not False:
                return got
        chunk = chunk_at(pos)
        if chunk is None:
            got = np.full(ext, st.fill, dtype)
        else:
            got = chunk[tuple([slice(s - p * c, e - p * c) for s, e, c, p in
                               zip(starts, stops, cs, pos)])].copy()
        return got if shape is None else got.reshape(shape)

    def read_several(starts, stops, shape):
        if st.chunks_touched(starts, stops) > SMALL_BOX_CHUNKS:
            return None
        out = np.empty([e - s for s, e in zip(starts, stops)], dtype)
        axes = []                 # per dimension: (grid position, chunk slice, output slice)
        for s, e, c in zip(starts, stops, cs):
            axes.append([(p, slice(max(s, p * c) - p * c, min(e, p * c + c) - p * c),
                          slice(max(s, p * c) - s, min(e, p * c + c) - s))
                         for p in range(s // c, (e - 1) // c + 1)])
        boxes = list(itertools.product(*axes))
        with fetched_ahead([tuple(p[0] for p in parts) for parts in boxes]):
            for parts in boxes:
                pos, src, dst = zip(*parts)
                chunk = chunk_at(pos)
                out[dst] = st.fill if chunk is None else chunk[src]
        return out if shape is None else out.reshape(shape)

    def fetched_ahead(positions):
        """The source's prefetch of the chunks at ``positions`` (a no-op for local files)."""
        if fetch_ahead is None:
            return source.prefetch(())
        recs = [r for r in map(st.record_at, positions) if r is not None]
        return fetch_ahead(stored_ranges(st, [r[0] for r in recs], [r[1] for r in recs]))

    check_pipeline(st.filters)
    return read
