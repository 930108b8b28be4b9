"""``Dataset.id``: the part of h5py's low-level DatasetID that deals with stored chunks —
where each chunk lies in the file (the chunk index, spec IV.A.2.i and Appendix C), and
reading or writing a chunk's stored bytes as they are (filters not applied), as
H5Dread_chunk / H5Dwrite_chunk do. Byte offsets are absolute file offsets, as libhdf5 gives.
Also the dataset's stored datatype (``get_type``, an h5t.TypeID), its lists (h5p), and reading
and writing the elements dataspaces select (H5Dread / H5Dwrite with purehep.h5s spaces).
"""
import itertools
import os
from collections import namedtuple

import numpy as np

from .serialize import serialized

StoreInfo = namedtuple("StoreInfo", ("chunk_offset", "filter_mask", "byte_offset", "size"))


@serialized("_ds")
class DatasetID:
    def __init__(self, dataset):
        self._ds = dataset

    @property
    def valid(self):
        """h5py's ``ObjectID.valid``: false once the dataset's file, or this id, is closed."""
        return bool(self._ds)

    def __bool__(self):
        return bool(self._ds)

    def close(self):
        """Close this handle: the Dataset it is the id of is closed (the dataset opened
        again is not), as h5py's ``id.close()`` closes its object."""
        self._ds.__dict__["_closed"] = True

    _close = close

    def get_type(self):
        """The stored datatype as h5py's TypeID (its ``get_class()``), see purehep.h5t;
        committed when the Datatype message is shared with a committed datatype's header."""
        from ..format.messages import committed_address
        from ..h5t import type_id
        raw = self._ds._oh.first(0x03)
        return type_id(self._ds._type,
                       committed=committed_address(self._ds._ctx, raw) is not None)

    def __eq__(self, other):
        """Ids of one object compare equal, as h5py's ObjectID do."""
        return isinstance(other, DatasetID) and other._ds == self._ds

    def __hash__(self):
        return hash(self._ds)

    def get_space(self):
        """The dataset's dataspace (purehep.h5s.SpaceID), everything selected."""
        from ..h5s import of_shape
        return of_shape(self._ds.shape, self._ds.maxshape)

    def get_create_plist(self):
        """The dataset's creation settings as stored (purehep.h5p.PropDCID): fill and
        allocation times and the fill value of its Fill Value message (libhdf5's defaults
        without one: if set, late, none), its layout class and chunk shape, its filters
        (names as stored, else the known ones), its object header's settings."""
        from ..filters import KNOWN_NAMES
        from ..h5d import ALLOC_TIME_LATE, FILL_TIME_IFSET
        from ..h5p import PropDCID
        from .objid import object_settings
        ds = self._ds
        fill = ds._msg(0x05, required=False)
        times = (fill.fill_time, fill.alloc_time) if fill is not None else \
            (FILL_TIME_IFSET, ALLOC_TIME_LATE)
        value = np.array([ds.fillvalue], ds.dtype) \
            if fill is not None and fill.defined and fill.value is not None else None
        filters = [(f.id, f.flags, tuple(f.client_data),
                    (f.name or KNOWN_NAMES.get(f.id, "")).encode())
                   for f in ds._pipeline.filters] if ds._pipeline is not None else []
        return PropDCID(*times, ds._layout.layout_class, ds.chunks, value, filters,
                        **object_settings(ds._oh))

    def get_access_plist(self):
        """The dataset's access settings (purehep.h5p.PropDAID): its own chunk cache when
        it was given one (``rdcc_*`` of create_dataset / require_dataset), else its file's,
        and the external file and virtual source prefixes in force (io.prefix: expanded, as
        libhdf5 reports them; empty when none)."""
        from ..h5p import PropDAID
        own = self._ds.__dict__.get("_chunk_cache")
        plist = PropDAID(own or self._ds._file.get_access_plist().get_cache()[1:])
        plist.set_efile_prefix(os.fsencode(self._ds._prefix("efile") or ""))
        plist.set_virtual_prefix(os.fsencode(self._ds._prefix("virtual") or ""))
        return plist

    # -- reading and writing through dataspaces ------------------------------------------------
    @property
    def shape(self):
        return self._ds.shape

    @property
    def rank(self):
        return len(self._ds.shape or ())

    @property
    def dtype(self):
        return self._ds.dtype

    def flush(self):
        self._ds.flush()

    def refresh(self):
        self._ds.refresh()

    def get_space_status(self):
        """H5Dget_space_status: 0 no storage allocated, 1 some chunks, 2 all of it."""
        st = getattr(self._ds._storage, "chunked", None)
        if st is not None:
            stored = len(self._order(st))
            return 0 if not stored else 2 if stored == int(np.prod(st.grid)) else 1
        layout = self._ds._layout
        if layout.layout_class == 1:
            return 0 if layout.address is None else 2
        return 2

    def set_extent(self, shape):
        """H5Dset_extent: the dataset's new shape (within its maximum shape)."""
        self._ds.resize(tuple(shape))

    def read(self, mspace, fspace, arr_obj, mtype=None, dxpl=None):
        """H5Dread: the elements ``fspace`` selects in the dataset (h5s.ALL: all; points in
        their order, else row-major), into the elements ``mspace`` selects in the array
        ``arr_obj`` (C-contiguous, writable; h5s.ALL: the file selection over the dataset's
        shape), converted to its dtype (or to ``mtype``'s)."""
        from ..h5s import ALL, SEL_POINTS, selected_blocks
        if fspace is not ALL and fspace.get_select_type() == SEL_POINTS:
            lo, hi = fspace.get_select_bounds()
            canvas = self._ds[tuple(slice(a, b + 1) for a, b in zip(lo, hi))]
            values = canvas[tuple(c - a for c, a in zip(fspace.coordinates(), lo))]
        else:
            box, mask, blocks = selected_blocks(fspace, self._ds.shape)
            canvas = np.empty(mask.shape if mask is not None else (0,), self._ds.dtype)
            for block in blocks:
                canvas[block] = self._ds[tuple(_shift(block, box))]
            values = canvas[mask] if mask is not None else canvas
        view, index = _memory(arr_obj, mspace, fspace, self._ds.shape, len(values), "read")
        view[index] = values.astype(mtype.dtype) if mtype is not None else values

    def write(self, mspace, fspace, arr_obj, mtype=None, dxpl=None):
        """H5Dwrite: the elements ``mspace`` selects in ``arr_obj`` (h5s.ALL: as read), in
        their order, to the elements ``fspace`` selects in the dataset; only the selected
        blocks (or points) are written."""
        from ..h5s import ALL, SEL_POINTS, selected_blocks
        from ..write.softfloat import rounded
        points = fspace is not ALL and fspace.get_select_type() == SEL_POINTS
        if points:
            count = fspace.get_select_npoints()
        else:
            box, mask, blocks = selected_blocks(fspace, self._ds.shape)
            count = int(mask.sum()) if mask is not None else 0
        view, index = _memory(arr_obj, mspace, fspace, self._ds.shape, count, "write")
        values = view[index]
        if self._ds._type.kind == "softfloat":   # converted from the memory type, as
            values = rounded(values, self._ds._type)     # libhdf5 converts it
        if points:
            for coord, value in zip(zip(*fspace.coordinates()), values):
                self._ds[tuple(int(c) for c in coord)] = value
        elif count:
            canvas = np.empty(mask.shape, self._ds.dtype)
            canvas[mask] = values
            for block in blocks:
                self._ds[tuple(_shift(block, box))] = canvas[block]

    def get_offset(self):
        """H5Dget_offset: the absolute file offset of a contiguous dataset's data, None when
        it has no storage allocated or is not contiguous."""
        layout = self._ds._layout
        if layout.layout_class != 1 or layout.address is None:
            return None
        return self._ds._ctx.absolute(layout.address)

    def get_storage_size(self):
        """Bytes of file space the raw data occupies."""
        return self._ds._storage.storage_size

    # -- the chunk index -------------------------------------------------------------------
    def _chunked(self):
        st = getattr(self._ds._storage, "chunked", None)
        if st is None:
            sparse = " (its structured chunks: struct_chunk_iter, get_struct_chunk_info)" \
                if self._ds.is_sparse else ""
            raise TypeError(f"{self._ds.name!r} is not a chunked dataset{sparse}")
        return st

    def _order(self, st):
        """Table rows inside the current extent, in row-major order of their positions."""
        scaled = st.table.scaled
        grid = np.asarray(st.grid, np.int64)
        rows = np.flatnonzero(np.all((scaled >= 0) & (scaled < grid), axis=1)) if \
            len(scaled) else np.zeros(0, np.int64)
        return rows[np.lexsort(scaled[rows].T[::-1])] if len(rows) else rows

    def _rows(self, st, rows):
        """(grid positions, filter masks, absolute byte offsets, stored sizes) of ``rows``."""
        t = st.table
        sizes = t.sizes[rows] if st.filters else np.full(len(rows), st.chunk_nbytes, np.int64)
        return (t.scaled[rows], t.masks[rows],
                t.addresses[rows] + np.uint64(st.ctx.absolute(0)), sizes)

    def _info(self, st, row):
        scaled, mask, address, size = (a[0] for a in self._rows(st, [row]))
        offset = tuple(int(p) * c for p, c in zip(scaled, st.chunk_shape))
        return StoreInfo(offset, int(mask), int(address), int(size))

    def chunk_table(self):
        """purehep extension: every stored chunk inside the current extent at once, in
        chunk_iter's order, as numpy arrays: grid positions (n, rank) (chunk offsets divided
        by the chunk shape), filter masks, absolute byte offsets and stored sizes."""
        st = self._chunked()
        return self._rows(st, self._order(st))

    def get_num_chunks(self, space=None):
        _whole(space)
        return len(self._order(self._chunked()))

    def get_chunk_info(self, index, space=None):
        _whole(space)
        st = self._chunked()
        order = self._order(st)
        if not 0 <= index < len(order):
            raise IndexError(f"chunk index {index} out of range ({len(order)} chunks stored)")
        return self._info(st, int(order[index]))

    def get_chunk_info_by_coord(self, coord):
        """The chunk holding element ``coord``; byte_offset None and size 0 when it is not
        allocated."""
        st = self._chunked()
        pos = _position(st, coord)
        row = st.row_at(pos, st.grid)
        if row < 0:
            return StoreInfo(tuple(p * c for p, c in zip(pos, st.chunk_shape)), 0, None, 0)
        return self._info(st, row)

    def chunk_iter(self, callback):
        shape = self._chunked().chunk_shape
        for scaled, mask, address, size in zip(*self.chunk_table()):
            callback(StoreInfo(tuple(int(p) * c for p, c in zip(scaled, shape)), int(mask),
                               int(address), int(size)))

    # -- stored bytes ----------------------------------------------------------------------
    def read_direct_chunk(self, offsets, dxpl=None, out=None):
        """(filter mask, the chunk's stored bytes) of the chunk starting at ``offsets``; with
        ``out`` (a writable, C-contiguous, one-dimensional buffer of bytes, large enough, as
        h5py checks it): read into it, the bytes given back as a memoryview of it."""
        st = self._chunked()
        info = self.get_chunk_info_by_coord(_aligned(st, offsets))
        if info.byte_offset is None:
            raise ValueError(f"the chunk at {tuple(offsets)} is not allocated")
        data = st.ctx.source.read(info.byte_offset, info.size, "raw data chunk")
        if out is None:
            return info.filter_mask, bytes(data)
        view = _byte_buffer(out)
        if view.nbytes < info.size:
            raise ValueError(f"out buffer is only {view.nbytes} bytes, {info.size} bytes "
                             f"required")
        view.cast("B")[:info.size] = data
        return info.filter_mask, view[:info.size]

    def write_direct_chunk(self, offsets, data, filter_mask=0, dxpl=None):
        """Store ``data`` as the chunk starting at ``offsets``, as it is (already filtered,
        with ``filter_mask`` naming the filters skipped); write and modify modes."""
        ds = self._ds
        if ds._node is None:
            raise ValueError("Unable to write chunk (no write intent on file)")
        node = ds._node
        if node.layout != "chunked":
            raise TypeError(f"{ds.name!r} is not a chunked dataset")
        scaled = tuple(o // c for o, c in zip(_aligned(node, offsets), node.chunks))
        if any(not 0 <= s < -(-n // c) for s, n, c in zip(scaled, node.shape, node.chunks)):
            raise ValueError(f"chunk offset {tuple(offsets)} lies outside the dataset")
        node.store.write_raw(scaled, np.frombuffer(bytes(data), np.uint8), int(filter_mask))
        ds._file._writer.touch()


# Cython's names of the buffer formats h5py's unsigned char buffer refuses
_C_TYPES = {"b": "signed char", "h": "short", "H": "unsigned short", "i": "int",
            "I": "unsigned int", "l": "long", "L": "unsigned long", "q": "long long",
            "Q": "unsigned long long", "e": "half", "f": "float", "d": "double",
            "g": "long double", "Zf": "complex float", "Zd": "complex double"}


def _byte_buffer(out):
    """``out`` as a memoryview of bytes, refused as h5py's ``unsigned char[::1]`` refuses
    it (BufferError: read-only; ValueError: not C-contiguous, not one-dimensional, items
    other than bytes)."""
    view = memoryview(out)
    if view.readonly:
        raise BufferError("Object is not writable.")
    if not view.c_contiguous:
        raise ValueError(f"{type(out).__name__} is not C-contiguous")
    if view.ndim != 1:
        raise ValueError(f"Buffer has wrong number of dimensions (expected 1, got "
                         f"{view.ndim})")
    fmt = view.format.lstrip("@=<>!")
    if fmt not in ("B", "?"):
        got = "a string" if fmt.endswith("c") or fmt.endswith("s") else \
            f"'{_C_TYPES.get(fmt, fmt)}'"
        raise ValueError(f"Buffer dtype mismatch, expected 'unsigned char' but got {got}")
    return view


def _shift(block, box):
    """Slices of ``block`` (relative to ``box``) in the dataset's coordinates."""
    return (slice(box_s.start + (b.start or 0),
                  box_s.start + (b.stop if b.stop is not None else box_s.stop - box_s.start))
            for b, box_s in zip(block, box))


def _memory(arr, mspace, fspace, shape, count, what):
    """(the array viewed with the memory dataspace's shape, the selected elements' index in
    the order they are taken) for H5Dread / H5Dwrite, checked: h5py's TypeError for an array it cannot use, libhdf5's OSError for
    selections of different sizes; ValueError for an array of another size than its
    dataspace (where libhdf5 would read or write past it)."""
    from ..h5s import ALL
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"Argument 'arr_obj' has incorrect type (expected numpy.ndarray, "
                        f"got {type(arr).__name__})")
    if not arr.flags.c_contiguous or (what == "read" and not arr.flags.writeable):
        raise TypeError("Array must be C-contiguous" + (" and writable" * (what == "read")))
    space = fspace if mspace is ALL else mspace
    mshape = tuple(shape) if space is ALL else space.get_simple_extent_dims()
    if arr.size != int(np.prod(mshape, dtype=np.int64)):
        raise ValueError(f"the array's {arr.size} elements are not the {mshape} of its "
                         f"dataspace")
    view = arr.reshape(mshape)
    if space is ALL:
        index, selected = (slice(None),), view.size
        view = view.reshape(-1)
    else:
        index, selected = space.coordinates(), space.get_select_npoints()
    if selected != count:
        raise OSError(f"Can't synchronously {what} data (src and dest dataspaces have "
                      f"different number of elements selected)")
    return view, index


def _whole(space):
    if space is not None:
        raise TypeError("purehep counts the chunks of the whole dataset (no dataspace "
                        "selections)")


def _position(st, coord):
    coord = tuple(int(c) for c in coord)
    if len(coord) != len(st.chunk_shape) or \
            any(not 0 <= c < n for c, n in zip(coord, st.shape)):
        raise ValueError(f"coordinate {coord} lies outside the dataset of shape {st.shape}")
    return tuple(c // s for c, s in zip(coord, st.chunk_shape))


def _aligned(st, offsets):
    """``offsets`` checked to be the first element of a chunk (libhdf5 requires it)."""
    shape = getattr(st, "chunk_shape", None) or st.chunks
    offsets = tuple(int(o) for o in offsets)
    if len(offsets) != len(shape) or any(o % c for o, c in zip(offsets, shape)):
        raise ValueError(f"offset {offsets} is not the start of a chunk of shape {shape}")
    return offsets


def iter_chunks(ds, sel=None):
    """h5py's ``Dataset.iter_chunks``: for each chunk the selection (ints and slices; steps
    ignored) touches, in row-major order, the slices of the selection inside that chunk."""
    chunks, shape = ds.chunks, ds.shape
    if not chunks:
        raise TypeError("Chunked dataset required")
    if sel is None:
        sel = tuple(slice(0, n) for n in shape)
    sel = list(sel) if isinstance(sel, tuple) else [sel]
    if len(sel) != len(shape):
        raise ValueError("Invalid selection - selection region must have same rank as dataset")
    bounds = []
    for s, n in zip(sel, shape):
        lo, hi = (s, s + 1) if isinstance(s, (int, np.integer)) else (s.start or 0, s.stop or n)
        if lo < 0 or hi > n or hi <= lo:
            raise ValueError("Invalid selection - selection region must be within dataset "
                             "space")
        bounds.append((int(lo), int(hi)))
    ranges = [range(lo // c, (hi - 1) // c + 1) for (lo, hi), c in zip(bounds, chunks)]
    return (tuple(slice(max(lo, p * c), min(hi, p * c + c), 1)
                  for p, c, (lo, hi) in zip(pos, chunks, bounds))
            for pos in itertools.product(*ranges))
