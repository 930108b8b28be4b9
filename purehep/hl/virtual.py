"""Virtual datasets (spec IV.A.2.i layout class 3 and III.F): values gathered from source
datasets, with the fill value where a source is missing or does not reach.

Each mapping pairs a source selection with a virtual selection element by element, in the
row-major order libhdf5 iterates them. Unlimited mappings take their extent from the source
datasets as they are now; source names with printf-style ``%b`` patterns name one source per
block of an unlimited virtual selection.
"""
import re
import threading

import numpy as np

from ..errors import FormatError, PurehepError
from ..format import selection as S
from ..format.global_heap import get_object
from ..format.vds_block import decode as decode_block
from ..io import memory
from ..io.prefix import source_files

MAX_BLOCKS = 1 << 20


def _positions(start, stride, count, block, limit):
    """Positions along one dimension of a regular hyperslab, clipped below ``limit``."""
    if block == S.UNLIMITED:
        block = max(limit - start, 0)
    if count == S.UNLIMITED:
        count = 0 if stride <= 0 else max(-(-(limit - start) // stride), 0)
    if count > MAX_BLOCKS and block:
        count = min(count, -(-(limit - start) // max(stride, 1)))
    idx = (start + stride * np.arange(count, dtype=np.int64)[:, None]
           + np.arange(block, dtype=np.int64)[None, :]).ravel()
    return idx[idx < limit]


def _coords(sel, shape):
    """(n, rank) coordinates of ``sel`` inside ``shape``, row-major, unlimited parts clipped."""
    shape = tuple(int(n) for n in shape)
    if sel.kind == S.ALL:
        axes = [np.arange(n, dtype=np.int64) for n in shape]
    elif sel.regular:
        axes = [_positions(int(sel.start[d]), int(sel.stride[d]), int(sel.count[d]),
                           int(sel.block[d]), shape[d]) for d in range(len(shape))]
    else:
        return sel.coords(shape)
    if not axes:
        return np.zeros((1, 0), np.int64)
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)


def _unlimited_dim(sel):
    if not sel.regular:
        return None
    for d in range(len(sel.start)):
        if sel.count[d] == S.UNLIMITED or sel.block[d] == S.UNLIMITED:
            return d
    return None


_PRINTF = re.compile(r"%(%|b)")


def _has_pattern(name):
    return any(m.group(1) == "b" for m in _PRINTF.finditer(name))


def _substitute(name, i):
    return _PRINTF.sub(lambda m: "%" if m.group(1) == "%" else str(i), name)


def mapping_block(dataset):
    """The encoded mappings of virtual dataset ``dataset`` (its global heap block, spec
    III.F; b"" when it has none): equal bytes hold equal mappings."""
    layout = dataset._layout
    if layout.address is None:
        return b""
    return bytes(get_object(dataset._ctx, layout.address, layout.virtual_index))


_reading = threading.local()     # (context, address) of the virtual datasets this thread reads


class VirtualStorage:
    """The values of a virtual dataset, read from its sources on demand."""

    converted = True  # read() returns values already in the dataset's dtype

    def __init__(self, dataset):
        self.ds = dataset
        ctx = dataset._ctx
        layout = dataset._layout
        if layout.address is None:
            self.mappings = []
        else:
            data = get_object(ctx, layout.address, layout.virtual_index)
            self.mappings = decode_block(ctx, data, ctx.absolute(layout.address))
        self.shape = tuple(dataset._space.shape)
        for m in self.mappings:
            rank = m.virtual_selection.rank
            if rank is not None and rank != len(self.shape):
                raise FormatError(f"a mapping's virtual selection of rank {rank} for a "
                                  f"rank-{len(self.shape)} dataset", "virtual dataset "
                                  "global heap block", ctx.absolute(layout.address))
        self.dtype = dataset.dtype
        self.storage_size = 0
        self.shape = self._current_extent()
        self._axes = {}            # i or (i, source shape) -> selection axes (None: not product)
        self._box_array = None

    def _current_extent(self):
        """The dataset's shape as libhdf5 computes it on open: along an unlimited virtual
        dimension, as far as the sources now reach ("last available" view)."""
        shape = list(self.shape)
        reach = {}
        for m in self.mappings:
            vdim = _unlimited_dim(m.virtual_selection)
            if vdim is None:
                continue
            end = 0
            for vcoords, _, _ in self._pairs(m, clip=False):
                if len(vcoords):
                    end = max(end, int(vcoords[:, vdim].max()) + 1)
            reach[vdim] = max(reach.get(vdim, 0), end)
        for d, end in reach.items():
            shape[d] = end
        return tuple(shape)

    def read(self, sel, copy=True):
        """The selected values; a dataset whose mappings lead back to itself (directly or
        through other virtual datasets: a damaged or hostile file) raises FormatError."""
        key = (id(self.ds._ctx), self.ds._address)
        reading = _reading.__dict__.setdefault("keys", set())
        if key in reading:
            raise FormatError("a virtual dataset's mappings lead back to itself",
                              "virtual dataset", self.ds._ctx.absolute(self.ds._address))
        reading.add(key)
        try:
            return self._read(sel)
        finally:
            reading.discard(key)

    def _read(self, sel):
        shape = self.shape if sel is None else sel.read_shape
        out = memory.full(shape, self.ds.fillvalue, self.dtype, "virtual dataset read")
        if out.size == 0:
            return out
        region = [np.arange(n, dtype=np.int64) for n in self.shape] if sel is None else sel.coords()
        lo = np.array([r[0] for r in region], np.int64)
        hi = np.array([r[-1] for r in region], np.int64)
        boxes = self._boxes()
        touched = np.flatnonzero(np.all((boxes[:, 0] <= hi) & (boxes[:, 1] >= lo), axis=1)) \
            if len(boxes) else ()
        for i in touched:
            mapping = self.mappings[i]
            if self._copy_product(out, region, mapping, i):
                continue
            for vcoords, source, scoords in self._pairs(mapping):
                self._copy(out, region, vcoords, source, scoords)
        return out

    def _virtual_axes(self, i):
        """The axes of mapping ``i``'s virtual selection (None: not a product, or unlimited)."""
        if i not in self._axes:
            vsel = self.mappings[i].virtual_selection
            self._axes[i] = None if _unlimited_dim(vsel) is not None else vsel.axes(self.shape)
        return self._axes[i]

    def _boxes(self):
        """(mappings, 2, rank) corners each mapping's virtual selection lies within (the whole
        dataset where it is not a product), so that a read skips the mappings it misses."""
        if self._box_array is None:
            whole = [np.zeros(len(self.shape), np.int64),
                     np.asarray(self.shape, np.int64) - 1]
            rows = []
            for i in range(len(self.mappings)):
                axes = self._virtual_axes(i)
                if axes is None:
                    rows.append(whole)
                elif any(not len(a) for a in axes):
                    rows.append([np.ones(len(axes), np.int64), np.zeros(len(axes), np.int64)])
                else:
                    rows.append([np.array([a[0] for a in axes]), np.array([a[-1] for a in axes])])
            self._box_array = np.asarray(rows, np.int64).reshape(-1, 2, len(self.shape))
        return self._box_array

    def _copy_product(self, out, region, m, i):
        """A mapping whose selections are products of per-dimension positions with the same
        lengths along their dimensions longer than one (every mapping h5py makes, most that
        libhdf5 files hold): the k-th position along each such dimension pairs with the k-th
        of the source's, so only the part inside the read ``region`` is worked out and read.
        False when the mapping needs element-by-element pairing."""
        ssel = m.source_selection
        vaxes = self._virtual_axes(i)
        if vaxes is None or _unlimited_dim(ssel) is not None or _has_pattern(m.source_file) \
                or _has_pattern(m.source_dataset):
            return False
        keep, where = [], []
        for axis, want in zip(vaxes, region):
            common = _overlap(axis, want)
            if common is None:
                return True                   # the mapping misses the read region
            keep.append(common[0])
            where.append(common[1])
        source = self.ds._file._vds_source(m.source_file, m.source_dataset,
                                           self.ds._prefix("virtual"))
        if source is None:
            return True                       # a missing source reads as the fill value
        key = (i, source.shape)
        if key not in self._axes:
            self._axes[key] = _source_axes(ssel, source.shape)
        saxes = self._axes[key]
        if saxes is None:
            return False
        vlong = [d for d, a in enumerate(vaxes) if len(a) != 1]
        slong = [d for d, a in enumerate(saxes) if len(a) != 1]
        if [len(vaxes[d]) for d in vlong] != [len(saxes[d]) for d in slong]:
            return False
        picks = list(saxes)
        for vd, sd in zip(vlong, slong):
            picks[sd] = saxes[sd][keep[vd]]
        values = _read_clipped(source, picks)
        at = [w if isinstance(w, slice) else _as_index(w) for w in where]
        values = values.reshape([k.stop - k.start if isinstance(k, slice) else len(k)
                                 for k in keep])
        if all(isinstance(a, slice) for a in at):
            out[tuple(at)] = values
        else:
            out[np.ix_(*[np.arange(a.start, a.stop) if isinstance(a, slice) else a
                         for a in at])] = values
        return True

    # -- pairing virtual and source elements -----------------------------------------------
    def _pairs(self, m, clip=True):
        """(virtual coords, source dataset, source coords) for one mapping; with
        ``clip=False`` unlimited mappings are followed past the current shape."""
        vdim = _unlimited_dim(m.virtual_selection)
        if vdim is not None and (_has_pattern(m.source_file) or _has_pattern(m.source_dataset)):
            yield from self._printf_pairs(m, vdim, clip)
            return
        source = self.ds._file._vds_source(m.source_file, m.source_dataset,
                                           self.ds._prefix("virtual"))
        if source is None:
            return
        scoords = _coords(m.source_selection, source.shape)
        if vdim is None:
            vcoords = _coords(m.virtual_selection, self.shape)
        else:
            vcoords = self._matched_virtual(m.virtual_selection, vdim, len(scoords))
        n = min(len(vcoords), len(scoords))
        yield vcoords[:n], source, scoords[:n]

    def _matched_virtual(self, vsel, vdim, total):
        """Virtual coordinates of an unlimited selection extended to ``total`` elements (the
        source's current size), then clipped to the dataset's shape."""
        fixed = 1
        lengths = []
        for d in range(len(self.shape)):
            if d == vdim:
                lengths.append(None)
                continue
            n = len(_positions(int(vsel.start[d]), int(vsel.stride[d]), int(vsel.count[d]),
                               int(vsel.block[d]), self.shape[d]))
            lengths.append(n)
            fixed *= n
        along = total // fixed if fixed else 0
        if not along:
            return np.zeros((0, len(self.shape)), np.int64)
        step = max(int(vsel.stride[vdim]), int(vsel.block[vdim]), 1)
        shape = list(self.shape)
        shape[vdim] = int(vsel.start[vdim]) + (along + 1) * step
        coords = _coords(vsel, shape)
        # pairs are formed before clipping to the dataset's shape (the copy drops the rest)
        return coords[_rank_along(coords, vdim) < along]

    def _printf_pairs(self, m, vdim, clip):
        vsel = m.virtual_selection
        start, stride = int(vsel.start[vdim]), max(int(vsel.stride[vdim]), 1)
        block = int(vsel.block[vdim])
        for i in range(MAX_BLOCKS):
            lo = start + i * stride
            if clip and lo >= self.shape[vdim]:
                break
            source = self.ds._file._vds_source(_substitute(m.source_file, i),
                                               _substitute(m.source_dataset, i),
                                               self.ds._prefix("virtual"))
            if source is None:
                if clip:
                    continue
                break  # the extent ends at the first missing source
            scoords = _coords(m.source_selection, source.shape)
            axes = []
            for d in range(len(self.shape)):
                if d == vdim:
                    hi = min(lo + block, self.shape[d]) if clip else lo + block
                    axes.append(np.arange(lo, hi, dtype=np.int64))
                else:
                    axes.append(_positions(int(vsel.start[d]), int(vsel.stride[d]),
                                           int(vsel.count[d]), int(vsel.block[d]), self.shape[d]))
            grids = np.meshgrid(*axes, indexing="ij")
            vcoords = np.stack([g.ravel() for g in grids], axis=1)
            n = min(len(vcoords), len(scoords))
            yield vcoords[:n], source, scoords[:n]

    # -- copying ----------------------------------------------------------------------------
    def _copy(self, out, region, vcoords, source, scoords):
        if not len(vcoords):
            return
        keep = np.ones(len(vcoords), bool)
        local = []
        for d, axis in enumerate(region):
            pos = np.searchsorted(axis, vcoords[:, d])
            pos_c = np.minimum(pos, len(axis) - 1)
            keep &= (pos < len(axis)) & (axis[pos_c] == vcoords[:, d])
            local.append(pos_c)
        if not keep.any():
            return
        sc = scoords[keep]
        lo, hi = sc.min(axis=0), sc.max(axis=0) + 1
        box = source[tuple(slice(int(a), int(b)) for a, b in zip(lo, hi))] if sc.shape[1] else \
            source[()]
        values = np.asarray(box)[tuple((sc - lo).T)] if sc.shape[1] else np.asarray(box)
        out[tuple(p[keep] for p in local)] = np.asarray(values).astype(self.dtype, copy=False)


class SelectionSpace:
    """A selection of ``virtual_sources()`` with the queries h5py's SpaceID answers for it.
    ``shape`` is the extent the selection is in (a callable for a source's extent, which
    takes opening the source: asked for only when a query needs it)."""

    def __init__(self, selection, shape):
        self.selection = selection
        self._shape = shape

    @property
    def shape(self):
        if callable(self._shape):
            self._shape = self._shape()
        return self._shape

    def get_select_type(self):
        return self.selection.kind            # H5S_SEL_NONE/POINTS/HYPERSLABS/ALL: 0/1/2/3

    def get_select_bounds(self):
        """(start, end) inclusive corners, or None when nothing is selected."""
        try:
            return self.selection.bounding_box()
        except ValueError:                    # "all" and unlimited selections need the extent
            return self.selection.bounding_box(self.shape)

    def get_select_npoints(self):
        return self.selection.count_selected(self.shape)

    def is_regular_hyperslab(self):
        return self.selection.as_regular() is not None

    def get_regular_hyperslab(self):
        """(start, stride, count, block) tuples; unlimited entries as h5py's h5s.UNLIMITED."""
        regular = self.selection.as_regular()
        if regular is None:
            raise ValueError("not a regular hyperslab selection")
        return tuple(tuple(int(v) if v != S.UNLIMITED else (1 << 64) - 1 for v in arr)
                     for arr in regular)


def _overlap(axis, want):
    """(where in ``axis``, where in ``want``) of the values both hold (sorted, unique), as
    slices when both are runs of consecutive values; None when they share none."""
    a0, w0 = int(axis[0]), int(want[0])
    if int(axis[-1]) - a0 + 1 == len(axis) and int(want[-1]) - w0 + 1 == len(want):
        lo, hi = max(a0, w0), min(a0 + len(axis), w0 + len(want))
        return (slice(lo - a0, hi - a0), slice(lo - w0, hi - w0)) if hi > lo else None
    pos = np.minimum(np.searchsorted(want, axis), len(want) - 1)
    k = np.flatnonzero(want[pos] == axis)
    return (k, pos[k]) if len(k) else None


def _source_axes(ssel, shape):
    """Per-dimension positions of a mapping's source selection (None unless a product),
    taken as far as the selection reaches: it may reach past the source's current extent
    (libhdf5 reads those elements as the source's fill value, :func:`_read_clipped`)."""
    if not shape:
        return None
    box = ssel.bounding_box(shape)
    if box is not None:
        shape = tuple(max(int(n), int(b) + 1) for n, b in zip(shape, box[1]))
    return ssel.axes(shape)


def _read_clipped(source, picks):
    """``source`` at the product of the per-dimension positions ``picks``; positions past
    its current extent read as its fill value, as libhdf5 reads a mapping whose source
    selection reaches past a chunked source (one smaller than when mapped: a versioned
    file's raw_data cut by a commit after rebuild_hashtables). For a contiguous source
    libhdf5 reads whatever bytes lie past its storage; the fill value is read here."""
    inside = [p < n for p, n in zip(picks, source.shape)]
    if all(m.all() for m in inside):
        return np.asarray(source[tuple(_as_index(p) for p in picks)])
    out = np.full([len(p) for p in picks], source.fillvalue, source.dtype)
    kept = [p[m] for p, m in zip(picks, inside)]
    if all(len(k) for k in kept):
        part = np.asarray(source[tuple(_as_index(k) for k in kept)])
        out[np.ix_(*[np.flatnonzero(m) for m in inside])] = part.reshape(
            [len(k) for k in kept])
    return out


def _as_index(positions):
    """A slice for consecutive positions, else the positions (sorted, unique)."""
    if positions[-1] - positions[0] + 1 == len(positions):
        return slice(int(positions[0]), int(positions[-1]) + 1)
    return positions


def _rank_along(coords, dim):
    """For each coordinate, the index of its position along ``dim`` among the distinct
    positions selected there (0 for the first)."""
    return np.unique(coords[:, dim], return_inverse=True)[1]


def open_source_dataset(file, filename, dataset, prefix=None):
    """The source dataset, or None when its file or dataset is missing (read as fill);
    its file looked for as libhdf5 looks with the virtual ``prefix`` in force (io.prefix)."""
    from .dataset import Dataset
    try:
        target = file if filename == "." else file._external_file(
            filename, source_files(prefix, filename, file._source.path))
        obj = target[dataset]
    except (KeyError, OSError, PurehepError):
        return None
    if not isinstance(obj, Dataset):
        raise FormatError(f"virtual dataset source {dataset!r} in {filename!r} is not a dataset",
                          "object header of a virtual dataset source",
                          obj._ctx.absolute(obj._address))
    return obj
