"""Raw data access for each layout class: compact, contiguous, external, chunked.

Every storage reads a canonical Selection (see purehep.selections) into an array of the file's
element dtype; conversion to the values users see happens after, in the dataset.
"""
import math
import os

import numpy as np

from ..errors import AllocationError, FormatError, UnsupportedFeatureError
from ..format.local_heap import local_heap
from ..format.messages import layout as L
from ..io import memory
from ..io.prefix import external_file
from ..selections import Selection
from . import ChunkedStorage


def fast_box(args, shape, read_box):
    """``read_box(starts, stops, shape of the result)`` for basic indexing ``args`` (ints
    and step-1 slices, h5py's rules), or None when ``args`` needs the general path (steps, fancy or
    boolean indices, ellipsis, out-of-range or empty selections) or ``read_box`` declines."""
    if type(args) is slice and len(shape) == 1 and args.step is None:  # ds[a:b], the commonest
        lo, hi, _ = args.indices(shape[0])
        return read_box((lo,), (hi,)) if hi > lo else None
    if type(args) is not tuple:
        args = (args,)
    if len(args) > len(shape):
        return None
    starts, stops, out = [], [], []
    for a, n in zip(args, shape):
        if type(a) is slice:
            if a.step is not None and a.step != 1:
                return None
            lo, hi, _ = a.indices(n)
            if hi <= lo:
                return None
            starts.append(lo)
            stops.append(hi)
            out.append(hi - lo)
        elif type(a) is int or isinstance(a, np.integer):
            i = int(a)
            i = i + n if i < 0 else i
            if not 0 <= i < n:
                return None
            starts.append(i)
            stops.append(i + 1)
        else:
            return None
    for n in shape[len(args):]:   # dimensions not indexed: whole
        if not n:
            return None
        starts.append(0)
        stops.append(n)
        out.append(n)
    raw = read_box(starts, stops, out)
    if raw is None:
        return None
    return raw[()] if not out else raw


def element_dtype(file_dtype):
    """The dtype raw data is read with: an array (subarray) type as an opaque element of its
    size, because numpy would expand a subarray dtype into extra dimensions."""
    if file_dtype.subdtype is not None:
        return np.dtype((np.void, file_dtype.itemsize))
    return file_dtype


def as_elements(raw, file_dtype):
    """Raw elements viewed with the file dtype (array types gain their trailing dimensions)."""
    return raw.view(file_dtype) if file_dtype.subdtype is not None else raw


def _index(arr, sel):
    """Apply a canonical selection to an in-memory array (basic slicing where possible)."""
    if sel is None:
        return arr
    dims = sel.dims
    if all(isinstance(d, slice) for d in dims):
        return arr[tuple(dims)]
    for axis, d in enumerate(dims):  # one axis at a time keeps memory bounded by the result
        index = (slice(None),) * axis + (d,)
        arr = arr[index]
    return arr


class MemoryStorage:
    """Data held in memory: compact layout (bytes in the layout message) or a fill value."""

    def __init__(self, array):
        self.array = array
        self.storage_size = 0

    def read(self, sel, copy=True):
        out = _index(self.array, sel)
        if not copy:
            return out
        arr = memory.empty(out.shape, out.dtype, "dataset read")
        arr[...] = out
        return arr


def compact(layout, shape, file_dtype):
    n = math.prod(shape)
    need = n * file_dtype.itemsize
    if len(layout.compact_data) < need:
        raise FormatError(f"compact data holds {len(layout.compact_data)} bytes, the dataspace "
                          f"needs {need}", "data layout message", layout.offset)
    arr = np.frombuffer(layout.compact_data, file_dtype, count=n).reshape(shape)
    storage = MemoryStorage(arr)
    storage.storage_size = len(layout.compact_data)
    return storage


class FillStorage:
    """A dataset whose storage was never written: every element is the fill value, built at
    the shape of what is read (a never-written dataset may declare more elements than any
    array can hold)."""

    storage_size = 0

    def __init__(self, shape, fill):
        self.shape = tuple(shape)
        self.fill = fill

    def read(self, sel, copy=True):
        shape = self.shape if sel is None else sel.read_shape
        if not copy:
            return np.broadcast_to(self.fill, shape)
        return memory.full(shape, self.fill, self.fill.dtype, "dataset of fill values")


class ContiguousStorage:
    """One block of the file (spec IV.A.2.i, layout class 1), read in row ranges."""

    def __init__(self, ctx, address, shape, file_dtype):
        self.ctx = ctx
        self.address = address
        self.shape = tuple(shape)
        self.dtype = file_dtype
        n = math.prod(self.shape)
        self.storage_size = n * file_dtype.itemsize
        ctx.check_range(address, self.storage_size, "contiguous dataset storage")

    def _rows(self, first, last, mapped=False):
        """Rows first..last-1 of dimension 0: an array of its own, or with ``mapped`` a
        read-only view of the file's memory (``ByteSource.mapped_view``: zero-copy)."""
        row = self.dtype.itemsize * (math.prod(self.shape[1:]) if self.shape else 1)
        shape = (last - first,) + self.shape[1:] if self.shape else ()
        at = self.ctx.absolute(self.address + first * row)
        if mapped:
            buf = self.ctx.source.mapped_view(at, (last - first) * row, "dataset raw data")
            return np.frombuffer(buf, self.dtype).reshape(shape)
        out = memory.empty(shape, self.dtype, "dataset read")
        self.ctx.source.readinto(at, out.reshape(-1).view(np.uint8),  # datetime64 and
                                 "dataset raw data")                  # timedelta64 have no
        return out                                                    # buffer protocol

    def read(self, sel, copy=True):
        if not self.shape:
            return self._rows(0, 1, mapped=not copy)
        if sel is None or sel.is_full:
            return self._rows(0, self.shape[0], mapped=not copy)
        if sel.nselected == 0:
            return memory.zeros(sel.read_shape, self.dtype, "dataset read")
        d0 = sel.dims[0]
        first, last = (d0.start, d0.stop) if isinstance(d0, slice) else (int(d0[0]), int(d0[-1]) + 1)
        block = self._rows(first, last, mapped=not copy)
        local0 = slice(0, last - first, d0.step) if isinstance(d0, slice) else d0 - first
        local = Selection(block.shape, (local0,) + tuple(sel.dims[1:]), [], None)
        out = _index(block, local)
        if out.base is None or (out.base is block and out.shape == block.shape and copy):
            return out            # an array of its own (fancy indexing), or the rows read
        return np.array(out)

    def read_box(self, starts, stops, shape=None):
        """A copy of the box [starts, stops) (as an array of ``shape`` when given): only its
        rows of dimension 0 are read."""
        rows = self._rows(starts[0], stops[0])
        box = rows[(slice(None),) + tuple(slice(a, b) for a, b in zip(starts[1:], stops[1:]))]
        box = rows if box.shape == rows.shape else np.array(box)
        return box if shape is None else box.reshape(shape)


class ExternalStorage:
    """Raw data in external files (spec IV.A.2.h): segments concatenated in slot order; a
    segment past the end of its file reads as zeros, as libhdf5 reads it."""

    def __init__(self, ctx, external, shape, maxshape, file_dtype, prefix=None):
        self.shape = tuple(shape)
        self.dtype = file_dtype
        self.offset = external.offset
        self._check_room(ctx, external, maxshape)
        self.segments = external_segments(ctx, external, prefix)
        self.storage_size = sum(s for _, _, s in self.segments)

    def _check_room(self, ctx, external, maxshape):
        """libhdf5's check on opening (H5D__efl_construct): the slots must hold the dataset at
        its maximum extent (an unlimited slot, size all ones, holds anything; an unlimited
        dataspace needs one)."""
        unlimited = (1 << (8 * ctx.sizeof_lengths)) - 1
        sizes = [slot.size for slot in external.slots]
        room = None if unlimited in sizes else sum(sizes)
        if any(m is None for m in maxshape):
            if room is not None:
                raise FormatError("an unlimited dataspace with external storage of finite size",
                                  "external data files message", self.offset)
        elif room is not None and math.prod(maxshape) * self.dtype.itemsize > room:
            raise FormatError(f"the dataspace needs {math.prod(maxshape) * self.dtype.itemsize} "
                              f"bytes, the external files hold {room}",
                              "external data files message", self.offset)

    def read(self, sel, copy=True):
        n = math.prod(self.shape)
        memory.check_size((n,), self.dtype.itemsize, "dataset read")
        buf = read_segments(self.segments, n * self.dtype.itemsize, self.offset)
        arr = np.frombuffer(buf, self.dtype).reshape(self.shape)
        return np.array(_index(arr, sel))


def external_slots(ctx, external):
    """(name as stored, offset, size) of each slot of an External Data Files message."""
    heap = local_heap(ctx, external.heap_address)
    return [(heap.string(slot.name_offset, ctx).decode("utf-8", "surrogateescape"),
             slot.offset, slot.size) for slot in external.slots]


def external_segments(ctx, external, prefix=None):
    """(path, offset, size) of each slot of an External Data Files message, its file found
    as libhdf5 finds it with the external file ``prefix`` in force (io.prefix)."""
    return [(external_file(prefix, name, ctx.path), offset, size)
            for name, offset, size in external_slots(ctx, external)]


def read_segments(segments, nbytes, offset=None, missing_ok=False):
    """The first ``nbytes`` of the data the segments hold, as a bytearray (what a file does
    not reach reads as zeros, and a missing file when ``missing_ok``); ``offset``: the
    External Data Files message's, for errors."""
    try:
        buf = bytearray(nbytes)
    except MemoryError:
        raise AllocationError(f"cannot allocate {nbytes} bytes for external data") from None
    pos = 0
    for path, start, size in segments:
        if pos >= nbytes:
            break
        take = min(size, nbytes - pos)
        try:
            with open(path, "rb") as fh:
                fh.seek(start)
                data = fh.read(take)
        except OSError as exc:
            if not (missing_ok and isinstance(exc, FileNotFoundError)):
                raise FormatError(f"cannot read external file {path!r}: {exc}",
                                  "external data files message", offset) from None
            data = b""
        buf[pos:pos + len(data)] = data
        pos += take
    return buf


def write_segments(segments, data):
    """Write ``data`` (bytes-like) across the segments in order, creating missing files (as
    libhdf5 does; external files are written in place, outside the HDF5 file's commit)."""
    data = memoryview(data).cast("B")
    pos = 0
    for path, offset, size in segments:
        if pos >= len(data):
            break
        take = min(size, len(data) - pos)
        with open(path, "r+b" if os.path.exists(path) else "w+b") as fh:
            fh.seek(offset)
            fh.write(data[pos:pos + take])
        pos += take


class ChunkedAdapter:
    """Adapts purehep.chunks.ChunkedStorage (coordinate arrays) to canonical selections."""

    def __init__(self, chunked):
        self.chunked = chunked

    @property
    def storage_size(self):
        """Bytes stored in chunks (decodes the chunk index: asked for, not at open)."""
        return self.chunked.storage_size

    def read(self, sel, copy=True):
        if sel is None or sel.is_full:
            return self.chunked.read(None)
        box = sel.box()
        if box is not None:
            out = self.chunked.read_box(*box)
            if out is not None:
                return out
        return self.chunked.read(sel.coords())


def check_layout(layout, dataspace, datatype):
    """Refuse a chunked layout that disagrees with the dataspace or datatype (before anything
    of the datatype's size is allocated)."""
    if layout.layout_class != L.CHUNKED:
        return
    shape = dataspace.shape if dataspace.shape is not None else ()
    if layout.element_size != datatype.size:
        raise FormatError(f"chunk element size {layout.element_size} differs from the datatype "
                          f"size {datatype.size}", "data layout message", layout.offset)
    if len(layout.chunk_shape) != len(shape):
        raise FormatError(f"chunk rank {len(layout.chunk_shape)} differs from the dataspace "
                          f"rank {len(shape)}", "data layout message", layout.offset)
    chunk_bytes = math.prod(layout.chunk_shape) * layout.element_size
    if chunk_bytes > 0xFFFFFFFF:      # libhdf5 refuses it on open (H5D__chunk_set_sizes)
        raise FormatError(f"chunks of {chunk_bytes} bytes (libhdf5 requires less than 4 GiB)",
                          "data layout message", layout.offset)


def open_storage(ctx, layout, dataspace, datatype, filters, make_fill, external, threads=None,
                 cache_bytes=0, efile_prefix=None):
    """The storage object for a dataset's layout message (``cache_bytes``: the budget of a
    chunked dataset's decoded-chunk cache; ``efile_prefix``: the external file prefix in
    force, io.prefix)."""
    shape = dataspace.shape if dataspace.shape is not None else ()
    dtype = element_dtype(datatype.file_dtype)
    if layout.layout_class == L.COMPACT:
        return compact(layout, shape, dtype)
    if layout.layout_class == L.CONTIGUOUS:
        if external is not None:
            maxshape = dataspace.maxshape if dataspace.maxshape is not None else shape
            return ExternalStorage(ctx, external, shape, maxshape, dtype, efile_prefix)
        if layout.address is None:
            return FillStorage(shape, make_fill())
        return ContiguousStorage(ctx, layout.address, shape, dtype)
    if layout.layout_class == L.CHUNKED:
        check_layout(layout, dataspace, datatype)
        maxshape = dataspace.maxshape if dataspace.maxshape is not None else shape
        return ChunkedAdapter(ChunkedStorage(ctx, layout, shape, dtype, filters, make_fill(),
                                             threads, maxshape=maxshape,
                                             cache_bytes=cache_bytes))
    if layout.layout_class == L.STRUCTURED:
        from .structured import SparseAdapter, SparseStorage   # loaded for sparse data only
        maxshape = dataspace.maxshape if dataspace.maxshape is not None else shape
        return SparseAdapter(SparseStorage(ctx, layout, shape, maxshape, dtype, filters,
                                           make_fill(), threads))
    raise UnsupportedFeatureError(f"layout class {layout.layout_class}")
