"""The sparse programming model (RFC "Programming Model to Support Sparse Data in HDF5") on
h5py-like datasets: ``defined`` (H5Dget_defined), ``erase`` (H5Derase), ``read_sparse``,
``write_sparse``, ``nnz``, scipy conversions, and the low-level structured chunk access
(H5Dread_struct_chunk, H5Dwrite_struct_chunk, H5Dstruct_chunk_iter); and create_dataset's
sparse datasets (``make_sparse_node``).

The storage itself is core: read by purehep.chunks.structured, written by
purehep.write.structured (layout class 4, structured chunks)."""
from collections import namedtuple

import numpy as np

from .. import selections
from ..errors import UnsupportedFeatureError
from ..format.messages import layout as L
from ..format.messages.filter_pipeline import FilterInfo
from .creation import _filters

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
        dataset is read straight into CSR order (chunks/structured_csr.py)."""
        return self._scipy(sel, "csr")

    def _scipy(self, sel, fmt):
        import scipy.sparse as sp
        if len(self.shape) != 2:
            raise ValueError("scipy sparse arrays are 2-D")
        args = _args(sel)
        s = selections.select(self.shape, args) if args not in ((), (Ellipsis,)) else None
        if s is None:
            from ..chunks.structured_csr import read_csr
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
        from ..write.structured import SparseStore
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


# --- creating ------------------------------------------------------------------------------------

def _section_pipeline(writer, spec, dtype, chunks):
    """Filters of one section from a section_filters value: a compression name, a dict of
    create_dataset filter keywords, or a sequence of FilterInfo / (id, client data) pairs."""
    if spec is None:
        return ()
    if isinstance(spec, (str, int)):
        spec = {"compression": spec}
    if isinstance(spec, dict):
        kw = dict(compression=None, compression_opts=None, shuffle=None, fletcher32=None,
                  scaleoffset=None)
        unknown = set(spec) - set(kw)
        if unknown:
            raise TypeError(f"unknown section filter options {sorted(unknown)}")
        kw.update(spec)
        return tuple(_filters(writer, dtype, chunks, kw["compression"], kw["compression_opts"],
                              kw["shuffle"], kw["fletcher32"], kw["scaleoffset"], None))
    out = []
    for f in spec:
        if isinstance(f, FilterInfo):
            out.append(f)
        else:
            fid, cd = f
            out.append(FilterInfo(int(fid), 0, "", tuple(int(v) for v in cd)))
    return tuple(out)


def make_sparse_node(writer, shape, dtype, data, chunks, maxshape, compression,
                     compression_opts, shuffle, fletcher32, fillvalue, section_filters,
                     chunk_index, track_times, track_order):
    """A DatasetNode with sparse structured-chunk storage."""
    from ..write import model, values as V
    from ..write.policy import guess_chunk
    from ..write.structured import SparseStore, choose_index
    dtype = np.dtype("f4") if dtype is None and data is None else dtype
    if data is not None:
        arr = np.asarray(data)
        dtype = arr.dtype if dtype is None else np.dtype(dtype)
        shape = arr.shape if shape is None else shape
    dtype = np.dtype(dtype)
    if shape is None:
        raise TypeError("sparse datasets need a shape")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if not shape:
        raise ValueError("sparse datasets need at least one dimension")
    if V.needs_heap(dtype) or dtype.kind in "OU":
        raise UnsupportedFeatureError("sparse datasets of variable-length or reference types "
                                      "(three-section structured chunks)")
    if maxshape is None:
        maxshape = shape
    maxshape = (maxshape,) if not isinstance(maxshape, tuple) else tuple(maxshape)
    if len(maxshape) != len(shape):
        raise ValueError("Dimensionality of shape and maxshape must match")
    stored = V.stored_dtype(dtype)
    if chunks in (None, True):
        chunks = guess_chunk(shape, maxshape, stored.itemsize)
    chunks = (int(chunks),) if isinstance(chunks, (int, np.integer)) else tuple(int(c)
                                                                                for c in chunks)
    if len(chunks) != len(shape) or any(c <= 0 for c in chunks):
        raise ValueError(f"chunk shape {chunks} does not fit shape {shape}")
    for c, m in zip(chunks, maxshape):
        if m is not None and c > m:
            raise ValueError(f"chunk shape {chunks} exceeds maxshape {maxshape}")
    if section_filters is not None and (compression is not None or shuffle or fletcher32):
        raise ValueError("give either section_filters or compression/shuffle/fletcher32")
    pipelines = {}
    if section_filters is not None:
        for sec, spec in dict(section_filters).items():
            if int(sec) not in (0, 1):
                raise ValueError(f"sparse chunks have sections 0 and 1, not {sec}")
            flist = _section_pipeline(writer, spec, stored, chunks)
            if flist:
                pipelines[int(sec)] = flist
    elif compression is not None or shuffle or fletcher32:
        # the predefined filters act on every section (programming model RFC)
        flist = _section_pipeline(writer, dict(compression=compression,
                                               compression_opts=compression_opts,
                                               shuffle=shuffle, fletcher32=fletcher32),
                                  stored, chunks)
        pipelines = {0: flist, 1: flist}
    fill = None
    if fillvalue is not None:
        fill = np.asarray(fillvalue, dtype=dtype).tobytes()
    node = model.DatasetNode(shape, maxshape, dtype, "sparse", chunks, (), fill, False,
                             track_order=bool(track_order), track_times=bool(track_times))
    node.section_filters = pipelines
    node.index = choose_index(shape, maxshape, chunks, chunk_index)
    if track_times:
        node.times = writer.now()
    node.store = SparseStore(writer, node)
    writer.track_new(node)
    if data is not None:
        arr = np.asarray(data, dtype=node.store.dtype)
        if arr.shape != shape:
            raise ValueError(f"data of shape {arr.shape} for a dataset of shape {shape}")
        write_dense(node.store, arr, fillvalue)
    return node


def write_dense(store, arr, fillvalue=None):
    """Define every element of ``arr`` that differs from the fill value (zero by default)."""
    fill = np.zeros((), arr.dtype) if fillvalue is None else np.asarray(fillvalue, arr.dtype)
    if arr.dtype.names is None:
        mask = arr != fill
    else:
        mask = arr.view(np.void(arr.dtype.itemsize)) != \
            np.asarray(fill).reshape(1).view(np.void(arr.dtype.itemsize))[0]
    coords = np.argwhere(mask).astype(np.int64)
    store.write_points(coords, arr[mask])
