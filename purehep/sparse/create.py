"""Creating sparse datasets (the programming model RFC's create_dataset with structured chunk
storage) and emitting their object header messages and chunk index."""
import numpy as np

from ..errors import UnsupportedFeatureError
from ..format.messages import layout as L
from ..format.messages.filter_pipeline import FilterInfo

INDEX_NAMES = {"single": L.SINGLE, "fixed_array": L.FIXED_ARRAY,
               "extensible_array": L.EXTENSIBLE_ARRAY, "btree2": L.BTREE2}


def choose_index(shape, maxshape, chunks, requested=None):
    """(index type, info): as libhdf5 picks for chunked datasets, without implicit indexes
    (RFC section 4), or the requested one when it fits. Each index is accepted only for the
    extents the format assigns it: single chunk when the one chunk is the fixed extent, fixed
    array without unlimited dimensions, extensible array with exactly one (spec III.H), v2
    B-tree with more than one ("B-tree types 12/13 ... datasets with more than one dimension
    of unlimited extent", sparse RFC 4.4, as types 10/11 in the base spec)."""
    from ..write.policy import FA_PAGE_BITS, EA_PARAMS, BT2_PARAMS
    unlimited = sum(1 for m in maxshape if m is None)
    params = {L.FIXED_ARRAY: {"page_bits": FA_PAGE_BITS}, L.EXTENSIBLE_ARRAY: dict(EA_PARAMS),
              L.BTREE2: dict(BT2_PARAMS), L.SINGLE: {}}
    if requested is not None:
        kind = INDEX_NAMES.get(requested, requested)
        if kind in (L.BTREE1, L.IMPLICIT, "btree1", "implicit"):
            raise ValueError("structured chunks cannot use a v1 B-tree or implicit chunk index "
                             "(sparse RFC section 4)")
        if kind not in params:
            raise ValueError(f"unknown chunk index {requested!r}; use one of "
                             f"{sorted(INDEX_NAMES)}")
        ok = {L.SINGLE: tuple(shape) == tuple(chunks) and tuple(maxshape) == tuple(shape),
              L.FIXED_ARRAY: unlimited == 0, L.EXTENSIBLE_ARRAY: unlimited == 1,
              L.BTREE2: unlimited > 1}[kind]
        if not ok:
            why = {L.FIXED_ARRAY: "it is for datasets without unlimited dimensions",
                   L.EXTENSIBLE_ARRAY: "it is for datasets with one unlimited dimension",
                   L.BTREE2: "the format reserves it for datasets with more than one "
                             "unlimited dimension (sparse RFC 4.4)",
                   L.SINGLE: "it is for a fixed extent stored in one chunk"}[kind]
            raise ValueError(f"a {L.INDEX_NAMES[kind]} index does not fit shape {shape}, "
                             f"maxshape {maxshape} and chunks {chunks}: {why}")
        return kind, params[kind]
    if unlimited == 1:
        return L.EXTENSIBLE_ARRAY, params[L.EXTENSIBLE_ARRAY]
    if unlimited > 1:
        return L.BTREE2, params[L.BTREE2]
    if tuple(shape) == tuple(chunks) and tuple(maxshape) == tuple(shape):
        return L.SINGLE, {}
    return L.FIXED_ARRAY, params[L.FIXED_ARRAY]


def _section_pipeline(writer, spec, dtype, chunks):
    """Filters of one section from a section_filters value: a compression name, a dict of
    create_dataset filter keywords, or a sequence of FilterInfo / (id, client data) pairs."""
    from ..hl.creation import _filters
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
    from .store import SparseStore
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


# --- emitting -----------------------------------------------------------------------------------

def layout_of(node, esize, address=None, info=None):
    index, default_info = node.index
    filtered = bool(node.section_filters)
    flags = L.SINGLE_INDEX_WITH_FILTER if (index == L.SINGLE and filtered) else 0
    return L.Layout(5, L.STRUCTURED, address=address, chunk_shape=tuple(node.chunks),
                    element_size=esize, flags=flags, index_type=index,
                    index_info=dict(default_info if info is None else info),
                    struct_type=L.STRUCT_SPARSE, offset_size=L.STRUCT_OFFSET_SIZE,
                    nsections=2, metadata_sections=(0,))


def messages(em, p, R):
    """Dataspace, datatype, fill value, per-section filter pipeline (version 3) and data
    layout (version 5, class 4) messages of a sparse dataset node."""
    from ..format.messages import fill_value as m_fill
    from ..write import values as V
    from ..write.emit import DATASPACE, DATATYPE, FILL, FILTERS, LAYOUT
    from ..format.messages import struct_pipeline
    node = p.node
    pol = em.policy
    msgs = [(DATASPACE, 0, em._space_body(node.shape, node.maxshape)),
            (DATATYPE, 0x01, em._dtype_body(node.dtype))]
    fill = m_fill.FillValue(pol.fill_version, node.fill, m_fill.ALLOC_INCREMENTAL,
                            m_fill.FILL_IF_SET, True)
    msgs.append((FILL, 0x01, m_fill.encode(fill)))
    if node.section_filters:
        pipe = struct_pipeline.StructuredFilterPipeline(
            3, tuple(sorted(node.section_filters.items())))
        msgs.append((FILTERS, 0x01, struct_pipeline.encode(pipe)))
    esize = V.stored_dtype(node.dtype, em.ctx.sizeof_offsets).itemsize
    layout = layout_of(node, esize, p.side.get("index_address"), p.side.get("index_info"))
    msgs.append((LAYOUT, 0, L.encode(layout, em.ctx)))
    return msgs


def side_structures(em, p):
    """The chunk index of a sparse dataset node (its chunks are already in the file)."""
    from ..write import values as V
    from . import index as IX
    node = p.node
    esize = V.stored_dtype(node.dtype, em.ctx.sizeof_offsets).itemsize
    layout = layout_of(node, esize)
    addr, info = IX.emit(em, layout, node.shape, node.maxshape, node.store.records,
                         bool(node.section_filters))
    p.side["index_address"] = addr
    p.side["index_info"] = info
