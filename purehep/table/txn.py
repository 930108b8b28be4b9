"""Table-level atomicity for HEP001 mutations (§9: a table's columns, row indexes and search
indexes change together or not at all).

A :class:`Transaction` is an undo log. Before a change touches an object, the change records
how to restore it: a dataset that only grows is shrunk back to its old length (HDF5 refills
the freed rows with the fill value if it grows again), a dataset rewritten in place gets its
old shape and contents back, attributes get their old values (and new ones are removed), new
objects are unlinked. Any exception inside ``with Transaction(group):`` replays the log in
reverse and re-raises, so the table is left as it was before the change.
"""
import numpy as np


class Transaction:
    def __init__(self, group):
        self.group = group
        self._undo = []
        self._seen = set()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.rollback()
        return False

    def rollback(self):
        """Replay the undo log newest first; every step runs even if an earlier one fails."""
        errors = []
        for step in reversed(self._undo):
            try:
                step()
            except Exception as err:          # noqa: BLE001 - keep restoring the rest
                errors.append(err)
        self._undo.clear()
        if errors:
            raise errors[0]

    def _once(self, key):
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def grows(self, ds):
        """``ds`` is about to be resized and written past its current end."""
        if self._once(("grow", ds.name)):
            name, shape = ds.name, ds.shape
            self._undo.append(lambda: self.group.file[name].resize(shape))

    def rewrites(self, ds):
        """``ds`` is about to be rewritten in place (and maybe resized)."""
        self.attrs(ds)
        if self._once(("data", ds.name)):
            name, shape, data = ds.name, ds.shape, ds[()]

            def restore():
                target = self.group.file[name]
                if target.shape != shape:
                    target.resize(shape)
                if data.size:
                    target[...] = data
            self._undo.append(restore)

    def attrs(self, obj):
        """``obj``'s attributes are about to change."""
        if self._once(("attrs", obj.name)):
            name = obj.name
            saved = {a: (obj.attrs[a], obj.attrs.get_dtype(a)) for a in obj.attrs}

            def restore():
                target = self.group.file[name]
                for a in [a for a in target.attrs if a not in saved]:
                    del target.attrs[a]
                for a, (value, dtype) in saved.items():
                    current = target.attrs[a] if a in target.attrs else None
                    if current is None or target.attrs.get_dtype(a) != dtype or \
                            not _same_value(current, value):
                        target.attrs.create(a, value, dtype=dtype)
            self._undo.append(restore)

    def creates(self, parent, name):
        """``parent[name]`` is about to be created; rollback unlinks it."""
        path = f"{parent.name.rstrip('/')}/{name}"
        self._undo.append(lambda: _unlink(self.group.file, path))


def _unlink(file, path):
    parent, _, name = path.rpartition("/")
    group = file[parent or "/"]
    if name in group:
        del group[name]


def _same_value(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "O":
        return all(x == y for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist()))
    return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
