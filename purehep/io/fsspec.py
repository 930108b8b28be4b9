"""Reading HDF5 files from object stores and other remote filesystems through fsspec.

``purehep.File("s3://bucket/f.h5", storage_options={...})`` (any fsspec URL: http(s)://,
s3://, gs://, memory://, file://, chained ``a::b://`` URLs) and ``purehep.File(openfile)``
(an fsspec ``OpenFile`` or opened file) read with few requests (extra ``purehep[fsspec]``):

- the file's size comes from the filesystem (``fs.size``: one HEAD request over HTTP);
- metadata is read in aligned blocks of ``block_size`` bytes (default 512 KiB, so the first
  request holds the superblock and the root group), kept in an LRU cache, and in growing runs
  of blocks while the reads go forward through the file (a chunk index);
- before a chunked read decodes its chunks, the read path hands the byte ranges of all the
  chunks it needs to ``FsspecSource.prefetch``: neighbouring ranges (gaps up to ``max_gap``)
  are coalesced into one range of at most ``max_block`` bytes, and all of them are asked for
  in one ``fs.cat_ranges`` call, which an async filesystem (HTTP, S3, GCS) answers with
  concurrent requests (fsspec docs, "Async" and ``AbstractFileSystem.cat_ranges``).

What a file cost is counted on its source: ``f._source.requests`` (requests made, the size
lookup included) and ``f._source.bytes_fetched``. Remote files are read-only.

fsspec is imported only here, and only when a URL or fsspec file object is opened.
"""
import contextlib
import re
import sys
import threading
from bisect import bisect_right

from ..errors import PurehepError, ReadOnlyError, TruncatedError
from .source import BlockCachedSource

REMOTE_BLOCK = 512 << 10       # metadata block: superblock + root group in the first request
MAX_READAHEAD = 8 << 20        # a run of blocks read ahead is at most this long
MAX_GAP = 256 << 10            # ranges this close are fetched as one (the gap is read too)
MAX_BLOCK = 32 << 20           # a coalesced range stops growing here (concurrency for big reads)
PREFETCH_BATCH = 512 << 20     # raw data fetched ahead of decoding at once, at most

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*(://|::)")


def is_url(name):
    """Whether ``name`` is an fsspec URL (``protocol://...``, or chained as
    ``simplecache::s3://...``), as opposed to a path on the local disk."""
    return isinstance(name, str) and "://" in name and bool(_URL.match(name))


def is_fsspec_file(obj):
    """Whether ``obj`` is an fsspec ``OpenFile`` or a file opened by an fsspec filesystem (it
    names its filesystem and path). Without fsspec imported, no object can be one."""
    fsspec = sys.modules.get("fsspec")
    if fsspec is None:
        return False
    return isinstance(getattr(obj, "fs", None), fsspec.AbstractFileSystem) and \
        isinstance(getattr(obj, "path", None), str)


def coalesce(ranges, max_gap=MAX_GAP, max_block=MAX_BLOCK):
    """Sorted, disjoint ``(start, stop)`` ranges covering every ``(start, stop)`` of
    ``ranges``: ranges at most ``max_gap`` apart are merged while the merged range stays
    within ``max_block`` bytes (overlapping ranges are merged whatever the size)."""
    merged = []
    for start, stop in sorted(ranges):
        if merged and (start < merged[-1][1] or start - merged[-1][1] <= max_gap and
                       max(stop, merged[-1][1]) - merged[-1][0] <= max_block):
            merged[-1][1] = max(stop, merged[-1][1])
        else:
            merged.append([start, stop])
    return [tuple(r) for r in merged]


class FsspecSource(BlockCachedSource):
    """The bytes of ``path`` on the fsspec filesystem ``fs``: metadata through the block
    cache (one ``cat_file`` range per block), raw data fetched ahead by ``prefetch``."""

    prefetch_batch = PREFETCH_BATCH
    driver = "fsspec"

    def __init__(self, fs, path, size=None, block_size=REMOTE_BLOCK, max_gap=MAX_GAP,
                 max_block=MAX_BLOCK):
        requests = 0
        if size is None:
            size = fs.size(path)
            requests = 1
            if size is None:
                raise PurehepError(f"{fs.unstrip_protocol(path)}: the filesystem gives no size "
                                   "(pass File(..., size=N))")
        super().__init__(self._fetch, int(size), block_size)
        self.requests = requests
        self.fs = fs
        self.fs_path = path
        self.path = fs.unstrip_protocol(path)
        self.max_gap = max_gap
        self.max_block = max_block
        self.max_readahead = max(1, MAX_READAHEAD // block_size)
        self._window, self._next = 1, None
        self._fetched = []          # the ranges of the prefetches under way: [(starts, parts)]
        self._fetched_lock = threading.Lock()

    def _blocks_to_fetch(self, index):
        """Sequential read-ahead: a miss on the first block not cached after the last run
        fetched doubles the run (up to ``max_readahead`` blocks; a run stops short of a
        cached block), any other miss starts again at one block. A chunk index laid out
        forward through the file is then read in a few requests, scattered object headers
        in one block each."""
        nxt = self._next
        forward = nxt is not None and nxt <= index <= nxt + self._window and \
            all(i in self._blocks for i in range(nxt, index))
        window = min(2 * self._window, self.max_readahead) if forward else 1
        count = 1
        while count < window and index + count not in self._blocks and \
                (index + count) * self.block_size < self.size:
            count += 1
        self._window, self._next = window, index + count
        return count

    def _fetch(self, offset, n):
        return self.fs.cat_file(self.fs_path, start=offset, end=offset + n)

    @contextlib.contextmanager
    def prefetch(self, ranges):
        """Fetch the ``(offset, n)`` byte ranges (absolute, clipped to the file) in one
        ``cat_ranges`` call, coalesced; reads inside them are served from memory until the
        ``with`` block ends."""
        wanted = [(max(o, 0), min(o + n, self.size)) for o, n in ranges]
        wanted = [(a, b) for a, b in wanted if a < b and not self._in_blocks(a, b)
                  and self._prefetched(a, b - a) is None]
        merged = coalesce(wanted, self.max_gap, self.max_block)
        if not merged:
            yield
            return
        starts = [a for a, _ in merged]
        stops = [b for _, b in merged]
        parts = self.fs.cat_ranges([self.fs_path] * len(merged), starts, stops)
        _check_parts(merged, parts, "raw data")
        entry = (starts, parts)
        with self._fetched_lock:
            self.requests += len(merged)
            self.bytes_fetched += sum(stops) - sum(starts)
            self._fetched.append(entry)
        try:
            yield
        finally:
            with self._fetched_lock:
                self._fetched.remove(entry)

    def warm(self, offsets):
        """Fetch the blocks holding ``offsets`` that are not cached (the first
        ``max_blocks // 4`` of them, in the order given) in one ``cat_ranges`` call, runs of
        neighbouring blocks as one range: the headers of a group's members come in one round
        trip rather than one each."""
        bs, limit = self.block_size, self.max_blocks // 4
        missing = []
        for i in dict.fromkeys(o // bs for o in offsets if 0 <= o < self.size):
            if i not in self._blocks and len(missing) < limit:
                missing.append(i)
        if len(missing) < 2:
            return                  # one block comes as soon as it is read, as before
        runs = coalesce([(i * bs, min((i + 1) * bs, self.size)) for i in missing], 0,
                        self.max_readahead * bs)
        parts = self.fs.cat_ranges([self.fs_path] * len(runs), [a for a, _ in runs],
                                   [b for _, b in runs])
        _check_parts(runs, parts, "metadata block")
        with self._lock:
            self.requests += len(runs)
            for (a, _), part in zip(runs, parts):
                self._keep(a // bs, bytes(part))

    def close(self):
        self._blocks.clear()

    def _in_blocks(self, start, stop):
        """Whether the block cache holds every byte of ``start..stop`` and would serve a read
        of them (a small file's first block may hold its raw data too)."""
        bs = self.block_size
        return stop - start <= 4 * bs and \
            all(i in self._blocks for i in range(start // bs, (stop - 1) // bs + 1))

    def _prefetched(self, offset, n):
        """The bytes at ``offset`` if a prefetch under way holds all ``n`` of them."""
        for starts, parts in self._fetched:
            i = bisect_right(starts, offset) - 1
            if i >= 0 and offset + n <= starts[i] + len(parts[i]):
                lo = offset - starts[i]
                return memoryview(parts[i])[lo:lo + n]
        return None

    def _read(self, offset, n):
        data = self._prefetched(offset, n) if self._fetched else None
        return super()._read(offset, n) if data is None else data


def _check_parts(ranges, parts, structure):
    """Raise the error ``cat_ranges`` returned for a range, or a TruncatedError for a short
    answer."""
    for (a, b), part in zip(ranges, parts):
        if isinstance(part, BaseException):
            raise part
        if len(part) != b - a:
            raise TruncatedError(f"the source returned {len(part)} of {b - a} bytes",
                                 structure, a)


def open_fsspec(target, storage_options=None, size=None, block_size=None):
    """An ``FsspecSource`` for an fsspec URL (with the filesystem's ``storage_options``) or
    for an fsspec ``OpenFile`` / opened file (its filesystem and path; its size if known)."""
    if block_size is None:
        block_size = REMOTE_BLOCK
    if isinstance(target, str):
        try:
            from fsspec.core import url_to_fs
        except ImportError as e:
            raise ImportError(f"reading {target!r} needs fsspec: pip install purehep[fsspec]",
                              name="fsspec") from e
        fs, path = url_to_fs(target, **(storage_options or {}))
    else:
        if storage_options:
            raise ValueError("storage_options apply to URLs; an fsspec file object brings "
                             "its filesystem's")
        fs, path = target.fs, target.path
        if size is None and isinstance(getattr(target, "size", None), int):
            size = target.size
    return FsspecSource(fs, path, size=size, block_size=block_size)


def refuse_write(target, mode):
    """The error for a write mode on a remote file: they are read-only."""
    name = target if isinstance(target, str) else getattr(target, "path", repr(target))
    return ReadOnlyError(f"Unable to open {name!r} in mode {mode!r}: files reached through "
                         "fsspec are read-only (open them with mode='r')")
