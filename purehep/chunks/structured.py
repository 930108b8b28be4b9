"""Reading sparse datasets (layout class 4, structured chunk type bit 0): the chunk index, the
sections of each chunk, and selections read densely (fill value where nothing is defined) or
as coordinates and values, without materialising the dense block."""
import math
import os

import numpy as np

from ..errors import FormatError, UnsupportedFeatureError
from ..format.messages import layout as L
from ..format import sparse_sections, structured_chunk as SC
from ..io import memory
from . import init_geometry, structured_index as IX

SECTION_SELECTION, SECTION_VALUES = 0, 1


def pipelines_of(filters, nsections):
    """{section: filters} from a dataset's filter pipeline message: version 3 gives one per
    section; an ordinary (version 1/2) pipeline applies to every section (RFC programming
    model: H5Pset_deflate and the like act on all sections)."""
    if filters is None:
        return {}
    if hasattr(filters, "sections"):
        return {n: tuple(f) for n, f in filters.sections if f}
    flist = tuple(filters)
    return {i: flist for i in range(nsections)} if flist else {}


class SparseStorage:
    """Structured-chunk (sparse) raw data of one dataset."""

    converted = False

    def __init__(self, ctx, layout, shape, maxshape, file_dtype, filters, fill, threads=None):
        if not layout.sparse:
            raise UnsupportedFeatureError(f"structured chunk type {layout.struct_type:#x} "
                                          "(only sparse chunks, bit 0, are implemented)")
        if layout.struct_type & L.STRUCT_VL or layout.nsections != 2:
            raise UnsupportedFeatureError("sparse chunks with variable-length data (three "
                                          "sections)")
        init_geometry(self, ctx, layout, shape, maxshape, file_dtype)
        self.pipelines = pipelines_of(filters, layout.nsections)
        self.filtered = bool(self.pipelines)
        if layout.index_type == L.SINGLE and self.filtered and \
                not layout.flags & L.SINGLE_INDEX_WITH_FILTER:
            raise FormatError("filtered single-chunk structured layout without flag bit 1",
                              "data layout message", layout.offset)
        self.metadata_sections = tuple(layout.metadata_sections)
        self.fill = np.asarray(fill, self.dtype).reshape(())
        self.threads = max(1, int(threads or os.cpu_count() or 1))    # (structured_csr)
        self._table = None

    # --- index --------------------------------------------------------------------------------
    @property
    def table(self):
        if self._table is None:
            self._table = IX.load(self.ctx, self.layout, self.shape, self.maxshape, self.filtered)
        return self._table

    @property
    def storage_size(self):
        return int(self.table.sizes.sum())

    def chunk_info(self):
        """Per allocated chunk (RFC H5Dstruct_chunk_iter): offsets (n, rank) in elements,
        addresses, sizes, section offsets (n, N) (section 0 at 0), unfiltered section sizes
        and filter masks (n, N) (None when the dataset is unfiltered)."""
        t = self.table
        n = len(t)
        secoff = np.concatenate([np.zeros((n, 1), np.uint64), t.offsets], axis=1)
        return {"offsets": t.scaled * np.asarray(self.chunk_shape, np.int64).reshape(1, -1),
                "addresses": t.addresses.copy(), "sizes": t.sizes.copy(),
                "section_offsets": secoff,
                "unfiltered_sizes": None if t.unfiltered is None else t.unfiltered.copy(),
                "filter_masks": None if t.masks is None else t.masks.copy()}

    def row_of(self, scaled):
        t = self.table
        hit = np.flatnonzero(np.all(t.scaled == np.asarray(scaled, np.int64).reshape(1, -1),
                                    axis=1))
        return int(hit[0]) if len(hit) else -1

    # --- chunks -------------------------------------------------------------------------------
    def raw_chunk(self, row):
        t = self.table
        addr, size = int(t.addresses[row]), int(t.sizes[row])
        return bytes(self.ctx.read(addr, size, "structured chunk"))

    def _where(self, row):
        t = self.table
        origin = tuple(int(s) * c for s, c in zip(t.scaled[row], self.chunk_shape))
        return (f"structured chunk at {origin}", self.ctx.absolute(int(t.addresses[row])))

    def sections(self, row, raw=None):
        """The unfiltered sections of chunk ``row`` (checksums verified and removed)."""
        t = self.table
        if raw is None:
            raw = self.raw_chunk(row)
        return SC.disassemble(raw, t.offsets[row], self.metadata_sections,
                              None if t.unfiltered is None else t.unfiltered[row],
                              None if t.masks is None else t.masks[row], self.pipelines,
                              self.dtype.itemsize, self._where(row),
                              verify=self.ctx.verify_checksums, limits=self.section_limits)

    @property
    def section_limits(self):
        """The largest unfiltered sizes of sections 0 and 1 of one chunk: an encoded selection
        of every element (as points or one-element blocks, 8-byte coordinates, plus header
        and checksum) and every element's value."""
        n = math.prod(self.chunk_shape)
        return 16 * self.rank * n + 64, n * self.dtype.itemsize

    def chunk_defined(self, row):
        """(lin, values) of chunk ``row``: row-major indices within the chunk in selection
        order and the values (file dtype)."""
        secs = self.sections(row)
        where = self._where(row)
        data = secs[SECTION_VALUES]
        if len(secs[SECTION_SELECTION]) == 0:
            # an allocated chunk with an empty section 0: every element defined (no encoded
            # selection, seed RFC 2.1.1; the prototype's lookup; spec-fixtures/sparse/README
            # decision 9a); nothing defined is an unallocated chunk or an encoded "none"
            n = math.prod(self.chunk_shape)
        else:
            _, lin = sparse_sections.decode_section0(secs[SECTION_SELECTION], self.chunk_shape,
                                                     where)
            n = len(lin)
        if len(data) != n * self.dtype.itemsize:     # (checked before the indexes are made)
            raise FormatError(f"value section of {len(data)} bytes for {n} defined "
                              f"elements of {self.dtype.itemsize} bytes", *where)
        if len(secs[SECTION_SELECTION]) == 0:
            lin = np.arange(n, dtype=np.int64)
        return lin, np.frombuffer(data, self.dtype)

    # --- selections ---------------------------------------------------------------------------
    def _rows_touching(self, coords):
        t = self.table
        if coords is None:
            return np.arange(len(t))
        keep = np.ones(len(t), bool)
        for d, c in enumerate(coords):
            touched = np.unique(c // self.chunk_shape[d])
            keep &= np.isin(t.scaled[:, d], touched)
        return np.flatnonzero(keep)

    def iter_defined(self, coords=None):
        """Yield (global coords (k, rank), positions in the selection (k, rank) or None,
        values) per touched chunk, for defined elements inside the extent and ``coords`` (one
        sorted unique int64 array per dimension, or None for everything)."""
        t = self.table
        shape = np.asarray(self.shape, np.int64)
        chunk = np.asarray(self.chunk_shape, np.int64)
        for row in self._rows_touching(coords):
            lin, vals = self.chunk_defined(row)
            if not len(lin):
                continue
            local = np.stack(np.unravel_index(lin, self.chunk_shape), axis=1).astype(np.int64) \
                if self.rank else np.zeros((len(lin), 0), np.int64)
            g = local + t.scaled[row] * chunk
            ok = np.all(g < shape, axis=1)
            pos = None
            if coords is not None:
                pos = np.empty_like(g)
                for d, c in enumerate(coords):
                    p = np.searchsorted(c, g[:, d])
                    pc = np.minimum(p, max(len(c) - 1, 0))
                    ok &= (p < len(c)) & (c[pc] == g[:, d]) if len(c) else False
                    pos[:, d] = p
            if not ok.all():
                g, vals = g[ok], vals[ok]
                pos = pos[ok] if pos is not None else None
            if len(g):
                yield g, pos, vals

    def read(self, coords=None):
        """Dense block of the selection (file dtype), the fill value where undefined."""
        shape = self.shape if coords is None else tuple(len(c) for c in coords)
        out = memory.full(shape, self.fill, self.dtype, "sparse dataset read")
        for g, pos, vals in self.iter_defined(coords):
            where = g if pos is None else pos
            out[tuple(where.T)] = vals
        return out

    def read_sparse(self, coords=None, values=True):
        """(coords (n, rank) int64 in row-major order, values (n,) file dtype)."""
        parts_c, parts_v = [], []
        for g, pos, vals in self.iter_defined(coords):
            parts_c.append(g)
            parts_v.append(vals)
        if not parts_c:
            return np.zeros((0, self.rank), np.int64), np.zeros(0, self.dtype)
        c = np.concatenate(parts_c)
        v = np.concatenate(parts_v)
        if len(parts_c) > 1 or self.table.scaled.shape[0] > 1:
            key = np.ravel_multi_index(tuple(c.T), self.shape) if self.rank else \
                np.zeros(len(c), np.int64)
            order = np.argsort(key, kind="stable")
            c, v = c[order], v[order]
        return c, v

    def nnz(self):
        n = 0
        for g, _, _ in self.iter_defined(None):
            n += len(g)
        return n


class SparseAdapter:
    """Adapts SparseStorage to the hl read interface (canonical selections)."""

    def __init__(self, sparse):
        self.sparse = sparse
        self.storage_size = sparse.storage_size

    def read(self, sel, copy=True):
        if sel is None or sel.is_full:
            return self.sparse.read(None)
        return self.sparse.read(sel.coords())
