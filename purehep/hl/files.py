"""Files: open a byte source, find the superblock, and present the root group."""
import errno
import io
import os
import posixpath
import threading
import sys
import weakref
from collections import OrderedDict

from ..chunks.cache import DEFAULT_NBYTES
from ..errors import UnsupportedFeatureError
from ..format.free_space import file_space_info
from ..format.superblock import Superblock
from ..io import open_source
from ..io.prefix import source_files
from ..io.sink import lock_file, locking_setting, unlock_file
from .base import open_object, object_kind
from .drivers import check_driver, driver_options, is_registered
from .filespace import access_buffer, check_space, create_list
from .group import Group
from .mdc import MetadataCacheCalls
from .serialize import serialized


STORES_KEPT = 32
KEPT_CACHES = 4           # decoded chunks kept for datasets not in use: this many chunk caches
LATEST = "v200"          # h5py's name for the newest format bound (libhdf5 2.0)
# h5py's file creation keywords (its make_fcpl's), in its order
CREATION_KEYWORDS = ("track_order", "track_times", "fs_strategy", "fs_persist", "fs_threshold",
                     "fs_page_size")


class _ClosedID:
    """``File.id`` once the file is closed: false, as h5py's closed FileID (``valid``)."""

    valid = False

    def __bool__(self):
        return False

    def __repr__(self):
        return "<closed purehep file id>"


CLOSED = _ClosedID()
_OPEN = {}      # (st_dev, st_ino) -> the _Open of a file open for writing in this process


class _Open:
    """A file open for writing in this process, which every File opened on it while it is
    open shares (libhdf5 shares an open file between h5py's handles, whatever their modes):
    its Writer, the locking it was opened with, and how many Files hold it. The last one to
    close (or be collected) closes the Writer."""

    __slots__ = ("writer", "libver", "locking", "handles", "key")

    def __init__(self, writer, libver, locking):
        self.writer, self.libver, self.locking, self.handles = writer, libver, locking, 0
        fd = getattr(writer.sink, "fd", None)
        self.key = _file_key(os.fstat(fd)) if isinstance(fd, int) else None
        if self.key is not None:
            _OPEN[self.key] = self

    def release(self):
        """One File fewer; True when it was the last (the caller closes the Writer)."""
        self.handles -= 1
        if self.handles:
            return False
        if _OPEN.get(self.key) is self:
            del _OPEN[self.key]
        return True


def _is_file_name(name):
    """Whether bytes ``name`` are h5py's bytes file name rather than the bytes of a file: a
    file by that name exists (a name holds no NUL byte; an HDF5 image always does, but a
    damaged or cut one need not)."""
    return isinstance(name, bytes) and bool(name) and b"\0" not in name and \
        os.path.isfile(name)


def _file_key(st):
    return st.st_dev, st.st_ino


def _open_here(name, mode, driver, locking):
    """The _Open of the file at path ``name`` when this process has it open for writing (a
    File in mode ``mode`` then shares it), else None. As libhdf5: OSError for mode 'w' (a
    file open cannot be truncated) and for a ``locking`` other than the one it was opened
    with (purehep.io.sink.locking_setting compares them as libhdf5 compares the flags)."""
    if not _OPEN or driver not in (None, "sec2", "stdio") or \
            not isinstance(name, (str, bytes, os.PathLike)):
        return None
    try:
        key = _file_key(os.stat(name))
    except (OSError, ValueError):          # (no such file; bytes of a file, NULs and all)
        return None
    shared = _OPEN.get(key)
    if shared is None:
        return None
    if mode == "w":
        raise OSError(errno.EBUSY, "Unable to create file (unable to truncate a file which is "
                      "already open)", os.fsdecode(name))
    if mode in ("w-", "x"):
        raise FileExistsError(errno.EEXIST, "Unable to create file (file exists)",
                              os.fsdecode(name))
    if locking_setting(locking) != locking_setting(shared.locking):
        raise OSError(errno.EINVAL, "Unable to open file (file locking flag values don't "
                      "match those of the handle that has it open)", os.fsdecode(name))
    return shared


def _close_writer(shared):
    """Let go of a file whose File was never closed (garbage collection, interpreter exit):
    the last one commits and closes it, as libhdf5 does when h5py's last reference to a file
    goes."""
    if not shared.release():
        return
    try:
        shared.writer.close()
    except Exception:
        import warnings
        warnings.warn(f"purehep: could not commit {shared.writer.sink.path!r} at exit",
                      RuntimeWarning)


def _check_chunk_cache(nbytes, w0, nslots, dataset=False):
    """h5py's checks of the chunk cache parameters: its OverflowError for a negative byte
    count (and, for a dataset's cache, a negative slot count: both are size_t there; a
    file's slot count is a C int, which libhdf5 takes as it is), libhdf5's ValueError for
    ``w0`` outside 0..1."""
    if nbytes is not None and int(nbytes) < 0 or \
            dataset and nslots is not None and int(nslots) < 0:
        raise OverflowError("can't convert negative value to size_t")
    if w0 is not None and not 0 <= float(w0) <= 1:
        raise ValueError("Raw data cache w0 value must be between 0.0 and 1.0 inclusive")


def _check_alignment(threshold, interval):
    """h5py's alignment_threshold and alignment_interval (H5Pset_alignment): objects of
    threshold bytes or more are placed at multiples of interval (purehep.write.allocator)."""
    threshold, interval = int(threshold), int(interval)
    if threshold < 0 or interval < 1:
        raise ValueError(f"alignment threshold ({threshold}) must be >= 0 and interval "
                         f"({interval}) >= 1")
    return threshold, interval


def _check_userblock(mode, size):
    """h5py's rules for ``userblock_size``: an integer, given only when the file may be
    created ('w', 'w-', 'x', 'a'; with 'a' on an existing file it must be that file's)."""
    if size is None:
        return None
    if mode in ("r", "r+"):
        raise ValueError("User block may only be specified when creating a file")
    try:
        return int(size)
    except (TypeError, ValueError):
        raise ValueError("User block size must be an integer") from None


def _trim_caches(kept, budget):
    """Empty the decoded-chunk caches of the datasets used longest ago until those of all
    but the one in use hold ``budget`` bytes at most: h5py frees a dataset's chunk cache
    with the dataset, and kept storage objects must not hold more than a few of them."""
    caches = [getattr(getattr(s, "chunked", None), "cache", None) for s in kept.values()]
    caches = [c for c in caches[:-1] if c is not None and c.used]
    held = sum(c.used for c in caches)
    for cache in caches:
        if held <= budget:
            break
        held -= cache.used
        cache.clear()


def _remote_source(name, mode, storage_options, size, block_size):
    """The byte source of an fsspec URL or file object (io.fsspec), read-only;
    None for anything else (a path on disk is read by pread)."""
    looks_remote = isinstance(name, str) and "://" in name or \
        "fsspec" in sys.modules and hasattr(name, "fs")
    if not looks_remote and storage_options is None:
        return None
    from ..io import fsspec as bridge
    if not (bridge.is_url(name) or bridge.is_fsspec_file(name)):
        if storage_options is not None:
            raise ValueError("storage_options apply to fsspec URLs and file objects only")
        return None
    if mode != "r":
        raise bridge.refuse_write(name, mode)
    return bridge.open_fsspec(name, storage_options, size, block_size)


def _check_access(mode, driver, swmr, locking):
    """h5py's ``driver``, ``swmr`` and ``locking`` options, as far as purehep has them: the
    default, sec2 and stdio drivers (one file on disk), core (in memory; in write modes the
    file is built beside the target anyway), those registered (purehep.hl.drivers), and SWMR
    for reading (what is on disk is read);
    h5py's ValueError for a locking value it does not know, before any file is opened."""
    if locking not in (None, True, False, "best-effort"):
        raise ValueError(f"Unsupported locking value: {locking!r}")
    check_driver(driver)
    if swmr and mode != "r":
        raise UnsupportedFeatureError("writing in SWMR mode")


@serialized()
class File(Group, MetadataCacheCalls):
    """An HDF5 file opened for reading, h5py-style.

    ``name`` is a path (bytes too, as in h5py, when they name a file; other bytes are the
    bytes of a file), a binary file-like object, a buffer, or a range-reading callable
    ``reader(offset, size) -> bytes``. ``threads`` bounds the decompression pool (default:
    the number of cores); ``verify_checksums=False`` skips metadata checksum verification.
    ``rdcc_nbytes`` is each dataset's decoded-chunk cache in read mode (default 8 MiB, as
    libhdf5 2.0's); ``rdcc_nslots`` and ``rdcc_w0`` are checked as h5py checks them and
    reported by ``get_access_plist`` but do not apply: purehep's cache is least-recently-used
    by bytes, with no hash slots to size. ``driver``, ``swmr`` and ``locking`` are h5py's, as
    far as purehep has them (see _check_access; ``locking`` governs modify mode's exclusive
    lock), and other keywords go to a driver registered by name (purehep.hl.drivers);
    ``alignment_threshold`` and ``alignment_interval`` place new objects of the
    threshold's size or more at multiples of the interval (purehep.write.allocator); the file
    space options (``fs_strategy``, …) are libhdf5's (purehep.hl.filespace). An fsspec URL
    (``s3://``, ``https://``, ``memory://``...; ``storage_options`` are its filesystem's) or
    fsspec file object is read through ``io.fsspec``: read-only, with few requests.
    """

    _writer = None
    _memory_name = None       # driver='core', backing_store=False: the name of a file in memory
    _driver_name = None       # the file driver asked for by name
    _rdcc_nbytes = 0          # write and modify modes keep no decoded chunks
    _reopen = None            # (name, options) that open this file again (hl.reopen)

    def __new__(cls, name=None, *args, **kwargs):
        """``File(fid)`` of a FileID (``f.id``: the File itself, as purehep.h5f.open gives
        it) is that file, as h5py's File(fid) is a File of it."""
        if isinstance(name, File):
            return name
        return super().__new__(cls)

    def __init__(self, name, mode="r", *, threads=None, verify_checksums=True, size=None,
                 block_size=None, _parent_cache=None, libver=None, userblock_size=None,
                 track_order=None, rdcc_nbytes=None, rdcc_w0=None, rdcc_nslots=None,
                 driver=None, swmr=False, locking=None, backing_store=None,
                 alignment_threshold=1, alignment_interval=1, fs_strategy=None,
                 fs_persist=False, fs_threshold=1, fs_page_size=None, page_buf_size=None,
                 min_meta_keep=0, min_raw_keep=0, meta_block_size=None, storage_options=None,
                 **driver_kwds):
        if name is self:              # File(fid): a File is its own FileID (see __new__)
            return
        if driver_kwds or is_registered(driver):    # a driver registered by name (drivers)
            options = {k: v for k, v in locals().items()
                       if k not in ("self", "name", "mode", "driver_kwds", "__class__")}
            self.__init__(name, mode, **{**options, **driver_options(driver, driver_kwds)})
            return
        if _is_file_name(name):
            name = os.fsdecode(name)  # h5py's bytes file name
        options = dict(locals())      # every keyword argument, for reopening (hl.reopen)
        for key in ("self", "name", "mode", "_parent_cache", "__class__", "driver_kwds"):
            options.pop(key, None)
        from .reopen import reopen_spec
        reopen = reopen_spec(name, mode, options)
        _check_chunk_cache(rdcc_nbytes, rdcc_w0, rdcc_nslots)
        space, page_buffer, meta_block = check_space(
            name, mode, fs_strategy, fs_persist, fs_threshold, fs_page_size, page_buf_size,
            min_meta_keep, min_raw_keep, meta_block_size)
        remote = _remote_source(name, mode, storage_options, size, block_size)
        _check_access(mode, driver, swmr, locking)
        alignment = _check_alignment(alignment_threshold, alignment_interval)
        self._access = ((rdcc_nslots, rdcc_nbytes, rdcc_w0), locking, alignment, page_buffer,
                        meta_block)
        userblock_size = _check_userblock(mode, userblock_size)
        if remote is None and driver == "fileobj" and \
                not all(hasattr(name, a) for a in ("read", "seek")):
            raise TypeError(f"driver='fileobj' takes a binary file object, not {name!r}")
        is_object = not isinstance(name, (str, bytes, os.PathLike)) and hasattr(name, "read")
        if is_object and driver not in (None, "fileobj"):
            raise ValueError("Driver must be 'fileobj' for file-like object if specified")
        if driver in ("sec2", "stdio", "core"):   # reported as asked (the bytes are the same)
            self._driver_name = driver
        if backing_store is not None:
            if driver != "core":
                raise TypeError("'backing_store' is an invalid keyword argument for this "
                                "function (driver='core' only)")
            if not backing_store and mode != "r":     # the file lives in memory only
                self._memory_name = os.fsdecode(name)
                name = io.BytesIO()
        if remote is None and driver == "core" and mode == "r" and \
                isinstance(name, (str, bytes, os.PathLike)):
            with open(name, "rb") as fh:       # the whole file in memory, as h5py's core driver
                name = fh.read()
        shared = _open_here(name, mode, driver, locking) if remote is None else None
        if shared is not None:
            self._share(shared, threads)
            return
        if mode in ("w", "w-", "x", "a", "r+"):
            self._init_write(name, mode, threads, libver, userblock_size, track_order, locking,
                             alignment, space, meta_block_size)
            return
        if mode != "r":
            raise ValueError(f"Invalid mode; must be one of r, r+, w, w-, x, a (got {mode!r})")
        self._source = remote if remote is not None else \
            open_source(name, size=size, block_size=block_size or 64 << 10)
        self._reopen = reopen
        self._stores_lock = threading.RLock()   # a virtual dataset's make() may recurse
        self._lock = None
        fh = getattr(self._source, "_fh", None)
        if fh is not None:          # a file on disk: shared lock, as libhdf5 takes
            try:
                self._lock = lock_file(fh.fileno(), False, locking, self._source.path)
            except BaseException:
                self._source.close()
                raise
        # the lock is given back at close, or when the File is collected unclosed (else a
        # later file with the same inode would be taken for this one)
        self._unlock = weakref.finalize(self, unlock_file, self._lock)
        self.mode = mode
        self._swmr = bool(swmr)
        self._threads = threads
        self._rdcc_nbytes = DEFAULT_NBYTES if rdcc_nbytes is None else int(rdcc_nbytes)
        self._externals = _parent_cache if _parent_cache is not None else {}
        try:
            sb = Superblock.find(self._source)
            ctx = sb.context(self._source, verify_checksums=verify_checksums,
                             path=self._source.path)
            sb.check_file(ctx)
        except BaseException:
            self._source.close()
            raise
        self._superblock = sb
        self._ctx = ctx
        self.id = self
        super().__init__(self, sb.root_address, "/")

    def _init_write(self, name, mode, threads, libver, userblock_size, track_order, locking,
                    alignment, space, meta_block_size):
        """The write modes: 'r+' changes the file in place; 'w' (create or truncate), 'w-'/'x'
        (create) and 'a' (open, or create) write an empty file first and then change it as
        'r+' does (purehep.write.writer). Changes reach the file at flush() and close(), and
        when a file that was never closed is collected or the interpreter exits."""
        from ..write.writer import Writer
        if isinstance(name, (str, bytes, os.PathLike)):
            name = os.fsdecode(name)
            exists = os.path.exists(name)
        elif all(hasattr(name, a) for a in ("read", "write", "seek")):
            exists = name.seek(0, os.SEEK_END) > 0     # a file object (h5py's 'fileobj')
        else:
            raise TypeError(f"expected a path or a binary file object, got {name!r}")
        if mode == "a":
            mode = "r+" if exists else "x"
        from .creation import default_order
        writer = Writer(name, {"w-": "x"}.get(mode, mode), locking, libver,
                        userblock_size or 0, default_order(track_order), alignment, space,
                        meta_block_size or 0)
        if mode == "r+" and userblock_size is not None and userblock_size != writer.base:
            writer.close()
            raise ValueError(f"Requested userblock size ({userblock_size}) does not match "
                             f"that of existing file ({writer.base})")
        writer.ctx.writable = True
        self._share(_Open(writer, libver, locking), threads)

    def _share(self, shared, threads):
        """This File as one more handle on the file open for writing ``shared`` (an _Open):
        mode 'r+' whatever mode was asked for, as h5py reports a shared file's mode, and every
        handle sees and makes the same changes."""
        writer = shared.writer
        shared.handles += 1
        self._shared = shared
        self._writer = writer
        self._libver = shared.libver
        self._finalizer = weakref.finalize(self, _close_writer, shared)
        self.mode = "r+"
        self._threads = threads
        self._externals = {}
        self._source = _WriteSource(writer.sink.path)
        self._superblock = writer.superblock
        self._ctx = writer.ctx
        self.id = self
        self._file = self
        self._address = writer.root_address
        self._name = "/"
        self._header = None
        self._node = writer.root
        self._gen = -1

    _swmr = False

    @property
    def swmr_mode(self):
        """h5py's SWMR flag. Reading, it is the ``swmr=`` the file was opened with (purehep
        reads what is on disk either way) and cannot change. Writing, it may be switched on,
        not off, as in h5py; each flush() is a crash-safe commit that readers see whole, which
        is the guarantee SWMR gives them (purehep does not set the superblock's SWMR flag)."""
        return self._swmr

    @swmr_mode.setter
    def swmr_mode(self, value):
        if self._writer is None:
            raise ValueError("SWMR mode is set when a file is opened for reading "
                             "(File(..., 'r', swmr=True)), not afterwards")
        if self._swmr and not value:
            raise ValueError("It is not possible to forcibly switch SWMR mode off.")
        if value and self.superblock_version < 3:
            raise RuntimeError("Unable to start swmr writing (file superblock version - "
                               "should be at least 3)")
        self._swmr = bool(value)

    @property
    def driver(self):
        """h5py's name for how the file is reached: the driver asked for by name (sec2,
        stdio, core), else "sec2" (a path), "core" (a buffer in memory) or "fileobj" (a file
        object or a range-reading callable)."""
        from ..io.source import BytesSource
        if self._driver_name is not None:
            return self._driver_name
        if getattr(self._source, "driver", None):
            return self._source.driver
        if self._writer is not None:
            return "sec2" if self._writer.sink.path is not None else "fileobj"
        if self._source.path is not None:
            return "sec2"
        return "core" if isinstance(self._source, BytesSource) else "fileobj"

    @property
    def filename(self):
        if not self.id:
            raise ValueError("Not a file or file object (not a file or file object)")
        if self._memory_name is not None:
            return self._memory_name
        if self._writer is not None and self._writer.sink.path is None:
            return repr(self._writer.sink.fileobj)
        return self._source.path or "<memory>"

    @property
    def userblock_size(self):
        if self._writer is not None:
            return self._writer.base
        return self._superblock.offset

    @property
    def superblock_version(self):
        if self._writer is not None:
            return self._writer.policy.superblock_version
        return self._superblock.version

    @property
    def meta_block_size(self):
        """h5py's metadata block size (see purehep.hl.filespace)."""
        return self.get_access_plist().get_meta_block_size()

    @property
    def libver(self):
        """h5py's (low, high) library version bounds: the versions named, as h5py names
        them (the high bound is the newest format version purehep writes)."""
        if self._writer is None:
            return ("earliest", LATEST)
        low, high = self._libver if isinstance(self._libver, (tuple, list)) else \
            (self._libver or "earliest", LATEST)
        return tuple(LATEST if v == "latest" else v for v in (low, high))

    @classmethod
    def in_memory(cls, file_image=None, block_size=None, **kwds):
        """h5py's File.in_memory: a file that lives in memory only, new and empty, or a
        writable copy of the bytes ``file_image``; ``f.id.get_file_image()`` gives its
        bytes. Keywords as File's, but not ``driver``, ``locking`` or ``backing_store``
        (``block_size``, the core driver's allocation step, sizes nothing here)."""
        for key in ("driver", "locking", "backing_store"):
            if key in kwds:
                raise TypeError(f"File.in_memory() got an unexpected keyword argument {key!r}")
        if file_image is None:
            return cls(io.BytesIO(), "w", **kwds)
        creation = [k for k in CREATION_KEYWORDS if k in kwds]
        if creation:                # (an image is a file that exists: h5py's TypeError)
            raise TypeError(f"{', '.join(creation)} parameters cannot be used with file_image")
        return cls(io.BytesIO(bytes(memoryview(file_image).cast("B"))), "r+", **kwds)

    def get_file_image(self):
        """h5py's FileID.get_file_image (``f.id`` is the File): the file's bytes as they are
        now, what was written flushed first."""
        if not self.id:
            raise ValueError("Not a file or file object (not a file or file object)")
        if self._writer is None:
            return bytes(self._source.read(0, self._source.size))
        self._writer.flush()
        sink = self._writer.sink
        return bytes(sink.read(0, sink.size))

    def get_vfd_handle(self, fapl=None):
        """h5py's FileID.get_vfd_handle (``f.id`` is the File): the operating system's
        descriptor of the file on disk (the one written through in write modes);
        UnsupportedFeatureError for a file in memory, a Python file object or remote bytes
        (libhdf5's core driver gives a memory address: purehep has none to give)."""
        if not self.id:
            raise ValueError("Not a file id (not a file ID)")
        writer = getattr(self, "_writer", None)
        fd = getattr(writer.sink, "fd", None) if writer is not None else \
            getattr(getattr(self._source, "_fh", None), "fileno", lambda: None)()
        if fd is None or (writer is not None and writer.sink.path is None):
            raise UnsupportedFeatureError("a file descriptor of a file not on disk")
        return fd

    @property
    def links(self):
        """h5py's FileID.links (``f.id`` is the File): the root group's links
        (purehep.h5l.LinkProxy)."""
        from ..h5l import LinkProxy
        return LinkProxy(self)

    def get_access_plist(self):
        """h5py's FileID.get_access_plist (``f.id`` is the File): the settings it was opened
        with (purehep.h5p.file_access), the page buffer as libhdf5 sizes it for the file."""
        from ..h5p import file_access
        rdcc, locking, alignment, asked, meta_block = self._access
        return file_access(self.libver, rdcc, locking, alignment,
                           access_buffer(asked, self._file_space()), meta_block)

    def get_create_plist(self):
        """h5py's FileID.get_create_plist: the root group's settings (purehep.hl.objid), the
        user block and the file space settings the file holds (purehep.hl.filespace)."""
        from .objid import group_settings
        return create_list(self._file_space(), self.userblock_size, **group_settings(self))

    def _file_space(self):
        """The file's File Space Info message (spec IV.A.2.x), None when it has none."""
        if self._writer is not None:
            return self._writer.space
        return file_space_info(self._ctx, self._superblock.extension_address)[0]

    def _root(self):
        return self

    def _deref(self, ref):
        node = getattr(ref, "_node", None)
        if node is not None and self._writer is not None:
            from .writing import bind
            writer = self._writer
            if writer.dirty:
                writer.stage()
            if id(node) not in writer.addresses:     # deleted since (as h5py: KeyError)
                raise KeyError("Unable to open object by token (the object was deleted)")
            return bind(self, node, None)
        if not ref:
            raise ValueError("Invalid HDF5 object reference (null reference)")
        return open_object(self, ref.address, None)

    def _path_of(self, address):
        """A path to the object at ``address``, for dereferenced objects: the first found by
        a depth-first search in native link order, as libhdf5's H5G_get_name_by_addr."""
        from .base import header_of
        from .group import native_links, _link
        if address == self._address:
            return "/"
        seen = {self._address}
        stack = [("", iter(native_links(self._ctx, self._oh)[0]))]
        while stack:
            prefix, links = stack[-1]
            link = next(links, None)
            if link is None:
                stack.pop()
                continue
            if link.type != _link.HARD:
                continue
            path = prefix + "/" + link.name
            if link.address == address:
                return path
            if link.address not in seen:
                seen.add(link.address)
                header = header_of(self._ctx, link.address)
                if object_kind(header) == "group":
                    stack.append((path, iter(native_links(self._ctx, header)[0])))
        return None

    def _external_file(self, filename, candidates=None, access=None, follow=False):
        """Open (once) the target file of an external link, relative to this file's folder
        first, then the working directory, as libhdf5 does (or at ``candidates``), with
        ``access`` (mode, swmr, locking: Group.get's elink_ options) if given, else with this
        file's locking (libhdf5 opens the target with the parent's file access list). A link
        followed (``follow``) from a file open for writing opens its target for writing too
        unless ``access`` says otherwise, as libhdf5 opens it with the parent's intent;
        otherwise read-only."""
        if candidates is None:
            candidates = source_files(None, filename, self._source.path, None)
        for path in candidates:
            key = os.path.realpath(path) if not access else \
                (os.path.realpath(path),) + tuple(sorted(access.items()))
            if key in self._externals:
                return self._externals[key]
            if os.path.isfile(path):      # (a directory is no file to open)
                options = {"locking": self._access[1], **(access or {})}
                mode = options.pop("mode", "r+" if follow and self._writer is not None else "r")
                other = File(path, mode, threads=self._threads, _parent_cache=self._externals,
                             rdcc_nbytes=None if self._writer else self._rdcc_nbytes,
                             **options)
                self._externals[key] = other
                return other
        raise KeyError(f"Unable to open external file {filename!r} (looked in {candidates})")

    def _storage_of(self, address, make):
        """The storage of the dataset at ``address``: in read mode, the storage objects of the
        last ``STORES_KEPT`` datasets used are kept, so that ``f[name][i]`` in a loop decodes
        the chunk index (and fills the chunk cache) once, not on every access."""
        if self._writer is not None:
            return make()
        with self._stores_lock:       # threads reading at once share one storage object
            kept = self.__dict__.setdefault("_stores", OrderedDict())
            if kept and next(reversed(kept)) == address:
                return kept[address]      # the dataset used last: nothing moves
            store = kept.get(address)
            if store is None:
                store = kept[address] = make()
                if len(kept) > STORES_KEPT:
                    kept.popitem(last=False)
            else:
                kept.move_to_end(address)
            _trim_caches(kept, KEPT_CACHES * (self._rdcc_nbytes or 0))
            return store

    def _vds_source(self, filename, dataset, prefix=None):
        """A virtual dataset's source dataset, or None when it is missing (cached); its file
        looked for with the virtual ``prefix`` in force (io.prefix)."""
        from .virtual import open_source_dataset
        key = (filename, dataset, prefix)
        cache = self.__dict__.setdefault("_vds_sources", {})
        if key not in cache:
            cache[key] = open_source_dataset(self, filename, dataset, prefix)
        return cache[key]

    def close(self):
        if not self.id:
            return
        if self._writer is not None:
            self._finalizer.detach()
            self.id = CLOSED
            try:
                if self._shared.release():     # the last handle on the file: it closes
                    try:
                        self._writer.close()
                    finally:
                        self._ctx.cache.clear()
            finally:       # the targets of external links, opened for writing with it
                for other in list(self._externals.values()):
                    other.close()
            return
        self.__dict__.pop("_stores", None)
        for other in list(self._externals.values()):
            if other is self or not other.id:
                continue
            if other._writer is not None:       # a file this process has open for writing
                other.close()
            else:
                other.id = CLOSED
                other._unlock()
                other._source.close()
        self._ctx.cache.clear()
        self._unlock()
        self._source.close()
        self.id = CLOSED

    def flush(self):
        """Commit everything written so far to the file (crash-safe: a reader, or this file
        after a crash, sees either the previous commit or this one)."""
        if not self.id:
            raise RuntimeError("Unable to flush file (not a file or file object)")
        if self._writer is not None:
            self._writer.flush()

    def __bool__(self):
        return self.id is self

    @property
    def valid(self):
        """h5py's ``FileID.valid`` (``f.id`` is the File while it is open)."""
        return self.id is self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        """h5py's repr (the file's base name and mode)."""
        if not self.id:
            return "<Closed HDF5 file>"
        return f'<HDF5 file "{posixpath.basename(self.filename)}" (mode {self.mode})>'


class _WriteSource:
    """Stands in for the byte source of a file being written (its path, nothing to close)."""

    def __init__(self, path):
        self.path = path

    def close(self):
        pass
