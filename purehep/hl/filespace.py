"""h5py's file space options of File (libhdf5's H5Pset_file_space_strategy,
H5Pset_file_space_page_size, H5Pset_page_buffer_size and H5Pset_meta_block_size), checked in
h5py's order with its and libhdf5's errors, and what they become: the File Space Info message
of a new file (spec IV.A.2.x, purehep.format.free_space), the page buffer and metadata block
size its access list reports.

purehep writes a new file with these settings as libhdf5 does: superblock version 2 at least,
with an extension holding the message; a file of the "page" strategy is allocated in pages of
metadata or raw data (purehep.write.allocator). Free space is never tracked across sessions:
a file that persists free space has no free-space managers (their addresses are undefined,
as libhdf5 writes them while a file has no free space), so the space a session frees is
lost to later sessions, libhdf5's included, as with purehep's default strategy. purehep has
no page buffer: its settings are checked and reported, not applied. A metadata block size
given is applied (purehep.write.allocator: metadata in blocks of that size that raw data does
not share); without one, purehep places each structure on its own, not in libhdf5's default
blocks of 2048 bytes (which the access list reports).
"""
import os

from ..format.free_space import FileSpaceInfo, PAGE_STRATEGY
from ..h5p import (FSPACE_STRATEGY_AGGR, FSPACE_STRATEGY_FSM_AGGR, FSPACE_STRATEGY_NONE,
                   FSPACE_STRATEGY_PAGE, PropFAID, PropFCID, page_buffer)

STRATEGIES = {"fsm": FSPACE_STRATEGY_FSM_AGGR, "page": FSPACE_STRATEGY_PAGE,
              "aggregate": FSPACE_STRATEGY_AGGR, "none": FSPACE_STRATEGY_NONE}
CREATING = ("w", "w-", "x")


def check_space(name, mode, fs_strategy, fs_persist, fs_threshold, fs_page_size,
                page_buf_size, min_meta_keep, min_raw_keep, meta_block_size):
    """(File Space Info message of the new file or None for libhdf5's defaults, the page
    buffer (size, min_meta_keep, min_raw_keep) asked for, the metadata block size): h5py's
    ValueError for a strategy given for a file that may exist, then the access list's checks
    (its make_fapl), the creation list's (make_fcpl), and libhdf5's OSError when a file is
    created with a page buffer but no paged aggregation or pages bigger than the buffer."""
    if fs_strategy and mode not in CREATING:
        raise ValueError("Unable to set file space strategy of an existing file")
    fapl = PropFAID()
    if page_buf_size:
        fapl.set_page_buffer_size(page_buf_size, min_meta_keep, min_raw_keep)
    if meta_block_size is not None:
        fapl.set_meta_block_size(meta_block_size)
    fcpl = PropFCID()
    if fs_strategy:
        strategy = STRATEGIES.get(fs_strategy)
        if strategy is None:
            raise ValueError("Invalid file space strategy type")
        fcpl.set_file_space_strategy(strategy, fs_persist, fs_threshold)
        if fs_page_size and strategy == FSPACE_STRATEGY_PAGE:
            fcpl.set_file_space_page_size(int(fs_page_size))
    space = file_space(fcpl)
    size = fapl.get_page_buffer_size()[0]
    exists = isinstance(name, (str, bytes, os.PathLike)) and os.path.exists(name)
    if size and (mode in CREATING or mode == "a" and not exists):
        page = space.page_size if space is not None and space.strategy == PAGE_STRATEGY else 0
        if not page:
            raise OSError("Unable to synchronously create file (Enabling Page Buffering "
                          "requires PAGE file space strategy)")
        if size < page:
            raise OSError("Unable to synchronously create file (Page Buffer size must be >= "
                          "to the page size)")
    return space, fapl.get_page_buffer_size(), fapl.get_meta_block_size()


def file_space(fcpl):
    """The File Space Info message libhdf5 writes for the creation list ``fcpl``, or None
    when its settings are the defaults (libhdf5 then writes none)."""
    settings = fcpl.get_file_space_strategy() + (fcpl.get_file_space_page_size(),)
    default = PropFCID()
    if settings == default.get_file_space_strategy() + (default.get_file_space_page_size(),):
        return None
    return FileSpaceInfo.create(*settings, None)


def create_list(info, userblock, **group_settings):
    """The creation list of an open file: its root group's settings, its user block and the
    file space settings of its File Space Info message ``info`` (None: the defaults)."""
    fcpl = PropFCID(userblock=userblock, **group_settings)
    if info is not None:
        fcpl._space = (info.strategy, int(info.persist), info.threshold)
        fcpl._page_size = info.page_size or fcpl.get_file_space_page_size()
    return fcpl


def access_buffer(asked, info):
    """The page buffer a file with File Space Info ``info`` gets when ``asked`` is."""
    paged = info is not None and info.version >= 1 and info.strategy == PAGE_STRATEGY
    return page_buffer(asked, (info.page_size or 0) if paged else 0)
