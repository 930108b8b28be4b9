"""Datasets: lazy access to a dataset's messages and its data, with h5py's Dataset interface."""
import math
from collections import namedtuple

import os

import numpy as np

from ..errors import FilterConfigurationError, UnsupportedFeatureError
from ..format.messages import layout as L
from ..format.messages.fill_value import FILL_NEVER
from .. import selections
from .base import HLObject, Empty, message, DATASPACE, DATATYPE, LAYOUT
from .serialize import serialized
from .writing import DatasetWriter
from .sparse import SparseDatasetMixin

FILL_OLD, FILL, EXTERNAL_FILES, FILTERS = 0x04, 0x05, 0x07, 0x0B
_H5PY_FILTER_NAMES = {1: "gzip", 4: "szip", 2: "shuffle", 3: "fletcher32", 32000: "lzf",
                      6: "scaleoffset"}
SZIP_EC, SZIP_NN = 4, 32             # szip option mask bits (H5_SZIP_EC/NN_OPTION_MASK)
VDSmap = namedtuple("VDSmap", ("vspace", "file_name", "dset_name", "src_space"))


@serialized(skip=("__getitem__",), extra=("_read_args",))
class Dataset(HLObject, DatasetWriter, SparseDatasetMixin):
    """A dataset. Nothing beyond its object header is read until data is asked for."""

    def _msg(self, mtype, required=True):
        if self._node is not None:
            self._sync()
        key = ("dsmsg", mtype)
        cache = self.__dict__.setdefault("_msgs", {})
        if key not in cache:
            cache[key] = message(self._ctx, self._oh, mtype, required)
        return cache[key]

    # -- description ----------------------------------------------------------------------
    @property
    def _space(self):
        return self._msg(DATASPACE)

    @property
    def _type(self):
        return self._msg(DATATYPE)

    @property
    def _layout(self):
        return self._msg(LAYOUT)

    @property
    def _pipeline(self):
        """The filter pipeline message, None without one."""
        return self._msg(FILTERS, required=False)

    @property
    def _filters(self):
        """h5py's ``Dataset._filters``: {filter name: options} in pipeline order, built as
        h5py's ``filters.get_filters`` builds it — gzip's level, szip's ('ec' or 'nn',
        pixels per block), None for lzf and for filters without client data, else the
        client data as a tuple; filters h5py has no name for under their id as a string."""
        out = {}
        for f in self._pipeline or ():
            vals = tuple(int(v) for v in f.client_data or ())
            if f.id == 1:
                vals = vals[0] if vals else None
            elif f.id == 4 and len(vals) >= 2:
                if vals[0] & SZIP_EC:
                    vals = ("ec", vals[1])
                elif vals[0] & SZIP_NN:
                    vals = ("nn", vals[1])
                else:
                    raw = self._oh.first(FILTERS) if self._oh is not None else None
                    raise FilterConfigurationError(
                        f"Unknown SZIP configuration (option mask {vals[0]:#x})",
                        "filter pipeline message", getattr(raw, "offset", None))
            elif f.id == 32000 or not vals:
                vals = None
            out[_H5PY_FILTER_NAMES.get(f.id, str(f.id))] = vals
        return out

    @property
    def shape(self):
        self._live(RuntimeError)
        node = self._node       # (a virtual dataset read from the file: layout "other")
        if node is not None and node.layout not in ("virtual", "other"):
            return node.shape
        if self.is_virtual and None in self.maxshape:  # an unlimited virtual dataset's extent
            return self._storage.shape                 # follows its sources
        return node.shape if node is not None else self._space.shape

    @property
    def maxshape(self):
        if self._node is not None:
            return self._node.maxshape
        return self._space.maxshape

    @property
    def dtype(self):
        return self._type.dtype

    @property
    def ndim(self):
        if self._node is not None:
            return len(self._node.shape) if self._node.shape is not None else 0
        return self._space.rank

    @property
    def size(self):
        shape = self.shape    # a virtual dataset's current extent may differ from its dataspace
        return math.prod(shape) if shape is not None else None

    @property
    def nbytes(self):
        return (self.size or 0) * self.dtype.itemsize

    @property
    def chunks(self):
        layout = self._layout
        return tuple(layout.chunk_shape) if layout.layout_class in (L.CHUNKED, L.STRUCTURED) \
            else None

    @property
    def is_virtual(self):
        return self._layout.layout_class == L.VIRTUAL

    def _filter(self, fid):
        pipeline = self._pipeline
        if pipeline is None:
            return None
        for f in pipeline:
            if f.id == fid:
                return f
        return None

    @property
    def filter_ids(self):
        """The filter pipeline's filter ids, in order (h5py 3.13's ``filter_ids``)."""
        return tuple(f.id for f in (self._pipeline or ()))

    @property
    def filter_names(self):
        """The filter pipeline's filter names as stored (or the known names), in order."""
        from ..filters import KNOWN_NAMES
        return tuple(f.name or KNOWN_NAMES.get(f.id, "") for f in (self._pipeline or ()))

    def refresh(self):
        """h5py's refresh: read this dataset's metadata again from the file (a reader's view
        of what a writer flushed since). A file being written is this process's own: nothing
        to do. A file that grew since it was opened must be opened again to be read."""
        if self._node is not None:
            return
        src = self._file._source
        if src.path is not None and os.path.getsize(src.path) != src.size:
            raise UnsupportedFeatureError("the file grew since it was opened: open it again "
                                          "to read what was added")
        self._ctx.cache.clear()
        self._header = None
        for key in ("_store", "_fill", "_fast_box"):
            self.__dict__.pop(key, None)
        self._file.__dict__.pop("_stores", None)

    def flush(self):
        """Write what this file has pending (h5py's Dataset.flush); nothing in read mode."""
        self._file.flush()

    @property
    def compression(self):
        """h5py's: gzip, lzf or szip if in the pipeline, 'unknown' for another filter of
        none of h5py's names (a plugin's), else None."""
        filters = self._filters
        for name in ("gzip", "lzf", "szip"):
            if name in filters:
                return name
        if any(name not in _H5PY_FILTER_NAMES.values() for name in filters):
            return "unknown"
        return None

    @property
    def compression_opts(self):
        """h5py's: the options ``_filters`` gives the compression filter."""
        return self._filters.get(self.compression, None)

    @property
    def shuffle(self):
        return self._filter(2) is not None

    @property
    def fletcher32(self):
        return self._filter(3) is not None

    @property
    def scaleoffset(self):
        f = self._filter(6)
        return f.client_data[1] if f is not None and len(f.client_data) > 1 else None

    @property
    def external(self):
        ext = self._msg(EXTERNAL_FILES, required=False)
        if ext is None:
            return None
        from ..chunks.storage import external_slots
        from ..format import messages as M
        return external_slots(self._ctx, M.decode(self._ctx, ext) if not hasattr(
            ext, "slots") else ext)

    @property
    def _fill_array(self):
        """The fill value as a 0-d array of the file dtype (zeros when none is defined)."""
        if self._node is not None:
            self._sync()
        if "_fill" not in self.__dict__:
            from ..chunks.storage import element_dtype
            fill = self._msg(FILL, required=False) or self._msg(FILL_OLD, required=False)
            dtype = element_dtype(self._type.file_dtype)
            value = fill.value if fill is not None else None
            if value is not None and len(value) == dtype.itemsize:
                arr = np.frombuffer(value, dtype).reshape(())
            else:
                arr = np.zeros((), dtype)
            self.__dict__["_fill"] = arr
        return self.__dict__["_fill"]

    @property
    def _unwritten(self):
        """What reading storage never written gives: the fill value, but zeros (what h5py
        reads into) when the Fill Value message's fill time is "never" (spec IV.A.2.f)."""
        fill = self._msg(FILL, required=False)
        if fill is not None and fill.fill_time == FILL_NEVER:
            return np.zeros_like(self._fill_array)
        return self._fill_array

    @property
    def fillvalue(self):
        from ..format.convert import from_file
        from ..chunks.storage import as_elements
        return from_file(self._ctx, self._type, as_elements(self._fill_array, self._type.file_dtype),
                         self._where)[()]

    @property
    def _storage(self):
        if self._node is not None:
            self._sync()
        store = self.__dict__.get("_store")
        if store is None:     # (one opened with its own prefixes is not shared in the file)
            store = self.__dict__["_store"] = self._open_storage() if \
                self.__dict__.get("_prefixes") else \
                self._file._storage_of(self._address, self._open_storage)
        return store

    def _with_prefixes(self, prefixes):
        """This dataset with the access list's file prefixes ``prefixes`` ({"efile" |
        "virtual": str or bytes}: h5py's ``efile_prefix`` / ``virtual_prefix`` of
        create_dataset and require_dataset); kept with the dataset while its file is open in
        write modes, as libhdf5 keeps them (the first handle's)."""
        if not prefixes:
            return self
        if self._node is not None:
            if not self._node.prefixes:
                self._node.prefixes = dict(prefixes)
        else:
            self.__dict__["_prefixes"] = dict(prefixes)
            self.__dict__.pop("_store", None)
        return self

    def _prefix(self, kind):
        """The external file ("efile") or virtual source ("virtual") prefix in force for
        this dataset (io.prefix.in_force), None when there is none."""
        from ..io.prefix import in_force
        given = self._node.prefixes if self._node is not None else \
            self.__dict__.get("_prefixes", {})
        return in_force(kind, given.get(kind), self._file.filename)

    def _with_chunk_cache(self, cache):
        """This dataset with its own chunk cache ``cache`` = (nslots, nbytes, w0) (h5py's
        per-dataset ``rdcc_*``; None: the file's): reported by its access property list,
        and its decoded-chunk budget in read mode (write and modify modes keep no decoded
        chunks)."""
        if cache is None:
            return self
        self.__dict__["_chunk_cache"] = cache
        if self._file._rdcc_nbytes and not self.is_virtual:
            chunked = getattr(self._storage, "chunked", None)
            if chunked is not None:
                chunked.resize_cache(cache[1])
        return self

    def _cache_nbytes(self):
        """The decoded-chunk budget of this dataset's storage."""
        own = self.__dict__.get("_chunk_cache")
        return own[1] if own is not None and self._file._rdcc_nbytes else \
            self._file._rdcc_nbytes

    def _open_storage(self):
        if self.is_virtual:
            from .virtual import VirtualStorage
            return VirtualStorage(self)
        from ..chunks.storage import check_layout, open_storage
        check_layout(self._layout, self._space, self._type)
        return open_storage(self._ctx, self._layout, self._space, self._type, self._pipeline,
                            lambda: self._unwritten, self._msg(EXTERNAL_FILES, required=False),
                            self._file._threads, self._cache_nbytes(), self._prefix("efile"))

    # -- dimension scales (purehep.hl.dims) ---------------------------------------------------
    @property
    def dims(self):
        """The dataset's dimensions and the scales attached to them (h5py's ``ds.dims``)."""
        from .dims import DimensionManager
        return DimensionManager(self)

    def make_scale(self, name=""):
        """Make this dataset a dimension scale named ``name``."""
        from .dims import make_scale
        make_scale(self, name)

    @property
    def is_scale(self):
        """True if this dataset is a dimension scale."""
        from .dims import is_scale
        return is_scale(self)

    @property
    def id(self):
        """The stored chunks, as h5py's low-level ``ds.id`` gives them (see hl.dsid)."""
        from .dsid import DatasetID
        return DatasetID(self)

    def iter_chunks(self, sel=None):
        """The slices of ``sel`` (default: everything) inside each chunk, as h5py's."""
        from .dsid import iter_chunks
        return iter_chunks(self, sel)

    def virtual_sources(self):
        """The mappings of a virtual dataset, as h5py's ``virtual_sources()``: (virtual
        selection, source file name, source dataset name, source selection) tuples."""
        if not self.is_virtual:
            raise RuntimeError("Not a virtual dataset")
        from .virtual import SelectionSpace
        shape = self.shape
        return [VDSmap(SelectionSpace(m.virtual_selection, shape), m.source_file,
                       m.source_dataset,
                       SelectionSpace(m.source_selection, lambda m=m: self._source_shape(m)))
                for m in self._storage.mappings]

    def _source_shape(self, mapping):
        source = self._file._vds_source(mapping.source_file, mapping.source_dataset,
                                        self._prefix("virtual"))
        if source is None:
            raise ValueError(f"the source {mapping.source_dataset!r} in "
                             f"{mapping.source_file!r} cannot be opened for its extent")
        return source.shape

    def __repr__(self):
        """h5py's repr (the base name, or "(anonymous)")."""
        if not self:
            return "<Closed HDF5 dataset>"
        return f'<HDF5 dataset {self._repr_name()}: shape {self.shape}, ' \
            f'type "{self.dtype.str}">'

    # -- reading --------------------------------------------------------------------------
    def __len__(self):
        if not self.shape:
            raise TypeError("Attempt to take len() of scalar dataset")
        return self.shape[0]

    def len(self):
        return len(self)

    def __iter__(self):
        if not self.shape:
            raise TypeError("Can't iterate over a scalar dataset")
        for i in range(self.shape[0]):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        _no_copy_false(self, copy)
        arr = self.read()
        if isinstance(arr, Empty):
            arr = np.zeros((0,), self.dtype)
        arr = np.asarray(arr)
        return arr.astype(dtype) if dtype is not None else arr

    def __getitem__(self, args):
        if not self:
            self._live(RuntimeError)
        fast = self.__dict__.get("_fast_box", False)
        if fast is False:
            fast = self.__dict__["_fast_box"] = self._make_fast_reader()
        if fast is not None:
            out = fast(args)
            if out is not None:
                return out
        return self._read_args(args)

    @property
    def _fast_reader(self):
        """h5py's ``Dataset._fast_reader`` (its _selector.Reader): ``read(args)`` reads a
        tuple of indexing arguments, as ``ds[args]``."""
        return _Reader(self)

    def _read_args(self, args):
        """``ds[args]`` by the general path (selections, names, region references)."""
        args = args if isinstance(args, tuple) else (args,)
        names = [a for a in args if isinstance(a, str)]
        args = tuple(a for a in args if not isinstance(a, str))
        from ..reference import RegionReference
        if len(args) == 1 and isinstance(args[0], RegionReference):
            return self._read_region(args[0], names)
        return self.read(args, names=names)

    def _make_fast_reader(self):
        """A reader for ``ds[ints and step-1 slices]`` of a read-only dataset whose bytes need
        no conversion (small random reads: no selection objects, no conversion pass), or None
        when the dataset does not qualify."""
        if self._node is not None or self._file.mode != "r" or self.is_virtual:
            return None
        shape, ftype = self._space.shape, self._type
        if not shape or ftype.needs_conversion or ftype.file_dtype.subdtype is not None:
            return None
        from ..chunks.storage import ChunkedAdapter, ContiguousStorage, fast_box
        store = self._storage
        if isinstance(store, ChunkedAdapter):
            read_box = store.chunked.box_reader()
            return lambda args: fast_box(args, shape, read_box)
        if isinstance(store, ContiguousStorage):
            return lambda args: fast_box(args, shape, store.read_box)
        return None

    def read(self, args=(), copy=True, names=(), structured=False):
        """``ds[args]``; with ``copy=False`` a contiguous dataset whose bytes need no
        conversion is returned as a read-only view of a memory map of the file (zero-copy;
        like any view of a map, numpy's memmap, it kills the process with SIGBUS if touched
        after another process shortened the file: other reads copy by pread and fail with a
        TruncatedError instead)."""
        whole = len(args) == 0 or (len(args) == 1 and args[0] is Ellipsis)
        if self.shape is None:
            if not whole or names:
                raise ValueError("Empty datasets cannot be sliced")
            return Empty(self.dtype)
        if self.shape == ():
            if not whole:
                raise ValueError("Illegal slicing argument for scalar dataspace")
            raw = self._storage.read(None, copy=copy)
            out = self._convert(raw, names, structured)
            return out[()] if len(args) == 0 else out
        sel = None if whole else selections.select(self.shape, args, strict=True)
        if sel is not None and sel.nselected == 0:
            from ..chunks.storage import element_dtype
            from ..io.memory import zeros
            raw = zeros(sel.read_shape, element_dtype(self._type.file_dtype), "dataset read")
        else:
            from ..chunks.storage import element_dtype
            from ..io.memory import check_size
            check_size(self.shape if sel is None else sel.read_shape,
                       element_dtype(self._type.file_dtype).itemsize, "dataset read")
            raw = self._storage.read(sel, copy=copy)
        if sel is not None:
            raw = sel.finish(raw)
        out = self._convert(raw, names, structured)
        return out[()] if sel is not None and sel.mshape == () else out

    def _convert(self, raw, names, structured=False):
        """Stored values as h5py presents them; with ``names``, just those fields (one name
        alone as a plain array unless ``structured``, as h5py's ``ds[name]``)."""
        from ..format.convert import fields_from_file, from_file
        from ..chunks.storage import as_elements
        if getattr(self._storage, "converted", False):
            return _fields(raw, names, structured) if names else raw
        raw = as_elements(raw, self._type.file_dtype)
        if names:                          # only the fields asked for are converted
            return fields_from_file(self._ctx, self._type, raw, names, structured, self._where)
        return from_file(self._ctx, self._type, raw, self._where)

    @property
    def _where(self):
        """(structure, offset) naming this dataset's values in errors: its object header."""
        addr = self._address
        return "values of the dataset with the object header", \
            None if addr is None else self._ctx.absolute(addr)

    def _read_region(self, ref, names):
        """``ds[regionref]``: the referenced elements, shaped as h5py shapes them (the block
        shape for a hyperslab that forms one, else 1-D in selection order)."""
        from ..format import selection as S
        sel = ref.selection
        if sel.kind == S.ALL:
            return self.read((), names=names)
        if sel.kind == S.NONE and self.shape == ():       # nothing of a scalar: h5py's Empty
            return Empty(self.dtype)
        coords = sel.coords(self.shape)
        n = len(coords)
        if n == 0:
            return np.zeros((0,) * max(1, self.ndim if sel.kind != S.POINTS else 1), self.dtype)
        shape = (n,)
        if sel.kind == S.HYPERSLABS:
            coords = coords[np.lexsort(coords.T[::-1])]
            axes = tuple(len(np.unique(coords[:, k])) for k in range(coords.shape[1]))
            if int(np.prod(axes)) == n:
                shape = axes
        lo, hi = coords.min(axis=0), coords.max(axis=0) + 1
        box = self.read(tuple(slice(int(a), int(b)) for a, b in zip(lo, hi)), names=names)
        return box[tuple((coords - lo).T)].reshape(shape)

    def read_direct(self, dest, source_sel=None, dest_sel=None):
        """Read ``self[source_sel]`` into ``dest[dest_sel]`` (h5py's read_direct: ``dest`` a
        C-contiguous writable array, the selections of shapes that broadcast, else
        TypeError)."""
        if self.shape is None:
            raise TypeError("Empty datasets have no numpy representation")
        if not (isinstance(dest, np.ndarray) and dest.flags.c_contiguous and
                dest.flags.writeable):
            raise TypeError("Array must be C-contiguous and writable")
        src = np.asarray(self[source_sel] if source_sel is not None else self[()])
        target = dest[dest_sel] if dest_sel is not None else dest
        target_shape = np.shape(target)
        try:
            ok = np.broadcast_shapes(src.shape, target_shape) == target_shape
        except ValueError:
            ok = False
        if not ok:
            raise TypeError(f"Can't broadcast {src.shape} -> {target_shape}")
        if dest_sel is None:
            dest[...] = src
        else:
            dest[dest_sel] = src

    def astype(self, dtype):
        dtype = np.dtype(dtype)
        if dtype.kind == "T":
            from ..dtypes import check_string_dtype
            if check_string_dtype(self.dtype) is None:
                raise TypeError("dset.astype(StringDType()) can only be used on datasets "
                                "with an HDF5 string datatype")
        return _AsType(self, dtype)

    def asstr(self, encoding=None, errors="strict"):
        from ..dtypes import check_string_dtype
        info = check_string_dtype(self.dtype)
        if info is None:
            raise TypeError("dset.asstr() can only be used on datasets with an HDF5 string datatype")
        return _AsStr(self, encoding or info.encoding, errors)

    def fields(self, names):
        if self.dtype.names is None:
            raise ValueError("dset.fields() can only be used on datasets with a compound type")
        return _Fields(self, [names] if isinstance(names, str) else list(names),
                       structured=not isinstance(names, str))


def _fields(arr, names, structured=False):
    if len(names) == 1 and not structured:
        return np.asarray(arr[names[0]], order="C")     # 0-d stays 0-d
    from numpy.lib import recfunctions
    return recfunctions.repack_fields(arr[list(names)])


def _no_copy_false(owner, copy):
    if copy is False:
        raise ValueError(f"{type(owner).__name__}.__array__ received copy=False but memory "
                         f"allocation cannot be avoided on read")


class _Reader:
    """What ``Dataset._fast_reader`` gives: ``read(args)`` is ``ds[args]`` (the fast path
    for plain integers and slices of a read-only dataset, the general one otherwise)."""

    def __init__(self, ds):
        self._ds = ds

    def read(self, args):
        return self._ds[args]


class _Wrapper:
    """A read view of a dataset (h5py's AbstractView): the dataset's shape, its own dtype."""

    def __init__(self, ds):
        self._ds = ds

    def __len__(self):
        return len(self._ds)

    @property
    def ndim(self):
        return self._ds.ndim

    @property
    def shape(self):
        return self._ds.shape

    @property
    def size(self):
        return self._ds.size

    def __array__(self, dtype=None, copy=None):
        _no_copy_false(self, copy)
        return np.asarray(self[()], dtype=dtype or self.dtype)


class _AsType(_Wrapper):
    def __init__(self, ds, dtype):
        super().__init__(ds)
        self._dtype = dtype

    @property
    def dtype(self):
        return self._dtype

    def __getitem__(self, args):
        data = self._ds[args]
        scalar = not isinstance(data, np.ndarray)
        data = np.asarray(data)
        if self._dtype.kind == "T" and data.dtype == object:   # variable-length strings
            data = _decoded(data)
        if data.dtype.kind in "OT" or self._dtype.kind in "OT":
            out = data.astype(self._dtype)
        else:       # as libhdf5 converts the read: out-of-range integers saturate, ...
            from ..write.values import cast
            out = cast(data, self._dtype)
        return out[()] if scalar else out     # a scalar stays a scalar


def _decoded(data):
    """An object array of bytes and str as str (UTF-8), for numpy's StringDType."""
    out = np.empty(data.shape, object)
    flat = out.reshape(-1)
    for i, item in enumerate(data.reshape(-1)):
        flat[i] = item.decode("utf-8", "surrogateescape") if isinstance(item, bytes) else item
    return out


class _AsStr(_Wrapper):
    def __init__(self, ds, encoding, errors):
        super().__init__(ds)
        self._encoding, self._errors = encoding, errors

    dtype = np.dtype(object)

    def __getitem__(self, args):
        data = self._ds[args]
        if isinstance(data, (bytes, np.bytes_)):
            return bytes(data).decode(self._encoding, self._errors)
        arr = np.asarray(data)
        out = np.empty(arr.shape, object)
        flat = out.reshape(-1)
        for i, item in enumerate(arr.reshape(-1)):
            flat[i] = bytes(item).decode(self._encoding, self._errors)
        return out


class _Fields(_Wrapper):
    """``ds.fields(names)``: a list of names reads a structured array (even of one field), a
    single name a plain array, as h5py's."""

    def __init__(self, ds, names, structured):
        super().__init__(ds)
        self._names = names
        self._structured = structured

    @property
    def dtype(self):
        fields = self._ds.dtype.fields
        if not self._structured:
            return fields[self._names[0]][0]
        return np.dtype([(n, fields[n][0]) for n in self._names])

    def __getitem__(self, args):
        args = args if isinstance(args, tuple) else (args,)
        data = self._ds.read(args, names=self._names, structured=self._structured)
        if args == () and self._ds.ndim == 0 and isinstance(data, np.ndarray):
            return data.reshape(())[()]        # ds[()] of a scalar dataset: a scalar
        return data
