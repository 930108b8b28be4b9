"""A whole 2-D sparse dataset as CSR arrays (scipy's ``csr_array`` layout: ``indptr``,
``indices``, ``data``), read straight from its chunks.

Unfiltered chunks whose section 0 is a point list (what the writer stores for scattered
elements; sparse RFC Table 5, an H5Sencode image of a version 1 or 2 point selection) are read
where they lie in a file in memory, else read into the process's spare buffer (each task
reading its own chunks, ``_chunk_bytes``), and put in CSR order by a loop kernel
(kernels/sparse.py ``points_csr``), rows of chunks split among the storage's threads: each
row of chunks has its section 0 checksums (RFC Table 4) verified,
then its points and values are written straight into the final arrays (rows counted per
chunk first, then every point to its place). Until the loop repays loading numba, and
without numba, the same chunks are put in CSR order by numpy (:func:`_vectorised`: one
stable sort by row; section 0 checksums on numpy lanes, kernels/checksum.py
``lookup3_spans``), 4-5 times the loop's time and a third of the general path's.
Any other chunk (filtered, "all", hyperslab),
and datasets whose kernel scratch (24 bytes per chunk and row of a row of chunks) would
exceed both SCRATCH_BYTES and the result, take the general path: each chunk's defined
elements (SparseStorage.iter_defined), then one stable sort by row.
"""
import contextlib
import struct

import numpy as np

from ..errors import ChecksumError
from ..format import selection as S
from . import SCRATCH_BYTES

_POINT_SECONDS = 25e-9     # the numpy form against the loop kernel, per defined element
_TASK_POINTS = 100_000     # defined elements per task at least
_TASKS_PER_THREAD = 4      # (tasks taken as threads free up: a busy core delays one only)


def read_csr(st):
    """(data (file dtype), indices, indptr) of the whole 2-D dataset of SparseStorage ``st``,
    columns ascending within each row. The gathering path gives int32 indices and indptr
    when every index and count fits (scipy then keeps them as they are), else int64 (as
    the general path)."""
    from ..kernels import sparse as K
    t = st.table
    if st.filtered or not len(t):
        return _general(st)
    order = np.lexsort((t.scaled[:, 1], t.scaled[:, 0]))
    sizes = t.sizes[order].astype(np.int64)
    sec1 = t.offsets[order, 0].astype(np.int64)
    counts, rest = np.divmod(sizes - sec1, st.dtype.itemsize)     # (of the section 1 sizes)
    if st.dtype.itemsize in (1, 2, 4, 8) and not np.any(sec1 < 4) and \
            not np.any(sec1 > sizes) and not rest.any():
        loop = K.points_csr.worth(int(counts.sum()) * _POINT_SECONDS)
        out = (_gathered if loop else _vectorised)(st, order, sizes, sec1, counts)
        if out is not None:
            return out
    return _general(st)


@contextlib.contextmanager
def _chunk_bytes(source, offsets, sizes, parts):
    """(uint8 array, position of each chunk in it, ``fill(g)`` bringing the chunks of part
    ``g`` in) of the chunks at ``offsets``, in ``parts`` ((first, end) chunk numbers): with
    a source that threads may read at once, each part's chunks are read by its own task
    (in the runs of :func:`_planned`) into the process's spare buffer, the reads overlapping
    the other threads' work; else all are gathered first (in place in a buffer) and
    ``fill`` does nothing."""
    if not getattr(source, "parallel_reads", False):
        with source.gathered(offsets, sizes, "structured chunk") as (buf, starts):
            yield buf, starts, lambda g: None
        return
    starts, runs, need = _planned(offsets, sizes, parts)
    with source.scratch(need) as space:
        buf = space.view()
        buf.flags.writeable = False       # (one compiled form of the kernels that read it)
        yield buf, starts, lambda g: source.read_runs(runs[g], space, "structured chunk")


def _planned(offsets, sizes, parts):
    """(position of each chunk, each part's runs, bytes) for ``_chunk_bytes``: when the
    chunks lie in file order, each less than GATHER_GAP past the one before (as a writer
    stores them), each part is one run; else each part's runs are planned by
    ``plan_runs``."""
    from ..io.source import GATHER_GAP, plan_runs
    ends = offsets + sizes
    gaps = offsets[1:] - ends[:-1]
    if np.all((gaps >= 0) & (gaps <= GATHER_GAP)):
        firsts, lasts = np.array(parts, np.int64).T
        at = np.concatenate(([0], np.cumsum(ends[lasts - 1] - offsets[firsts])))
        part = np.repeat(np.arange(len(parts)), lasts - firsts)
        runs = [[r] for r in zip(offsets[firsts].tolist(), ends[lasts - 1].tolist(),
                                 at[:-1].tolist())]
        return offsets - offsets[firsts][part] + at[part], runs, int(at[-1])
    starts, runs, need = np.empty(len(offsets), np.int64), [], 0
    for i, j in parts:
        part, at, total = plan_runs(offsets[i:j], sizes[i:j])
        runs.append([(a, b, p + need) for a, b, p in part])
        starts[i:j] = at + need
        need += total
    return starts, runs, need


def _parsed(st, buf, starts, sec1, counts):
    """(first coordinate positions, encode size) of the chunks at ``starts`` in ``buf``; None
    when one of them is not an unfiltered point list of ``counts`` points (its section 1
    sizes), all of one encode size, 2 or 4 bytes (a coordinate pair the kernel loads as one
    word), or does not parse as one (the general path then raises the precise error).
    Checksums are verified by the kernel."""
    parsed = _headers(buf, starts, sec1, counts, st.chunk_shape)
    if parsed is None:
        return None
    coords_at, enc = parsed
    if enc == 8 or np.any(coords_at + counts * 2 * enc > starts + sec1 - 4):
        return None
    return coords_at, enc


def _headers(buf, starts, sec1, counts, chunk):
    """(coordinates offsets, encode size) of the section 0 images of the chunks at
    ``starts`` (``sec1`` bytes each, checksum included), or None when one is not a point
    list (:func:`_points_header`) of ``counts`` points or they differ in encode size.
    Version 2 point lists whose image bytes before the coordinates equal the first one's
    but for the count (as one writer makes them) are checked at once."""
    first = _points_header(buf, int(starts[0]), int(starts[0] + sec1[0]), chunk)
    if first is None:
        return None
    at, _, enc, count_at = first
    head = at - int(starts[0])
    if count_at is not None and np.all(sec1 >= head + 4) and int(counts.max()) >> 8 * enc == 0:
        rows = buf[starts[:, None] + np.arange(head)]
        want = np.repeat(rows[:1], len(starts), axis=0)
        rel = count_at - int(starts[0])
        want[:, rel:rel + enc] = counts.astype(f"<u{enc}").view(np.uint8).reshape(-1, enc)
        if np.array_equal(rows, want):
            return starts + head, enc
    parsed = [_points_header(buf, a, e, chunk) for a, e in zip(starts.tolist(),
                                                               (starts + sec1).tolist())]
    if any(p is None or p[2] != enc for p in parsed) or \
            [p[1] for p in parsed] != counts.tolist():
        return None
    return np.array([p[0] for p in parsed], np.int64), enc


def _points_header(buf, at, end, chunk):
    """(coordinates offset, point count, encode size, offset of the count in a version 2
    list, else None) of the section 0 image at ``buf[at:end]`` (checksum included) when it
    is a point list of a 2-D extent equal to ``chunk`` whose coordinates fit in the
    section; else None."""
    body = end - 4
    if body < 7 + 16 or buf[at] != S.IMAGE_SDSPACE_ID or buf[at + 1] > 1:
        return None
    size = int(buf[at + 2])
    ext_len = struct.unpack_from("<I", buf, at + 3)[0]
    ext = at + 7
    if size not in (2, 4, 8) or buf[ext] != 1 or buf[ext + 1] != 2 or \
            ext + 8 + 2 * size > body:
        return None
    dims = np.frombuffer(buf, f"<u{size}", 2, ext + 8)
    sel = ext + ext_len
    if tuple(int(d) for d in dims) != tuple(chunk) or sel + 8 > body:
        return None
    kind, version = struct.unpack_from("<II", buf, sel)
    if kind != S.POINTS:
        return None
    if version == 2 and sel + 13 <= body:
        enc, rank = int(buf[sel + 8]), struct.unpack_from("<I", buf, sel + 9)[0]
        if enc not in (2, 4, 8) or sel + 13 + enc > body:
            return None
        count = int(np.frombuffer(buf, f"<u{enc}", 1, sel + 13)[0])
        first, count_at = sel + 13 + enc, sel + 13
    elif version == 1 and sel + 24 <= body:
        enc, count_at = 4, None
        rank, count = struct.unpack_from("<II", buf, sel + 16)
        first = sel + 24
    else:
        return None
    if rank != 2 or first + count * 2 * enc > body:
        return None
    return first, count, enc, count_at


def _shifted(buf, size):
    """``buf`` as little-endian unsigned integers of ``size`` bytes, one view per byte shift
    (``[s][j]`` at byte s + j * size)."""
    return tuple(np.frombuffer(buf, f"<u{size}", max(0, (buf.shape[0] - s) // size), s)
                 for s in range(size))


def _gathered(st, order, sizes, sec1, counts):
    """CSR arrays by the kernel from the chunks (table rows ``order``, ``sizes`` bytes, of
    which section 0 ``sec1`` bytes, section 1 ``counts`` values): rows of chunks in tasks
    (:func:`_run_kernel`; each writes from the entry its points start at, known from the
    counts), then the gaps of left-out points closed and the ends of rows no chunk covers
    filled in. None when a chunk is not a point list the kernel reads, or lists a point
    outside it or out of row-major order: the caller's general path."""
    t = st.table
    total, (rows, cols) = int(counts.sum()), st.shape
    origins = (t.scaled[order] * np.asarray(st.chunk_shape, np.int64)).astype(np.int64)
    rows_of = origins[:, 0]
    bands = np.flatnonzero(np.concatenate(([True], rows_of[1:] != rows_of[:-1], [True])))
    scratch = int(np.diff(bands).max()) * (st.chunk_shape[0] + 1) * 24     # (the kernel's)
    if scratch > max(SCRATCH_BYTES, total * (st.dtype.itemsize + 4)):
        return None     # (very sparse and many chunks across)
    index = np.int32 if max(total, rows, cols) < 2 ** 31 else np.int64
    indptr = np.full(rows + 1, -1, index)
    indices = np.empty(total, index)
    data = np.empty(total, f"u{st.dtype.itemsize}")
    before = np.concatenate(([0], np.cumsum(counts)))[bands]      # points before each band
    groups = _groups(st.threads, before, total)
    offsets = t.addresses[order].astype(np.int64) + st.ctx.base_address
    with _chunk_bytes(st.ctx.source, offsets, sizes,
                      [(bands[a], bands[b]) for a, b in groups]) as (buf, starts, fill):
        written = _run_kernel(st, groups, bands, buf, starts, fill, sec1, counts, origins,
                              before, (indptr, indices, data))
        bad = [n for n in written if n < -1]
        if bad:
            i = -2 - max(bad)
            _checksum_error(st, buf, int(starts[i]), int(starts[i] + sec1[i]) - 4,
                            int(order[i]))
    if min(written) < 0:
        return None
    tops = [int(origins[bands[a], 0]) for a, _ in groups] + [rows]
    n = _compact(indptr, indices, data, [(int(before[a]), w, min(top, rows), min(stop, rows))
                                         for (a, _), w, top, stop in zip(groups, written, tops,
                                                                         tops[1:])])
    indptr[0] = 0
    np.maximum.accumulate(indptr, out=indptr)      # rows no chunk covers end where the last did
    indptr[rows] = n
    return data[:n].view(st.dtype), indices[:n], indptr


def _run_kernel(st, groups, bands, buf, starts, fill, sec1, counts, origins, before, out):
    """Each task's ``points_csr`` result (entries written, or -1, or -2 - chunk): task
    ``g`` brings its chunks in (``fill(g)``), checks their headers, then runs the kernel
    on its rows of chunks ``groups[g]``, writing into ``out`` (indptr, indices, data)."""
    from ..kernels import sparse as K
    cat, vat = np.zeros(len(starts), np.int64), starts + sec1
    words, values = _shifted(buf, 4), _shifted(buf, st.dtype.itemsize)
    geometry = (np.asarray(st.chunk_shape, np.int64), np.asarray(st.shape, np.int64))
    written = [0] * len(groups)

    def run(g):
        a, b = groups[g]
        i, j = bands[a], bands[b]
        fill(g)
        parsed = _parsed(st, buf, starts[i:j], sec1[i:j], counts[i:j])
        if parsed is None:
            written[g] = -1
            return
        cat[i:j], enc = parsed
        written[g] = K.points_csr(buf, words, _shifted(buf, 2 * enc), values, starts, cat,
                                  vat, counts, origins, bands[a:b + 1], *geometry,
                                  int(before[a]), bool(st.ctx.verify_checksums), *out)

    _shared(st.threads, run, len(groups))
    return written


def _groups(threads, before, total):
    """(first, end) rows of chunks of each task: one task when single-threaded, else up
    to ``_TASKS_PER_THREAD`` per thread of at least ``_TASK_POINTS`` points each, cut where
    the points before a row of chunks (``before``, then the end) come nearest to even
    shares."""
    nb = len(before) - 1
    parts = 1 if threads == 1 else \
        max(1, min(threads * _TASKS_PER_THREAD, total // _TASK_POINTS, nb))
    cuts = np.unique(np.searchsorted(before, np.linspace(0, total, parts + 1)[1:-1]))
    cuts = cuts[(cuts > 0) & (cuts < nb)]
    return list(zip(np.concatenate(([0], cuts)).tolist(),
                    np.concatenate((cuts, [nb])).tolist()))


def _shared(threads, fn, n):
    """``fn(0)`` .. ``fn(n - 1)`` on ``threads`` threads, this one included, each taking the
    next task as it frees up; the first error is raised once all are done."""
    from .read import _pool
    tasks = iter(range(n))          # (one next() at a time: the GIL serialises them)

    def work():
        for g in tasks:
            fn(g)

    helpers = [_pool(threads - 1).submit(work) for _ in range(min(threads, n) - 1)]
    try:
        work()
    finally:
        errors = [f.exception() for f in helpers]
    for e in errors:
        if e is not None:
            raise e


def _compact(indptr, indices, data, parts):
    """Close the gaps that left-out points (past the extent) leave between the parts written
    as ``(first entry, entries written, first row, end row)``; the number of entries."""
    n = 0
    for at, w, top, stop in parts:
        if at != n:
            indices[n:n + w] = indices[at:at + w]
            data[n:n + w] = data[at:at + w]
            ends = indptr[top + 1:stop + 1]
            ends[ends >= 0] -= at - n
        n += w
    return n


def _vectorised(st, order, sizes, sec1, counts):
    """CSR arrays as ``_gathered`` gives them, by numpy: the chunks read into one buffer,
    their section 0 checksums verified (:func:`_verify`), their coordinates and values copied
    out in chunk order, checked (inside the chunk, strictly row-major), then put in CSR
    order by one stable sort on the row (chunks come in rows of chunks, left to right, so
    that the sort keeps each row's entries in column order). None as ``_gathered``."""
    t, isz = st.table, st.dtype.itemsize
    offsets = t.addresses[order].astype(np.int64) + st.ctx.base_address
    with st.ctx.source.gathered(offsets, sizes, "structured chunk") as (buf, starts):
        parsed = _parsed(st, buf, starts, sec1, counts)
        if parsed is None:
            return None
        cat, enc = parsed
        if st.ctx.verify_checksums:
            _verify(st, buf, starts, sec1, order)
        pairs = _spans(buf, cat, counts * 2 * enc).view(f"<u{enc}").reshape(-1, 2)
        values = _spans(buf, starts + sec1, counts * isz).view(f"u{isz}")
    n, (h, w), (rows, cols) = len(pairs), st.chunk_shape, st.shape
    key = pairs[:, 0].astype(np.int64 if h * w >= 2 ** 31 else np.int32)
    key *= w
    key += pairs[:, 1]
    later = np.empty(n, bool)
    np.greater(key[1:], key[:-1], out=later[1:])
    later[np.cumsum(counts)[:-1][counts[1:] > 0]] = True        # (each chunk's first point)
    later[:1] = True
    if not later.all() or (n and (int(pairs[:, 0].max()) >= h or int(pairs[:, 1].max()) >= w)):
        return None
    origins = t.scaled[order].astype(np.int64) * np.asarray(st.chunk_shape, np.int64)
    index = np.int32 if max(n, rows, cols, int(origins.max()) + h + w) < 2 ** 31 else np.int64
    r = pairs[:, 0].astype(index)
    r += np.repeat(origins[:, 0].astype(index), counts)
    c = pairs[:, 1].astype(index)
    c += np.repeat(origins[:, 1].astype(index), counts)
    kept = (r < rows) & (c < cols)
    if not kept.all():
        r, c, values = r[kept], c[kept], values[kept]
    at = np.argsort(r, kind="stable")
    indptr = np.zeros(rows + 1, index)
    np.cumsum(np.bincount(r, minlength=rows), out=indptr[1:])
    return values[at].view(st.dtype), c[at], indptr


def _spans(buf, starts, sizes):
    """The bytes ``buf[s:s + n]`` of every (start, size), one after another: a new array."""
    out = np.empty(int(sizes.sum()), np.uint8)
    at = 0
    for s, n in zip(starts.tolist(), sizes.tolist()):
        out[at:at + n] = buf[s:s + n]
        at += n
    return out


def _verify(st, buf, starts, sec1, order):
    """Raise the ChecksumError of the first chunk at ``starts`` in ``buf`` whose section 0
    (``sec1`` bytes, its lookup3 checksum last; sparse RFC Table 4) does not match."""
    from ..kernels.checksum import lookup3_spans
    ends = starts + sec1 - 4
    stored = np.ascontiguousarray(buf[ends[:, None] + np.arange(4)]).view("<u4")[:, 0]
    bad = np.flatnonzero(lookup3_spans(buf, starts, sec1 - 4) != stored)
    if len(bad):
        k = int(bad[0])
        _checksum_error(st, buf, int(starts[k]), int(ends[k]), int(order[k]))


def _checksum_error(st, buf, start, end, row):
    """The ChecksumError of the section 0 at ``buf[start:end]`` (checksum after it) of the
    chunk in table row ``row``."""
    from ..kernels.checksum import lookup3
    stored, computed = struct.unpack_from("<I", buf, end)[0], lookup3(buf[start:end])
    raise ChecksumError(f"section 0 checksum mismatch (stored {stored:#010x}, computed "
                        f"{computed:#010x})", *st._where(row))


def _general(st):
    """CSR arrays from the chunks' defined elements, chunk by chunk, then one stable sort."""
    coords, values = st.read_sparse(None)
    rows = st.shape[0]
    indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(np.bincount(coords[:, 0], minlength=rows), out=indptr[1:])
    return values, coords[:, 1].copy(), indptr
