"""A whole 2-D sparse dataset as CSR arrays (scipy's ``csr_array`` layout: ``indptr``,
``indices``, ``data``), read straight from its chunks.

Unfiltered chunks whose section 0 is a point list (what the writer stores for scattered
elements; sparse RFC Table 5, an H5Sencode image of a version 1 or 2 point selection) are read
where they lie in a file in memory, else by few reads into the file's spare buffer
(``ByteSource.gathered``), and put in CSR
order by a loop kernel (kernels/sparse.py ``points_csr``), rows of chunks split among the
storage's threads: each row of chunks has its section 0 checksums (RFC Table 4) verified,
then its points and values are written straight into the final arrays (rows counted per
chunk first, then every point to its place). Any other chunk (filtered, "all", hyperslab),
and datasets whose kernel scratch (24 bytes per chunk and row of a row of chunks) would
exceed both SCRATCH_BYTES and the result, take the general path: each chunk's defined
elements (SparseStorage.iter_defined), then one stable sort by row.
"""
import struct

import numpy as np

from ..errors import ChecksumError
from ..format import selection as S
from . import SCRATCH_BYTES

_POINT_SECONDS = 40e-9     # the numpy path against the loop kernel, per defined element
_TASK_POINTS = 100_000     # defined elements per task at least
_TASKS_PER_THREAD = 4      # (tasks taken as threads free up: a busy core delays one only)


def read_csr(st):
    """(data (file dtype), indices, indptr) of the whole 2-D dataset of SparseStorage ``st``,
    columns ascending within each row. The gathering path gives int32 indices and indptr
    when every index and count fits (scipy then keeps them as they are), else int64 (as
    the general path)."""
    from ..kernels import sparse as K
    t = st.table
    guess = int(t.sizes.sum()) // (st.dtype.itemsize + 4) if len(t) else 0   # elements
    if st.filtered or not len(t) or not K.points_csr.worth(guess * _POINT_SECONDS):
        return _general(st)
    order = np.lexsort((t.scaled[:, 1], t.scaled[:, 0]))
    sizes = t.sizes[order].astype(np.int64)
    sec1 = t.offsets[order, 0].astype(np.int64)
    if st.dtype.itemsize in (1, 2, 4, 8) and not np.any(sec1 < 4) and \
            not np.any(sec1 > sizes):
        with st.ctx.source.gathered(t.addresses[order].astype(np.int64) + st.ctx.base_address,
                                    sizes, "structured chunk") as (buf, starts):
            plan = _plan(st, order, buf, starts)
            if plan is not None:
                return _gathered(st, plan)
    return _general(st)


def _plan(st, order, buf, starts):
    """(buffer, section 0 positions, first coordinate positions, value positions, counts,
    encode size, origins, ``order``) of the chunks (in ``order``, their bytes at ``starts``
    in ``buf``); None when one of them is not an unfiltered point list of one encode size,
    2 or 4 bytes (a coordinate pair the kernel loads as one word), or does not parse as one
    (the general path then raises the precise error). Checksums are verified by the
    kernel."""
    t = st.table
    sizes = t.sizes[order].astype(np.int64)
    sec1 = t.offsets[order, 0].astype(np.int64)
    parsed = _headers(buf, starts, sec1, st.chunk_shape)
    if parsed is None:
        return None
    coords_at, counts, enc = parsed
    if enc == 8 or np.any(sizes - sec1 != counts * st.dtype.itemsize) or \
            np.any(coords_at + counts * 2 * enc > starts + sec1 - 4):
        return None
    origins = (t.scaled[order] * np.asarray(st.chunk_shape, np.int64)).astype(np.int64)
    return buf, starts, coords_at, starts + sec1, counts, enc, origins, order


def _headers(buf, starts, sec1, chunk):
    """(coordinates offsets, point counts, encode size) of the section 0 images of the
    chunks at ``starts`` (``sec1`` bytes each, checksum included), or None when one is not
    a point list (:func:`_points_header`) or they differ in encode size. Version 2 point
    lists whose image bytes before the coordinates equal the first one's but for the count
    (as one writer makes them) are read at once."""
    first = _points_header(buf, int(starts[0]), int(starts[0] + sec1[0]), chunk)
    if first is None:
        return None
    at, count, enc, count_at = first
    head = at - int(starts[0])
    if count_at is not None and np.all(sec1 >= head + 4):
        rows = buf[starts[:, None] + np.arange(head)]
        fixed = np.ones(head, bool)
        rel = count_at - int(starts[0])
        fixed[rel:rel + enc] = False
        if np.array_equal(rows[:, fixed], np.broadcast_to(rows[0, fixed], rows[:, fixed].shape)):
            counts = np.ascontiguousarray(rows[:, rel:rel + enc]).view(f"<u{enc}")[:, 0]
            return starts + head, counts.astype(np.int64), enc
    parsed = [_points_header(buf, a, e, chunk) for a, e in zip(starts.tolist(),
                                                               (starts + sec1).tolist())]
    if any(p is None for p in parsed) or len({p[2] for p in parsed}) != 1:
        return None
    return (np.array([p[0] for p in parsed], np.int64),
            np.array([p[1] for p in parsed], np.int64), parsed[0][2])


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


def _gathered(st, plan):
    """CSR arrays by the kernel from ``_plan``'s chunks: rows of chunks in tasks (each
    writing from the entry its points start at, known from the counts), then the gaps of
    left-out points closed and the ends of rows no chunk covers filled in."""
    from ..kernels import sparse as K
    buf, sec0, cat, vat, counts, enc, origins, order = plan
    total, (rows, cols) = int(counts.sum()), st.shape
    index = np.int32 if max(total, rows, cols) < 2 ** 31 else np.int64
    indptr = np.full(rows + 1, -1, index)
    indices = np.empty(total, index)
    data = np.empty(total, f"u{st.dtype.itemsize}")
    rows_of = origins[:, 0]
    bands = np.flatnonzero(np.concatenate(([True], rows_of[1:] != rows_of[:-1], [True])))
    scratch = int(np.diff(bands).max()) * (st.chunk_shape[0] + 1) * 24     # (the kernel's)
    if scratch > max(SCRATCH_BYTES, indices.nbytes + data.nbytes):
        return _general(st)     # (very sparse and many chunks across)
    before = np.concatenate(([0], np.cumsum(counts)))[bands]      # points before each band
    parts = 1 if st.threads == 1 else \
        max(1, min(st.threads * _TASKS_PER_THREAD, total // _TASK_POINTS, len(bands) - 1))
    nb = len(bands) - 1
    cuts = np.unique(np.searchsorted(before, np.linspace(0, total, parts + 1)[1:-1]))
    cuts = cuts[(cuts > 0) & (cuts < nb)]
    groups = list(zip(np.concatenate(([0], cuts)).tolist(),
                      np.concatenate((cuts, [nb])).tolist()))
    args = (buf, _shifted(buf, 4), _shifted(buf, 2 * enc), _shifted(buf, st.dtype.itemsize),
            sec0, cat, vat, counts, origins)
    geometry = (np.asarray(st.chunk_shape, np.int64), np.asarray(st.shape, np.int64))
    written = [0] * len(groups)

    def run(g):
        a, b = groups[g]
        written[g] = K.points_csr(*args, bands[a:b + 1], *geometry, int(before[a]),
                                  bool(st.ctx.verify_checksums), indptr, indices, data)

    _shared(st.threads, run, len(groups))
    bad = [n for n in written if n < -1]
    if bad:
        i = -2 - max(bad)
        _checksum_error(st, buf, int(sec0[i]), int(vat[i]) - 4, int(order[i]))
    if min(written) < 0:  # a point outside its chunk (the general path names it) or out of order
        return _general(st)
    tops = [int(origins[bands[a], 0]) for a, _ in groups] + [rows]
    n = _compact(indptr, indices, data, [(int(before[a]), w, min(top, rows), min(stop, rows))
                                         for (a, _), w, top, stop in zip(groups, written, tops,
                                                                         tops[1:])])
    indptr[0] = 0
    np.maximum.accumulate(indptr, out=indptr)      # rows no chunk covers end where the last did
    indptr[rows] = n
    return data[:n].view(st.dtype), indices[:n], indptr


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
