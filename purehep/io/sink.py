"""File writing: a temporary file beside the target, space allocated at its end, in-place
writes, and an atomic commit (rename over the target) so that a failed write leaves any
previous file intact.
"""
import os
import stat
import tempfile
import threading

from ..errors import PurehepError
from .source import ByteSource


class FileSink:
    """The bytes of a file being written. Offsets are absolute (user block included)."""

    def __init__(self, path, exclusive=False):
        self.path = os.path.abspath(os.fspath(path))
        if exclusive and os.path.exists(self.path):
            raise FileExistsError(f"Unable to create file (file exists): {self.path!r}")
        folder = os.path.dirname(self.path) or "."
        fd, self.temp_path = tempfile.mkstemp(prefix="." + os.path.basename(self.path) + ".",
                                              suffix=".purehep-tmp", dir=folder)
        self.fd = fd
        self.size = 0
        self.exclusive = exclusive
        self.closed = False

    def write(self, offset, data):
        """Write ``data`` (any buffer) at ``offset``; the file grows as needed."""
        view = memoryview(data).cast("B")
        n = len(view)
        done = 0
        while done < n:
            done += os.pwrite(self.fd, view[done:], offset + done)
        if offset + n > self.size:
            self.size = offset + n

    def read(self, offset, n):
        return os.pread(self.fd, n, offset)

    def truncate(self, size):
        os.ftruncate(self.fd, size)
        self.size = size

    def commit(self):
        """Make the written file the target (atomic rename); the sink is closed after."""
        if self.closed:
            return
        os.close(self.fd)
        self.closed = True
        try:
            mode = 0o666 & ~_umask()
            os.chmod(self.temp_path, mode)
        except OSError:
            pass
        if self.exclusive:
            try:    # refuse to replace a file created meanwhile
                os.link(self.temp_path, self.path)
            except FileExistsError:
                os.unlink(self.temp_path)
                raise
            except OSError:
                os.replace(self.temp_path, self.path)
                return
            os.unlink(self.temp_path)
        else:
            old = _hold_large(self.path)
            os.replace(self.temp_path, self.path)
            if old is not None:
                threading.Thread(target=os.close, args=(old,), daemon=True).start()

    def abort(self):
        """Drop the temporary file; the target is left as it was."""
        if self.closed:
            return
        self.closed = True
        try:
            os.close(self.fd)
        finally:
            try:
                os.unlink(self.temp_path)
            except OSError:
                pass

    def source(self):
        """A ByteSource over the bytes written so far (for reading back in write mode)."""
        return DescriptorSource(self, "the file being written")


class DescriptorSource(ByteSource):
    """A ByteSource over the file descriptor of a sink (``sink.fd``), as long as the sink is
    at creation; ``what`` names the file in short-read errors."""

    def __init__(self, sink, what):
        self.sink = sink
        self.path = sink.path
        self.size = sink.size
        self.what = what

    def _read(self, offset, n):
        data = os.pread(self.sink.fd, n, offset)
        if len(data) != n:
            raise PurehepError(f"short read at {offset} of {self.what}")
        return data


RELEASE_IN_BACKGROUND = 16 << 20


def _hold_large(path):
    """A descriptor keeping a large file being replaced alive past the rename, or None.

    The rename then only unlinks a name; freeing the old file's pages happens when the
    descriptor is closed, on a background thread (or by the kernel at exit), so that
    overwriting a large file costs no more than writing a new one."""
    flags = getattr(os, "O_PATH", None)
    if flags is None:
        return None
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and \
                st.st_size >= RELEASE_IN_BACKGROUND:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
