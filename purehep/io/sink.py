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
_held = {}        # (st_dev, st_ino) -> "w" / count of readers: this process's own locks


def locking_setting(locking=None):
    """The effective locking setting: HDF5_USE_FILE_LOCKING over ``locking`` (None: True)."""
    env = os.environ.get("HDF5_USE_FILE_LOCKING", "").strip().upper()
    if env in ("FALSE", "0"):
        return False
    if env == "BEST_EFFORT":
        return "best-effort"
    if env in ("TRUE", "1"):
        return True
    return True if locking is None else locking


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
        if write:
            raise OSError(errno.EBUSY, "Unable to open file (file is already open in this "
                          "process)", path)
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

    def read(self, offset, n):
        return os.pread(self.fd, n, offset)

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


class ObjectSink(FileSink):
    """The FileSink interface over a Python binary file object opened for reading and
    writing (h5py's 'fileobj' driver: io.BytesIO, an open file, ...), or over memory
    (``driver='core', backing_store=False``). ``path`` is None; nothing is locked (the object
    belongs to this process), and closing leaves the object open, as h5py does."""

    path = None

    def __init__(self, fileobj, mode="r+"):
        self.fileobj = fileobj
        size = fileobj.seek(0, os.SEEK_END)
        if mode in ("w", "x"):           # h5py's fileobj driver creates over the content
            fileobj.seek(0)
            fileobj.truncate(0)
            size = 0
        self.size = size
        self.closed = False
        self.bytes_written = 0
        self.writes = 0

    def write(self, offset, data):
        view = memoryview(data).cast("B")
        self.bytes_written += len(view)
        self.writes += 1
        if offset > self.size:           # a gap: zeros, as a file grown by pwrite reads
            self.truncate(offset)
        self.fileobj.seek(offset)
        done = 0
        while done < len(view):
            done += self.fileobj.write(view[done:])
        self.size = max(self.size, offset + len(view))

    def read(self, offset, n):
        self.fileobj.seek(offset)
        return self.fileobj.read(n)

    def truncate(self, size):
        if size > self.size:
            self.fileobj.seek(self.size)
            self.fileobj.write(bytes(size - self.size))
            self.size = size

    def shrink(self, size):
        if size < self.size:
            self.fileobj.truncate(size)
            self.size = size

    def sync(self):
        flush = getattr(self.fileobj, "flush", None)
        if flush is not None:
            flush()

    def source(self, overlay=None):
        if overlay:
            return OverlaySource(self, overlay)
        return DescriptorSource(self, repr(self.fileobj))

    def close(self):
        if not self.closed:
            self.closed = True
            self.sync()
            self.fileobj = None      # as h5py, the object is not kept alive past close


def make_sink(target, mode="r+", locking=None):
    """A FileSink for a path, an ObjectSink for a file object."""
    if isinstance(target, (str, bytes, os.PathLike)):
        return FileSink(target, mode, locking)
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


class Overlay:
    """In-place changes staged but not committed: (order, absolute address, bytes), later
    ones over earlier ones. Reads of the file being changed see them; the commit writes
    them to the file by increasing order."""

    def __init__(self):
        self.patches = []        # in the order staged
        self._starts = []        # sorted (address, index)
        self._longest = 0

    def __bool__(self):
        return bool(self.patches)

    def add(self, order, address, data):
        data = bytes(data)
        bisect.insort(self._starts, (address, len(self.patches)))
        self.patches.append((order, address, data))
        self._longest = max(self._longest, len(data))

    def apply(self, offset, data):
        """``data`` (read at ``offset``) with the patches that overlap it."""
        end = offset + len(data)
        lo = bisect.bisect_left(self._starts, (offset - self._longest, -1))
        hi = bisect.bisect_left(self._starts, (end, -1))
        hits = sorted(i for a, i in self._starts[lo:hi]
                      if a + len(self.patches[i][2]) > offset)
        if not hits:
            return data
        out = bytearray(data)
        for i in hits:
            _, a, patch = self.patches[i]
            s, e = max(a, offset), min(a + len(patch), end)
            out[s - offset:e - offset] = patch[s - a:e - a]
        return bytes(out)

    def ordered(self):
        """The patches by increasing order, each with the final bytes of its range (a
        structure patched by two stagings may have been given two orders: whichever is
        written first already carries the latest bytes)."""
        return [(order, a, self.apply(a, data))
                for order, a, data in sorted(self.patches, key=lambda p: p[0])]

    def clear(self):
        self.__init__()


class OverlaySource(DescriptorSource):
    """The file being changed as the next commit will leave it: the file's bytes with the
    staged in-place patches over them."""

    def __init__(self, sink, overlay):
        super().__init__(sink, sink.path or repr(getattr(sink, "fileobj", None)))
        self.overlay = overlay

    def _read(self, offset, n):
        return self.overlay.apply(offset, super()._read(offset, n))
