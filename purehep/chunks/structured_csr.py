"""A whole 2-D sparse dataset as CSR arrays (scipy's ``csr_array`` layout: ``indptr``,
``indices``, ``data``), read straight from its chunks.

Unfiltered chunks whose section 0 is a point list (what the writer stores for scattered
elements; sparse RFC Table 5, an H5Sencode image of a version 1 or 2 point selection) are read
into one buffer, their section 0 checksums (RFC Table 4) verified in one call, and their
points and values gathered into CSR order by one loop kernel, without the per-chunk
coordinate arrays. Any other chunk (filtered, "all", hyperslab) takes the general path:
each chunk's defined elements (SparseStorage.iter_defined), then one stable sort by row.
"""
import struct

import numpy as np

from ..errors import ChecksumError
from ..format import selection as S

_POINT_SECONDS = 40e-9     # the numpy path against the loop kernel, per defined element


def read_csr(st):
    """(data (file dtype), indices (int32 below 2**31 columns, else int64), indptr (int64))
    of the whole 2-D dataset of SparseStorage ``st``, columns ascending within each row."""
    from ..kernels import sparse as K
    t = st.table
    guess = int(t.sizes.sum()) // (st.dtype.itemsize + 4) if len(t) else 0   # elements
    if st.filtered or not len(t) or not K.points_csr.worth(guess * _POINT_SECONDS):
        return _general(st)
    plan = _plan(st, np.lexsort((t.scaled[:, 1], t.scaled[:, 0])))
    return _general(st) if plan is None else _gathered(st, plan)


def _plan(st, order):
    """(coordinates, their first index per chunk, counts, values, their first index per
    chunk, origins) of the chunks (in ``order``) read into one buffer, each placed so that
    its values start at a multiple of 8 bytes (the coordinates and values are then views
    of the buffer); None when one of them is not an unfiltered point list of one encode
    size or not aligned so (or does not parse as one: the general path then raises the
    precise error). Checksums are verified here."""
    t = st.table
    itemsize = st.dtype.itemsize
    sizes = t.sizes[order].astype(np.int64)
    sec1 = t.offsets[order, 0].astype(np.int64)
    slots = (sizes + 7) // 8 * 8 + 8
    starts = np.concatenate(([0], np.cumsum(slots)[:-1])) + (-sec1) % 8
    buf = np.empty(int(slots.sum()), np.uint8)
    ctx, view = st.ctx, memoryview(buf)
    for addr, at, n in zip(t.addresses[order].tolist(), starts.tolist(), sizes.tolist()):
        ctx.source.readinto(ctx.absolute(addr), view[at:at + n], "structured chunk")
    parsed = _headers(buf, starts, sec1, st.chunk_shape)
    if parsed is None:
        return None
    coords_at, counts, enc = parsed
    if np.any(sizes - sec1 != counts * itemsize) or np.any(coords_at % enc) or \
            np.any(coords_at + counts * 2 * enc > starts + sec1 - 4) or \
            itemsize not in (1, 2, 4, 8):
        return None
    if ctx.verify_checksums:
        _verify(st, buf, starts, sec1 - 4, order)
    origins = (t.scaled[order] * np.asarray(st.chunk_shape, np.int64)).astype(np.int64)
    return (buf.view(f"<u{enc}"), coords_at // enc, counts, buf.view(f"u{itemsize}"),
            (starts + sec1) // itemsize, origins)


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


def _verify(st, buf, starts, lengths, order):
    """The section 0 checksums of every chunk (lookup3 of the bytes before it)."""
    from ..kernels.checksum import lookup3_spans
    computed = np.empty(len(starts), np.uint32)
    lookup3_spans(buf, starts, lengths, computed)
    stored = np.array([struct.unpack_from("<I", buf, at + n)[0]
                       for at, n in zip(starts.tolist(), lengths.tolist())], np.uint32)
    bad = np.flatnonzero(computed != stored)
    if len(bad):
        i = int(bad[0])
        raise ChecksumError(f"section 0 checksum mismatch (stored {int(stored[i]):#010x}, "
                            f"computed {int(computed[i]):#010x})", *st._where(int(order[i])))


def _gathered(st, plan):
    from ..kernels import sparse as K
    coords, first, counts, values, value_first, origins = plan
    total, (rows, cols) = int(counts.sum()), st.shape
    indptr = np.zeros(rows + 1, np.int64)
    indices = np.empty(total, np.int32 if cols < 2 ** 31 else np.int64)
    data = np.empty(total, values.dtype)
    rows_of = origins[:, 0]
    bands = np.flatnonzero(np.concatenate(([True], rows_of[1:] != rows_of[:-1], [True])))
    n = K.points_csr(coords, first, counts, values, value_first, origins, bands,
                     np.asarray(st.chunk_shape, np.int64), np.asarray(st.shape, np.int64),
                     indptr, indices, data)
    if n < 0:       # a point outside its chunk (the general path names it) or out of order
        return _general(st)
    return data[:n].view(st.dtype), indices[:n], indptr


def _general(st):
    """CSR arrays from the chunks' defined elements, chunk by chunk, then one stable sort."""
    coords, values = st.read_sparse(None)
    rows = st.shape[0]
    indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(np.bincount(coords[:, 0], minlength=rows), out=indptr[1:])
    return values, coords[:, 1].copy(), indptr
