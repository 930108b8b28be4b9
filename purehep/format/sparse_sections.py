"""Section 0 of a sparse structured chunk: the chunk's defined elements as an H5Sencode image
(dataspace extent = the chunk dimensions, chunk-relative coordinates; sparse RFC Table 5), and
section 1: their values in selection order.

Inside purehep a chunk's defined elements are a 1-D int64 array of row-major indices within
the chunk (``lin``), sorted and unique when purehep made them. The writer encodes each chunk in
the smallest of: "all" (every element), a regular hyperslab (version 3), a block list
(hyperslab version 3, irregular) and a point list (version 2), with the smallest encode size.
"""
import math

import numpy as np

from ..errors import FormatError
from . import selection as S
from .context import Cursor


def _lazy():
    from ..kernels import sparse as K
    return K


def _enc(maxval):
    return 2 if maxval < 0xFFFF else 4 if maxval < 0xFFFFFFFF else 8


def blocks_of(lin, dims):
    """A list of disjoint blocks covering exactly ``lin`` (sorted unique row-major indices):
    (lo, hi) int64 arrays (m, rank), inclusive corners, in row-major order of their corners."""
    K = _lazy()
    dims = np.asarray(dims, np.int64)
    rank = len(dims)
    first, final = K.row_runs(np.ascontiguousarray(lin, np.int64), int(dims[-1]))
    lo = np.stack(np.unravel_index(first, tuple(dims)), axis=1).astype(np.int64)
    hi = lo.copy()
    hi[:, -1] = lo[:, -1] + (final - first)
    for k in range(rank - 2, -1, -1):
        keys = [lo[:, k]] + [hi[:, d] for d in range(rank - 1, k, -1)] + \
            [lo[:, d] for d in range(rank - 1, -1, -1) if d != k]
        order = np.lexsort(keys).astype(np.int64)
        lo, hi = K.merge_axis(lo, hi, order, k)
    order = np.lexsort([lo[:, d] for d in range(rank - 1, -1, -1)])
    return lo[order], hi[order]


def _regular(lin, dims):
    """(start, stride, count, block) per dimension if ``lin`` is a regular hyperslab, else
    None."""
    rank = len(dims)
    coords = np.unravel_index(lin, tuple(dims))
    axes = [np.unique(c) for c in coords]
    if math.prod([len(a) for a in axes]) != len(lin):
        return None
    params = []
    for a in axes:
        if len(a) == 1:
            params.append((int(a[0]), 1, 1, 1))
            continue
        gaps = np.flatnonzero(np.diff(a) != 1)
        block = int(gaps[0]) + 1 if len(gaps) else len(a)
        if len(a) % block:
            return None
        count = len(a) // block
        starts = a[::block]
        stride = int(starts[1] - starts[0]) if count > 1 else 1
        expect = (starts[0] + stride * np.arange(count)[:, None] + np.arange(block)[None, :])
        if not np.array_equal(expect.ravel(), a):
            return None
        params.append((int(a[0]), stride, count, block))
    return np.array(params, np.int64).reshape(rank, 4)


def choose(lin, dims):
    """The Selection (chunk-relative) to encode the defined elements ``lin`` of a chunk of
    ``dims``: the smallest encoding (see the module docstring)."""
    dims = tuple(int(d) for d in dims)
    rank = len(dims)
    n = len(lin)
    total = math.prod(dims)
    if n == total:
        return S.Selection(S.ALL, 1, rank)
    if n == 0:
        return S.Selection(S.NONE, 1, rank)
    top = max(dims)
    best = None
    # points, version 2: type, version, enc, rank, count, coordinates
    enc = _enc(max(top - 1, n))
    size = 13 + enc + n * rank * enc
    best = (size, "points", enc)
    reg = _regular(lin, dims)
    if reg is not None:
        enc = _enc(int(reg.max()))
        size = 14 + 4 * rank * enc
        if size < best[0]:
            best = (size, "regular", enc)
    if best[1] != "regular":
        lo, hi = blocks_of(lin, dims)
        nb = len(lo)
        enc = _enc(max(top - 1, nb))
        size = 14 + enc + nb * 2 * rank * enc
        if size < best[0]:
            return S.Selection(S.HYPERSLABS, 3, rank, blocks=np.stack([lo, hi], axis=1),
                               encode_size=enc)
    if best[1] == "regular":
        return S.Selection(S.HYPERSLABS, 3, rank, start=reg[:, 0], stride=reg[:, 1],
                           count=reg[:, 2], block=reg[:, 3], encode_size=best[2], flags=1)
    pts = np.stack(np.unravel_index(lin, dims), axis=1).astype(np.int64)
    return S.Selection(S.POINTS, 2, rank, points=pts, encode_size=best[2])


def encode_section0(lin, dims, sel=None):
    """Section 0 bytes (without checksum) for the defined elements ``lin``."""
    if sel is None:
        sel = choose(lin, dims)
    return S.encode_image(tuple(int(d) for d in dims), sel)


def decode_section0(data, dims, where=("structured chunk", None)):
    """(Selection, lin) of a section 0: ``lin`` = row-major indices within the chunk in
    selection order (stored order for points; row-major for hyperslabs and "all")."""
    structure, offset = where
    dims = tuple(int(d) for d in dims)
    cur = Cursor(data, offset or 0, f"{structure} section 0")
    shape, sel = S.decode_image(cur)
    if tuple(shape) != dims:
        raise FormatError(f"section 0 extent {tuple(shape)} differs from the chunk dimensions "
                          f"{dims}", structure, offset)
    return sel, selection_lin(sel, dims, where)


def selection_lin(sel, dims, where=("structured chunk", None)):
    structure, offset = where
    total = math.prod(dims)
    if sel.kind == S.ALL:
        return np.arange(total, dtype=np.int64)
    if sel.kind == S.NONE:
        return np.zeros(0, np.int64)
    if sel.kind == S.POINTS:
        pts = sel.points
        if len(pts) and (np.any(pts < 0) or np.any(pts >= np.array(dims))):
            raise FormatError("a defined point lies outside the chunk", structure, offset)
        return np.ravel_multi_index(tuple(pts.T), dims).astype(np.int64) if len(pts) else \
            np.zeros(0, np.int64)
    if sel.regular:
        axes = sel._regular_axes(dims)
        grids = np.meshgrid(*axes, indexing="ij")
        return np.ravel_multi_index(tuple(g.ravel() for g in grids), dims).astype(np.int64)
    blocks = sel.blocks
    if len(blocks) == 0:
        return np.zeros(0, np.int64)
    lo, hi = blocks[:, 0, :], blocks[:, 1, :]
    if np.any(lo < 0) or np.any(hi >= np.array(dims)) or np.any(hi < lo):
        raise FormatError("a hyperslab block lies outside the chunk", structure, offset)
    lin = _lazy().blocks_to_linear(np.ascontiguousarray(lo), np.ascontiguousarray(hi),
                                   np.asarray(dims, np.int64))
    return np.unique(lin)
