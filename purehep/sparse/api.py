"""The sparse programming model (RFC "Programming Model to Support Sparse Data in HDF5") on
h5py-like datasets: ``defined`` (H5Dget_defined), ``erase`` (H5Derase), ``read_sparse``,
``write_sparse``, ``nnz``, scipy conversions, and the low-level structured chunk access
(H5Dread_struct_chunk, H5Dwrite_struct_chunk, H5Dstruct_chunk_iter)."""
from collections import namedtuple

import numpy as np

from ..format.messages import layout as L

StructChunkInfo = namedtuple("StructChunkInfo", (
    "offset", "address", "size", "section_offsets", "section_sizes", "unfiltered_sizes",
    "filter_masks"))


def _args(sel):
    if sel is None:
        return ()
    return sel if isinstance(sel, tuple) else (sel,)


class SparseDatasetMixin:
    """Methods of sparse datasets; mixed into purehep.Dataset."""

    @property
    def is_sparse(self):
        node = getattr(self, "_node", None)
        if node is not None:
            return node.layout == "sparse"
        lay = self._layout
        return lay.layout_class == L.STRUCTURED and bool(lay.struct_type & L.STRUCT_SPARSE)

    def _sparse_storage(self):
        if not self.is_sparse:
            raise TypeError(f"{self.name} is not a sparse dataset")
        return self._storage.sparse

    def _sparse_coords(self, sel):
        """None (everything) or one sorted unique int64 array per dimension."""
        from ..hl import selections
        args = _args(sel)
        if args in ((), (Ellipsis,)):
            return None
        s = selections.select(self.shape, args)
        if s.is_full:
            return None
        return s.coords()

    # --- reading ------------------------------------------------------------------------
    def defined(self, sel=()):
        """Coordinates (n, ndim) int64, in row-major order, of the defined elements in the
        selection (RFC H5Dget_defined); the whole dataset by default."""
        st = self._sparse_storage()
        return st.read_sparse(self._sparse_coords(sel))[0]

    def read_sparse(self, sel=()):
        """(coords (n, ndim) int64 in dataset coordinates, values (n,)) of the defined
        elements in the selection, without materialising the dense block."""
        st = self._sparse_storage()
        coords, raw = st.read_sparse(self._sparse_coords(sel))
        return coords, self._convert(raw, ())

    @property
    def nnz(self):
        """Number of defined elements."""
        return self._sparse_storage().nnz()

    def coo_array(self, sel=()):
        """A scipy.sparse.coo_array of a 2-D sparse dataset (or selection box), entries in
        row-major order."""
        return self._scipy(sel, "coo")

    def csr_array(self, sel=()):
        """A scipy.sparse.csr_array of a 2-D sparse dataset (or selection box); the whole
        dataset is read straight into CSR order (purehep.sparse.csr)."""
        return self._scipy(sel, "csr")

    def _scipy(self, sel, fmt):
        import scipy.sparse as sp
        if len(self.shape) != 2:
            raise ValueError("scipy sparse arrays are 2-D")
        from ..hl import selections
        args = _args(sel)
        s = selections.select(self.shape, args) if args not in ((), (Ellipsis,)) else None
        if s is None:
            from .csr import read_csr
            data, indices, indptr = read_csr(self._sparse_storage())
            arr = sp.csr_array((_native(self._convert(data, ())), indices, indptr),
                               shape=self.shape)
            return arr if fmt == "csr" else arr.tocoo()
        coords, vals = self.read_sparse(sel)
        axes = s.coords()
        shape = tuple(len(a) for a in axes)
        r = np.searchsorted(axes[0], coords[:, 0])
        c = np.searchsorted(axes[1], coords[:, 1])
        arr = sp.coo_array((_native(vals), (r, c)), shape=shape)
        return arr.tocsr() if fmt == "csr" else arr

    # --- writing ------------------------------------------------------------------------
    def _sparse_store(self):
        from .store import SparseStore
        node = getattr(self, "_node", None)
        if node is None:
            raise ValueError("Unable to write (no write intent on file)")
        if not isinstance(node.store, SparseStore):
            raise TypeError(f"{self.name} is not a sparse dataset")
        return node.store

    def write_sparse(self, coords, values=None):
        """Define elements from a coordinate list (``coords`` (n, ndim), ``values`` (n,)),
        a scipy.sparse matrix/array or a pydata ``sparse.COO`` array (offset by nothing:
        their shape must fit the dataset)."""
        store = self._sparse_store()
        if values is None:
            coords, values = _from_sparse_object(coords)
        store.write_points(np.asarray(coords, np.int64).reshape(len(values) if np.ndim(values)
                                                                 else -1, len(self.shape)),
                           np.asarray(values, store.dtype).reshape(-1))

    def erase(self, sel=()):
        """Undefine the selected elements (RFC H5Derase); reads give the fill value there."""
        store = self._sparse_store()
        args = _args(sel)
        if args in ((), (Ellipsis,)):
            args = (Ellipsis,)
        store.erase(args)

    def erase_points(self, coords):
        self._sparse_store().erase_points(coords)

    # --- structured chunks (RFC H5Dstruct_chunk_iter / read / write) ----------------------
    def struct_chunk_iter(self):
        """Yield StructChunkInfo per allocated chunk: logical offset, address, stored size,
        section offsets and (stored) sizes, unfiltered sizes and filter masks."""
        st = self._sparse_storage()
        info = st.chunk_info()
        for i in range(len(info["addresses"])):
            offs = [int(x) for x in info["section_offsets"][i]]
            size = int(info["sizes"][i])
            sizes = tuple(b - a for a, b in zip(offs, offs[1:] + [size]))
            yield StructChunkInfo(tuple(int(x) for x in info["offsets"][i]),
                                  int(info["addresses"][i]), size, tuple(offs), sizes,
                                  None if info["unfiltered_sizes"] is None else
                                  tuple(int(x) for x in info["unfiltered_sizes"][i]),
                                  None if info["filter_masks"] is None else
                                  tuple(int(x) for x in info["filter_masks"][i]))

    def get_struct_chunk_info(self, offset):
        for info in self.struct_chunk_iter():
            if info.offset == tuple(int(x) for x in offset):
                return info
        return None

    def read_struct_chunk(self, offset):
        """(sections as stored (filtered, with checksums), filter masks) of the chunk at
        logical ``offset`` (RFC H5Dread_struct_chunk); None if it is not allocated."""
        from ..format import structured_chunk as SC
        st = self._sparse_storage()
        scaled = [int(o) // c for o, c in zip(offset, st.chunk_shape)]
        if any(int(o) % c for o, c in zip(offset, st.chunk_shape)):
            raise ValueError(f"{tuple(offset)} is not a chunk origin")
        row = st.row_of(scaled)
        if row < 0:
            return None
        secs = SC.split(st.raw_chunk(row), st.table.offsets[row], st._where(row))
        masks = (0,) * len(secs) if st.table.masks is None else \
            tuple(int(m) for m in st.table.masks[row])
        return [bytes(s) for s in secs], masks

    def write_struct_chunk(self, offset, sections, filter_masks=None, unfiltered_sizes=None):
        """Store a chunk given its sections exactly as they go to the file (filtered when
        the section has a pipeline, section 0 with its checksum; RFC H5Dwrite_struct_chunk)."""
        store = self._sparse_store()
        if any(int(o) % c for o, c in zip(offset, store.chunks)):
            raise ValueError(f"{tuple(offset)} is not a chunk origin")
        scaled = tuple(int(o) // c for o, c in zip(offset, store.chunks))
        store.write_raw(scaled, sections, filter_masks, unfiltered_sizes)


def _native(values):
    """``values`` in native byte order (scipy.sparse takes no other)."""
    return values.astype(values.dtype.newbyteorder("="), copy=False)


def _from_sparse_object(obj):
    """(coords, values) of a scipy.sparse matrix/array or a pydata sparse.COO."""
    if hasattr(obj, "tocoo") and hasattr(obj, "nnz") and not hasattr(obj, "coords"):
        coo = obj.tocoo()
        return np.stack([np.asarray(coo.row), np.asarray(coo.col)], axis=1), np.asarray(coo.data)
    if hasattr(obj, "coords") and hasattr(obj, "data"):
        c = np.asarray(obj.coords)
        if c.ndim == 2 and c.shape[0] == np.ndim(obj) if hasattr(obj, "ndim") else True:
            c = c.T if c.shape[0] == getattr(obj, "ndim", c.shape[0]) and c.shape[1] == \
                len(np.asarray(obj.data)) else c
        return c, np.asarray(obj.data)
    raise TypeError("write_sparse needs coordinates and values, a scipy.sparse object or a "
                    "sparse.COO array")
