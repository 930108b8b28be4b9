"""Format choices per ``libver``, as libhdf5 makes them, and h5py's defaults.

earliest: superblock 0, object header v1, symbol-table groups, dataspace v1, fill value v2,
layout v3 (chunks indexed by a v1 B-tree), filter pipeline v1, attribute v1, compact
attributes. v108: superblock 2, object header v2, link messages (dense past the group info
threshold), dataspace v2, fill value v3, attribute v3, filter pipeline v2, layout v3. v110 and
later: superblock 3 and layout v4 with the chunk index libhdf5 picks.
"""
import math
from dataclasses import dataclass

from ..format.messages import layout as L
from . import model

LEVELS = {"earliest": 0, "v108": 1, "v110": 2, "v112": 2, "v114": 2, "v200": 2, "latest": 2}

# libhdf5 defaults
GROUP_MAX_COMPACT, GROUP_MIN_DENSE = 8, 6
ATTR_MAX_COMPACT, ATTR_MIN_DENSE = 8, 6
MAX_COMPACT_ATTRIBUTE = 64 * 1024          # bigger attributes go to dense storage
COMPACT_DATA_LIMIT = 64 * 1024 - 64        # raw data of a compact dataset (layout message)
MIN_HEADER_CHUNK = 22      # bytes of messages in chunk 0 of a version 2 object header at least
#                            (libhdf5's H5O_MIN_SIZE): room for a continuation message, so that
#                            the header can grow (a committed datatype's reference count message)
FA_PAGE_BITS = 10
EA_PARAMS = {"max_bits": 32, "index_elements": 4, "min_pointers": 4, "min_elements": 16,
             "page_bits": 10}
BT2_PARAMS = {"node_size": 2048, "split_percent": 100, "merge_percent": 40}
LINK_HEAP = dict(heap_id_length=7, starting_block_size=512, max_direct_block_size=65536,
                 max_heap_bits=32, max_managed_object_size=4096)
ATTR_HEAP = dict(heap_id_length=8, starting_block_size=1024, max_direct_block_size=65536,
                 max_heap_bits=40, max_managed_object_size=4096)


@dataclass(frozen=True)
class Policy:
    level: int
    libver: str = "earliest"      # the lower bound asked for (finer than ``level``)
    sb: int | None = None         # the superblock version, when not the level's: an existing
    #                               file's, or 2 for new files with file space settings

    @classmethod
    def from_libver(cls, libver):
        if libver is None:
            low = "earliest"
        elif isinstance(libver, str):
            low = libver
        else:
            low = libver[0]
        if low not in LEVELS:
            raise ValueError(f"unknown libver {libver!r}; use earliest, v108, v110 or latest")
        return cls(LEVELS[low], low)

    @property
    def superblock_version(self):
        return (0, 2, 3)[self.level] if self.sb is None else self.sb

    @property
    def header_version(self):
        return 1 if self.level == 0 else 2

    @property
    def new_style_groups(self):
        return self.level > 0

    def symbol_table_group(self, node):
        """Whether the new group ``node`` is written as a symbol-table group (spec III.C,
        IV.A.2.r): the earliest format, no creation order tracked, every link one a symbol
        table entry holds."""
        return not (self.new_style_groups or node.link_order or
                    not all(model.fits_symbol_table(n, e) for n, e in node.links.items()))

    @property
    def dataspace_version(self):
        return 1 if self.level == 0 else 2

    @property
    def fill_version(self):
        return 2 if self.level == 0 else 3

    @property
    def attribute_version(self):
        return 1 if self.level == 0 else 3

    @property
    def pipeline_version(self):
        return 1 if self.level == 0 else 2

    @property
    def latest_datatypes(self):
        return self.level > 0

    @property
    def selection_version(self):
        """Hyperslab selections in virtual dataset blocks: version 3 (regular or block list,
        smallest encode size) from libver v112, else version 1 (block lists)."""
        return 3 if self.libver in ("v112", "v114", "v200", "latest") else 1

    @property
    def vds_block_version(self):
        """Virtual dataset global heap block: version 1 (flags per entry) as libhdf5 2.0
        writes for libver latest, else version 0."""
        return 1 if self.libver in ("v200", "latest") else 0

    @property
    def chunk_layout_version(self):
        return 4 if self.level >= 2 else 3

    def chunk_index(self, shape, maxshape, chunks, filtered, early):
        """(index type, index info) libhdf5 chooses for a v4 chunked layout."""
        if self.chunk_layout_version < 4:
            return L.BTREE1, {}
        unlimited = sum(1 for m in maxshape if m is None)
        if unlimited == 1:
            return L.EXTENSIBLE_ARRAY, dict(EA_PARAMS)
        if unlimited > 1:
            return L.BTREE2, dict(BT2_PARAMS)
        if tuple(shape) == tuple(chunks) and tuple(maxshape) == tuple(shape):
            return L.SINGLE, {}
        if early and not filtered:
            return L.IMPLICIT, {}
        return L.FIXED_ARRAY, {"page_bits": FA_PAGE_BITS}


# --- h5py's chunk shape guess ------------------------------------------------------------------
CHUNK_BASE = 16 * 1024      # multiplier of the target chunk size
CHUNK_MIN = 8 * 1024        # smallest target
CHUNK_MAX = 1024 * 1024     # largest target


def guess_chunk(shape, maxshape, itemsize):
    """A chunk shape for ``chunks=True``, by h5py's rule: the target chunk size grows with the
    dataset's size (16 KiB times 2**log10(size in MiB), kept within 8 KiB..1 MiB) and the
    dimensions are halved in turn (rounding up) until the chunk is near or below it. Zero-length
    dimensions count as 1024."""
    if not shape:
        raise ValueError("Chunks not allowed for scalar datasets.")
    dims = [float(s) if s else 1024.0 for s in shape]
    total = math.prod(dims) * itemsize
    target = CHUNK_BASE * 2 ** math.log10(total / (1024.0 * 1024.0))
    target = min(max(target, CHUNK_MIN), CHUNK_MAX)
    i = 0
    while math.prod(dims) > 1:
        nbytes = math.prod(dims) * itemsize
        if nbytes < CHUNK_MAX and (nbytes < target or abs(nbytes - target) / target < 0.5):
            break
        dims[i % len(dims)] = math.ceil(dims[i % len(dims)] / 2.0)
        i += 1
    return tuple(int(d) for d in dims)
