"""h5py's ``h5s`` as far as purehep has it: dataspaces (spec IV.A.2.b, the Dataspace
message) as libhdf5's H5S calls make them — null, scalar, or simple with an extent and a
maximum extent — for the calls that create datasets and attributes (purehep.h5d, purehep.h5a),
and selections within them (H5Sselect_*: all, none, hyperslabs combined by the SELECT_*
operators), held as a mask of the extent; a selection's blocks are listed as libhdf5 lists
them (H5Sget_select_hyper_blocklist: runs along the last dimension, equal runs of adjacent
positions of the dimensions before merged, in order); ``ALL`` (H5S_ALL) and the blocks a
selection reads and writes through (DatasetID.read / write).
"""
import numpy as np

SCALAR, SIMPLE, NULL = 0, 1, 2
UNLIMITED = 2 ** 64 - 1          # H5S_UNLIMITED as h5py gives it
SELECT_SET, SELECT_OR, SELECT_AND, SELECT_XOR, SELECT_NOTB, SELECT_NOTA, SELECT_APPEND, \
    SELECT_PREPEND = range(8)
SEL_NONE, SEL_POINTS, SEL_HYPERSLABS, SEL_ALL = range(4)
_COMBINE = {SELECT_SET: lambda a, b: b, SELECT_OR: np.logical_or, SELECT_AND: np.logical_and,
            SELECT_XOR: np.logical_xor, SELECT_NOTB: lambda a, b: a & ~b,
            SELECT_NOTA: lambda a, b: b & ~a}


class SpaceID:
    """A dataspace: its class and, when simple, its current and maximum dimensions."""

    def __init__(self, cls, dims=(), maxdims=None):
        self._cls = cls
        self._dims = tuple(int(d) for d in dims)
        self._maxdims = self._dims if maxdims is None else tuple(int(d) for d in maxdims)
        self._kind = SEL_ALL              # (a null dataspace's "all" has no elements)
        self._mask = None                 # the hyperslab selection's elements
        self._slab = None                 # (start, stride, count, block) of a regular one
        self._points = None               # a point selection's (n, rank) coordinates, in order

    # -- selections ----------------------------------------------------------------------
    def _selected(self):
        if self._kind == SEL_ALL:
            return np.full(self._dims, self._cls != NULL, bool)
        if self._kind == SEL_NONE:
            return np.zeros(self._dims, bool)
        if self._mask is None:
            self._mask = _slab_mask(self._dims, *self._slab) if self._points is None else \
                _points_mask(self._dims, self._points)
        return self._mask

    def select_all(self):
        self._kind, self._mask, self._slab, self._points = SEL_ALL, None, None, None

    def select_none(self):
        self._kind, self._mask, self._slab, self._points = SEL_NONE, None, None, None

    def select_elements(self, coords, op=SELECT_SET):
        """H5Sselect_elements: the points ``coords`` ((npoints, rank)), in their order
        (repeats kept), set, or appended or prepended to a point selection."""
        rank = len(self._dims)
        points = np.asarray(coords, np.int64)
        if points.ndim != 2 or points.shape[1] != rank:
            raise ValueError(f"Coordinate array must have shape (<npoints>, {rank})")
        if op not in (SELECT_SET, SELECT_APPEND, SELECT_PREPEND):
            raise ValueError(f"invalid point selection operation {op!r}")
        if self._kind == SEL_POINTS and op != SELECT_SET:
            parts = (self._points, points) if op == SELECT_APPEND else (points, self._points)
            points = np.concatenate(parts)
        self._kind, self._mask, self._slab, self._points = SEL_POINTS, None, None, points

    def get_select_elem_npoints(self):
        return len(self._point_list())

    def get_select_elem_pointlist(self):
        """The selected points, (npoints, rank), in their order."""
        return self._point_list().astype(np.uint64)

    def _point_list(self):
        if self._kind != SEL_POINTS:
            raise ValueError("Not an element selection (not an element selection)")
        return self._points

    def coordinates(self):
        """The selected elements' coordinates in the order reads and writes take them:
        a point selection's order, else row-major (a tuple of index arrays)."""
        if self._kind == SEL_POINTS:
            return tuple(self._points.T)
        return np.nonzero(self._selected())

    def select_hyperslab(self, start, count, stride=None, block=None, op=SELECT_SET):
        """H5Sselect_hyperslab: count blocks of ``block`` elements every ``stride`` from
        ``start`` in each dimension, combined with the selection by ``op``. A selection set
        by one call is kept as its parameters too: it may extend beyond the extent or have
        UNLIMITED counts, as virtual dataset mappings take them (its elements, needed by
        the other calls, must lie within the extent)."""
        rank = len(self._dims)
        slab = tuple(tuple(int(v) for v in p) for p in
                     (start, stride or (1,) * rank, count, block or (1,) * rank))
        if op == SELECT_SET:
            self._kind, self._mask, self._slab, self._points = SEL_HYPERSLABS, None, slab, None
            return
        if self._kind == SEL_POINTS or op not in _COMBINE:
            raise RuntimeError("Unable to set hyperslab selection (invalid selection "
                               "operation)")
        self._set(_COMBINE[op](self._selected(), _slab_mask(self._dims, *slab)))

    def _set(self, mask):
        self._kind, self._mask, self._slab, self._points = SEL_HYPERSLABS, mask, None, None

    def mapping_dims(self):
        """The selection as a virtual dataset mapping takes it (purehep.hl.vds): None for
        all, else per dimension (start, stride, count, block), -1 for an UNLIMITED count;
        UnsupportedFeatureError for a selection other than one regular hyperslab."""
        if self._kind == SEL_ALL:
            return None
        if self._slab is None:
            from .errors import UnsupportedFeatureError
            raise UnsupportedFeatureError("virtual dataset mappings of selections other than "
                                          "all or one regular hyperslab")
        return [(a, t, -1 if c == UNLIMITED else c, b) for a, t, c, b in zip(*self._slab)]

    def get_select_type(self):
        return self._kind

    def get_select_npoints(self):
        """The number of selected elements (a point selection's points, repeats too)."""
        if self._kind == SEL_POINTS:
            return len(self._points)
        return int(self._selected().sum())

    def get_select_bounds(self):
        """(lowest corner, highest corner) of the selection; None when nothing is (a null
        dataspace too); a scalar one has none (h5py's ValueError)."""
        if self._cls == NULL:
            return None
        if self._cls == SCALAR:
            raise ValueError("Invalid pointer (invalid pointer)")
        where = self.coordinates()
        if not where or not len(where[0]):
            return None
        return tuple(int(w.min()) for w in where), tuple(int(w.max()) for w in where)

    def _hyperslab_mask(self):
        if self._kind == SEL_POINTS:
            raise ValueError("Not a hyperslab selection (not a hyperslab selection)")
        return self._selected()

    def get_select_hyper_nblocks(self):
        return len(_blocks(self._hyperslab_mask()))

    def get_select_hyper_blocklist(self):
        """The selected blocks, (nblocks, 2, rank): each block's first and last corner."""
        blocks = _blocks(self._hyperslab_mask())
        return np.array(blocks, np.uint64).reshape(len(blocks), 2, len(self._dims))

    def select_copy(self, other):
        """H5Sselect_copy: ``other``'s selection, here."""
        self._kind, self._slab, self._points = other._kind, other._slab, other._points
        self._mask = None if other._mask is None else other._mask.copy()

    def combine_select(self, other, op):
        """H5Scombine_select: a new dataspace whose selection combines the two."""
        out = self.copy()
        out._set(_COMBINE[op](self._selected(), other._selected()))
        return out

    def modify_select(self, other, op):
        """H5Smodify_select: this selection combined with ``other``'s."""
        self._set(_COMBINE[op](self._selected(), other._selected()))

    def is_regular_hyperslab(self):
        """Whether the hyperslab selection is one regular hyperslab (as set, or as libhdf5
        finds its blocks to be after combining)."""
        return self._regular() is not None

    def get_regular_hyperslab(self):
        """(start, stride, count, block) of a regular hyperslab selection."""
        regular = self._regular()
        if regular is None:
            text = "Not a regular hyperslab selection"
            raise ValueError(f"{text} ({text.lower()})")
        return regular

    def _regular(self):
        if self._kind != SEL_HYPERSLABS:
            raise ValueError("Not a hyperslab selection (not a hyperslab selection)")
        if self._slab is not None:
            return self._slab
        return _regular_blocks(_blocks(self._selected()), len(self._dims))

    def select_valid(self):
        """Whether the selection lies within the extent."""
        if self._kind in (SEL_ALL, SEL_NONE):
            return True
        if self._kind == SEL_POINTS:
            return bool(len(self._points) == 0 or (self._points.min() >= 0 and np.all(
                self._points.max(axis=0) < np.array(self._dims))))
        if self._slab is not None:
            return all(c == UNLIMITED or (a >= 0 and a + (c - 1) * t + b <= n) for
                       a, t, c, b, n in zip(*self._slab, self._dims))
        return True

    def select_shape_same(self, other):
        """Whether the two selections have the same shape (dimensions of one element
        aside), as H5Sselect_shape_same compares them."""
        def shape(space):
            if space.get_select_npoints() == 0:
                return np.zeros(0, bool)
            lo, hi = space.get_select_bounds()
            box = space._selected()[tuple(slice(a, b + 1) for a, b in zip(lo, hi))]
            return box.reshape([n for n in box.shape if n != 1])
        a, b = shape(self), shape(other)
        return self.get_select_npoints() == other.get_select_npoints() and \
            a.shape == b.shape and bool(np.array_equal(a, b))

    def is_simple(self):
        return self._cls != NULL

    def set_extent_simple(self, dims_tpl, max_dims_tpl=None):
        """H5Sset_extent_simple: a simple extent of these dimensions, everything selected."""
        dims = tuple(int(d) for d in dims_tpl)
        maxdims = dims if max_dims_tpl is None else tuple(int(m) for m in max_dims_tpl)
        if len(maxdims) != len(dims) or any(m != UNLIMITED and m < d
                                            for d, m in zip(dims, maxdims)):
            text = "Invalid maximum dimension size"
            raise ValueError(f"{text} ({text.lower()})")
        self._cls, self._dims, self._maxdims = SIMPLE, dims, maxdims
        self.select_all()

    def set_extent_none(self):
        """H5Sset_extent_none: a null dataspace."""
        self._cls, self._dims, self._maxdims = NULL, (), ()
        self.select_none()

    def extent_copy(self, source):
        """H5Sextent_copy: ``source``'s extent here, everything selected."""
        self._cls, self._dims, self._maxdims = source._cls, source._dims, source._maxdims
        self.select_all()

    @property
    def shape(self):
        return None if self._cls == NULL else self._dims

    def get_simple_extent_type(self):
        return self._cls

    def get_simple_extent_ndims(self):
        return len(self._dims)

    def get_simple_extent_dims(self, maxdims=False):
        return self._maxdims if maxdims else self._dims

    def get_simple_extent_npoints(self):
        import math
        return 0 if self._cls == NULL else math.prod(self._dims)

    def copy(self):
        out = SpaceID(self._cls, self._dims, self._maxdims)
        out.select_copy(self)
        return out

    def maxshape(self):
        """The maximum shape as h5py's create_dataset takes it (None: unlimited)."""
        return tuple(None if m == UNLIMITED else m for m in self._maxdims)


ALL = SpaceID(NULL)      # H5S_ALL: a marker for DatasetID.read / write, compared by identity


def selected_blocks(space, shape):
    """(bounding box slices, the selection's mask inside it, its blocks as slices of the
    box) of the selection of ``space`` over an extent of ``shape`` (ALL: everything)."""
    if space is ALL or space._kind == SEL_ALL:
        box = tuple(slice(0, n) for n in shape)
        return box, np.ones(shape, bool), [tuple(slice(None) for _ in shape)]
    if space._kind == SEL_NONE:
        return None, None, []
    mask = space._selected()
    if not mask.any():
        return None, None, []
    lo, hi = space.get_select_bounds()
    box = tuple(slice(a, b + 1) for a, b in zip(lo, hi))
    blocks = [tuple(slice(a - o, b + 1 - o) for a, b, o in zip(first, last, lo))
              for first, last in _blocks(mask)]
    return box, mask[box], blocks


def as_selection(space):
    """The selection of ``space`` as the Dataspace Selection of a region reference (spec
    VIII.C: all, none, or its blocks as a hyperslab block list)."""
    from .format import selection as S
    rank = len(space._dims)
    kind = space.get_select_type()
    if kind == SEL_POINTS:
        return S.Selection(S.POINTS, 1, rank, points=space._points.copy())
    if kind != SEL_HYPERSLABS:
        return S.Selection(S.ALL if kind == SEL_ALL else S.NONE, 1, rank)
    blocks = np.array(_blocks(space._selected()), np.int64).reshape(-1, 2, rank)
    return S.Selection(S.HYPERSLABS, 1, rank, blocks=blocks)


def of_shape(shape, maxshape=None):
    """The dataspace of an object of h5py's ``shape`` and ``maxshape`` (None: null
    dataspace; (): scalar; None in maxshape: unlimited)."""
    if shape is None:
        return create(NULL)
    if shape == ():
        return create(SCALAR)
    maxdims = None if maxshape is None else \
        tuple(UNLIMITED if m is None else m for m in maxshape)
    return create_simple(shape, maxdims)


def create(cls):
    """H5Screate: an empty dataspace of class SCALAR or NULL (SIMPLE: of rank 0)."""
    if cls not in (SCALAR, SIMPLE, NULL):
        raise ValueError(f"invalid dataspace class {cls!r}")
    return SpaceID(cls)


def create_simple(dims, maxdims=None):
    """H5Screate_simple: a simple dataspace of ``dims`` (maximum ``maxdims``)."""
    dims = tuple(dims)
    if maxdims is not None and len(tuple(maxdims)) != len(dims):
        raise ValueError("maxdims must have the rank of dims")
    if maxdims is not None and any(m != UNLIMITED and m < d for d, m in zip(dims, maxdims)):
        raise ValueError("maxdims must not be smaller than dims")
    return SpaceID(SIMPLE, dims, maxdims)


def _slab_mask(dims, start, stride, count, block):
    """The elements of a regular hyperslab, as a mask of the extent ``dims``."""
    from .io.memory import check_size
    check_size(dims, 1, "dataspace selection")
    mask = np.zeros(dims, bool)
    axes = []
    for s, t, c, b, n in zip(start, stride, count, block, dims):
        if c == UNLIMITED:
            raise ValueError("an unlimited hyperslab selection has no elements to list")
        idx = (s + np.arange(c)[:, None] * t + np.arange(b)[None, :]).ravel()
        if len(idx) and (idx.min() < 0 or idx.max() >= n):
            raise ValueError("hyperslab selection extends beyond the dataspace")
        axes.append(idx)
    mask[np.ix_(*axes)] = True
    return mask


def _points_mask(dims, points):
    """The elements of a point selection, as a mask of the extent ``dims``."""
    from .io.memory import check_size
    check_size(dims, 1, "dataspace selection")
    if len(points) and (points.min() < 0 or np.any(points.max(axis=0) >= np.array(dims))):
        raise ValueError("point selection extends beyond the dataspace")
    mask = np.zeros(dims, bool)
    mask[tuple(points.T)] = True
    return mask


def _regular_blocks(blocks, rank):
    """(start, stride, count, block) of the blocks ([(first, last)] corners) when they are
    the product of regularly spaced blocks of one size along each dimension, else None."""
    if not blocks:
        return None
    params = []
    for d in range(rank):
        firsts = sorted({lo[d] for lo, _ in blocks})
        sizes = {hi[d] - lo[d] + 1 for lo, hi in blocks}
        steps = {b - a for a, b in zip(firsts, firsts[1:])}
        if len(sizes) != 1 or len(steps) > 1:
            return None
        params.append((firsts[0], steps.pop() if steps else 1, len(firsts), sizes.pop()))
    if len(blocks) != int(np.prod([p[2] for p in params])):
        return None
    return tuple(tuple(p[i] for p in params) for i in range(4))


def _blocks(mask):
    """The blocks of a boolean mask as libhdf5's span trees list them: [(first, last)]."""
    if mask.ndim == 1:
        edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
        return [((int(a),), (int(b) - 1,)) for a, b in zip(edges[::2], edges[1::2])]
    rows = [_blocks(row) for row in mask]
    out, i = [], 0
    while i < len(rows):
        j = i
        while j + 1 < len(rows) and rows[j + 1] == rows[i]:
            j += 1
        out += [((i,) + lo, (j,) + hi) for lo, hi in rows[i]]
        i = j + 1
    return out
