"""h5py's ``h5p`` as far as purehep has it: property lists, libhdf5's sets of settings for
creating and opening files, groups, datasets and links (H5P), with the getters and setters
h5py gives them.

A list made by ``create(cls)`` holds libhdf5 2.0's defaults and what is set on it, checked as
libhdf5 checks it. The lists of an object in a file report how it is stored or was opened:
creation-order flags read back from the file as libhdf5 reads them (attributes: the version 2
object header's flags, spec IV.A.1.b, bits 2 and 3; links: the Link Info message, IV.A.2.c,
bits 0 and 1), a dataset's fill and allocation times from its Fill Value message (IV.A.2.f)
and layout class from its Data Layout message (IV.A.2.i), a file's access settings as File
was given them (``file_access``).
"""
import copy

import numpy as np

from . import h5d, h5z
from .format.free_space import AGGR, DEFAULT_PAGE_SIZE, FSM_AGGR, NONE, PAGE_STRATEGY

CRT_ORDER_TRACKED, CRT_ORDER_INDEXED = 0x01, 0x02
# H5Pset_libver_bounds' values (h5py.h5f.LIBVER_*), and h5py's names for them
LIBVER = {"earliest": 0, "v108": 1, "v110": 2, "v112": 3, "v114": 4, "v200": 5, "latest": 5}
MiB = 1 << 20


class PropID:
    """A property list: its settings, copied by ``copy``; ``close`` frees nothing."""

    def copy(self):
        return copy.deepcopy(self)

    def close(self):
        pass

    def __eq__(self, other):
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = None


class PropOCID(PropID):
    """An object creation property list (H5P_OBJECT_CREATE)."""

    def __init__(self, attr_order=0, track_times=True, phase_change=(8, 6)):
        self._attr_order = attr_order
        self._track_times = bool(track_times)
        self._phase_change = tuple(phase_change)

    def get_attr_creation_order(self):
        """CRT_ORDER_TRACKED | CRT_ORDER_INDEXED bits for the object's attributes."""
        return self._attr_order

    def set_attr_creation_order(self, flags):
        self._attr_order = _order_flags(flags)

    def get_obj_track_times(self):
        return self._track_times

    def set_obj_track_times(self, track):
        self._track_times = bool(track)

    def get_attr_phase_change(self):
        """(max_compact, min_dense): attributes kept in the object header up to max_compact,
        moved back from dense storage below min_dense (libhdf5's 8 and 6 by default)."""
        return self._phase_change

    def set_attr_phase_change(self, max_compact=8, min_dense=6):
        if max_compact >= 65536:
            raise ValueError("Max compact value must be < 65536")
        if min_dense > max_compact + 1:
            raise ValueError("Minimum dense value must be no more than max compact value + 1")
        self._phase_change = (int(max_compact), int(min_dense))


class PropGCID(PropOCID):
    """A group creation property list: adds the order of the group's links."""

    def __init__(self, link_order=0, **settings):
        super().__init__(**settings)
        self._link_order = link_order

    def get_link_creation_order(self):
        """CRT_ORDER_TRACKED | CRT_ORDER_INDEXED bits for the group's links."""
        return self._link_order

    def set_link_creation_order(self, flags):
        self._link_order = _order_flags(flags)


# H5F_fspace_strategy_t (h5py's h5f.FSPACE_STRATEGY_*), as the File Space Info message has them
FSPACE_STRATEGY_FSM_AGGR, FSPACE_STRATEGY_PAGE, FSPACE_STRATEGY_AGGR, FSPACE_STRATEGY_NONE = \
    FSM_AGGR, PAGE_STRATEGY, AGGR, NONE
PAGE_SIZE_MIN, PAGE_SIZE_MAX = 512, 1 << 30
META_BLOCK_SIZE = 2048    # H5Pset_meta_block_size's default


def _unsigned(value, ctype):
    """``value`` as a C unsigned integer, with h5py's OverflowError for a negative one."""
    value = int(value)
    if value < 0:
        raise OverflowError(f"can't convert negative value to {ctype}")
    return value


class PropFCID(PropGCID):
    """A file creation property list (its root group's settings among them), with the file
    space settings libhdf5 keeps in the File Space Info message (spec IV.A.2.x): strategy,
    whether free space persists, the smallest free section tracked, the page size of paged
    aggregation."""

    def __init__(self, space=(FSPACE_STRATEGY_FSM_AGGR, 0, 1), page_size=DEFAULT_PAGE_SIZE,
                 userblock=0, **settings):
        super().__init__(**settings)
        self._space, self._page_size, self._userblock = tuple(space), page_size, userblock

    def get_file_space_strategy(self):
        """(strategy, persist, threshold)."""
        return self._space

    def set_file_space_strategy(self, strategy, persist, threshold):
        """As H5Pset_file_space_strategy: free space persists and the threshold applies with
        free-space managers only (strategies FSM_AGGR and PAGE)."""
        strategy = _choice(strategy, (0, 1, 2, 3), "file space strategy")
        threshold = _unsigned(threshold, "unsigned PY_LONG_LONG")
        managed = strategy in (FSPACE_STRATEGY_FSM_AGGR, FSPACE_STRATEGY_PAGE)
        self._space = (strategy, int(bool(persist)) if managed else 0,
                       threshold if managed else 1)

    def get_file_space_page_size(self):
        return self._page_size

    def set_file_space_page_size(self, size):
        size = _unsigned(size, "hsize_t")
        if size < PAGE_SIZE_MIN:
            raise ValueError("Cannot set file space page size to less than 512 (cannot set "
                             "file space page size to less than 512)")
        if size > PAGE_SIZE_MAX:
            raise ValueError("Cannot set file space page size to more than 1gb (cannot set "
                             "file space page size to more than 1GB)")
        self._page_size = size

    def get_userblock(self):
        return self._userblock

    def set_userblock(self, size):
        """H5Pset_userblock: 0, or a power of two of 512 bytes at least."""
        size = _unsigned(size, "hsize_t")
        for bad, text in ((size and size & (size - 1), "is non-zero and not a power of two"),
                          (size and size < 512, "is non-zero and less than 512")):
            if bad:
                raise ValueError(f"Userblock size {text} (userblock size {text})")
        self._userblock = size


class PropDCID(PropOCID):
    """A dataset creation property list: fill time, allocation time, layout class (the
    values of purehep.h5d), chunk shape, fill value (a one-element array, None: libhdf5's
    default) and filters ((filter id, flags, client data, name) each, as H5Pget_filter
    gives them)."""

    def __init__(self, fill_time=h5d.FILL_TIME_IFSET, alloc_time=h5d.ALLOC_TIME_LATE,
                 layout=h5d.CONTIGUOUS, chunk=None, fill=None, filters=(), **settings):
        super().__init__(**settings)
        self._fill_time, self._alloc_time, self._layout = fill_time, alloc_time, layout
        self._chunk, self._fill, self._filters = chunk, fill, list(filters)
        self._virtual = []          # (virtual space, source file, source dataset, its space)

    def set_layout(self, layout):
        self._layout = _choice(layout, (h5d.COMPACT, h5d.CONTIGUOUS, h5d.CHUNKED,
                                        h5d.VIRTUAL), "layout")

    # -- virtual dataset mappings (H5Pset_virtual) -------------------------------------------
    def set_virtual(self, vspace, src_file_name, src_dset_name, src_space):
        """Map the selection of ``src_space`` in dataset ``src_dset_name`` of file
        ``src_file_name`` (bytes; "." for the file itself) to the selection of ``vspace``;
        the layout becomes virtual."""
        import os
        self._virtual.append((vspace.copy(), os.fsdecode(src_file_name),
                              os.fsdecode(src_dset_name), src_space.copy()))
        self._layout = h5d.VIRTUAL

    def _mapping(self, index):
        if self._layout != h5d.VIRTUAL:
            text = "Not a virtual storage layout"
            raise ValueError(f"{text} ({text.lower()})")
        return self._virtual[index] if index is not None else None

    def get_virtual_count(self):
        self._mapping(None)
        return len(self._virtual)

    def get_virtual_vspace(self, index):
        return self._mapping(index)[0].copy()

    def get_virtual_filename(self, index):
        return self._mapping(index)[1]

    def get_virtual_dsetname(self, index):
        return self._mapping(index)[2]

    def get_virtual_srcspace(self, index):
        return self._mapping(index)[3].copy()

    def set_chunk(self, chunksize):
        """H5Pset_chunk: chunks of ``chunksize`` (the layout becomes chunked)."""
        chunks = tuple(int(c) for c in chunksize)
        if not chunks or any(c <= 0 for c in chunks):
            text = "All chunk dimensions must be positive"
            raise ValueError(f"{text} ({text.lower()})")
        self._chunk, self._layout = chunks, h5d.CHUNKED

    def get_chunk(self):
        if self._layout != h5d.CHUNKED:
            text = "Not a chunked storage layout"
            raise ValueError(f"{text} ({text.lower()})")
        return self._chunk

    def set_fill_value(self, value):
        """H5Pset_fill_value: the first element of the array ``value``."""
        self._fill = np.array(np.asarray(value).reshape(-1)[:1])

    def get_fill_value(self, value):
        """H5Pget_fill_value: the fill value written into the array ``value`` (converted
        to its dtype; zeros when none is set)."""
        value[...] = 0 if self._fill is None else self._fill[0]

    def fill_value_defined(self):
        """h5d.FILL_VALUE_USER_DEFINED or h5d.FILL_VALUE_DEFAULT."""
        return h5d.FILL_VALUE_DEFAULT if self._fill is None else h5d.FILL_VALUE_USER_DEFINED

    # -- filters ---------------------------------------------------------------------------
    def set_filter(self, filter_code, flags=0, values=None):
        """H5Pset_filter: append filter ``filter_code`` with its client data ``values``."""
        from .filters import KNOWN_NAMES
        code = int(filter_code)
        self._filters.append((code, int(flags), tuple(int(v) for v in values or ()),
                              KNOWN_NAMES.get(code, "").encode()))

    def set_deflate(self, level=5):
        self.set_filter(h5z.FILTER_DEFLATE, h5z.FLAG_OPTIONAL, (level,))

    def set_shuffle(self):
        self.set_filter(h5z.FILTER_SHUFFLE, h5z.FLAG_OPTIONAL)

    def set_fletcher32(self):
        self.set_filter(h5z.FILTER_FLETCHER32, h5z.FLAG_MANDATORY)

    def get_nfilters(self):
        return len(self._filters)

    def get_filter(self, filter_idx):
        """(filter id, flags, client data, name) of the filter at ``filter_idx``."""
        if not 0 <= filter_idx < len(self._filters):
            raise ValueError(f"Filter number is invalid (filter number {filter_idx} is "
                             f"invalid)")
        return self._filters[filter_idx]

    def get_filter_by_id(self, filter_code):
        """(flags, client data, name) of filter ``filter_code``; None without it."""
        for code, flags, values, name in self._filters:
            if code == filter_code:
                return flags, values, name
        return None

    def remove_filter(self, filter_class):
        """H5Premove_filter: drop filter ``filter_class`` (h5z.FILTER_ALL: every one)."""
        self._filters = [f for f in self._filters
                         if filter_class not in (f[0], h5z.FILTER_ALL)]

    def create_args(self, itemsize):
        """The create_dataset keywords this list stands for (purehep.h5d.create), for a type
        of ``itemsize`` bytes: the shuffle filter's client data is the element size, as
        libhdf5 sets it when the dataset is created."""
        from .format.messages.filter_pipeline import FilterInfo
        kw = dict(track_times=self._track_times,
                  fill_time={h5d.FILL_TIME_ALLOC: "alloc", h5d.FILL_TIME_NEVER: "never",
                             h5d.FILL_TIME_IFSET: "ifset"}[self._fill_time])
        if self._layout == h5d.CHUNKED:
            kw["chunks"] = self._chunk
        elif self._layout == h5d.COMPACT:
            kw["layout"] = "compact"
        if self._alloc_time == h5d.ALLOC_TIME_EARLY:
            kw["alloc_time"] = "early"
        if self._fill is not None:
            kw["fillvalue"] = self._fill[0]
        if self._filters:
            kw["filter_pipeline"] = [
                FilterInfo(code, flags, name.decode(),
                           (itemsize,) if code == h5z.FILTER_SHUFFLE else values)
                for code, flags, values, name in self._filters]
        return kw

    def get_fill_time(self):
        return self._fill_time

    def set_fill_time(self, fill_time):
        self._fill_time = _choice(fill_time, (h5d.FILL_TIME_ALLOC, h5d.FILL_TIME_NEVER,
                                              h5d.FILL_TIME_IFSET), "fill time")

    def get_alloc_time(self):
        return self._alloc_time

    def set_alloc_time(self, alloc_time):
        self._alloc_time = _choice(alloc_time, (h5d.ALLOC_TIME_EARLY, h5d.ALLOC_TIME_LATE,
                                                h5d.ALLOC_TIME_INCR), "allocation time")

    def get_layout(self):
        """H5D_COMPACT 0, H5D_CONTIGUOUS 1, H5D_CHUNKED 2, H5D_VIRTUAL 3."""
        return self._layout


class PropFAID(PropID):
    """A file access property list."""

    def __init__(self, libver=(1, 5), cache=(0, 8191, 8 * MiB, 0.75), locking=(1, 1)):
        self._libver = tuple(libver)
        self._cache = tuple(cache)
        self._locking = tuple(locking)
        self._alignment = (1, 1)
        self._fclose_degree = 0
        self._mdc_config = CacheConfig()
        self._page_buffer = (0, 0, 0)
        self._meta_block = META_BLOCK_SIZE
        self._core = None          # the core driver's (block size, backing store), if set
        self._image = None         # a file image to open instead of a file (core driver)
        self._driver = "sec2"      # the file driver set (sec2, stdio or core)

    def set_fapl_core(self, block_size=64 * 1024, backing_store=True):
        """The core (memory) driver: the file held in memory, written to its file on close
        with ``backing_store`` (``block_size`` sizes nothing here)."""
        self._core = (int(block_size), bool(backing_store))
        self._driver = "core"

    def get_fapl_core(self):
        if self._core is None:
            raise ValueError("Incorrect vfl driver (incorrect VFL driver)")
        return self._core

    def set_fapl_sec2(self):
        self._core = self._image = None
        self._driver = "sec2"

    def set_fapl_stdio(self):
        """The stdio driver (purehep reads and writes its files as sec2's)."""
        self._core = self._image = None
        self._driver = "stdio"

    def set_file_image(self, image):
        """The bytes of a file for purehep.h5f.open to open (in memory) instead of a file."""
        self._image = bytes(memoryview(image).cast("B"))

    def get_libver_bounds(self):
        return self._libver

    def set_libver_bounds(self, low, high):
        if not (0 <= low <= high <= LIBVER["latest"]) or high < LIBVER["v108"]:
            raise ValueError(f"Invalid (low, high) library version bounds ({low}, {high})")
        self._libver = (int(low), int(high))

    def get_cache(self):
        """(unused, rdcc_nslots, rdcc_nbytes, rdcc_w0): the raw data chunk cache."""
        return self._cache

    def set_cache(self, mdc, nslots, nbytes, w0):
        self._cache = (int(mdc),) + _chunk_cache(nslots, nbytes, w0)

    def get_alignment(self):
        """(threshold, alignment): objects of threshold bytes or more start at multiples of
        alignment."""
        return self._alignment

    def set_alignment(self, threshold, alignment):
        if alignment < 1:
            raise ValueError("Alignment must be positive")
        self._alignment = (int(threshold), int(alignment))

    def get_page_buffer_size(self):
        """(size, minimum metadata %, minimum raw data %) of libhdf5's page buffer."""
        return self._page_buffer

    def set_page_buffer_size(self, size, min_meta_perc=0, min_raw_perc=0):
        size = _unsigned(size, "size_t")
        meta, raw = (_unsigned(v, "unsigned int") for v in (min_meta_perc, min_raw_perc))
        for value, what in ((meta, "metadata"), (raw, "raw data")):
            if value > 100:
                text = f"Minimum {what} fractions must be between 0 and 100 inclusive"
                raise ValueError(f"{text} ({text})")
        if meta + raw > 100:
            text = "Sum of minimum metadata and raw data fractions can't be bigger than 100"
            raise ValueError(f"{text} ({text})")
        self._page_buffer = (size, meta, raw)

    def get_meta_block_size(self):
        """The block size libhdf5 aggregates small metadata allocations in (purehep does
        when File is given one: purehep.hl.filespace)."""
        return self._meta_block

    def set_meta_block_size(self, size):
        self._meta_block = _unsigned(size, "size_t")

    def get_file_locking(self):
        """(use_file_locking, ignore_when_disabled)."""
        return self._locking

    def set_file_locking(self, use, ignore_when_disabled):
        self._locking = (int(bool(use)), int(bool(ignore_when_disabled)))

    def get_fclose_degree(self):
        return self._fclose_degree

    def set_fclose_degree(self, degree):
        self._fclose_degree = _choice(degree, (0, 1, 2, 3), "file close degree")

    def get_mdc_config(self):
        return copy.copy(self._mdc_config)

    def set_mdc_config(self, config):
        self._mdc_config = cache_config(config)


class CacheConfig:
    """The metadata cache settings (h5py's h5ac.CacheConfig), libhdf5 2.0's defaults as h5py
    reports them (H5AC__DEFAULT_CACHE_CONFIG); purehep's cache of decoded structures
    (purehep.hl.mdc) has no size bound: the settings are held, as a list holds them."""

    _DEFAULTS = dict(
        version=1, rpt_fcn_enabled=0, set_initial_size=0, initial_size=2 * MiB,
        min_clean_fraction=0.01, max_size=32 * MiB, min_size=MiB, epoch_length=50000,
        incr_mode=1, lower_hr_threshold=0.9, increment=2.0, apply_max_increment=1,
        max_increment=4 * MiB, flash_incr_mode=1, flash_multiple=1.4, flash_threshold=0.25,
        decr_mode=3, upper_hr_threshold=0.999, decrements=0.9, apply_max_decrement=1,
        max_decrement=MiB, epochs_before_eviction=3, apply_empty_reserve=1, empty_reserve=0.1,
        dirty_bytes_threshold=256 * 1024, evictions_enabled=1)

    def __init__(self):
        vars(self).update(self._DEFAULTS)

    def __eq__(self, other):
        return isinstance(other, CacheConfig) and vars(other) == vars(self)


def cache_config(config):
    """A copy of ``config``, a CacheConfig (h5py's TypeError for anything else)."""
    if not isinstance(config, CacheConfig):
        raise TypeError(f"Argument 'config' has incorrect type (expected CacheConfig, "
                        f"got {type(config).__name__})")
    return copy.copy(config)


class PropDAID(PropID):
    """A dataset access property list: chunk cache, external and virtual file prefixes."""

    def __init__(self, chunk_cache=(8191, 8 * MiB, 0.75)):
        self._chunk_cache = tuple(chunk_cache)
        self._efile_prefix = self._virtual_prefix = b""

    def get_chunk_cache(self):
        return self._chunk_cache

    def set_chunk_cache(self, nslots, nbytes, w0):
        self._chunk_cache = _chunk_cache(nslots, nbytes, w0)

    def get_efile_prefix(self):
        return self._efile_prefix

    def set_efile_prefix(self, prefix):
        self._efile_prefix = bytes(prefix)

    def get_virtual_prefix(self):
        return self._virtual_prefix

    def set_virtual_prefix(self, prefix):
        self._virtual_prefix = bytes(prefix)


class PropLAID(PropID):
    """A link access property list: soft link depth, external link prefix and access."""

    def __init__(self):
        self._nlinks, self._elink_prefix, self._elink_flags = 16, b"", 0xFFFF
        self._elink_fapl = PropFAID()

    def get_nlinks(self):
        return self._nlinks

    def set_nlinks(self, nlinks):
        if nlinks < 1:
            raise ValueError("number of links must be positive")
        self._nlinks = int(nlinks)

    def get_elink_prefix(self):
        return self._elink_prefix

    def set_elink_prefix(self, prefix):
        self._elink_prefix = bytes(prefix)

    def get_elink_acc_flags(self):
        return self._elink_flags

    def set_elink_acc_flags(self, flags):
        self._elink_flags = int(flags)

    def get_elink_fapl(self):
        return self._elink_fapl.copy()

    def set_elink_fapl(self, fapl):
        self._elink_fapl = fapl.copy()


class PropLCID(PropID):
    """A link creation property list: whether missing groups on a new link's path are
    created (purehep stores a link name's character set from the name itself: UTF-8 for
    names beyond ASCII, as h5py's own lists ask)."""

    def __init__(self):
        self._intermediate = False

    def set_create_intermediate_group(self, create):
        self._intermediate = bool(create)

    def get_create_intermediate_group(self):
        return self._intermediate


class PropCopyID(PropID):
    """An object copy property list: the H5O_COPY_* flags of purehep.h5o.copy."""

    def __init__(self):
        self._flags = 0

    def set_copy_object(self, flags):
        self._flags = int(flags)

    def get_copy_object(self):
        return self._flags


class PropClassID:
    """A property list class (h5py's h5p.FILE_ACCESS, …): ``create`` makes its lists."""

    def __init__(self, name, make):
        self.name, self._make = name, make

    def __repr__(self):
        return f"<purehep.h5p.PropClassID {self.name}>"


OBJECT_CREATE = PropClassID("OBJECT_CREATE", PropOCID)
FILE_CREATE = PropClassID("FILE_CREATE", PropFCID)
FILE_ACCESS = PropClassID("FILE_ACCESS", PropFAID)
DATASET_CREATE = PropClassID("DATASET_CREATE", PropDCID)
DATASET_ACCESS = PropClassID("DATASET_ACCESS", PropDAID)
GROUP_CREATE = PropClassID("GROUP_CREATE", PropGCID)
LINK_ACCESS = PropClassID("LINK_ACCESS", PropLAID)
OBJECT_COPY = PropClassID("OBJECT_COPY", PropCopyID)
LINK_CREATE = PropClassID("LINK_CREATE", PropLCID)


def create(cls):
    """H5Pcreate: a new list of class ``cls`` holding libhdf5's defaults."""
    if not isinstance(cls, PropClassID):
        raise TypeError(f"a property list class is needed, not {cls!r}")
    return cls._make()


def file_access(libver, rdcc, locking, alignment, page_buffer=(0, 0, 0),
                meta_block=META_BLOCK_SIZE):
    """The access list of an open file: its (low, high) libver names, (nslots, nbytes, w0)
    as File was given them (None: libhdf5 2.0's defaults), h5py's ``locking`` argument
    (None: libhdf5's default, locking that is ignored where the file system has none), its
    (threshold, interval) alignment, its page buffer (size, min_meta_keep, min_raw_keep) as
    libhdf5 sets it for the file (see page_buffer) and its metadata block size."""
    defaults = (8191, 8 * MiB, 0.75)
    cache = tuple(d if v is None else v for v, d in zip(rdcc, defaults))
    use = {None: (1, 1), True: (1, 0), False: (0, 0), "best-effort": (1, 1)}[locking]
    fapl = PropFAID(tuple(LIBVER[v] for v in libver), (0,) + cache, use)
    fapl.set_alignment(*alignment)
    fapl._page_buffer = tuple(page_buffer)
    fapl.set_meta_block_size(meta_block)
    return fapl


def page_buffer(asked, page_size):
    """The page buffer libhdf5 gives a file opened with ``asked`` = (size, min_meta_keep,
    min_raw_keep): none for a file without paged aggregation (``page_size`` 0), else whole
    pages, one at least."""
    size, meta, raw = asked
    if not size or not page_size:
        return 0, 0, 0
    return max(page_size, size // page_size * page_size), meta, raw


def _order_flags(flags):
    flags = int(flags)
    if flags & ~(CRT_ORDER_TRACKED | CRT_ORDER_INDEXED) or flags == CRT_ORDER_INDEXED:
        raise ValueError(f"creation order flags {flags}: INDEXED needs TRACKED")
    return flags


def _choice(value, allowed, what):
    if value not in allowed:
        raise ValueError(f"invalid {what} {value!r} (one of {allowed})")
    return int(value)


def _chunk_cache(nslots, nbytes, w0):
    if not 0 <= w0 <= 1:
        raise ValueError("rdcc_w0 must be between 0 and 1")
    return int(nslots), int(nbytes), float(w0)
