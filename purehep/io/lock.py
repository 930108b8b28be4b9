"""The process-wide re-entrant locks.

- ``phil``: the lock of h5py's ``_objects`` module ("the HDF5 library's lock"), here guarding
  purehep's lazily decoded metadata (the per-file caches that a first access fills) so that
  threads sharing a file decode each structure once.
- ``writes``: held by every call on an object of a file open for writing (hl/serialize.py),
  so that threads sharing such a file change and read it one call at a time. It is not
  ``phil``: a call holding it may wait for purehep's own worker threads (chunk decoding and
  encoding), which take ``phil`` as they decode metadata.

As h5py does (its documentation of ``_objects.phil``, os.register_at_fork), ``os.fork()``
takes each lock before forking and releases it after in both processes, so that a child never
starts with the lock held by a thread that does not exist there.
"""
import os
import threading

phil = threading.RLock()
writes = threading.RLock()

if hasattr(os, "register_at_fork"):
    # ("before" runs in reverse order of registration: ``writes``, then ``phil``, the order
    # every thread takes them in)
    for _lock in (phil, writes):
        os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                            after_in_child=_lock.release)

__all__ = ["phil", "writes"]
