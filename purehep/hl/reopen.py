"""Pickling files and their objects: a read-only file opened by path (or URL) pickles as what
opens it again — the name it was opened by, its open options and the object's path — so that
a ``Dataset`` can travel to another process (dask's distributed workers) and be read there.

h5py refuses to pickle its objects; purehep does so only where reopening gives the same
object: a file open for writing, or opened from a buffer or file object, still refuses
(TypeError, as h5py's). On the receiving side files are opened once per process and shared
(``shared_file``), so a thousand tasks reading one dataset open its file once.
"""
import os
import threading

_files = {}          # (name, frozen options) -> (file version, File): this process's opens
_files_lock = threading.Lock()


def _frozen(options):
    return tuple(sorted((k, repr(v)) for k, v in options.items()))


def _version(name):
    """What tells a local file rewritten since it was opened: (inode, size, mtime)."""
    try:
        st = os.stat(name)
    except (OSError, ValueError):
        return None                   # a URL, or a file gone: File() will say
    return st.st_ino, st.st_size, st.st_mtime_ns


def shared_file(name, options):
    """The File ``name`` open read-only with ``options`` (File keyword arguments), opened
    once per process and kept while open and unchanged on disk (a file rewritten since is
    opened again; the old File is left to those still holding it)."""
    from .files import File
    key, version = (name, _frozen(options)), _version(name)
    with _files_lock:
        seen, f = _files.get(key, (None, None))
        if f is None or not f.id or seen != version:
            f = File(name, "r", **options)
            _files[key] = version, f
        return f


def close_shared():
    """Close the files ``shared_file`` opened in this process (their locks go with them);
    objects of them fail from then on, later unpickled ones open the files again."""
    with _files_lock:
        opened = [f for _, f in _files.values()]
        _files.clear()
    for f in opened:
        f.close()


def reopen_object(name, options, path, address):
    """The object at ``path`` (or, for one reached by no path, the object header at
    ``address``) of the shared file: what an HLObject unpickles to."""
    f = shared_file(name, options)
    if path is None:
        from .base import open_object
        return open_object(f, address, None)
    return f if path == "/" and address == f._address else f[path]


def reopen_spec(name, mode, options):
    """What File(name, mode, **options) records to be pickled: (name, options) for a
    read-only file named by a path or URL string, None otherwise (buffers, file objects,
    write modes: nothing to open again)."""
    if mode != "r" or not isinstance(name, (str, os.PathLike)):
        return None
    name = os.fspath(name)
    if "://" not in name:
        name = os.path.abspath(name)     # a worker may run in another directory
    return name, {k: v for k, v in options.items() if v is not None}


def reduce(obj):
    """``obj.__reduce__()`` of a Group, Dataset, Datatype or File (see the module doc)."""
    f = obj._file
    spec = getattr(f, "_reopen", None)
    if not f.id:
        raise TypeError("cannot pickle an object of a closed file")
    if spec is None:
        why = "open for writing" if f.mode != "r" else "not opened by a path or URL"
        raise TypeError(f"purehep objects of a file {why} cannot be pickled (as h5py's); "
                        "open the file read-only by its path to pickle its objects")
    name, options = spec
    path = obj.name if obj is not f else "/"
    return reopen_object, (name, options, path, obj._address)
