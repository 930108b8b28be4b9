"""A decoded-chunk cache: the counterpart of libhdf5's raw data chunk cache (``rdcc``).

Filtered chunks are kept decoded, least recently used first out, up to a byte budget per
dataset (default 8 MiB, as libhdf5 2.0's H5D_CHUNK_CACHE_NBYTES_DEFAULT); a chunk larger than the budget is not kept. Reading
row by row through a compressed dataset then decodes each chunk once, not once a row.
"""
import threading
from collections import OrderedDict

DEFAULT_NBYTES = 8 << 20


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

    def clear(self):
        with self._lock:
            self._chunks.clear()
            self.used = 0
