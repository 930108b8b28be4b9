"""h5py's ``h5f`` as far as purehep has it: the library version bounds of
H5Pset_libver_bounds (purehep.h5p.LIBVER, h5py's ``libver`` names) and the access flags of
H5Fopen, numbered as libhdf5 2.0's H5F_libver_t and H5F_ACC_*, the file space strategies
of H5Pset_file_space_strategy (H5F_fspace_strategy_t); H5Fopen, H5Fcreate and opening a
file image, their property lists mapped onto File's keywords (a File is its own FileID)."""
from . import h5p
from .h5p import LIBVER

LIBVER_EARLIEST, LIBVER_V18, LIBVER_V110, LIBVER_V112, LIBVER_V114, LIBVER_V200 = \
    (LIBVER[n] for n in ("earliest", "v108", "v110", "v112", "v114", "v200"))
LIBVER_LATEST = LIBVER["latest"]
ACC_RDONLY, ACC_RDWR, ACC_TRUNC, ACC_EXCL = 0x00, 0x01, 0x02, 0x04
ACC_SWMR_WRITE, ACC_SWMR_READ, ACC_DEFAULT = 0x20, 0x40, 0xFFFF
UNLIMITED = (1 << 64) - 1    # H5F_UNLIMITED: an external file of unlimited size
FSPACE_STRATEGY_FSM_AGGR, FSPACE_STRATEGY_PAGE, FSPACE_STRATEGY_AGGR, FSPACE_STRATEGY_NONE = \
    (getattr(h5p, f"FSPACE_STRATEGY_{n}") for n in ("FSM_AGGR", "PAGE", "AGGR", "NONE"))
FILE_IMAGE_OPEN_RW = 0x0001
_LIBVER_NAMES = {v: k for k, v in LIBVER.items() if k != "v200"}     # 5: "latest"
_STRATEGY_NAMES = {FSPACE_STRATEGY_FSM_AGGR: "fsm", FSPACE_STRATEGY_PAGE: "page",
                   FSPACE_STRATEGY_AGGR: "aggregate", FSPACE_STRATEGY_NONE: "none"}


def open(name, flags=ACC_RDWR, fapl=None):     # noqa: A001 - h5py's name
    """H5Fopen: the file ``name`` (bytes or str) read-only (ACC_RDONLY) or for reading and
    writing, with the settings of the access list ``fapl`` (its file image, when it has
    one, opened instead); its FileID, the File (purehep's files are their own ids)."""
    from .hl.files import File
    mode = "r" if flags & ACC_RDWR == 0 else "r+"
    if fapl is not None and fapl._image is not None:
        return _image_file(fapl._image, mode, _access_args(fapl))
    return File(_path(name), mode, **_access_args(fapl))


def create(name, flags=ACC_TRUNC, fcpl=None, fapl=None):
    """H5Fcreate: a new file ``name``, truncating one there (ACC_TRUNC) or failing
    (ACC_EXCL), with the settings of the creation and access lists."""
    from .hl.files import File
    return File(_path(name), "x" if flags & ACC_EXCL else "w", **_creation_args(fcpl),
                **_access_args(fapl))


def open_file_image(image, flags=0):
    """H5LTopen_file_image: a file in memory holding the bytes ``image``, read-only unless
    ``flags`` has FILE_IMAGE_OPEN_RW."""
    return _image_file(image, "r+" if flags & FILE_IMAGE_OPEN_RW else "r", {})


def _image_file(image, mode, kwargs):
    import io
    from .hl.files import File
    kwargs.pop("driver", None)
    kwargs.pop("backing_store", None)
    return File(io.BytesIO(bytes(memoryview(image).cast("B"))), mode, **kwargs)


def _path(name):
    import os
    return os.fsdecode(name)


def _access_args(fapl):
    """File's keywords for the settings of the access list ``fapl`` other than the
    defaults (h5p.file_access makes the list of an open file from them)."""
    if fapl is None:
        return {}
    default, kw = h5p.PropFAID(), {}
    if fapl.get_libver_bounds() != default.get_libver_bounds():
        kw["libver"] = tuple(_LIBVER_NAMES[v] for v in fapl.get_libver_bounds())
    if fapl.get_cache()[1:] != default.get_cache()[1:]:
        kw.update(zip(("rdcc_nslots", "rdcc_nbytes", "rdcc_w0"), fapl.get_cache()[1:]))
    if fapl.get_file_locking() != default.get_file_locking():
        kw["locking"] = bool(fapl.get_file_locking()[0])
    if fapl.get_alignment() != default.get_alignment():
        kw["alignment_threshold"], kw["alignment_interval"] = fapl.get_alignment()
    if fapl.get_meta_block_size() != default.get_meta_block_size():
        kw["meta_block_size"] = fapl.get_meta_block_size()
    size, meta, raw = fapl.get_page_buffer_size()
    if size:
        kw.update(page_buf_size=size, min_meta_keep=meta, min_raw_keep=raw)
    if fapl._core is not None:
        kw.update(driver="core", backing_store=fapl._core[1])
    return kw


def _creation_args(fcpl):
    """File's keywords for the settings of the creation list ``fcpl``: user block, creation
    order tracking, file space strategy and page size."""
    if fcpl is None:
        return {}
    default, kw = h5p.PropFCID(), {}
    if fcpl.get_userblock():
        kw["userblock_size"] = fcpl.get_userblock()
    if fcpl.get_link_creation_order() or fcpl.get_attr_creation_order():
        kw["track_order"] = True
    if fcpl.get_file_space_strategy() != default.get_file_space_strategy():
        strategy, persist, threshold = fcpl.get_file_space_strategy()
        kw.update(fs_strategy=_STRATEGY_NAMES[strategy], fs_persist=bool(persist),
                  fs_threshold=threshold)
    if fcpl.get_file_space_page_size() != default.get_file_space_page_size():
        kw["fs_page_size"] = fcpl.get_file_space_page_size()
    return kw
