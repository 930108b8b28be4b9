"""Where a dataset's values live while a file is being written.

* ``MemoryStore``: the values in memory (user form) — compact datasets and datatypes that
  need the global heap or object addresses (vlen, references), converted when emitted.
* ``ContiguousStore``: one block of the raw-data area, allocated on first write (libhdf5's
  late allocation) and written in place.
* ``ExternalStore``: external files named by the External Data Files message.
* ``ChunkStore``: chunks of the raw-data area. Chunks a write covers completely are filtered on
  a thread pool and written at once, in chunk order; partly written chunks stay in memory until
  the next flush. ``records`` maps chunk grid positions to (address, stored size, filter mask).
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import selections as _sel
from ..chunks.storage import read_segments, write_segments

_POOL = {}
DIRTY_LIMIT = 256 << 20
READY_LIMIT = 32 << 20   # whole chunks of one write filtered and written per batch


def pool():
    p = _POOL.get("pool")
    if p is None:
        p = _POOL["pool"] = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
    return p


def broadcast_values(values, shape, dtype):
    """``values`` as an array of ``shape`` elements of ``dtype``; an array dtype's elements
    are held expanded, numpy's way: its base type, with its dimensions trailing. Values
    that cannot be broadcast raise h5py's TypeError."""
    base, full = dtype.base, tuple(shape) + dtype.shape
    arr = np.asarray(values, dtype=base) if not (isinstance(values, np.ndarray) and
                                                 values.dtype == base) else values
    if arr.shape == full:
        return arr
    try:
        return np.broadcast_to(arr, full)
    except ValueError:
        raise TypeError(f"Can't broadcast {arr.shape} -> {tuple(shape)}") from None


def h5py_order(args, values, shape, dtype):
    """(index, values) for numpy's item assignment that writes what h5py writes for the
    selection ``args``: with an index list (or a boolean array along one axis) and integer
    indices, numpy moves the list's axis first (its advanced indices are not side by side),
    h5py keeps every axis in place; the integers become one-element slices and the values
    get their axes."""
    args = args if isinstance(args, tuple) else (args,)
    ints = [i for i, a in enumerate(args) if isinstance(a, (int, np.integer))]
    if not ints or any(a is Ellipsis for a in args) or not any(
            isinstance(a, (list, np.ndarray)) for a in args):
        return args, values
    index = tuple(slice(a, a + 1 or None) if i in ints else a for i, a in enumerate(args))
    target = np.broadcast_to(np.zeros((), np.uint8), shape)[index].shape
    mshape = tuple(n for i, n in enumerate(target) if i not in ints)
    if not (isinstance(values, np.ndarray) and values.dtype == dtype.base):
        values = np.asarray(values, dtype=dtype.base)
    return index, np.expand_dims(np.broadcast_to(values, mshape + dtype.shape), tuple(ints))


def _without_ellipsis(args, rank):
    """``args`` with an Ellipsis spelled out as the whole of the dimensions it stands for:
    an array type's dimensions come after the dataset's, where numpy would also put some."""
    args = args if isinstance(args, tuple) else (args,)
    if not any(a is Ellipsis for a in args):
        return args
    at = next(i for i, a in enumerate(args) if a is Ellipsis)
    fill = (slice(None),) * max(0, rank - len(args) + 1)
    return args[:at] + fill + args[at + 1:]


WINDOW_BYTES = 64 << 20      # a contiguous dataset's rows updated at once by a partial write


def row_window(args, shape):
    """(lo, hi, local): the rows lo..hi-1 of dimension 0 a numpy index ``args`` of an
    array of ``shape`` touches, and ``args`` for those rows alone (a write reads, changes and
    writes back only them). Every row when the first index is not a plain int, slice, 1-D
    integer list or boolean mask (or fails: numpy then raises its own error)."""
    args = args if isinstance(args, tuple) else (args,)
    whole = (0, shape[0] if shape else 1, args)
    if not shape or not args or args[0] is Ellipsis or not shape[0]:
        return whole
    first, n = args[0], shape[0]
    if isinstance(first, (int, np.integer)) and not isinstance(first, bool):
        i = int(first) + n if first < 0 else int(first)
        return (i, i + 1, (0,) + args[1:]) if 0 <= i < n else whole
    if isinstance(first, slice):
        start, stop, step = first.indices(n)
        rows = range(start, stop, step)
        if not rows:
            return 0, 0, (slice(0, 0, 1),) + args[1:]
        lo, hi = min(rows[0], rows[-1]), max(rows[0], rows[-1]) + 1
        local = slice(start - lo, stop - lo if stop - lo >= 0 else None, step)
        return lo, hi, (local,) + args[1:]
    index = np.asarray(first) if isinstance(first, (list, np.ndarray)) else None
    if index is None or index.ndim != 1 or not index.size:
        return whole
    if index.dtype == bool:
        picked = np.flatnonzero(index)
        if len(index) != n or not len(picked):
            return whole
        lo, hi = int(picked[0]), int(picked[-1]) + 1
        return lo, hi, (index[lo:hi],) + args[1:]
    if index.dtype.kind not in "iu":
        return whole
    index = np.where(index < 0, index + n, index)
    if index.min() < 0 or index.max() >= n:
        return whole
    lo, hi = int(index.min()), int(index.max()) + 1
    return lo, hi, (index - lo,) + args[1:]


def _bare(dt):
    if dt.metadata is None:
        return dt
    if dt.names is not None:
        return np.dtype({"names": list(dt.names),
                         "formats": [_bare(dt.fields[n][0]) for n in dt.names],
                         "offsets": [dt.fields[n][1] for n in dt.names],
                         "itemsize": dt.itemsize})
    return np.dtype(dt.str) if dt.kind != "V" or dt.subdtype is None else dt


class MemoryStore:
    """Values kept in memory (``array`` of the dataset's dtype)."""

    def __init__(self, shape, dtype, fill):
        self.dtype = dtype
        self.array = np.empty(shape or (), dtype)
        _fill(self.array, fill if fill is not None else _zero(dtype))

    def write(self, args, values):
        if isinstance(values, np.ndarray) and values.ndim == 0 and self.array.dtype == object:
            # into a view (a trailing Ellipsis): numpy copies the element, not the 0-d array
            # as the element, and an element that is itself an array is not broadcast
            args = args if isinstance(args, tuple) else (args,)
            if not any(a is Ellipsis for a in args):
                args = args + (Ellipsis,)
        else:
            args, values = h5py_order(args, values, self.array.shape, self.array.dtype)
        self.array[args] = values

    def resize(self, shape, fill):
        new = np.empty(shape, self.dtype)
        _fill(new, fill if fill is not None else _zero(self.dtype))
        common = tuple(slice(0, min(a, b)) for a, b in zip(shape, self.array.shape))
        new[common] = self.array[common]
        self.array = new


def _fill(arr, value):
    if arr.dtype == object:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]         # a 0-d array fill value: its element (as h5py takes it)
        flat = arr.reshape(-1)
        for i in range(flat.size):
            flat[i] = value
    else:
        arr[...] = value


def _zero(dtype):
    """The value of an element never written (of an array dtype: of each of its items):
    zeros, libhdf5's default fill value: None for variable-length strings (a null heap ID,
    read as b"" but which libnetcdf tells from an empty string: ncdump's NIL), empty
    sequences (stored as null heap IDs too) for other variable-length members."""
    base = dtype.base
    meta = base.metadata or {}
    if "vlen" in meta:
        return None if meta["vlen"] in (str, bytes) else np.zeros(0, meta["vlen"])
    zero = np.zeros((), base)
    if base.names is not None and base.hasobject:
        for name in base.names:
            member = zero[name]
            value = _zero(base.fields[name][0])
            if member.dtype == object:      # each item, even where the value is an array
                for index in np.ndindex(member.shape):
                    member[index] = value
            else:
                member[...] = value
    return zero[()]


class ContiguousStore:
    """A block of the raw-data area (address None until something is written)."""

    def __init__(self, writer, shape, dtype, fill_bytes):
        self.writer = writer
        self.shape = tuple(shape)
        self.dtype = _bare(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.fill_bytes = fill_bytes
        self.address = None

    def raw_blocks(self):
        """The raw-data blocks this store holds: (address, size)."""
        return [(self.address, self.nbytes)] if self.address is not None else []

    def _allocate(self, initialize=True):
        filled = self.fill_bytes is not None and any(self.fill_bytes)
        self.address = self.writer.alloc_raw(self.nbytes, zero=initialize and not filled)
        if initialize and filled:
            fill = np.frombuffer(self.fill_bytes, np.uint8)
            block = np.tile(fill, min(self.nbytes // len(fill), 1 << 20) or 1)
            pos = 0
            while pos < self.nbytes:
                part = block[:self.nbytes - pos]
                self.writer.sink.write_raw(self.writer.absolute(self.address) + pos, part)
                pos += part.size

    def write(self, args, values):
        if self.nbytes == 0:
            return
        whole = args is Ellipsis or args == () or (len(args) == 1 and args[0] is Ellipsis)
        if whole:
            arr = broadcast_values(values, self.shape, self.dtype)
            if self.address is None:
                self._allocate(initialize=False)
            self.writer.sink.write_raw(self.writer.absolute(self.address),
                                   np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
            return
        if self.address is None:
            self._allocate()
        args, values = h5py_order(args, values, self.shape, self.dtype)
        lo, hi, local = row_window(_without_ellipsis(args, len(self.shape)), self.shape)
        if not (hi - lo > 1 and isinstance(local[0], slice) and local[0].step == 1 and
                not any(isinstance(a, (list, np.ndarray)) for a in local[1:])):
            self._update_rows(lo, hi, local, values)
            return
        # a run of rows: in blocks of at most WINDOW_BYTES, the values' rows along with them
        step = max(1, WINDOW_BYTES // self._row_bytes)
        values = np.broadcast_to(values, np.broadcast_to(
            np.zeros((), np.uint8), (hi - lo,) + self.shape[1:] + self.dtype.shape)[local].shape)
        for a in range(lo, hi, step):
            b = min(a + step, hi)
            self._update_rows(a, b, (slice(0, b - a),) + local[1:], values[a - lo:b - lo])

    @property
    def _row_bytes(self):
        """Bytes of one row of dimension 0 (the whole for a scalar)."""
        return self.nbytes // self.shape[0] if self.shape else self.nbytes

    def _update_rows(self, lo, hi, local, values):
        """Rows lo..hi-1 read, ``[local] = values`` applied to them, written back (no map
        of the file: a page of a map past the end of a file another process shortened
        kills the process)."""
        row = self._row_bytes
        sink, start = self.writer.sink, self.writer.absolute(self.address) + lo * row
        window = np.frombuffer(bytearray(sink.read(start, (hi - lo) * row)), self.dtype)
        window = window.reshape(((hi - lo,) + self.shape[1:] if self.shape else ()) +
                                self.dtype.shape)       # (an array type's dimensions last)
        window[local] = values
        sink.write_raw(start, window.reshape(-1).view(np.uint8))


class ExternalStore:
    """Raw data in external files (``segments``: (path, offset, size) in slot order), written
    straight into them as libhdf5 does; a partial write reads, updates and writes back (files
    not made yet read as zeros: libhdf5 creates them as it writes)."""

    def __init__(self, segments, shape, dtype):
        self.segments = list(segments)
        self.shape = tuple(shape)
        self.dtype = _bare(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def write(self, args, values):
        if args is Ellipsis or args == () or (len(args) == 1 and args[0] is Ellipsis):
            arr = np.ascontiguousarray(broadcast_values(values, self.shape, self.dtype))
        else:
            arr = np.frombuffer(read_segments(self.segments, self.nbytes, missing_ok=True),
                                self.dtype.base).reshape(self.shape + self.dtype.shape)
            args, values = h5py_order(args, values, self.shape, self.dtype)
            arr[args] = values
        write_segments(self.segments, arr.reshape(-1).view(np.uint8))


def growth_room(n, old):
    """Bytes past ``n`` given to the slot of a chunk of ``n`` bytes whose last version had
    ``old`` (None: a first version, given none).

    A chunk that grew by more than a 256th is given room to grow into: an eighth more or
    twice the growth, at most as much again, unless it grew more than twice over (replaced,
    not appended to: a dataset created with zeros and then written); its slot ends 8-byte
    aligned. libhdf5 keeps such a chunk in its chunk cache until the file is closed; a commit
    here writes it, in a new slot (the last commit's version stays until this one is on
    disk), so that a chunk appended to at each commit (a compressed one) finds the slot it
    left a commit before big enough for its next version. (A 64th was too much: versioned-hdf5's
    hash table, +1.4 % a commit at 30 KB, took a new slot at every commit, and the holes
    left made the versioned benchmark's file 0.6 % larger than the package's.)

    A chunk whose size changed is given at least its size class (:func:`size_class`): the
    chunks of a compressed dataset rewritten in every session differ by a few bytes, and
    slots of one class hold any of them, so that the slots the last versions leave hold the
    next ones (the unused ends are freed at close, :meth:`ChunkStore.trim_slots`)."""
    if old is None or n == old:
        return 0
    grown, room = n - old, 0
    if n // 256 < grown <= old:     # (less: noise; more than twice over: replaced)
        room = ((n + min(n, max(n // 8, 2 * grown)) + 7) & ~7) - n
    return max(room, size_class(n) - n)


def size_class(n):
    """``n`` rounded up to a multiple of a power of two about a 64th of it (8 at least):
    1.6 % more at most."""
    step = max(8, 1 << max(0, (n // 64).bit_length() - 1))
    return -(-n // step) * step


class ChunkStore:
    """Chunks in the raw-data area plus partly written chunks in memory."""

    flush_before_emit = True      # pending chunks are written before the metadata

    def __init__(self, writer, node):
        self.writer = writer
        self.node = node
        self.dtype = _bare(node.dtype)
        self.chunks = tuple(node.chunks)
        self.itemsize = self.dtype.itemsize
        self.chunk_nbytes = int(np.prod(self.chunks)) * self.itemsize
        self.records = {}          # scaled -> [address, stored size, mask, slot size]
        self.dirty = {}            # scaled -> chunk array
        self.dirty_bytes = 0
        self.fill = np.zeros((), self.dtype)
        if node.fill is not None and node.fill_time != "never":   # never: libhdf5 zeroes
            self.fill = np.frombuffer(node.fill, self.dtype.base).reshape(self.dtype.shape)
        self.implicit_base = None

    @property
    def shape(self):
        return self.node.shape

    def grid(self, shape=None):
        shape = self.shape if shape is None else shape
        return tuple(-(-s // c) for s, c in zip(shape, self.chunks))

    def raw_blocks(self):
        """The raw-data blocks this store holds: (address, size)."""
        if self.implicit_base is not None:
            return [(self.implicit_base, int(np.prod(self.grid(self.node.maxshape))) *
                     self.chunk_nbytes)]
        return [(r[0], r[3]) for r in self.records.values()]

    def trim_slots(self):
        """Cut each chunk's slot down to the chunk it holds and return the cut-off ends
        ((address, size)): the room :func:`growth_room` gave is for a chunk rewritten before
        the next commit, which can no longer be once the session is over, and no commit ever
        referred to it (a slot's chunk changes only while the slot is new, and a commit
        refers to the stored size only). A reopened file knows the stored sizes only: without
        this, the room would be lost for good."""
        if self.implicit_base is not None:
            return []
        tails = []
        for rec in self.records.values():
            if rec[3] > rec[1]:
                tails.append((rec[0] + rec[1], rec[3] - rec[1]))
                rec[3] = rec[1]
        return tails

    def allocate_all(self):
        """Early allocation (implicit index): every chunk of the maximum grid, back to back,
        written with the fill value."""
        grid = self.grid(self.node.maxshape)
        n = int(np.prod(grid))
        self.implicit_base = self.writer.alloc_raw(n * self.chunk_nbytes)
        chunk = self._new_chunk()
        raw = chunk.reshape(-1).view(np.uint8)
        for i in range(n):
            addr = self.implicit_base + i * self.chunk_nbytes
            self.writer.sink.write_raw(self.writer.absolute(addr), raw)
            scaled = tuple(int(x) for x in np.unravel_index(i, grid))
            self.records[scaled] = [addr, self.chunk_nbytes, 0, self.chunk_nbytes]

    def _new_chunk(self):
        c = np.empty(self.chunks, self.dtype)
        c[...] = self.fill
        return c

    def _load(self, scaled):
        """The chunk at ``scaled`` as a writable array (from memory, the file, or new)."""
        c = self.dirty.get(scaled)
        if c is not None:
            return c
        rec = self.records.get(scaled)
        if rec is None:
            c = self._new_chunk()
        else:
            raw = self.writer.sink.read(self.writer.absolute(rec[0]), rec[1])
            if self.node.filters:
                from ..filters import decode_pipeline
                raw = decode_pipeline(raw, self.node.filters, rec[2], self.itemsize,
                                      self.chunk_nbytes)
            c = np.frombuffer(bytes(raw), self.dtype.base).reshape(
                self.chunks + self.dtype.shape).copy()
        self.dirty[scaled] = c
        self.dirty_bytes += self.chunk_nbytes
        return c

    # --- writing ---------------------------------------------------------------------------
    def write(self, args, values):
        shape = self.shape
        if int(np.prod(shape)) == 0:
            return
        args = args if isinstance(args, tuple) else (args,)
        if len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].dtype == bool \
                and args[0].shape == tuple(shape):
            box = tuple((0, n) for n in shape)
            block = self._read_box(box)
            block[args[0]] = values
            self._write_box(box, block)
            return
        sel = _sel.select(shape, args)
        if sel.nselected == 0:
            return
        vals = broadcast_values(values, sel.mshape, self.dtype).reshape(
            tuple(sel.read_shape) + self.dtype.shape)
        lo = [d.start if isinstance(d, slice) else int(d[0]) for d in sel.dims]
        hi = [d.stop if isinstance(d, slice) else int(d[-1]) + 1 for d in sel.dims]
        box = tuple(zip(lo, hi))
        if all(isinstance(d, slice) and d.step == 1 for d in sel.dims):
            self._write_box(box, vals)
        else:
            block = self._read_box(box)
            axes = [np.arange(d.start - l, d.stop - l, d.step) if isinstance(d, slice)
                    else d - l for d, l in zip(sel.dims, lo)]
            block[np.ix_(*axes)] = vals
            self._write_box(box, block)
        if self.dirty_bytes > DIRTY_LIMIT:
            self.flush_dirty()

    def _chunk_range(self, box):
        return [range(a // c, -(-b // c)) for (a, b), c in zip(box, self.chunks)]

    def _read_box(self, box):
        out = np.empty(tuple(b - a for a, b in box), self.dtype)
        for scaled in np.ndindex(*[len(r) for r in self._chunk_range(box)]):
            scaled = tuple(r[i] for r, i in zip(self._chunk_range(box), scaled))
            cs, os_ = self._overlap(scaled, box)
            c = self.dirty.get(scaled)
            if c is None:
                c = self._load(scaled)
            out[os_] = c[cs]
        return out

    def _overlap(self, scaled, box):
        """(slices in the chunk, slices in the box) where chunk ``scaled`` meets ``box``."""
        cs, bs = [], []
        for s, c, (a, b) in zip(scaled, self.chunks, box):
            c0 = s * c
            lo, hi = max(a, c0), min(b, c0 + c)
            cs.append(slice(lo - c0, hi - c0))
            bs.append(slice(lo - a, hi - a))
        return tuple(cs), tuple(bs)

    def _write_box(self, box, vals):
        ranges = self._chunk_range(box)
        ready = []
        shape = self.shape
        for idx in np.ndindex(*[len(r) for r in ranges]):
            scaled = tuple(r[i] for r, i in zip(ranges, idx))
            cs, bs = self._overlap(scaled, box)
            full = all(sl.start == 0 and (sl.stop == c or s * c + sl.stop >= dim)
                       for sl, c, s, dim in zip(cs, self.chunks, scaled, shape))
            if full and scaled not in self.dirty:
                c = self._new_chunk()
                c[cs] = vals[bs]
                ready.append((scaled, c))
                if len(ready) * self.chunk_nbytes >= READY_LIMIT:
                    self._store(ready)      # bounded memory: a big write goes in batches
                    ready = []
            else:
                c = self._load(scaled)
                c[cs] = vals[bs]
        if ready:
            self._store(ready)

    def flush_dirty(self):
        """Filter and write every chunk still in memory, in chunk order."""
        items = sorted(self.dirty.items())
        self.dirty = {}
        self.dirty_bytes = 0
        if items:
            self._store(items)

    def _store(self, items):
        """Filter ``items`` [(scaled, array)] on the thread pool and write them in order."""
        filters = self.node.filters
        itemsize, nbytes = self.itemsize, self.chunk_nbytes
        for scaled, _ in items:
            if scaled in self.dirty:
                del self.dirty[scaled]
                self.dirty_bytes -= nbytes

        def encode(item):
            raw = np.ascontiguousarray(item[1]).reshape(-1).view(np.uint8)
            if not filters:
                return raw, 0
            from ..filters import encode_pipeline
            out, mask = encode_pipeline(raw, filters, itemsize, nbytes)
            return out, mask

        if filters:       # load the registry here, not racing in the pool's threads
            from ..filters import get_filter
            for f in filters:
                get_filter(f.id, f.name or None)
        if filters and len(items) > 1:
            batch = 4 * (os.cpu_count() or 1)
            for start in range(0, len(items), batch):
                part = items[start:start + batch]
                for (scaled, _), (data, mask) in zip(part, pool().map(encode, part)):
                    self._place(scaled, data, mask)
            return
        for item in items:
            data, mask = encode(item)
            self._place(item[0], data, mask)

    def write_raw(self, scaled, data, mask):
        """Store ``data`` (uint8, already filtered; ``mask`` the filters skipped) as the chunk
        at ``scaled``, replacing whatever was written there (H5Dwrite_chunk)."""
        if self.implicit_base is not None and len(data) != self.chunk_nbytes:
            raise ValueError(f"chunks of an implicit index hold exactly {self.chunk_nbytes} "
                             "bytes")
        if scaled in self.dirty:
            del self.dirty[scaled]
            self.dirty_bytes -= self.chunk_nbytes
        self._place(scaled, data, mask)

    def _place(self, scaled, data, mask):
        """Write chunk ``scaled``: over its own slot when the slot was allocated since the
        last commit (no committed structure refers to it: the allocator's rule for reusing
        space) and holds it or can grow where it stands, else in a new slot; a chunk that grew
        gets room to grow (:func:`growth_room`): rewritten larger at every commit, it then
        moves seldom, and the slots it leaves hold its next versions."""
        view = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else \
            data.reshape(-1).view(np.uint8)
        n = len(view)
        w = self.writer
        rec = self.records.get(scaled)
        own = rec is not None and (self.implicit_base is not None or
                                   w.alloc.fresh.get(rec[0]) == rec[3])
        room = growth_room(n, None if rec is None else rec[1])
        if own and n > rec[3] and w.extend_slot(rec[0], rec[3], n + room):
            rec[3] = n + room
        if own and n <= rec[3]:
            rec[1], rec[2] = n, mask
            addr = rec[0]
            w.touch()
        else:
            if own:
                w.release(rec[0], rec[3], self.node)     # (not on disk: free)
            addr, slot = w.alloc_slot(n, room)
            self.records[scaled] = [addr, n, mask, slot]
        w.sink.write_raw(w.absolute(addr), view)

    def resize(self, old_shape, new_shape):
        """Drop chunks outside the new extent; reset the cut-off parts of edge chunks to the
        fill value (so that growing again shows fill values, as libhdf5 does)."""
        grid = self.grid(new_shape)
        for scaled in list(self.records) + list(self.dirty):
            if any(s >= g for s, g in zip(scaled, grid)):
                rec = self.records.pop(scaled, None)
                if rec is not None and self.implicit_base is None and \
                        self.writer.alloc.fresh.get(rec[0]) == rec[3]:
                    self.writer.release(rec[0], rec[3], self.node)
                if self.dirty.pop(scaled, None) is not None:
                    self.dirty_bytes -= self.chunk_nbytes
        shrunk = [n < o for n, o in zip(new_shape, old_shape)]
        if any(shrunk):
            for scaled in list(self.records) + list(self.dirty):
                cut = []
                for s, c, n in zip(scaled, self.chunks, new_shape):
                    cut.append(max(0, min(c, n - s * c)))
                if all(x == c for x, c in zip(cut, self.chunks)):
                    continue
                c = self._load(scaled)
                keep = np.zeros(self.chunks, bool)
                keep[tuple(slice(0, x) for x in cut)] = True
                c[~keep] = self.fill
