"""Writing through a Python binary file object (h5py's 'fileobj' driver: io.BytesIO, an open
file, ...), with the metadata held back as libhdf5's metadata cache holds it.

libhdf5 keeps the metadata it writes in its metadata cache and writes it to the file at
flush and close; raw data goes to the file at once, and is read from it. Through h5py's
fileobj driver that decides which call meets a file object's failing ``write`` or
``readinto``: opening and creating groups touch neither (creating a dataset with data
writes), reading a dataset's values reads, flush and close write the rest; and a write-only
object (``open(path, 'wb')``) does for everything but reading raw data back.

ObjectSink does the same: metadata (``write``) goes to an in-memory extent map, written to
the object at ``sync`` (the barriers of purehep's commit) in offset order and kept there as a
cache of clean bytes, up to libhdf5's default metadata cache size when the object can be read
back (CLEAN_BUDGET; the whole session's when it cannot); raw data (``write_raw``) goes to the
object at once. Growing the file (``truncate``) is recorded, and the zeros it stands for are
written where the object must reach past its end. A failing write at ``sync`` leaves what
was not written yet in the map, for the next ``sync`` to write.
"""
import bisect
import os

from .sink import DescriptorSource, FileSink, OverlaySource

# clean metadata kept after a sync for an object that can be read back: libhdf5's metadata
# cache's default maximum size (H5AC__DEFAULT_MAX_CACHE_SIZE, 32 MiB)
CLEAN_BUDGET = 32 << 20


class Extents:
    """Bytes at offsets, non-overlapping (a later ``put`` replaces what it covers), each
    either dirty (written here, not yet to the object) or clean."""

    def __init__(self):
        self.starts = []          # sorted
        self.data = {}            # start -> bytes
        self.dirty = set()        # starts of the dirty extents
        self.clean_bytes = 0

    def _overlapping(self, start, end):
        """Starts of the extents that overlap [start, end)."""
        out = []
        starts, i = self.starts, max(0, bisect.bisect_right(self.starts, start) - 1)
        while i < len(starts) and starts[i] < end:
            if starts[i] + len(self.data[starts[i]]) > start:
                out.append(starts[i])
            i += 1
        return out

    def cut(self, start, end):
        """Forget the bytes in [start, end); extents reaching into it keep their parts
        outside."""
        for s in self._overlapping(start, end):
            dirty = s in self.dirty
            data = self._remove(s)
            if s < start:
                self._insert(s, data[:start - s], dirty)
            if s + len(data) > end:
                self._insert(end, data[end - s:], dirty)

    def put(self, start, data):
        """Hold ``data`` at ``start``, dirty."""
        self.cut(start, start + len(data))
        if data:
            self._insert(start, bytes(data), True)

    def _insert(self, start, data, dirty):
        bisect.insort(self.starts, start)
        self.data[start] = data
        if dirty:
            self.dirty.add(start)
        else:
            self.clean_bytes += len(data)

    def _remove(self, start):
        del self.starts[bisect.bisect_left(self.starts, start)]
        data = self.data.pop(start)
        if start in self.dirty:
            self.dirty.discard(start)
        else:
            self.clean_bytes -= len(data)
        return data

    def mark_clean(self, start):
        self.dirty.discard(start)
        self.clean_bytes += len(self.data[start])

    def pieces(self, start, end):
        """[(offset, bytes)] of the held bytes within [start, end), by offset."""
        out = []
        for s in self._overlapping(start, end):
            data = self.data[s]
            a, b = max(s, start), min(s + len(data), end)
            out.append((a, data[a - s:b - s]))
        return out

    def drop_clean(self):
        for s in [s for s in self.starts if s not in self.dirty]:
            self._remove(s)


def _readable(fileobj):
    """Whether the object's bytes can be read back (``readable()`` when it says)."""
    readable = getattr(fileobj, "readable", None)
    try:
        return bool(readable()) if readable is not None else hasattr(fileobj, "read")
    except Exception:        # noqa: BLE001 - a broken object: read it as libhdf5 would
        return True


class ObjectSink(FileSink):
    """The FileSink interface over a Python binary file object opened for writing (reading
    too, for what is read back), or over memory (``driver='core', backing_store=False``).
    ``path`` is None; nothing is locked (the object belongs to this process), and closing
    leaves the object open, as h5py does."""

    path = None

    def __init__(self, fileobj, mode="r+"):
        self.fileobj = fileobj
        size = fileobj.seek(0, os.SEEK_END)
        if mode in ("w", "x"):           # h5py's fileobj driver creates over the content
            fileobj.seek(0)
            fileobj.truncate(0)
            size = 0
        self.size = size                 # the file's size as purehep has made it
        self.reach = size                # how far the object's own bytes go
        self.held = Extents()            # metadata not written yet (or kept: _keep)
        self._keep = not _readable(fileobj)
        self.closed = False
        self.bytes_written = 0
        self.writes = 0

    def write(self, offset, data):
        """Metadata: held until the next ``sync``."""
        view = memoryview(data).cast("B")
        self.bytes_written += len(view)
        self.writes += 1
        self.held.put(offset, view)
        self.size = max(self.size, offset + len(view))

    def write_raw(self, offset, data):
        """Raw data: written to the object now (its error raised here), over anything held
        for those bytes."""
        view = memoryview(data).cast("B")
        self.bytes_written += len(view)
        self.writes += 1
        self.held.cut(offset, offset + len(view))
        self._put(offset, view)
        self.size = max(self.size, offset + len(view))

    def _put(self, offset, view):
        """Write ``view`` to the object at ``offset``, zeros first over any gap past its
        end (as a file grown by pwrite reads)."""
        if offset > self.reach:
            self.fileobj.seek(self.reach)
            self._write_all(memoryview(bytes(offset - self.reach)))
            self.reach = offset
        self.fileobj.seek(offset)
        self._write_all(view)
        self.reach = max(self.reach, offset + len(view))

    def _write_all(self, view):
        done = 0
        while done < len(view):
            done += self.fileobj.write(view[done:])

    def read(self, offset, n):
        """``n`` bytes at ``offset`` (fewer at the end of the file): held bytes from memory,
        the rest from the object with its ``readinto`` as h5py's fileobj driver reads (its
        errors raised as they come), else with ``read``; zeros past the object's end."""
        end = min(offset + n, self.size)
        out, at = bytearray(), offset
        for start, data in self.held.pieces(offset, end) + [(end, b"")]:
            if start > at:
                out += self._read_object(at, start - at)
            out += data
            at = start + len(data)
        return bytes(out)

    def _read_object(self, offset, n):
        own = max(0, min(n, self.reach - offset))
        data = b""
        if own:
            self.fileobj.seek(offset)
            if not hasattr(self.fileobj, "readinto"):
                data = self.fileobj.read(own)
            else:
                buf = bytearray(own)
                got = self.fileobj.readinto(buf) or 0
                data = bytes(buf) if got == own else bytes(buf[:got])
            if len(data) < own:          # the object is shorter than it was made
                return data
        return data + bytes(n - own)

    def truncate(self, size):
        """Grow the file to ``size``: recorded; its zeros reach the object at ``sync``."""
        self.size = max(self.size, size)

    def shrink(self, size):
        if size < self.size:
            self.held.cut(size, self.size)
            if self.reach > size:
                self.fileobj.truncate(size)
                self.reach = size
            self.size = size

    def sync(self):
        """Write the held metadata to the object, by offset, then the zeros that make it as
        long as the file, then flush it. Each extent is marked written once it is, so that a
        failing write leaves the rest for the next sync."""
        for start in sorted(self.held.dirty):
            self._put(start, memoryview(self.held.data[start]))
            self.held.mark_clean(start)
        if self.size > self.reach:
            self._put(self.size, memoryview(b""))
        if not self._keep and self.held.clean_bytes > CLEAN_BUDGET:
            self.held.drop_clean()
        flush = getattr(self.fileobj, "flush", None)
        if flush is not None:
            flush()

    def source(self, overlay=None):
        if overlay:
            return OverlaySource(self, overlay)
        return DescriptorSource(self, repr(self.fileobj))

    def close(self):
        if not self.closed:
            try:
                self.sync()
            finally:
                self.closed = True
                self.fileobj = None      # as h5py, the object is not kept alive past close
