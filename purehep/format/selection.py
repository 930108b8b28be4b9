"""Serialized dataspace selections (spec VIII.A "Dataspace Selection").

Used by region references (old style in the global heap, revised H5R_REF blobs), the VDS global
heap block and structured-chunk sections. ``decode(cur, rank=None)`` reads one selection; the
``Selection`` keeps every field an encoder needs (version, encode size, flags) so that encoding
can be added symmetrically.
"""
import math
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, UnsupportedFeatureError
from ..selections import select

NONE, POINTS, HYPERSLABS, ALL = 0, 1, 2, 3
KINDS = {NONE: "none", POINTS: "points", HYPERSLABS: "hyperslabs", ALL: "all"}
UNLIMITED = -1
MAX_RANK = 32
MAX_LISTED = 1 << 26     # elements of an irregular selection listed one by one, at most
STRUCTURE = "dataspace selection"


@dataclass(frozen=True, eq=False)
class Selection:
    """One decoded selection.

    ``kind``: 0 none, 1 points, 2 hyperslabs, 3 all. Points: ``points`` (n, rank) int64 in
    stored order. Regular hyperslab: ``start/stride/count/block`` (rank,) int64, UNLIMITED (-1)
    for an unlimited count or block. Irregular hyperslab: ``blocks`` (n, 2, rank) with
    inclusive start and end corners.
    """
    kind: int
    version: int
    rank: int | None = None
    points: np.ndarray | None = None
    start: np.ndarray | None = None
    stride: np.ndarray | None = None
    count: np.ndarray | None = None
    block: np.ndarray | None = None
    blocks: np.ndarray | None = None
    encode_size: int = 4
    flags: int = 0
    offset: int | None = None

    @property
    def regular(self):
        return self.kind == HYPERSLABS and self.start is not None

    def __eq__(self, other):
        if not isinstance(other, Selection):
            return NotImplemented
        if (self.kind, self.rank) != (other.kind, other.rank):
            return False
        for name in ("points", "start", "stride", "count", "block", "blocks"):
            a, b = getattr(self, name), getattr(other, name)
            if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
                return False
        return True

    __hash__ = None

    def as_regular(self):
        """(start, stride, count, block) arrays describing this hyperslab selection as one
        regular hyperslab, or None: a block list qualifies when it is the product of each
        dimension's blocks and those (adjacent ones merged) are evenly spaced and equally
        long, as libhdf5 finds when it rebuilds a decoded selection."""
        if self.regular:
            return self.start, self.stride, self.count, self.block
        runs = self._product_runs()
        regular = [_regular(r) for r in runs] if runs is not None else [None]
        if any(r is None for r in regular):
            return None
        v = np.array(regular, np.int64)
        return v[:, 0], v[:, 1], v[:, 2], v[:, 3]

    def _product_runs(self):
        """Per dimension, the runs (start, length) whose product is this block list (touching
        blocks joined), or None when the blocks are not such a product."""
        if self.kind != HYPERSLABS or self.regular or not len(self.blocks):
            return None
        axes = [sorted({(int(b[0, d]), int(b[1, d])) for b in self.blocks})
                for d in range(self.rank)]
        if math.prod([len(a) for a in axes]) != len(self.blocks) or \
                len({tuple(map(tuple, b)) for b in self.blocks.tolist()}) != len(self.blocks):
            return None
        return [_merged(a) for a in axes]

    def axes(self, shape):
        """Per dimension, the sorted positions selected, when the selection is the product of
        one set per dimension ("all", regular hyperslabs, block lists that are a product);
        else None. Memory grows with the dimensions, not with the elements selected."""
        shape = self._check_shape(shape)
        if self.kind == ALL:
            return [np.arange(n, dtype=np.int64) for n in shape]
        if self.regular:
            return self._regular_axes(shape)
        runs = self._product_runs()
        if runs is None:
            return None
        for d, (r, n) in enumerate(zip(runs, shape)):
            if r[0][0] < 0 or r[-1][0] + r[-1][1] > n:
                raise self._fail(f"hyperslab exceeds dimension {d} of size {n}")
        return [np.concatenate([np.arange(a, a + k, dtype=np.int64) for a, k in r])
                for r in runs]

    def _fail(self, message):
        return FormatError(message, STRUCTURE, self.offset)

    def _check_shape(self, shape):
        shape = tuple(int(s) for s in shape)
        if self.rank is not None and self.kind in (POINTS, HYPERSLABS) and len(shape) != self.rank:
            raise self._fail(f"selection of rank {self.rank} applied to a dataspace of rank "
                             f"{len(shape)}")
        return shape

    def _regular_axes(self, shape):
        axes = []
        for d, n in enumerate(shape):
            s, st, c, b = (int(self.start[d]), int(self.stride[d]), int(self.count[d]),
                           int(self.block[d]))
            if b == UNLIMITED:
                b = max(n - s, 0)
            if c == UNLIMITED:
                c = 0 if st <= 0 else max(-(-(n - s) // st), 0)
            if c and b and st <= 0 and c > 1:
                raise self._fail("hyperslab stride must be positive")
            idx = (s + st * np.arange(c, dtype=np.int64)[:, None]
                   + np.arange(b, dtype=np.int64)[None, :]).ravel()
            idx = np.unique(idx)
            if idx.size and (idx[0] < 0 or idx[-1] >= n):
                raise self._fail(f"hyperslab exceeds dimension {d} of size {n}")
            axes.append(idx)
        return axes

    def mask(self, shape):
        """A boolean array of ``shape``: True where an element is selected."""
        shape = self._check_shape(shape)
        if self.kind == ALL:
            return np.ones(shape, bool)
        m = np.zeros(shape, bool)
        if self.kind == NONE:
            return m
        if self.kind == POINTS:
            pts = self.points
            self._check_points(pts, shape)
            if len(pts):
                m[tuple(pts.T)] = True
            return m
        if self.regular:
            m[np.ix_(*self._regular_axes(shape))] = True
            return m
        for lo, hi in self.blocks:
            if np.any(lo < 0) or np.any(hi >= np.array(shape)) or np.any(hi < lo):
                raise self._fail("hyperslab block lies outside the dataspace")
            m[tuple(slice(int(a), int(b) + 1) for a, b in zip(lo, hi))] = True
        return m

    def _check_points(self, pts, shape):
        if len(pts) and (np.any(pts < 0) or np.any(pts >= np.array(shape, dtype=np.int64))):
            raise self._fail("point selection lies outside the dataspace")

    def coords(self, shape):
        """(n, rank) int64 coordinates in selection order (points: stored order; others:
        row-major order of the dataspace, as libhdf5 iterates them)."""
        shape = self._check_shape(shape)
        rank = len(shape)
        if self.kind == NONE:
            return np.zeros((0, rank), np.int64)
        if self.kind == POINTS:
            self._check_points(self.points, shape)
            return self.points.astype(np.int64, copy=True)
        if self.regular:
            axes = self._regular_axes(shape)
            if rank == 0:
                return np.zeros((1, 0), np.int64)
            grids = np.meshgrid(*axes, indexing="ij")
            return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)
        return self._block_coords(shape)

    def _block_coords(self, shape):
        """Coordinates of a block list in row-major order; the blocks are checked against the
        dataspace and their elements counted before any is listed."""
        lo, hi = self.blocks[:, 0, :], self.blocks[:, 1, :]
        if len(lo) and (np.any(lo < 0) or np.any(hi >= np.asarray(shape, np.int64))
                        or np.any(hi < lo)):
            raise self._fail("hyperslab block lies outside the dataspace")
        total = sum(math.prod(int(x) for x in h - l + 1) for l, h in zip(lo, hi))
        if total > math.prod(shape):
            raise self._fail("hyperslab blocks overlap")
        if total > MAX_LISTED:
            raise UnsupportedFeatureError(f"an irregular selection of {total} elements (purehep "
                                          f"lists at most {MAX_LISTED})")
        if not len(lo):
            return np.zeros((0, len(shape)), np.int64)
        parts = [np.stack([g.ravel() for g in np.meshgrid(
            *[np.arange(a, b + 1, dtype=np.int64) for a, b in zip(l, h)], indexing="ij")],
            axis=1) for l, h in zip(lo, hi)]
        c = np.concatenate(parts)
        return c[np.lexsort(c.T[::-1])]

    def count_selected(self, shape):
        return len(self.coords(shape))

    def bounding_box(self, shape=None):
        """(start, end) inclusive corners like H5Sget_select_bounds; None if nothing is selected.
        The 'all' selection (and unlimited hyperslabs) need ``shape``."""
        if self.kind == NONE:
            return None
        if self.kind == ALL or (self.regular and (np.any(self.count == UNLIMITED)
                                                  or np.any(self.block == UNLIMITED))):
            if shape is None:
                raise ValueError("the bounding box of this selection needs the dataspace shape")
            if self.kind == ALL:
                return tuple(0 for _ in shape), tuple(int(s) - 1 for s in shape)
            c = self.coords(shape)
        elif self.kind == POINTS:
            c = self.points
        elif self.regular:
            if np.any(self.count == 0) or np.any(self.block == 0):
                return None
            lo = self.start
            hi = self.start + self.stride * (self.count - 1) + self.block - 1
            return tuple(int(x) for x in lo), tuple(int(x) for x in hi)
        else:
            c = self.blocks.reshape(-1, self.rank) if len(self.blocks) else self.blocks
        if len(c) == 0:
            return None
        return tuple(int(x) for x in c.min(axis=0)), tuple(int(x) for x in c.max(axis=0))


_UINT = {2: "<u2", 4: "<u4", 8: "<u8"}


def _ints(cur, n, size):
    """``n`` unsigned little-endian integers of ``size`` bytes as int64 (bounds-checked)."""
    if size not in _UINT:
        raise cur.error(f"invalid selection encode size {size}")
    raw = cur.bytes(n * size)
    v = np.frombuffer(raw, _UINT[size]).astype(np.uint64)
    if size == 8 and np.any(v > np.uint64(2**63 - 1)):
        # only the unlimited marker may exceed int64
        bad = (v > np.uint64(2**63 - 1)) & (v != np.uint64(2**64 - 1))
        if np.any(bad):
            raise cur.error("selection coordinate exceeds 2**63")
    return v


def _signed(v, size):
    """Map the all-ones value of ``size`` bytes to UNLIMITED."""
    out = v.astype(np.int64) if v.dtype != np.int64 else v
    out = np.where(v == np.uint64((1 << (8 * size)) - 1), UNLIMITED, out.astype(np.int64))
    return out.astype(np.int64)


def _rank(cur, rank):
    r = cur.u32()
    if r > MAX_RANK:
        raise cur.error(f"selection rank {r} exceeds {MAX_RANK}")
    if rank is not None and r != rank:
        raise cur.error(f"selection rank {r} does not match the dataspace rank {rank}")
    return r


def decode(cur, rank=None):
    """Decode a selection at the cursor (spec VIII.A "Dataspace Selection")."""
    offset = cur.offset
    sel_type = cur.u32()
    if sel_type not in KINDS:
        raise cur.error(f"unknown selection type {sel_type}")
    version = cur.u32()
    if sel_type in (NONE, ALL):
        if version != 1:
            raise cur.error(f"unsupported {KINDS[sel_type]} selection version {version}")
        cur.skip(8)
        return Selection(sel_type, version, rank, offset=offset)
    if sel_type == POINTS:
        if version == 1:
            cur.skip(4)
            length = cur.u32()
            r = _rank(cur, rank)
            n = cur.u32()
            if length != 8 + 4 * r * n:
                raise cur.error(f"point selection length {length} does not match {n} points")
            enc = 4
        elif version == 2:
            enc = cur.u8()
            if enc not in _UINT:
                raise cur.error(f"invalid point selection encode size {enc}")
            r = _rank(cur, rank)
            n = int(_ints(cur, 1, enc)[0])
        else:
            raise cur.error(f"unsupported point selection version {version}")
        if n * r * enc > cur.remaining:
            raise cur.error(f"{n} points of rank {r} exceed the selection's bytes")
        pts = _ints(cur, n * r, enc).astype(np.int64).reshape(n, r)
        return Selection(POINTS, version, r, points=pts, encode_size=enc, offset=offset)
    # hyperslabs
    if version == 1:
        cur.skip(4)
        length = cur.u32()
        r = _rank(cur, rank)
        n = cur.u32()
        if length != 8 + 8 * r * n:
            raise cur.error(f"hyperslab selection length {length} does not match {n} blocks")
        if n * 2 * r * 4 > cur.remaining:
            raise cur.error(f"{n} blocks exceed the selection's bytes")
        blocks = _ints(cur, n * 2 * r, 4).astype(np.int64).reshape(n, 2, r)
        return Selection(HYPERSLABS, 1, r, blocks=blocks, encode_size=4, offset=offset)
    if version == 2:
        flags = cur.u8()
        length = cur.u32()
        r = _rank(cur, rank)
        if not flags & 1:
            raise cur.error("version 2 hyperslab selection must be regular")
        # libhdf5 ignores this length when decoding, and 1.10.0 wrote 4 here (seen in its own
        # VDS test files); the bytes that follow are bounds-checked all the same
        if length not in (4, 4 + 32 * r):
            raise cur.error(f"hyperslab selection length {length} does not match rank {r}")
        v = _signed(_ints(cur, 4 * r, 8), 8).reshape(r, 4)
        return Selection(HYPERSLABS, 2, r, start=v[:, 0], stride=v[:, 1], count=v[:, 2],
                         block=v[:, 3], encode_size=8, flags=flags, offset=offset)
    if version == 3:
        flags = cur.u8()
        enc = cur.u8()
        if enc not in _UINT:
            raise cur.error(f"invalid hyperslab encode size {enc}")
        r = _rank(cur, rank)
        if flags & 1:
            v = _signed(_ints(cur, 4 * r, enc), enc).reshape(r, 4)
            return Selection(HYPERSLABS, 3, r, start=v[:, 0], stride=v[:, 1], count=v[:, 2],
                             block=v[:, 3], encode_size=enc, flags=flags, offset=offset)
        n = int(_ints(cur, 1, enc)[0])
        if n * 2 * r * enc > cur.remaining:
            raise cur.error(f"{n} blocks exceed the selection's bytes")
        blocks = _ints(cur, n * 2 * r, enc).astype(np.int64).reshape(n, 2, r)
        return Selection(HYPERSLABS, 3, r, blocks=blocks, encode_size=enc, flags=flags,
                         offset=offset)
    raise cur.error(f"unsupported hyperslab selection version {version}")


# --- encoding ----------------------------------------------------------------------------------

def encode_size_for(values):
    """The smallest of 2, 4, 8 bytes holding every value (UNLIMITED entries ignored), as
    libhdf5 chooses the encode size of point v2 and hyperslab v3 selections."""
    v = np.asarray(values, np.int64)
    v = v[v != UNLIMITED] if v.size else v
    top = int(v.max()) if v.size else 0
    # the all-ones value of a size is reserved for "unlimited"
    return 2 if top < 0xFFFF else 4 if top < 0xFFFFFFFF else 8


def _pack(values, size):
    v = np.asarray(values, np.int64).ravel()
    out = np.where(v == UNLIMITED, (1 << (8 * size)) - 1 if size < 8 else -1, v)
    return out.astype({2: "<u2", 4: "<u4", 8: "<u8"}[size] if size < 8 else "<i8").tobytes()


def encode(sel):
    """Encode a selection in the version it carries (spec VIII.A): "all"/"none" version 1;
    points version 1 (4-byte) or 2 (``encode_size`` bytes, at least what the values need);
    hyperslabs version 1 (block list, 4-byte), 2 (regular, 8-byte) or 3 (regular or block
    list, ``encode_size`` bytes)."""
    import struct
    if sel.kind in (NONE, ALL):
        return struct.pack("<IIII", sel.kind, 1, 0, 0)
    if sel.kind == POINTS:
        pts = np.asarray(sel.points, np.int64)
        n, r = pts.shape
        if sel.version == 2:
            enc = max(sel.encode_size, encode_size_for(pts.ravel().tolist() + [n]))
            return (struct.pack("<IIBI", POINTS, 2, enc, r) + _pack([n], enc) + _pack(pts, enc))
        return (struct.pack("<IIIIII", POINTS, 1, 0, 8 + 4 * r * n, r, n)
                + pts.astype("<u4").tobytes())
    if sel.regular:
        v = np.stack([np.asarray(x, np.int64) for x in (sel.start, sel.stride, sel.count,
                                                        sel.block)], axis=1)
        r = v.shape[0]
        if sel.version == 2:
            return struct.pack("<IIBII", HYPERSLABS, 2, 1, 4 + 32 * r, r) + _pack(v, 8)
        if sel.version == 3:
            enc = max(sel.encode_size, encode_size_for(v))
            return struct.pack("<IIBBI", HYPERSLABS, 3, 1, enc, r) + _pack(v, enc)
        raise ValueError("regular hyperslabs are encoded as version 2 or 3")
    blocks = np.asarray(sel.blocks, np.int64)
    n, _, r = blocks.shape
    if sel.version == 3:
        enc = max(sel.encode_size, encode_size_for(blocks.ravel().tolist() + [n]))
        return struct.pack("<IIBBI", HYPERSLABS, 3, 0, enc, r) + _pack([n], enc) + \
            _pack(blocks, enc)
    return (struct.pack("<IIIIII", HYPERSLABS, 1, 0, 8 + 8 * r * n, r, n)
            + blocks.astype("<u4").tobytes())


def hyperslab(dims, version):
    """A hyperslab Selection in the form libhdf5 stores. Each of ``dims`` is a regular
    ``(start, stride, count, block)`` or a list of runs ``[(start, length), ...]`` (sorted,
    disjoint, non-empty; evenly spaced equal runs count as regular). ``version`` 3 gives one
    regular hyperslab when every dimension is regular (a single run: count 1, stride 1), else
    a block list; ``version`` 1 always a block list, the row-major product of the runs. An
    UNLIMITED count or block (an unlimited virtual mapping) needs a regular hyperslab: below
    version 3, version 2, as libhdf5 writes them."""
    dims = [d if isinstance(d, tuple) else (_regular(d) or d) for d in dims]
    if any(isinstance(d, tuple) and UNLIMITED in d for d in dims) and version < 3:
        version = 2            # an unlimited selection is regular: version 2 holds it
    if version in (2, 3) and all(isinstance(d, tuple) for d in dims):
        v = np.array(dims, np.int64).reshape(-1, 4)
        return Selection(HYPERSLABS, version, len(dims), start=v[:, 0], stride=v[:, 1],
                         count=v[:, 2], block=v[:, 3],
                         encode_size=8 if version == 2 else encode_size_for(v), flags=1)
    from itertools import product
    runs = [[(d[0] + i * d[1], d[3]) for i in range(d[2])] if isinstance(d, tuple) else d
            for d in dims]
    blocks = np.array([[[s for s, _ in combo], [s + n - 1 for s, n in combo]]
                       for combo in product(*runs)], np.int64).reshape(-1, 2, len(dims))
    if version == 1 and blocks.size and blocks.max() >= 0xFFFFFFFF:
        version = 3            # version 1 holds 4-byte coordinates only
    return Selection(HYPERSLABS, version, len(dims), blocks=blocks,
                     encode_size=encode_size_for(blocks.ravel().tolist() + [len(blocks)]))


def _merged(intervals):
    """Sorted inclusive intervals with touching ones joined, as runs (start, length)."""
    runs = []
    for lo, hi in intervals:
        if runs and lo <= runs[-1][0] + runs[-1][1]:
            start, n = runs[-1]
            runs[-1] = (start, max(n, hi - start + 1))
        else:
            runs.append((lo, hi - lo + 1))
    return runs


def _regular(runs):
    """(start, stride, count, block) of evenly spaced runs of one length, or None."""
    (s0, n0), count = runs[0], len(runs)
    if count == 1:
        return s0, 1, 1, n0
    stride = runs[1][0] - s0
    if all(n == n0 and s == s0 + i * stride for i, (s, n) in enumerate(runs)):
        return s0, stride, count, n0
    return None


# --- the dataspace encoding of H5Sencode (spec Appendix "Dataspace Encoding") ---------------
IMAGE_SDSPACE_ID = 1


def encode_image(shape, sel, sizeof_size=8):
    """H5Sencode's image: u8 1 (dataspace message id), u8 0 (encode version), u8 size of
    sizes, u32 extent size, a version 1 dataspace message (maximum dimensions = dimensions, as
    H5Screate_simple makes them), then the selection."""
    import struct
    rank = len(shape)
    ext = bytes((1, rank, 1, 0, 0, 0, 0, 0))
    for d in tuple(shape) * 2:
        ext += int(d).to_bytes(sizeof_size, "little")
    return bytes((IMAGE_SDSPACE_ID, 0, sizeof_size)) + struct.pack("<I", len(ext)) + ext + \
        encode(sel)


class _SizeCtx:
    def __init__(self, sizeof_lengths):
        self.sizeof_lengths = sizeof_lengths


def decode_image(cur):
    """(shape, Selection) of an H5Sencode image at the cursor (encode versions 0 and 1)."""
    from .context import Cursor
    from .messages import dataspace
    if cur.u8() != IMAGE_SDSPACE_ID:
        raise cur.error("not a dataspace encoding (first byte is not 1)")
    ver = cur.u8()
    if ver not in (0, 1):
        raise cur.error(f"unsupported dataspace encoding version {ver}")
    size = cur.u8()
    if size not in (2, 4, 8):
        raise cur.error(f"invalid size of sizes {size}")
    ext_len = cur.u32()
    at = cur.offset
    body = cur.bytes(ext_len)
    space = dataspace.decode(Cursor(body, at, "dataspace encoding", _SizeCtx(size)))
    shape = tuple(space.shape or ())
    return shape, decode(cur, len(shape))


def from_args(shape, args):
    """The selection for ``dataset[args]`` (h5py's regionref[...]): everything for ``...``,
    a block list for slices (one block per run of each stepped dimension), points for index
    arrays."""
    from itertools import product
    rank = len(shape)
    if args in ((), (Ellipsis,)):
        return Selection(ALL, 1, rank)
    sel = select(tuple(shape), args)
    dims = sel.dims
    if any(not isinstance(d, slice) for d in dims):
        coords = np.stack(np.meshgrid(*sel.coords(), indexing="ij"), axis=-1).reshape(-1, rank)
        return Selection(POINTS, 1, rank, points=coords.astype(np.int64))
    runs = []
    for d in dims:
        if d.step == 1:
            runs.append([(d.start, d.stop - 1)] if d.stop > d.start else [])
        else:
            runs.append([(i, i) for i in range(d.start, d.stop, d.step)])
    blocks = [tuple(zip(*combo)) for combo in product(*runs)]
    arr = np.array([[list(b[0]), list(b[1])] for b in blocks], np.int64).reshape(-1, 2, rank)
    return Selection(HYPERSLABS, 1, rank, blocks=arr)
