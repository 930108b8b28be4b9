"""``phil``: the process-wide re-entrant lock of h5py's ``_objects`` module ("the HDF5
library's lock"), here guarding purehep's lazily decoded metadata (the per-file caches that
a first access fills) so that threads sharing a file decode each structure once.

As h5py does (its documentation of ``_objects.phil``, os.register_at_fork), ``os.fork()``
takes the lock before forking and releases it after in both processes, so that a child never
starts with the lock held by a thread that does not exist there.
"""
import os
import threading

phil = threading.RLock()

if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=phil.acquire, after_in_parent=phil.release,
                        after_in_child=phil.release)

__all__ = ["phil"]
