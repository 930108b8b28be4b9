"""File writing: the file itself, opened read-write and locked as libhdf5 locks it, with
positioned writes, and the byte sources that read it back while it is being changed.

Locking follows libhdf5 (H5FD_sec2 with file locking on): ``flock`` exclusive for a file
opened for writing, shared for reading, taken before a file opened with ``'w'`` is
truncated, so that a file another process (libhdf5 or purehep) holds is never clobbered.
``locking`` is h5py's: True (a lock or ``OSError``), ``"best-effort"`` (no error where the
file system has no locks), False (none); ``HDF5_USE_FILE_LOCKING`` (``TRUE``, ``FALSE``,
``BEST_EFFORT``) overrides it, as it does libhdf5's.
"""
import bisect
import errno
import os

from ..errors import PurehepError
from .source import ByteSource

_NO_LOCKS = (errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP)
SYSTEM_PAGE = 4096      # the page cache's page: a write is applied whole within one (patch)


def _changed(old, new):
    """(first, end) of the bytes of ``new`` that differ from ``old`` (which may be shorter:
    the file ends), or None when none does; found by bisection on slices compared whole."""
    n = len(new)
    if len(old) >= n and old[:n] == new:
        return None
    lo, hi = 0, min(n, len(old))          # old[:lo] == new[:lo]; the first difference < hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    if len(old) < n:
        return lo, n
    a, b = lo + 1, n                      # old[b:n] == new[b:n]; the last difference >= a - 1
    while a < b:
        mid = (a + b) // 2
        if old[mid:n] == new[mid:n]:
            b = mid
        else:
            a = mid + 1
    return lo, b
_held = {}        # (st_dev, st_ino) -> "w" / count of readers: this process's own locks


def locking_setting(locking=None):
    """The effective locking setting: HDF5_USE_FILE_LOCKING over ``locking`` (None:
    "best-effort", libhdf5 2.0's default: locks, ignored where the file system has none)."""
    env = os.environ.get("HDF5_USE_FILE_LOCKING", "").strip().upper()
    if env in ("FALSE", "0"):
        return False
    if env == "BEST_EFFORT":
        return "best-effort"
    if env in ("TRUE", "1"):
        return True
    return "best-effort" if locking is None else locking


def _key(fd):
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


def lock_file(fd, write, locking=None, path=None):
    """Lock ``fd`` (exclusively when ``write``) or raise OSError, as libhdf5 does. Files this
    process already holds open are shared within it (libhdf5 shares an open file between
    its handles), except that a file open for writing is not opened for writing again.
    Returns what to pass to ``unlock_file`` (None when nothing was locked)."""
    locking = locking_setting(locking)
    if locking is False:
        return None
    key = _key(fd)
    held = _held.get(key)
    if held is not None:
        if write:       # (a file open for writing here is shared: hl.files._open_here)
            raise OSError(errno.EBUSY, "Unable to open file (file is already open for "
                          + ("writing in this process)" if held == "w" else "read-only)"), path)
        if held == "w":
            return None
        _held[key] = held + 1
        return key, None          # one more reader in this process: unlock_file counts it
    if locking:
        try:
            import fcntl
        except ImportError:          # no flock on this platform: as libhdf5 without locks
            fcntl = None
        if fcntl is not None:
            try:
                fcntl.flock(fd, (fcntl.LOCK_EX if write else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            except OSError as exc:
                if not (locking == "best-effort" and exc.errno in _NO_LOCKS):
                    raise OSError(exc.errno, "Unable to lock file (the file is open in "
                                  "another process; set HDF5_USE_FILE_LOCKING=FALSE or "
                                  "locking=False to open it anyway)", path) from None
    _held[key] = "w" if write else 1
    return key, fd


def unlock_file(lock):
    """Release a lock taken by ``lock_file``, before its descriptor is closed: a memory map
    of the file holds a duplicate of the descriptor, which would keep the lock alive."""
    if lock is None:
        return
    key, fd = lock
    held = _held.get(key)
    if fd is not None:                # the holder that took the lock (not a counted reader)
        try:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_UN)
        except (ImportError, OSError):
            pass
    if held == "w" or held == 1:
        _held.pop(key, None)
    elif held is not None:
        _held[key] = held - 1


class FileSink:
    """The bytes of a file being written or modified; offsets are absolute.

    ``mode`` is ``'r+'`` (an existing file), ``'w'`` (created, or truncated once locked) or
    ``'x'`` (created; an existing file is an error)."""

    def __init__(self, path, mode="r+", locking=None):
        self.path = os.path.abspath(os.fspath(path))
        if os.path.isdir(self.path):
            raise IsADirectoryError(errno.EISDIR, "Unable to open file (is a directory)",
                                    self.path)
        flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
        if mode == "w":
            flags |= os.O_CREAT
        elif mode == "x":
            flags |= os.O_CREAT | os.O_EXCL
        try:
            self.fd = os.open(self.path, flags, 0o666)
        except FileExistsError:
            raise FileExistsError(errno.EEXIST, "Unable to create file (file exists)",
                                  self.path) from None
        try:
            self._lock = lock_file(self.fd, True, locking, self.path)
        except BaseException:
            os.close(self.fd)
            raise
        if mode == "w":
            os.ftruncate(self.fd, 0)
        self.size = os.fstat(self.fd).st_size
        self.closed = False
        self.bytes_written = 0       # counters for tests and benchmarks
        self.writes = 0

    def write(self, offset, data):
        """Write ``data`` (any buffer) at ``offset``; the file grows as needed."""
        view = memoryview(data).cast("B")
        n, done = len(view), 0
        self.bytes_written += n
        self.writes += 1
        while done < n:
            done += os.pwrite(self.fd, view[done:], offset + done)
        self.size = max(self.size, offset + n)

    write_raw = write        # raw data: on disk as any bytes (see purehep.io.objsink)

    def read(self, offset, n):
        return os.pread(self.fd, n, offset)

    def patch(self, offset, data):
        """Write ``data`` over the file's bytes at ``offset`` (an in-place patch of a commit),
        only the bytes that differ: one write when they lie in one system page (SYSTEM_PAGE),
        else one write a page, the last page first. Linux applies a write page by page and a
        process killed during it leaves it cut at a page boundary; written this way no write
        is cut, and a structure's first page, whose header holds its counts (entries used,
        messages, free list), is written last: what is appended after the entries it counts
        is all there before the counts show it."""
        new = bytes(memoryview(data).cast("B"))
        old = self.read(offset, len(new))
        pages = []
        at = 0
        while at < len(new):
            end = min(len(new), (offset + at) // SYSTEM_PAGE * SYSTEM_PAGE + SYSTEM_PAGE - offset)
            span = _changed(old[at:end], new[at:end])
            if span is not None:
                pages.append((at + span[0], at + span[1]))
            at = end
        for a, b in reversed(pages):
            self.write(offset + a, new[a:b])

    def truncate(self, size):
        """Grow the file to ``size`` (a file being changed is never shrunk while open)."""
        if size > self.size:
            os.ftruncate(self.fd, size)
            self.size = size

    def shrink(self, size):
        """Cut the file to ``size`` (free space at its end, at close)."""
        if size < self.size:
            os.ftruncate(self.fd, size)
            self.size = size

    def sync(self):
        os.fsync(self.fd)

    def source(self, overlay=None):
        """A ByteSource over the file, with ``overlay``'s pending patches on top."""
        if overlay:
            return OverlaySource(self, overlay)
        return DescriptorSource(self, self.path)

    def close(self):
        if not self.closed:
            self.closed = True
            unlock_file(self._lock)
            os.close(self.fd)


def make_sink(target, mode="r+", locking=None):
    """A FileSink for a path, an ObjectSink for a file object."""
    if isinstance(target, (str, bytes, os.PathLike)):
        return FileSink(target, mode, locking)
    from .objsink import ObjectSink
    return ObjectSink(target, mode)


class DescriptorSource(ByteSource):
    """A ByteSource over a sink (its ``read``), as large as the sink was when made; ``what``
    names the file in short-read errors."""

    def __init__(self, sink, what):
        self.sink = sink
        self.path = sink.path
        self.size = sink.size
        self.what = what

    def _read(self, offset, n):
        data = self.sink.read(offset, n)
        if len(data) != n:
            raise PurehepError(f"short read at {offset} of {self.what}")
        return data


SMALL_PATCH = 4096      # patches up to this size are found by address, longer ones one by one


class Overlay:
    """In-place changes staged but not committed, stage by stage: (order, absolute address,
    bytes, stage). Reads of the file being changed see them, later over earlier; the commit
    writes them to the file by increasing order.

    Within one stage, patches of one range in several orders are deliberate steps (a local
    heap's header unlinked from its free list before its data changes, then final), and are
    written as staged. A later stage supersedes the earlier stages' patches of the same
    bytes: those it covers whole are dropped, the others are written with the later bytes
    over them, so that the commit leaves the bytes of the last stage. A patch touching or
    overlapping one earlier patch of its order, and no other, is merged into it (a local
    heap's data segment, a name added at each stage: one patch, not one per stage)."""

    def __init__(self):
        self.patches = {}        # key -> (order, address, bytes, stage); keys sort in
        #                          staging order: (n, piece)
        self._starts = []        # sorted (address, key) of the patches of SMALL_PATCH bytes
        self._big = []           # at most; the keys of the others (a heap's data segment)
        self._seq = 0
        self.stages = 0

    def __bool__(self):
        return bool(self.patches)

    def drop(self, start, n):
        """Forget the patches' bytes in [start, start + n) (space freed for reuse): those
        lying inside go, those reaching into it lose the part inside."""
        end = start + n
        for k in self._hits(start, end):
            order, a, data, stage = self.patches[k]
            self._unindex(k)
            for piece, (s, e) in enumerate(((a, min(start, a + len(data))),
                                            (max(end, a), a + len(data))), 1):
                if s < e:
                    self._put((k[0], k[1] * 2 + piece), (order, s, data[s - a:e - a], stage))

    def _put(self, k, patch):
        self.patches[k] = patch
        if len(patch[2]) <= SMALL_PATCH:
            bisect.insort(self._starts, (patch[1], k))
        else:
            self._big.append(k)

    def _unindex(self, k):
        a, data = self.patches[k][1], self.patches.pop(k)[2]
        if len(data) <= SMALL_PATCH:
            del self._starts[bisect.bisect_left(self._starts, (a, k))]
        else:
            self._big.remove(k)

    def _remove(self, start, end):
        """Forget the patches lying inside [start, end)."""
        for k in self._hits(start, end):
            a, data = self.patches[k][1], self.patches[k][2]
            if start <= a and a + len(data) <= end:
                self._unindex(k)

    def add_stage(self, patches):
        """Add one stage's patches [(order, absolute address, bytes)]."""
        if not patches:
            return
        stage = self.stages
        self.stages += 1
        for s, e in _merged([(a, a + len(d)) for _, a, d in patches]):
            self._remove(s, e)
        for order, a, d in patches:
            self._add(order, a, bytes(d), stage)

    def _add(self, order, a, d, stage):
        """Add a patch, merged into the one earlier patch of its order it touches or
        overlaps when no other patch reaches their bytes."""
        near = self._hits(a - 1, a + len(d) + 1)
        if len(near) == 1 and self.patches[near[0]][0] == order:
            _, qa, q, _ = self.patches[near[0]]
            lo, hi = min(a, qa), max(a + len(d), qa + len(q))
            if self._hits(lo, hi) == near:
                out = bytearray(hi - lo)
                out[qa - lo:qa - lo + len(q)] = q
                out[a - lo:a - lo + len(d)] = d
                self._unindex(near[0])
                a, d = lo, bytes(out)
        self._put((self._seq, 0), (order, a, d, stage))
        self._seq += 1

    def _hits(self, offset, end, after=-1):
        """Keys of the patches overlapping [offset, end) of stages after ``after``, in
        staging order."""
        lo = bisect.bisect_left(self._starts, (offset - SMALL_PATCH, (-1, 0)))
        hi = bisect.bisect_left(self._starts, (end, (-1, 0)))
        found = [k for a, k in self._starts[lo:hi] if a + len(self.patches[k][2]) > offset]
        found += [k for k in self._big if self.patches[k][1] < end and
                  self.patches[k][1] + len(self.patches[k][2]) > offset]
        return sorted(k for k in found if self.patches[k][3] > after)

    def apply(self, offset, data, after=-1):
        """``data`` (read at ``offset``) with the patches that overlap it (those of stages
        after ``after``)."""
        hits = self._hits(offset, offset + len(data), after)
        if not hits:
            return data
        out = bytearray(data)
        for k in hits:
            a, patch = self.patches[k][1], self.patches[k][2]
            s, e = max(a, offset), min(a + len(patch), offset + len(data))
            out[s - offset:e - offset] = patch[s - a:e - a]
        return bytes(out)

    def ordered(self):
        """[(order, address, bytes)] to write, by increasing order (staging order within an
        order), each with the bytes later stages put over it."""
        out = [(order, a, self.apply(a, data, stage))
               for _, (order, a, data, stage) in sorted(self.patches.items())]
        return sorted(out, key=lambda p: p[0])

    def clear(self):
        self.__init__()


def _merged(ranges):
    out = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


class OverlaySource(DescriptorSource):
    """The file being changed as the next commit will leave it: the file's bytes with the
    staged in-place patches over them."""

    def __init__(self, sink, overlay):
        super().__init__(sink, sink.path or repr(getattr(sink, "fileobj", None)))
        self.overlay = overlay

    def _read(self, offset, n):
        return self.overlay.apply(offset, super()._read(offset, n))
