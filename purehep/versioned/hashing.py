"""Chunk digests and the on-disk hash table of one versioned dataset
(/work/shared/reference/versioned-hdf5-layout.md §4)."""
import hashlib
import math
import struct

import numpy as np

HASH_TABLE_DTYPE = np.dtype([("hash", "u1", (32,)), ("shape", "<i8", (2,))])
HASH_TABLE_CHUNKS = (4096,)     # versioned-hdf5's DEFAULT_CHUNK_SIZE (2**12)


def chunk_hash(chunk):
    """sha256 of the edge-trimmed chunk's payload followed by ``str(shape)`` in ASCII.

    The payload is the C-contiguous bytes of a fixed-size chunk; for an object (string)
    chunk, each element in C order as its little-endian u64 length and its UTF-8 bytes."""
    digest = hashlib.sha256()
    _update(digest, chunk)
    digest.update(str(chunk.shape).encode("ascii"))
    return digest.digest()


def fill_hash(shape, dtype, fillvalue, block=1 << 16):
    """``chunk_hash(np.full(shape, fillvalue, dtype))``, hashed ``block`` elements at a
    time."""
    digest = hashlib.sha256()
    size = math.prod(shape)
    piece = np.full(min(size, block), fillvalue, dtype)
    for start in range(0, size, block):
        _update(digest, piece[:size - start])
    digest.update(str(tuple(int(n) for n in shape)).encode("ascii"))
    return digest.digest()


def _update(digest, chunk):
    """Feed the payload of ``chunk`` to ``digest``."""
    if chunk.dtype.kind in "OT":
        for value in chunk.flat:
            data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            digest.update(struct.pack("<Q", len(data)))
            digest.update(data)
    else:
        digest.update(np.ascontiguousarray(chunk).reshape(-1).view(np.uint8))


class Hashtable:
    """The digest -> raw_data rows ``[start, stop)`` table of ``hash_table``: rows below its
    ``largest_index`` attribute are valid; new rows are appended by :meth:`add` and stored by
    :meth:`write`."""

    def __init__(self, dataset, largest_index=None):
        self.dataset = dataset
        self.largest_index = int(dataset.attrs["largest_index"]) if largest_index is None \
            else largest_index
        rows = dataset[:self.largest_index] if self.largest_index else \
            np.zeros(0, HASH_TABLE_DTYPE)
        digests = np.ascontiguousarray(rows["hash"]).tobytes()
        self.index = dict(zip((digests[i:i + 32] for i in range(0, len(digests), 32)),
                              map(tuple, rows["shape"].tolist())))
        self.added = []

    @classmethod
    def create(cls, group):
        """An empty ``hash_table`` in ``group``, shaped and filtered as the package does."""
        dataset = group.create_dataset("hash_table", shape=(1,), dtype=HASH_TABLE_DTYPE,
                                       chunks=HASH_TABLE_CHUNKS, maxshape=(None,),
                                       compression="lzf")
        dataset.attrs["largest_index"] = np.int64(0)
        return cls(dataset, 0)

    def get(self, digest):
        return self.index.get(digest)

    def add(self, digest, start, stop):
        """Record a new chunk at raw_data rows ``[start, stop)``."""
        row = np.zeros((), HASH_TABLE_DTYPE)
        row["hash"] = np.frombuffer(digest, np.uint8)
        row["shape"] = (start, stop)
        self.index[digest] = (start, stop)
        self.added.append(row)
        self.largest_index += 1

    def write(self):
        """Append the added rows and update ``largest_index`` (last, marking the commit)."""
        if not self.added:
            return
        first = self.largest_index - len(self.added)
        self.dataset.resize((self.largest_index,))
        self.dataset[first:self.largest_index] = np.array(self.added, HASH_TABLE_DTYPE)
        self.dataset.attrs["largest_index"] = np.int64(self.largest_index)
        self.added = []
