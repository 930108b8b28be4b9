"""Threads sharing a file open for writing (h5py's rule: every call of its API holds ``phil``,
the library's lock, so threads may share files and objects; their calls run one at a time).

In write mode a call changes the writer's object graph (``hl.writing``) or, to read, stages
those changes first, so two threads' calls must not interleave: threads creating datasets in
one group at once lost some of them, silently. ``serialized`` wraps the public methods and
properties of an hl class so that a call on an object of a file open for writing holds
``io.lock.writes`` (one re-entrant lock for all files, as h5py's: a copy between two files
holds it once, never two locks in two orders). Objects of read-only files take no lock:
reads from many threads run at once (tests/test_threads.py), and the hot read path
(``Dataset.__getitem__`` of a read-only file) is left unwrapped; in write mode it goes on to
``_read_args``, which is wrapped.

The lock serializes single calls, as h5py's does: a sequence of calls (check, then create)
is not atomic unless the caller holds ``purehep.io.lock.writes`` around it.
"""
import functools
import inspect

from ..io.lock import writes

# not wrapped: object identity and truth, construction, pickling
_SKIP = frozenset({"__init__", "__new__", "__bool__", "__eq__", "__hash__", "__reduce__",
                   "__init_subclass__", "__class_getitem__", "__subclasshook__"})


def serialized(owner=None, skip=(), extra=()):
    """Class decorator: every public method and property (and dunder method) defined by the
    class or its purehep bases, but ``skip`` and the _SKIP names, plus the private
    ``extra`` ones, holds ``writes`` when the object — or its attribute ``owner``, the
    object an attribute or dimension manager belongs to — belongs to a file open for
    writing (whose ``_writer`` is set; objects read through the read path in write mode,
    such as a dereferenced reference, included). Names a decorated base wrapped already are
    left as they are."""
    def decorate(cls):
        for name in _names(cls, set(skip) | _SKIP, extra):
            wrapped = _wrap(inspect.getattr_static(cls, name), owner)
            if wrapped is not None:
                setattr(cls, name, wrapped)
        return cls
    return decorate


def _names(cls, skip, extra):
    out = set(extra)
    for klass in cls.__mro__:
        if klass.__module__.startswith("purehep."):
            out.update(n for n in vars(klass) if n not in skip and
                       (not n.startswith("_") or (n.startswith("__") and n.endswith("__"))))
    return sorted(out)


def _wrap(attr, owner):
    """``attr`` (a function or property) holding the lock, or None: not an instance method or
    property, or wrapped already."""
    if isinstance(attr, property):
        if getattr(attr.fget, "__serialized__", False):
            return None
        return property(*(None if f is None else _locked(f, owner)
                          for f in (attr.fget, attr.fset, attr.fdel)), attr.__doc__)
    if inspect.isfunction(attr) and not getattr(attr, "__serialized__", False):
        return _locked(attr, owner)
    return None


def _locked(fn, owner):
    """``fn`` holding the lock in write mode (checked inline: the read-only path pays one
    attribute lookup and one call); a generator holds it at each step."""
    if inspect.isgeneratorfunction(fn):
        def call(self, *args, **kwargs):
            steps = fn(self, *args, **kwargs)
            if _writer(self if owner is None else getattr(self, owner)) is None:
                yield from steps
                return
            while True:
                with writes:
                    try:
                        item = next(steps)
                    except StopIteration:
                        return
                yield item
    elif owner is None:
        def call(self, *args, **kwargs):
            if getattr(self._file, "_writer", None) is None:
                return fn(self, *args, **kwargs)
            with writes:
                return fn(self, *args, **kwargs)
    else:
        def call(self, *args, **kwargs):
            if _writer(getattr(self, owner)) is None:
                return fn(self, *args, **kwargs)
            with writes:
                return fn(self, *args, **kwargs)
    functools.update_wrapper(call, fn)
    call.__serialized__ = True
    return call


def _writer(obj):
    """The writer of the file ``obj`` belongs to; None: open for reading, or no file."""
    return getattr(obj._file, "_writer", None)
