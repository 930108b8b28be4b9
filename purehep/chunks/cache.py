"""Caches of decoded chunks and decoded chunk index nodes.

A decoded-chunk cache: the counterpart of libhdf5's raw data chunk cache (``rdcc``).

Filtered chunks are kept decoded, least recently used first out, up to a byte budget per
dataset (default 8 MiB, as libhdf5 2.0's H5D_CHUNK_CACHE_NBYTES_DEFAULT); a chunk larger than the budget is not kept. Reading
row by row through a compressed dataset then decodes each chunk once, not once a row.
"""
import threading
from collections import OrderedDict, deque

DEFAULT_NBYTES = 8 << 20
LEAVES_KEPT = 4096                    # decoded leaf nodes a NodeCache keeps


class ChunkCache:
    """LRU map chunk address -> decoded bytes (read-only uint8 arrays), ``nbytes`` at most."""

    def __init__(self, nbytes=DEFAULT_NBYTES):
        self.nbytes = int(nbytes)
        self.used = 0
        self._chunks = OrderedDict()
        self._lock = threading.Lock()

    def get(self, address):
        with self._lock:
            data = self._chunks.get(address)
            if data is not None:
                self._chunks.move_to_end(address)
            return data

    def put(self, address, data):
        """Keep ``data`` (it is made read-only) unless it alone exceeds the budget."""
        if data.nbytes > self.nbytes:
            return
        data.flags.writeable = False
        with self._lock:
            old = self._chunks.pop(address, None)
            self.used += data.nbytes - (old.nbytes if old is not None else 0)
            self._chunks[address] = data
            while self.used > self.nbytes:
                self.used -= self._chunks.popitem(last=False)[1].nbytes

    def resize(self, nbytes):
        """A budget of ``nbytes`` from now on: the chunks used longest ago leave until the
        rest fits."""
        with self._lock:
            self.nbytes = int(nbytes)
            while self.used > self.nbytes:
                self.used -= self._chunks.popitem(last=False)[1].nbytes

    def clear(self):
        with self._lock:
            self._chunks.clear()
            self.used = 0


class NodeCache:
    """Decoded index nodes by address, for lookups that descend a B-tree one chunk at a
    time: internal nodes (few, and on every path) are all kept; leaves up to ``leaves``
    (default LEAVES_KEPT), the oldest dropped first. A node enters once decoded and
    checked, so a cached node is not checked again. Nothing goes stale: the cache belongs
    to a lookup made for one state of the index, and a file open for writing makes new
    storage objects (so new lookups) whenever its contents change."""

    def __init__(self, leaves=None):
        self.limit = LEAVES_KEPT if leaves is None else leaves
        self._nodes = {}
        self._leaves = deque()            # leaf addresses, oldest first
        self._lock = threading.Lock()
        self.get = self._nodes.get        # address -> decoded node or None

    def put(self, address, level, value):
        """Keep ``value``, the decoded node at ``address`` of tree level ``level`` (0: a
        leaf); returns it."""
        if not level and self.limit <= 0:
            return value
        with self._lock:
            if not level:
                if len(self._leaves) >= self.limit:
                    self._nodes.pop(self._leaves.popleft(), None)
                self._leaves.append(address)
            self._nodes[address] = value
        return value
