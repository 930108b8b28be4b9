"""Creating datasets as h5py's ``create_dataset`` does: its arguments checked and turned into
a node of the writer's object graph (purehep.write.model) with its storage, filter pipeline
and fill value; values given without a dtype typed by h5py's rules (``_prepare``)."""
import operator
import os

import numpy as np

from ..io.prefix import joined
from .create_checks import check_create_args, check_storable, h5py_dtype, no_embedded_nul


def _filters(writer, dtype, chunks, compression, compression_opts, shuffle, fletcher32,
             scaleoffset, fill, allow_unknown_filter=False, variable=False):
    """The filter pipeline of a new chunked dataset of stored ``dtype`` (``variable``: of a
    variable-length type)."""
    from ..format.messages.filter_pipeline import FilterInfo
    out = []
    itemsize = dtype.itemsize
    nelmts = int(np.prod(chunks))
    if scaleoffset is not None:
        if dtype.kind in "iu":
            cls, stype, factor = 0, 2, 0 if scaleoffset is True else int(scaleoffset)
        elif dtype.kind == "f":
            if scaleoffset is True:
                raise ValueError("integer scaleoffset must be provided for floating point types")
            if dtype.itemsize not in (4, 8):      # H5Z__scaleoffset_get_type: float, double
                raise ValueError("Unable to synchronously create dataset (cannot find matched "
                                 "memory datatype)")
            cls, stype, factor = 1, 0, int(scaleoffset)
        else:
            raise TypeError("scale/offset filter only supported for integer and floating-point "
                            "types")
        sign = 1 if dtype.kind == "i" else 0
        order = 1 if dtype.byteorder == ">" else 0
        fill_words = [0] * 12
        raw = fill if fill is not None else bytes(itemsize)
        if order:                   # libhdf5 passes the fill value in native (LE) order
            raw = raw[:itemsize][::-1]
        raw = raw + bytes(-len(raw) % 4)
        for i in range(0, min(len(raw), 48), 4):
            fill_words[i // 4] = int.from_bytes(raw[i:i + 4], "little")
        cd = (stype, factor & 0xFFFFFFFF, nelmts, cls, itemsize, sign, order, 1, *fill_words)
        out.append(FilterInfo(6, 1, "scaleoffset", cd))
    # H5Z_ignore_filters: libhdf5 makes no set-local callback for a variable-length type,
    # so shuffle keeps no element size (and its chunks are then written unshuffled)
    if shuffle:
        out.append(FilterInfo(2, 1, "shuffle", () if variable else (itemsize,)))
    if compression is not None:
        from .compression import compression_filter
        out.append(compression_filter(compression, compression_opts, dtype, chunks,
                                      allow_unknown_filter, set_local=not variable))
    if fletcher32:
        out.append(FilterInfo(3, 0, "fletcher32", ()))
    return out


# h5py's dataset access property list options of create_dataset / require_dataset
CHUNK_CACHE_OPTIONS = ("rdcc_nbytes", "rdcc_nslots", "rdcc_w0")
ACCESS_OPTIONS = ("efile_prefix", "virtual_prefix")


def chunk_cache_options(file, kwds):
    """(nslots, nbytes, w0) of the chunk cache options among ``kwds`` (taken out of it),
    the file's for those not given, checked as h5py checks a dataset's; None when none is
    given."""
    given = {k: v for k in CHUNK_CACHE_OPTIONS if (v := kwds.pop(k, None)) is not None}
    if not given:
        return None
    from .files import _check_chunk_cache
    nslots, nbytes, w0 = file.get_access_plist().get_cache()[1:]
    nslots = int(given.get("rdcc_nslots", nslots))
    nbytes = int(given.get("rdcc_nbytes", nbytes))
    w0 = float(given.get("rdcc_w0", w0))
    _check_chunk_cache(nbytes, w0, nslots, dataset=True)
    return nslots, nbytes, w0


def access_prefixes(kwds):
    """{"efile" | "virtual": prefix} of h5py's dataset access options ``efile_prefix`` and
    ``virtual_prefix`` among ``kwds`` (taken out of it; io.prefix says what they do)."""
    out = {}
    for key in ACCESS_OPTIONS:
        value = kwds.pop(key, None)
        if value is None:
            continue
        if not isinstance(value, (str, bytes, os.PathLike)):
            raise TypeError(f"{key} must be a str or bytes, not {type(value).__name__}")
        out[key.partition("_")[0]] = os.fsdecode(value)
    return out


def _legacy_gzip(compression, compression_opts):
    """h5py's legacy forms of gzip: ``compression=True`` (level 4 unless given) and an
    integer 0..9 as the level (False is 0; with ``compression_opts`` too, h5py's TypeError)."""
    if compression is True:
        return "gzip", compression_opts
    if isinstance(compression, (int, np.integer)) and 0 <= compression <= 9:
        if compression_opts is not None:
            raise TypeError("Conflict in compression options")
        return "gzip", int(compression)
    return compression, compression_opts


def default_order(track_order):
    """``track_order`` as given, else the default of purehep.h5.get_config()."""
    from ..h5 import get_config
    return bool(track_order) if track_order is not None else get_config().track_order


def _no_dtype_deprecated():
    """h5py 3.16's deprecation of a dataset created with a shape alone (f4 by default)."""
    from ..errors import warn
    from ..h5py_warnings import H5pyDeprecationWarning
    warn("Creating a dataset without passing data or dtype is deprecated. Pass an explicit "
         "dtype. Using dtype='f4' will keep the current default behaviour.",
         H5pyDeprecationWarning)


def _prepare(data, dtype):
    """(array, dtype) of the values given to create_dataset / attrs, by h5py's rules: without
    a dtype, Python ``str`` and ``bytes`` (alone or all the items of lists, tuples and object
    arrays) become variable-length UTF-8 and ASCII strings, references reference types, and
    anything else what numpy makes of it (so ``np.bytes_`` is a fixed-length string)."""
    from .base import Empty
    if isinstance(data, Empty):
        return data, np.dtype(data.dtype)
    dtype = h5py_dtype(dtype) if dtype is not None else _guess_dtype(data)
    if dtype is None:
        arr = np.asarray(data)
        return arr, arr.dtype
    meta = dtype.metadata or {}
    if "vlen" in meta or "ref" in meta:
        arr = np.empty(np.shape(data) if not isinstance(data, (str, bytes)) else (), object)
        if arr.shape == ():      # the item of a 0-d array, not the array itself
            arr[()] = data[()] if isinstance(data, np.ndarray) else data
        else:
            arr[...] = data if isinstance(data, np.ndarray) else _object_array(data, arr.shape)
        if meta.get("vlen") in (str, bytes):
            no_embedded_nul(arr)
        return arr, dtype
    return np.asarray(data, dtype=dtype), dtype


def hdf5_converted(data, dtype, new=False):
    """``data`` as libhdf5 converts an array h5py passes on as it is (create_dataset's
    ``data=`` (``new``), attrs.modify; attrs.create casts with numpy, and so does h5py's
    create_dataset for float16): an array of another fixed-size type by libhdf5's rules
    (write.values.cast); anything else unchanged."""
    from ..write import values as V
    if isinstance(data, np.ndarray) and dtype is not None and data.dtype != dtype and \
            data.dtype.kind not in "UT" and not V.needs_heap(dtype) and \
            np.dtype(dtype).subdtype is None and not (new and np.dtype(dtype) == np.float16):
        return V.cast(data, dtype)
    return data



def _guess_dtype(data):
    from ..dtypes import ref_dtype, regionref_dtype, string_dtype
    from ..reference import Reference, RegionReference
    if isinstance(data, np.ndarray) and data.dtype.kind == "T":
        return string_dtype()
    kind = _item_type(data)
    if kind is bytes:
        return string_dtype("ascii")
    if kind is str:
        return string_dtype()
    if isinstance(kind, type) and issubclass(kind, RegionReference):
        return regionref_dtype
    if isinstance(kind, type) and issubclass(kind, Reference):
        return ref_dtype
    return None


def _item_type(data):
    """The one type of a value, or of all the items of (nested) lists, tuples and object
    arrays; None when they differ or the data is a typed array (h5py's find_item_type)."""
    if isinstance(data, np.ndarray):
        if data.dtype.kind != "O" or not data.size or (data.dtype.metadata or {}):
            return None
        types = {type(e) for e in data.flat}
    elif isinstance(data, (list, tuple)):
        types = {_item_type(e) for e in data}
    else:
        return type(data)
    return types.pop() if len(types) == 1 else None


def _object_array(data, shape):
    out = np.empty(shape, object)
    flat = out.reshape(-1)
    for i, item in enumerate(np.asarray(data, dtype=object).reshape(-1)):
        flat[i] = item
    return out


def make_dataset(writer, shape=None, dtype=None, data=None, chunks=None, maxshape=None,
                 compression=None, compression_opts=None, shuffle=None, fletcher32=None,
                 scaleoffset=None, fillvalue=None, track_times=None, track_order=None,
                 compact=False, layout=None, alloc_time=None, allow_unknown_filter=False,
                 external=None, sparse=False, section_filters=None, chunk_index=None,
                 filter_pipeline=None, fill_time=None, external_prefix=None,
                 stored_chunks=False, **unused):
    """A DatasetNode for h5py's create_dataset arguments (plus ``compact=True`` or
    ``layout='compact'|'contiguous'|'chunked'``, ``alloc_time='early'`` and
    ``filter_pipeline``, FilterInfo entries used as they are, as when copying a dataset;
    ``stored_chunks``: ``chunks`` is a stored dataset's (copied), not checked against the
    shape; ``external_prefix``: the external file prefix in force, io.prefix)."""
    from ..write import model, values as V
    from ..write.policy import guess_chunk, COMPACT_DATA_LIMIT
    from ..write.storage import MemoryStore, ContiguousStore, ChunkStore
    from .base import Empty
    if unused:
        raise TypeError(f"unexpected arguments {sorted(unused)}")
    if sparse:
        from .sparse import make_sparse_node
        return make_sparse_node(writer, shape, dtype, data, chunks, maxshape, compression,
                                compression_opts, shuffle, fletcher32, fillvalue,
                                section_filters, chunk_index, track_times, track_order)
    if section_filters is not None or chunk_index is not None:
        raise TypeError("section_filters and chunk_index are options of sparse datasets")
    check_create_args(shape, dtype, data, chunks, maxshape, compression, compression_opts,
                      scaleoffset, fillvalue, track_times, fill_time, fletcher32)
    if dtype is not None:
        dtype = h5py_dtype(dtype)
    external = _external_slots(external)
    compression, compression_opts = _legacy_gzip(compression, compression_opts)
    arr = None
    if data is not None and dtype is not None and np.dtype(dtype).subdtype is not None \
            and not isinstance(data, Empty):
        _refuse_array_dtype_data(data)
    if fillvalue is not None and dtype is not None and np.dtype(dtype).subdtype is not None:
        raise ValueError("Unable to synchronously create dataset (no appropriate function for "
                         "conversion path)")
    if data is not None:
        arr, dt = _prepare(hdf5_converted(data, dtype, new=True), dtype)
        if isinstance(arr, Empty):
            shape = None
        else:
            if dt.kind == "U":
                raise TypeError(f"No conversion path for dtype: {dt!r}")
            if shape is not None:
                shape = (shape,) if isinstance(shape, int) else tuple(shape)
                if int(np.prod(shape)) != arr.size:
                    raise ValueError("Shape tuple is incompatible with data")
                arr = arr.reshape(shape)
            shape = arr.shape
        dtype = dt
    else:
        if shape is None and dtype is None:
            raise TypeError("One of data, shape or dtype must be specified")
        if dtype is None:
            _no_dtype_deprecated()
        dtype = np.dtype("f4") if dtype is None else np.dtype(dtype)
        if dtype.kind == "U":
            raise TypeError(f"No conversion path for dtype: {dtype!r}")
        if shape is None or isinstance(shape, Empty):     # h5py: a dtype alone, no data
            shape = None
        else:
            shape = (int(shape),) if isinstance(shape, (int, np.integer)) else \
                tuple(int(s) for s in shape)
    from ..format.messages.datatype import encode_dtype
    encode_dtype(dtype)       # a dtype HDF5 cannot store (plain datetime64) fails here, as in h5py
    if shape is None:
        node = model.DatasetNode(None, None, dtype, "contiguous", track_times=bool(track_times))
        node.index = None
        node.store = None
        if track_times:
            node.times = writer.now()
        return node
    if maxshape is not None:
        maxshape = (maxshape,) if not isinstance(maxshape, tuple) else tuple(maxshape)
        if len(maxshape) != len(shape):
            raise ValueError("Dimensionality of shape and maxshape must match")
        for s, m in zip(shape, maxshape):
            if m is not None and m < s:
                raise ValueError("Maxshape must be larger than or equal to shape")
    filtered = bool(compression is not None or shuffle or fletcher32 or scaleoffset is not None
                    or filter_pipeline)
    layout = layout or ("compact" if compact else None)
    if external:
        if chunks or filtered or layout not in (None, "contiguous") or V.needs_heap(dtype):
            raise ValueError("Only contiguous datasets of fixed-size types can be stored "
                             "externally")
        return _external_node(writer, shape, maxshape or shape, dtype, fillvalue, external,
                              external_prefix, arr, track_times, fill_time)
    if layout == "compact":
        if chunks or filtered or (maxshape is not None and tuple(maxshape) != shape):
            raise ValueError("compact layout cannot be chunked, filtered or resizable")
    elif chunks is None and (filtered or maxshape):   # h5py: any maxshape given (but ())
        chunks = True
    if layout == "chunked" and chunks is None:
        chunks = True
    if chunks is False:
        if filtered or (maxshape is not None and tuple(maxshape) != shape):
            raise ValueError("Chunked format required for given storage options")
        chunks = None
    stored = V.stored_dtype(dtype)
    # h5py sizes a guessed chunk by numpy's itemsize (8 for a variable-length type) and checks
    # only given chunk shapes against the (maximum) shape: a guess (or a copy of one) may
    # exceed a zero-length or fixed dimension
    unchecked = chunks is True or stored_chunks
    if chunks is True:
        chunks = guess_chunk(shape, maxshape, dtype.itemsize)
    if chunks is not None:
        chunks = (chunks,) if isinstance(chunks, int) else tuple(int(c) for c in chunks)
        if len(chunks) != len(shape) or shape == ():
            raise ValueError("Chunk shape must not be greater than data shape in any dimension. "
                             f"{chunks} is not compatible with {shape}")
        for c, s, m in zip(chunks, shape, maxshape or shape):
            if c <= 0 or (m is not None and c > m and not unchecked):
                raise ValueError(f"Chunk shape must not be greater than data shape in any "
                                 f"dimension. {chunks} is not compatible with {shape}")
        layout = "chunked"
    layout = layout or "contiguous"
    if maxshape is None:
        maxshape = shape
    fill = fill_bytes(dtype, fillvalue)
    early = alloc_time == "early"
    node = model.DatasetNode(shape, maxshape, dtype, layout, chunks,
                             (tuple(filter_pipeline) if filter_pipeline else
                              _filters(writer, stored, chunks, compression, compression_opts,
                                       shuffle, fletcher32, scaleoffset, fill,
                                       allow_unknown_filter, dtype.kind == "O"))
                             if layout == "chunked" else (),
                             fill, early, track_order=default_order(track_order),
                             track_times=bool(track_times))
    node.fill_time = fill_time if shape != () else None   # h5py drops it for scalars
    if fillvalue is not None and V.needs_heap(dtype):
        check_storable(np.asarray(fillvalue, dtype=dtype), dtype)
        node.heap_fill = fillvalue      # its heap data is written with the fill value message
    if track_times:
        node.times = writer.now()
    node.index = writer.policy.chunk_index(shape, maxshape, chunks, node.filtered, early) \
        if layout == "chunked" else None
    never = fill_time == "never"       # storage starts zeroed, as libhdf5 leaves it
    if layout == "compact" or V.held_in_memory(dtype):
        node.store = MemoryStore(shape, dtype, None if never else fillvalue)
        if layout == "compact":
            if int(np.prod(shape)) * stored.itemsize > COMPACT_DATA_LIMIT:
                raise ValueError("compact datasets are limited to 64 KiB of data")
    elif layout == "contiguous":
        node.store = ContiguousStore(writer, shape, dtype, None if never else fill)
        writer.track_new(node)
        if early:
            node.store._allocate()
    else:
        node.store = ChunkStore(writer, node)
        writer.track_new(node)
        if node.index[0] == 2:       # implicit: early allocation of every chunk
            node.store.allocate_all()
    if arr is not None:
        if V.needs_heap(dtype):
            check_storable(arr, dtype)
        node.store.write((), arr)
    return node


def _array_dtype_attribute(data, shape, dtype):
    """(dtype, shape, values) of an attribute given an array (sub-array) dtype, by h5py's
    rules: the data's trailing dimensions are the array type's, the rest the attribute's
    shape; the values stay expanded (the type's base, its dimensions trailing)."""
    if not isinstance(data, np.ndarray):
        _refuse_array_dtype_data(data)
    base, dims = dtype.subdtype
    shape = data.shape if shape is None else \
        ((shape,) if isinstance(shape, int) else tuple(shape))
    if shape[len(shape) - len(dims):] != dims:
        raise ValueError(f"Array dtype shape {dims} is incompatible with data shape {shape}")
    arr = np.asarray(data, dtype=base) if (base.metadata or {}).get("vlen") is None else \
        _object_array(data, data.shape)
    return dtype, shape[:len(shape) - len(dims)], arr.reshape(shape)


def _refuse_array_dtype_data(data):
    """h5py cannot create a dataset from data with an array (sub-array) dtype: numpy has no
    arrays of that dtype, so the data never matches it (h5py raises ValueError converting a
    list, OSError writing an array). The dtype alone makes an empty array-typed dataset."""
    if not isinstance(data, np.ndarray):
        raise ValueError("Changing the dtype to a subarray type is only supported if the "
                         "total itemsize is unchanged")
    raise OSError("Can't synchronously write data (no appropriate function for conversion "
                  "path)")


def _external_slots(external):
    """h5py's ``external=``: one file name (the whole data from offset 0), or (name, offset,
    size) tuples; a size of 2**64 - 1 (h5py's ``h5f.UNLIMITED``) or None runs to the end of
    the file (None)."""
    if not external:
        return None
    if isinstance(external, (str, bytes, os.PathLike)):
        external = [(external, 0, None)]
    slots = []
    for entry in external:
        if not isinstance(entry, tuple):
            raise TypeError("Each external entry must be a tuple of (name, offset, size)")
        name, offset, size = entry
        offset = operator.index(offset)
        size = None if size is None or size == (1 << 64) - 1 else operator.index(size)
        if offset < 0 or (size is not None and size < 0):
            raise ValueError(f"negative offset or size in external entry {entry!r}")
        slots.append((os.fsdecode(name), offset, size))
    if any(size is None for _, _, size in slots[:-1]):
        raise ValueError("only the last external file may have an unlimited size")
    return slots


def _external_node(writer, shape, maxshape, dtype, fillvalue, slots, prefix, arr, track_times,
                   fill_time):
    """A contiguous dataset whose raw data lives in external files (names stored as given,
    their files joined to the external file ``prefix`` in force, else relative to the working
    directory, as libhdf5 opens them). As libhdf5 checks (H5D__efl_construct), only
    the first dimension may be extendible, and the files must hold the dataset at its
    maximum extent (an unlimited one needs an unlimited last file)."""
    from ..write import model
    from ..write.storage import ExternalStore
    if tuple(maxshape[1:]) != tuple(shape[1:]):
        raise ValueError("Unable to create dataset (only the first dimension of an external "
                         "dataset can be extendible)")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    room = None if slots[-1][2] is None else sum(size for _, _, size in slots)
    most = None if maxshape[:1] == (None,) else \
        int(np.prod(maxshape, dtype=np.int64)) * dtype.itemsize
    if room is not None and (most is None or room < most):
        raise ValueError(f"external storage of {room} bytes is smaller than the dataset's "
                         f"{'unlimited extent' if most is None else f'{most} bytes'}")
    node = model.DatasetNode(shape, tuple(maxshape), dtype, "contiguous",
                             fill=fill_bytes(dtype, fillvalue), track_times=bool(track_times))
    node.index = None
    node.external = slots
    node.store = ExternalStore([(joined(prefix, n), o, nbytes if s is None else s)
                                for n, o, s in slots], shape, dtype)
    node.fill_time = fill_time
    if track_times:
        node.times = writer.now()
    if arr is not None:
        node.store.write((), arr)
    return node


def fill_bytes(dtype, fillvalue):
    """The fill value message's bytes for ``fillvalue`` (None: none set; variable-length
    types keep no fill value)."""
    from ..write import values as V
    if fillvalue is None or V.needs_heap(dtype):
        return None
    if V.needs_conversion(dtype):
        return V.to_file(np.asarray(fillvalue, dtype=dtype), dtype, None).tobytes()
    return np.asarray(fillvalue, dtype=dtype).tobytes()
