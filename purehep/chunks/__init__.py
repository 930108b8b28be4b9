"""Chunked storage (spec IV.A.2.i layout class 2; Appendix C chunk indexes).

``ChunkedStorage`` finds the chunks of small reads one at a time (``record_at``: B-trees
descended, only the array index pages holding them read, all kept), and for bigger reads
decodes the dataset's chunk index once, in bulk, into numpy columns (scaled offsets,
addresses, stored sizes, filter masks), builds a lookup from chunk grid position to row, and
reads selections: only the touched chunks are read, filtered chunks are decoded on a thread
pool, and each chunk's overlap is copied into one preallocated output by a kernel.
"""
import os
import threading

import numpy as np

from ..errors import FormatError, UnsupportedFeatureError
from ..format.messages import layout as L
from .cache import ChunkCache
from .table import ChunkTable

INDEX_MODULES = {L.BTREE1: "btree1", L.SINGLE: "single", L.IMPLICIT: "implicit",
                 L.FIXED_ARRAY: "fixed_array", L.EXTENSIBLE_ARRAY: "extensible_array",
                 L.BTREE2: "btree2"}
DENSE_LOOKUP_LIMIT = 1 << 24          # grid cells for a dense position -> row table
SCRATCH_BYTES = 8 << 20               # decoded-chunk scratch per task
SMALL_BOX_CHUNKS = 8                  # boxes touching at most this many chunks: read_box


def init_geometry(store, ctx, layout, shape, maxshape, file_dtype):
    """Set a chunked store's ctx, layout, shape, maxshape, dtype, chunk_shape and rank,
    checking the layout message against the dataspace and datatype."""
    store.ctx = ctx
    store.layout = layout
    store.shape = tuple(int(s) for s in shape)
    store.maxshape = tuple(store.shape if maxshape is None else
                           (None if m is None else int(m) for m in maxshape))
    store.dtype = np.dtype(file_dtype)
    store.chunk_shape = tuple(int(c) for c in layout.chunk_shape)
    store.rank = len(store.chunk_shape)
    if store.rank != len(store.shape):
        raise FormatError(f"chunk rank {store.rank} differs from dataspace rank "
                          f"{len(store.shape)}", "data layout message", layout.offset)
    if len(store.maxshape) != store.rank:
        raise ValueError("maxshape rank differs from shape rank")
    if store.dtype.itemsize != layout.element_size:
        raise FormatError(f"element size {layout.element_size} differs from the datatype "
                          f"size {store.dtype.itemsize}", "data layout message", layout.offset)


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


class ChunkedStorage:
    """Chunked raw data of one dataset.

    ``shape`` is the current dataspace, ``maxshape`` the maximum dimensions (None entries =
    unlimited; default: ``shape``) which fixed-array, implicit and extensible-array indexes
    are laid out by. ``file_dtype`` has itemsize == element size; ``fill`` is a 0-d array of
    it; ``filters`` a FilterPipeline or None; ``threads`` the decode threads (default: cores);
    ``cache_bytes`` the budget of the decoded-chunk cache (0: none, for storage that may change
    under it, as in modify mode).
    """

    def __init__(self, ctx, layout, shape, file_dtype, filters, fill, threads=None,
                 maxshape=None, cache_bytes=0):
        init_geometry(self, ctx, layout, shape, maxshape, file_dtype)
        self.itemsize = self.dtype.itemsize
        self.chunk_nbytes = _prod(self.chunk_shape) * self.itemsize
        self.filters = tuple(filters or ())
        self.fill = np.asarray(fill, self.dtype).reshape(())
        self.threads = max(1, int(threads or os.cpu_count() or 1))
        self.cache = ChunkCache(cache_bytes) if cache_bytes and self.filters else None
        self.index_type = layout.index_type
        if self.index_type not in INDEX_MODULES:
            raise UnsupportedFeatureError(f"chunk index type {self.index_type}")
        self._table = None
        self._lookup = None
        # the index is decoded once however many threads read at once (dask's threaded
        # scheduler); chunks are decoded outside it, in parallel
        self._index_lock = threading.RLock()

    def resize_cache(self, nbytes):
        """Give the decoded-chunk cache a budget of ``nbytes`` (0: none), dropping what no
        longer fits."""
        if not (nbytes and self.filters):
            self.cache = None
        elif self.cache is None:
            self.cache = ChunkCache(nbytes)
        else:
            self.cache.resize(nbytes)

    # --- the index ----------------------------------------------------------------------------
    @property
    def index_name(self):
        return L.INDEX_NAMES.get(self.index_type, f"index type {self.index_type}")

    def _index_call(self, name):
        import importlib
        mod = importlib.import_module(f".{INDEX_MODULES[self.index_type]}", __name__)
        return getattr(mod, name)(self.ctx, self.layout, self.shape, self.maxshape,
                                  self.chunk_nbytes, bool(self.filters))

    @property
    def table(self):
        """The decoded chunk index (a ChunkTable), decoded on first use and kept."""
        if self._table is None:
            with self._index_lock:
                if self._table is None:
                    self._table = self._index_call("load")
        return self._table

    def record_at(self, scaled):
        """(address, stored size, filter mask) of the chunk at grid position ``scaled`` (a
        sequence of ints inside the grid), or None when it is not allocated. From the decoded
        index when there is one; else the index module's ``lookup`` reads only the nodes or
        pages on the way to it (and keeps them)."""
        if self._table is None:
            return self.finder()(scaled)
        row = self.row_at(scaled, self.grid)
        if row < 0:
            return None
        t = self._table
        return int(t.addresses[row]), int(t.sizes[row]), int(t.masks[row])

    def finder(self):
        """``record_at`` by the index module's ``lookup`` alone (made on first use, kept),
        decoded index or not: what the small reads call, one call less a chunk."""
        find = self.__dict__.get("_find")
        if find is None:
            with self._index_lock:
                find = self.__dict__.get("_find")
                if find is None:
                    find = self._find = self._index_call("lookup") or (lambda scaled: None)
        return find

    def chunk_info(self):
        """dict of numpy arrays: offsets (n, rank) in elements, addresses, sizes, filter_masks."""
        t = self.table
        return {"offsets": t.scaled * np.asarray(self.chunk_shape, np.int64).reshape(1, -1),
                "addresses": t.addresses.copy(), "sizes": t.sizes.copy(),
                "filter_masks": t.masks.copy()}

    @property
    def storage_size(self):
        return int(self.table.sizes.sum())

    @property
    def grid(self):
        """Chunks along each dimension of the current extent (fixed for this object)."""
        grid = self.__dict__.get("_grid")
        if grid is None:
            grid = self._grid = tuple(-(-s // c) for s, c in zip(self.shape, self.chunk_shape))
        return grid

    def _lookup_table(self):
        """The lookup ``_build_lookup`` makes, made once (under the index lock)."""
        lookup = self._lookup
        if lookup is None:
            with self._index_lock:
                if self._lookup is None:
                    self._build_lookup()
                lookup = self._lookup
        return lookup

    def _build_lookup(self):
        """Chunk grid position -> table row, for chunks inside the current extent."""
        t = self.table
        grid = self.grid
        inside = np.all(t.scaled < np.asarray(grid, np.int64).reshape(1, -1), axis=1) & \
            np.all(t.scaled >= 0, axis=1) if len(t) else np.zeros(0, bool)
        rows = np.flatnonzero(inside)
        ncells = _prod(grid)
        if ncells == 0 or not len(rows):
            self._lookup = ("empty", None, None)
            return
        if ncells >= 1 << 62:
            raise UnsupportedFeatureError(f"a chunk grid of {ncells} cells")
        keys = np.ravel_multi_index(tuple(t.scaled[rows].T), grid) if self.rank else \
            np.zeros(len(rows), np.int64)
        keys = keys.astype(np.int64)
        if ncells <= max(DENSE_LOOKUP_LIMIT, 4 * len(rows)):
            dense = np.full(ncells, -1, np.int64)
            dense[keys] = rows
            self._lookup = ("dense", dense, None)
        else:
            order = np.argsort(keys, kind="stable")
            self._lookup = ("sorted", keys[order], rows[order])

    def rows_for(self, scaled):
        """Table rows of the chunks at grid positions ``scaled`` (n, rank); -1 = unallocated."""
        kind, a, b = self._lookup_table()
        if kind == "empty" or scaled.shape[0] == 0:
            return np.full(scaled.shape[0], -1, np.int64)
        keys = np.ravel_multi_index(tuple(scaled.T), self.grid).astype(np.int64)
        if kind == "dense":
            return a[keys]
        pos = np.searchsorted(a, keys)
        pos = np.minimum(pos, len(a) - 1)
        return np.where(a[pos] == keys, b[pos], -1)

    def row_of_key(self, key):
        """Table row of the chunk at row-major grid key ``key``; -1 = unallocated."""
        kind, a, b = self._lookup_table()
        if kind == "dense":
            return int(a[key])
        if kind == "empty":
            return -1
        i = int(np.searchsorted(a, key))
        return int(b[i]) if i < len(a) and a[i] == key else -1

    def row_at(self, pos, grid):
        """Table row of the chunk at grid position ``pos`` (a tuple); -1 = unallocated."""
        key = 0
        for p, g in zip(pos, grid):
            key = key * g + p
        return self.row_of_key(key)

    def rows_for_grid(self):
        """Rows of every grid position in row-major order (-1 = unallocated)."""
        kind, a, b = self._lookup_table()
        n = _prod(self.grid)
        if kind == "dense":
            return a
        if kind == "empty":
            return np.full(n, -1, np.int64)
        out = np.full(n, -1, np.int64)
        out[a] = b
        return out

    def rows_past_eof(self, file_size):
        """Rows whose unfiltered chunk bytes would run past the end of the file (cached)."""
        if getattr(self, "_past_eof", None) is None:
            t = self.table
            end = t.addresses.astype(np.float64) + (self.ctx.base_address + self.chunk_nbytes)
            self._past_eof = np.flatnonzero(end > file_size)
        return self._past_eof

    # --- reading ------------------------------------------------------------------------------
    def read(self, coords=None):
        """The selected elements (file dtype); ``coords`` = one sorted unique int64 array per
        dimension, or None for the whole dataset."""
        from .read import read_selection
        return read_selection(self, coords)

    def read_box(self, starts, stops, shape=None):
        """The elements of the box [starts, stops) (file dtype; as an array of ``shape``
        when given), or None when it touches more than ``SMALL_BOX_CHUNKS`` chunks
        (``read`` is the path for those)."""
        return self.box_reader()(starts, stops, shape)

    def box_reader(self):
        """``read_box`` specialised for this storage (see ``read.box_reader``), made once."""
        reader = self.__dict__.get("_box_reader")
        if reader is None:
            from .read import box_reader
            reader = self._box_reader = box_reader(self)
        return reader

    def chunks_touched(self, starts, stops):
        n = 1
        for s, e, c in zip(starts, stops, self.chunk_shape):
            n *= (e - 1) // c - s // c + 1
        return n


