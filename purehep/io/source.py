"""Byte sources: bounds-checked random access to the bytes of an HDF5 file.

Every read names the structure being read, so an out-of-range address or a truncated file
becomes a ``TruncatedError`` naming the structure and offset instead of a short read.
"""
import contextlib
import mmap
import os
import threading
from collections import OrderedDict

from ..errors import PurehepError, TruncatedError

_PREAD_SLICE = 64 << 20
GATHER_GAP = 4 << 10          # gather: ranges this close are read by one request
SPARE_BYTES = 16 << 20        # the scratch buffer kept for reuse (scratch) is at most this size


class ByteSource:
    """Random access to ``size`` bytes. Subclasses implement ``_read(offset, n)``."""

    size = 0
    path = None
    prefetch_batch = 0      # bytes of raw data a chunked read fetches ahead at once (0: none)
    zero_copy = False       # gather gives the source's own memory (a buffer), no copy

    def prefetch(self, ranges):
        """A context manager under which the absolute ``(offset, n)`` byte ranges are read
        from memory: a source whose requests are costly fetches them all at once, coalesced.
        By default nothing is fetched ahead (``prefetch_batch`` is 0)."""
        return contextlib.nullcontext()

    def warm(self, offsets):
        """Bring the metadata at the absolute ``offsets`` (object headers a walk is about to
        read) in ahead, together; by default nothing is done."""

    def read(self, offset, n, structure="data"):
        """Return ``n`` bytes at absolute ``offset`` as a bytes-like object."""
        if offset < 0 or n < 0 or offset + n > self.size:
            raise TruncatedError(
                f"{n} bytes requested but the file has {self.size} bytes",
                structure, offset)
        return self._read(offset, n)

    def read_small(self, offset, n, structure="data"):
        """``read`` for scattered small reads (index nodes and pages, small chunks found
        one at a time): the same bytes, copied where a copy costs less than a view."""
        return self.read(offset, n, structure)

    def readinto(self, offset, out, structure="data"):
        """Copy ``len(out)`` bytes at ``offset`` into the writable buffer ``out``."""
        view = _byte_view(out)
        view[:] = self.read(offset, len(view), structure)

    def mapped_view(self, offset, n, structure="data"):
        """``read``, zero-copy where the source can give a view of its memory (a buffer, or a
        map of a file on disk)."""
        return self.read(offset, n, structure)

    parallel_reads = False  # threads may read at once, each the ranges its work needs

    def gather(self, offsets, sizes, structure="data", scratch=None):
        """(uint8 array, position of each range in it) holding the ``sizes[i]`` bytes at
        absolute ``offsets[i]`` (int64 arrays, each range inside the file): ranges closer
        than GATHER_GAP are read together, by one ``readinto`` of the span they cover, into
        the uint8 array ``scratch`` where it is big enough (then the result views it)."""
        return self._read_runs(plan_runs(offsets, sizes), structure, scratch)

    def _read_runs(self, plan, structure, scratch):
        """``gather``'s reads of the runs of ``plan`` (``plan_runs``)."""
        import numpy as np
        runs, positions, need = plan
        buf = scratch[:need] if scratch is not None and len(scratch) >= need else \
            np.empty(need, np.uint8)
        self.read_runs(runs, buf, structure)
        buf = buf.view()
        buf.flags.writeable = False       # (one compiled form of the kernels that read it)
        return buf, positions

    def read_runs(self, runs, out, structure="data"):
        """Read the runs ``[(start, end, position)]`` of ``plan_runs`` into the writable
        uint8 array ``out``: the bytes from absolute ``start`` to ``end`` at ``position``."""
        for a, b, p in runs:
            self.readinto(a, out[p:p + b - a], structure)

    @contextlib.contextmanager
    def gathered(self, offsets, sizes, structure="data"):
        """``gather`` for use inside a ``with`` block only, into a scratch buffer the source
        may lend again afterwards (FileSource: reading into memory already paged in costs
        a fraction of a new allocation's page faults)."""
        yield self.gather(offsets, sizes, structure)

    def close(self):
        pass


_spare = []                     # the process's spare scratch buffer, while nobody borrows it
_spare_lock = threading.Lock()


@contextlib.contextmanager
def scratch(need):
    """A writable uint8 array of ``need`` bytes: the process's spare buffer (made on first
    use, kept up to SPARE_BYTES), lent to one caller at a time (another caller meanwhile
    gets a new one, which becomes the spare if bigger). New memory costs its page faults
    and the kernel's zeroing on first touch: a 12 MB buffer read into for a sparse dataset's
    CSR arrays took 2.4 ms more when new, a third of the whole read. Keeping it is what
    libhdf5's free lists do (H5FL: freed blocks kept for reuse, process-wide, 16 MB of them
    at most by default)."""
    import numpy as np
    with _spare_lock:
        lent = _spare.pop() if _spare else None
    buf = lent if lent is not None and len(lent) >= need else np.empty(need, np.uint8)
    try:
        yield buf[:need]
    finally:
        keep = buf if need <= SPARE_BYTES else lent
        if keep is not None:
            with _spare_lock:
                if not _spare:
                    _spare.append(keep)
                elif len(_spare[0]) < len(keep):
                    _spare[0] = keep


def plan_runs(offsets, sizes):
    """([(start, end, position)] of the coalesced runs, each range's position, total bytes)
    for ``gather``: ranges sorted by offset, a run ending where the next range starts more
    than GATHER_GAP past every range before it."""
    import numpy as np
    offsets = np.asarray(offsets, np.int64)
    sizes = np.asarray(sizes, np.int64)
    if not len(offsets):
        return [], offsets, 0
    order = np.argsort(offsets, kind="stable")
    lo, hi = offsets[order], offsets[order] + sizes[order]
    reach = np.maximum.accumulate(hi)
    first = np.concatenate(([True], lo[1:] > reach[:-1] + GATHER_GAP))
    run = np.cumsum(first) - 1
    run_lo = lo[first]
    run_hi = np.maximum.reduceat(hi, np.flatnonzero(first))
    at = np.concatenate(([0], np.cumsum(run_hi - run_lo)))
    positions = np.empty(len(offsets), np.int64)
    positions[order] = at[run] + lo - run_lo[run]
    return list(zip(run_lo.tolist(), run_hi.tolist(), at[:-1].tolist())), positions, int(at[-1])


def _byte_view(out):
    """The bytes of the writable C-contiguous buffer ``out`` as a flat memoryview: a numpy
    array through a uint8 view (its dtype may be one the buffer protocol cannot describe, as
    a compound with overlapping members, and its shape may hold zeros)."""
    if hasattr(out, "__array_interface__"):
        import numpy as np
        arr = np.asarray(out)
        if not arr.flags.c_contiguous:
            raise ValueError("readinto needs a C-contiguous array")
        return memoryview(arr.reshape(-1).view(np.uint8))
    return memoryview(out).cast("B")


class BytesSource(ByteSource):
    """An in-memory buffer (bytes, bytearray, memoryview, mmap)."""

    zero_copy = True

    def __init__(self, buf):
        self._buf = memoryview(buf).cast("B")
        self.size = len(self._buf)
        self._array = None

    @property
    def array(self):
        """The whole buffer as a read-only uint8 array (zero-copy), for slicing in hot paths;
        callers check ranges against ``size`` themselves."""
        if self._array is None:
            import numpy as np
            self._array = np.frombuffer(self._buf, np.uint8)
        return self._array

    def _read(self, offset, n):
        return self._buf[offset:offset + n]

    def gather(self, offsets, sizes, structure="data", scratch=None):
        """The buffer itself (zero-copy) and the offsets, once every range is checked."""
        import numpy as np
        offsets = np.asarray(offsets, np.int64)
        ends = offsets + np.asarray(sizes, np.int64)
        if len(offsets) and (offsets.min() < 0 or ends.max() > self.size):
            i = int(np.argmax((offsets < 0) | (ends > self.size)))
            raise TruncatedError(f"{int(ends[i] - offsets[i])} bytes requested but the file "
                                 f"has {self.size} bytes", structure, int(offsets[i]))
        whole = self.array.view()
        whole.flags.writeable = False     # (one compiled form of the kernels that read it)
        return whole, offsets

    def close(self):
        self._array = None
        try:
            self._buf.release()
        except BufferError:
            pass  # arrays handed out still view the buffer; it is freed with them


class FileSource(ByteSource):
    """A file on disk, read by pread (``os.pread``; a seek and a read under a lock where the
    platform has no pread).

    Reads copy the file's bytes instead of viewing a memory map of it: when another process
    truncates a file (libhdf5 truncates a file it opens with mode "w" before it fails to lock
    it), touching a page of a map past the new end kills the reading process (SIGBUS), where
    a pread returns short and becomes a ``TruncatedError``. The map is made only for what
    asks for it by name (``mapped_view``: ``Dataset.read(copy=False)``)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._fh = open(self.path, "rb", buffering=0)
        self._fd = self._fh.fileno()
        self.size = os.fstat(self._fd).st_size
        self._map = None
        self._seek_lock = None if hasattr(os, "preadv") else threading.Lock()

    def _read(self, offset, n):
        if n <= _PREAD_SLICE and self._seek_lock is None:
            data = os.pread(self._fd, n, offset)
            if len(data) != n:
                raise _ended(offset + len(data))
            return data
        buf = bytearray(n)
        self.readinto(offset, buf)
        return memoryview(buf)

    def read_small(self, offset, n, structure="data"):
        """``read`` in one call for the small scattered reads of lookups (an index node or
        page, a few elements of a chunk: one a read, where three calls cost as much as the
        system call)."""
        if offset < 0 or n < 0 or offset + n > self.size:
            return self.read(offset, n, structure)     # (raises)
        if n > _PREAD_SLICE or self._seek_lock is not None:
            return self._read(offset, n)
        data = os.pread(self._fd, n, offset)
        if len(data) != n:
            raise _ended(offset + len(data), structure)
        return data

    def readinto(self, offset, out, structure="data"):
        """Copy into ``out`` in slices of at most 64 MiB (each system call stays bounded)."""
        view = _byte_view(out)
        n = len(view)
        if offset < 0 or offset + n > self.size:
            raise TruncatedError(f"{n} bytes requested but the file has {self.size} bytes",
                                 structure, offset)
        done = 0
        while done < n:
            part = view[done:done + _PREAD_SLICE]
            if self._seek_lock is None:
                got = os.preadv(self._fd, [part], offset + done)
            else:
                with self._seek_lock:
                    self._fh.seek(offset + done)
                    got = self._fh.readinto(part)
            if not got:
                raise _ended(offset + done, structure)
            done += got

    @property
    def parallel_reads(self):
        """True: threads may read at once (pread), each the ranges its own work needs."""
        return self._seek_lock is None

    @contextlib.contextmanager
    def gathered(self, offsets, sizes, structure="data"):
        """``gather`` into the process's spare buffer (``scratch``)."""
        plan = plan_runs(offsets, sizes)
        with self.scratch(plan[2]) as buf:
            yield self._read_runs(plan, structure, buf)

    def scratch(self, need):
        """``scratch``: the process's spare buffer."""
        return scratch(need)

    def mapped_view(self, offset, n, structure="data"):
        """``n`` bytes at ``offset`` as a read-only view of a memory map of the file (made
        on first use, closed with the file): zero-copy, and like any view of a map (numpy's
        memmap) fatal to touch past the end of a file another process truncated."""
        if offset < 0 or n < 0 or offset + n > self.size:
            raise TruncatedError(f"{n} bytes requested but the file has {self.size} bytes",
                                 structure, offset)
        if self._map is None:
            if self.size == 0:
                return memoryview(b"")
            self._map = mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ)
        return memoryview(self._map)[offset:offset + n]

    def close(self):
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:
                pass  # numpy views of the map are still alive; the GC closes it with them
            self._map = None
        self._fh.close()


def _ended(offset, structure="data"):
    return TruncatedError("the file ended while reading (shortened by another process?)",
                          structure, offset)


class BlockCachedSource(ByteSource):
    """A source reading fixed-size blocks through ``fetch(offset, n)``, with an LRU cache.

    Used for file-like objects and range-reading callables (object stores): only the blocks
    that the structures actually touch are fetched. ``requests`` and ``bytes_fetched`` count
    what it cost.
    """

    def __init__(self, fetch, size, block_size=64 * 1024, max_blocks=256):
        self._fetch = fetch
        self.size = size
        self.block_size = block_size
        self.max_blocks = max_blocks
        self._blocks = OrderedDict()
        self._lock = threading.Lock()
        self.requests = 0
        self.bytes_fetched = 0

    def _block(self, index):
        with self._lock:
            blk = self._blocks.get(index)
            if blk is not None:
                self._blocks.move_to_end(index)
                return blk
            count = self._blocks_to_fetch(index)
        start = index * self.block_size
        n = min(count * self.block_size, self.size - start)
        run = bytes(self._fetch(start, n))
        if len(run) != n:
            raise TruncatedError(f"the source returned {len(run)} of {n} bytes", "block", start)
        with self._lock:
            self.requests += 1
            self._keep(index, run)
        return run[:self.block_size] if n > self.block_size else run

    def _keep(self, index, run):
        """Cache the blocks of ``run``, fetched from block ``index`` on (under the lock)."""
        bs, n = self.block_size, len(run)
        self.bytes_fetched += n
        for k in range(0, n, bs):
            self._blocks[index + k // bs] = run[k:k + bs] if n > bs else run
        while len(self._blocks) > self.max_blocks:
            self._blocks.popitem(last=False)

    def _blocks_to_fetch(self, index):
        """How many blocks from ``index`` on one request fetches (called under the lock, for
        a block not cached): one here; a source may read ahead."""
        return 1

    def _read(self, offset, n):
        if n > 4 * self.block_size:  # large raw-data reads bypass the cache
            data = bytes(self._fetch(offset, n))
            if len(data) != n:
                raise TruncatedError(f"the source returned {len(data)} of {n} bytes", "data", offset)
            with self._lock:
                self.requests += 1
                self.bytes_fetched += n
            return data
        first, last = offset // self.block_size, (offset + n - 1) // self.block_size if n else 0
        if n == 0:
            return b""
        if first == last:
            blk = self._block(first)
            lo = offset - first * self.block_size
            return memoryview(blk)[lo:lo + n]
        parts = [self._block(i) for i in range(first, last + 1)]
        joined = b"".join(parts)
        lo = offset - first * self.block_size
        return memoryview(joined)[lo:lo + n]


class OverlaySource(ByteSource):
    """Another source with some byte ranges replaced: ``patches`` maps absolute offsets to the
    bytes that stand there instead (a metadata cache image's entries, whose home addresses
    may hold stale metadata). Reads touching no patch are the base source's, zero-copy."""

    def __init__(self, base, patches):
        import bisect
        self._base = base
        self.size = base.size
        self.path = base.path
        self._starts = sorted(patches)
        self._patches = [(o, bytes(patches[o])) for o in self._starts]
        self._bisect = bisect.bisect_right
        self.prefetch_batch = base.prefetch_batch
        self.prefetch = base.prefetch
        self.warm = base.warm

    def _overlapping(self, offset, n):
        i = max(self._bisect(self._starts, offset) - 1, 0)
        while i < len(self._patches) and self._patches[i][0] < offset + n:
            start, data = self._patches[i]
            if start + len(data) > offset:
                yield start, data
            i += 1

    def _read(self, offset, n):
        hits = list(self._overlapping(offset, n))
        data = self._base.read(offset, n)
        if not hits:
            return data
        out = bytearray(data)
        for start, patch in hits:
            lo, hi = max(start, offset), min(start + len(patch), offset + n)
            out[lo - offset:hi - offset] = patch[lo - start:hi - start]
        return memoryview(out)

    def readinto(self, offset, out, structure="data"):
        self._base.readinto(offset, out, structure)
        hits = list(self._overlapping(offset, memoryview(out).nbytes))
        if hits:
            view = memoryview(out).cast("B")
            for start, patch in hits:
                lo, hi = max(start, offset), min(start + len(patch), offset + len(view))
                view[lo - offset:hi - offset] = patch[lo - start:hi - start]

    def close(self):
        self._base.close()


def _fileobj_fetcher(fileobj):
    lock = threading.Lock()

    def fetch(offset, n):
        with lock:
            fileobj.seek(offset)
            return fileobj.read(n)
    return fetch


def _probe_size(reader):
    """Find the length of a range-reading callable's object by exponential + binary search."""
    hi = 1
    while len(reader(hi - 1, 1)) == 1:
        hi *= 2
        if hi > 1 << 62:
            raise PurehepError("cannot determine the size of the source")
    lo = hi // 2  # reader(lo - 1) succeeded (or lo == 0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(reader(mid - 1, 1)) == 1:
            lo = mid
        else:
            hi = mid - 1
    return lo


def open_source(obj, size=None, block_size=64 * 1024):
    """Make a ByteSource from a path, a buffer, a binary file-like object or a callable.

    A callable is ``reader(offset, size) -> bytes``; pass ``size`` (or give the callable a
    ``size`` attribute) to save the requests needed to find the object's length.
    """
    if isinstance(obj, ByteSource):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return FileSource(obj)
    if isinstance(obj, (bytes, bytearray, memoryview, mmap.mmap)):
        return BytesSource(obj)
    if hasattr(obj, "read") and hasattr(obj, "seek"):
        if size is None:
            pos = obj.tell()
            size = obj.seek(0, os.SEEK_END)
            obj.seek(pos)
        src = BlockCachedSource(_fileobj_fetcher(obj), size, block_size)
        src.path = getattr(obj, "name", None) if isinstance(getattr(obj, "name", None), str) else None
        return src
    if callable(obj):
        if size is None:
            size = getattr(obj, "size", None)
        if size is None:
            size = _probe_size(obj)
        return BlockCachedSource(obj, size, block_size)
    raise TypeError(f"cannot read HDF5 data from {type(obj).__name__}")
