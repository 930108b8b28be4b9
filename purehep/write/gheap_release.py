"""Global heap collections (spec III.E) whose objects are all dead, given back to the file's
free space, as libhdf5 does (it deletes the heap objects of variable-length data written
over, H5T__vlen_disk_write, or of an attribute or dataset deleted, and frees a collection
once it holds no object, H5HG_remove).

Which heap objects die (the heap IDs of the staged state a stage replaces):

* a dataset's variable-length values rewritten (``purehep.write.update._update_dataset``:
  its values are kept in memory, a MemoryStore, and every value is written again as a new
  heap object): the heap IDs of the values the dataset had;
* attributes changed (``_update_attrs``): the heap IDs of the attribute messages the object
  had, but those of messages kept as they are (an attribute read from the file and not
  written since); a changed attribute's value is a new heap object, and so is that of an
  unchanged attribute created in the session (its message is encoded again);
* an object deleted (``purehep.write.deletion.free_object``): the heap IDs of its values
  and attributes.

Only the heap IDs of variable-length values are counted, at any depth of compound and array
types, but not inside another variable-length value (the inner objects are left, unreferenced).
Attribute messages shared in the file's shared message heap (SOHM) are left, and so are
region references, fill values (the Fill Value message keeps its own heap object, which the
old Fill Value message of a libhdf5 file may share), virtual dataset mappings and anything
else in the global heap are never released: a collection holding one of them stays. Values
are read with zeros where the storage is not allocated, so that the fill value's heap ID is
never taken for a value's. A collection partly dead stays too (its dead objects' space is not
reused).

This relies on each heap ID of a value being the only reference to its object, as libhdf5
relies on it (it deletes the object of a value written over): purehep writes each value as a
new heap object (values.to_file, once per stage), and so does libhdf5 (fill values are
converted for each element); a collection with an object whose reference count field says
more than 1 is kept all the same.

A collection is released with ``alloc.release`` in the stage that writes what replaces the
values (it becomes free after the next commit, or at the end of the stage for a collection
the last commit did not have). The collection a session fills (``GlobalHeaps.tail``) takes
no new object once all of its objects are dead, but does while some live, as libhdf5 fills
a collection's free space whatever it holds (it also moves the objects left to close the
holes, which a crash could tear: purehep leaves dead objects' space unused)."""
import numpy as np

from ..chunks.storage import as_elements, element_dtype, open_storage
from ..format import global_heap
from ..format import messages as M
from ..format.messages import layout as L
from ..format.object_header import RawMessage
from .header import SHARED as SHARED_MESSAGE
from .header import (ATTRIBUTE, ATTR_INFO, DATASPACE, DATATYPE, EXTERNAL_FILES, FILTERS,
                     LAYOUT)


def has_vlen(datatype):
    """True when values of ``datatype`` (a Datatype message) hold heap IDs of variable-length
    values (themselves, or in compound members and array elements)."""
    if datatype.kind in ("vlen_str", "vlen_seq"):
        return True
    if datatype.kind == "compound":
        return any(has_vlen(m.type) for m in datatype.members)
    return datatype.kind == "array" and datatype.base is not None and has_vlen(datatype.base)


def vlen_ids(ctx, datatype, arr, out):
    """Add to ``out`` the heap IDs (collection address, object index) of the
    variable-length values in ``arr`` (elements of ``datatype.file_dtype``); null IDs left
    out."""
    kind = datatype.kind
    if kind in ("vlen_str", "vlen_seq"):
        flat = np.asarray(arr).reshape(-1)
        if not flat.size:
            return
        coll = flat["collection"].astype(np.uint64)
        idx = flat["index"].astype(np.int64)
        keep = coll != 0
        if ctx.undefined is not None:
            keep &= coll != np.uint64(ctx.undefined)
        out.update(zip(coll[keep].tolist(), idx[keep].tolist()))
    elif kind == "compound":
        arr = np.asarray(arr)
        for m in datatype.members:
            if has_vlen(m.type):
                vlen_ids(ctx, m.type, arr[m.name], out)
    elif kind == "array" and has_vlen(datatype):
        vlen_ids(ctx, datatype.base, arr, out)


def dataset_ids(w, node):
    """The heap IDs of the values of ``node`` (a dataset of the file) as staged, read from
    its header's messages; None when they cannot be read (nothing is then released)."""
    try:
        ctx, h = w.ctx, node.header
        raw = h.first(DATATYPE)
        tm = M.decode(ctx, raw) if raw is not None else None
        if tm is None or not has_vlen(tm) or \
                h.first(EXTERNAL_FILES) is not None:
            return set()
        lay = M.decode(ctx, h.first(LAYOUT))
        space = M.decode(ctx, h.first(DATASPACE))
        if lay.layout_class not in (L.COMPACT, L.CONTIGUOUS, L.CHUNKED) or \
                space.shape is None:
            return set()
        if lay.layout_class == L.CONTIGUOUS and lay.address is None:
            return set()
        pipe = M.decode(ctx, h.first(FILTERS)) if h.first(FILTERS) is not None else None
        zero = np.zeros((), element_dtype(tm.file_dtype))     # not the fill value: no IDs
        storage = open_storage(ctx, lay, space, tm, pipe, lambda: zero, None)
        arr = as_elements(storage.read(None), tm.file_dtype)
        out = set()
        vlen_ids(ctx, tm, arr, out)
        return out
    except Exception:
        return None


def _attribute_ids(ctx, body, flags, out):
    if flags & SHARED_MESSAGE:      # kept in the shared message heap (SOHM): other objects'
        return                      # headers may point to the same message
    msg = M.decode(ctx, RawMessage(ATTRIBUTE, flags, memoryview(body), 0))
    dt = msg.datatype
    if not has_vlen(dt) or msg.dataspace.shape is None:
        return
    n = int(np.prod(msg.dataspace.shape, dtype=np.int64))
    need = n * dt.file_dtype.itemsize
    if len(msg.data) < need:
        raise ValueError("attribute data shorter than its dataspace")
    arr = np.frombuffer(bytes(msg.data), dt.file_dtype, count=n)
    vlen_ids(ctx, dt, arr, out)


def attribute_messages(w, node):
    """(body, flags) of every attribute message of ``node`` as staged (compact and dense)."""
    ctx, h = w.ctx, node.header
    found = []
    info_raw = h.first(ATTR_INFO)
    info = M.decode(ctx, info_raw) if info_raw is not None else None
    if info is not None and info.dense:
        from ..format.dense_storage import _index
        from ..format.fractal_heap import FractalHeap
        heap = FractalHeap.decode(ctx, info.fractal_heap_address)
        tree = _index(ctx, info.name_index_address, (8,), "name index")
        for rec in tree.records():
            body, _ = heap.get(rec.heap_id)
            found.append((bytes(body), rec.flags))
    for raw in h.find(ATTRIBUTE):
        found.append((bytes(raw.data), raw.flags))
    return found


def attribute_ids(w, node, kept=()):
    """The heap IDs of the attributes of ``node`` as staged, less those of the message
    bodies in ``kept`` (written again as they are); None when some cannot be read."""
    try:
        old, keep = set(), set()
        for body, flags in attribute_messages(w, node):
            _attribute_ids(w.ctx, body, flags, old)
        for body, flags in kept:
            _attribute_ids(w.ctx, body, flags, keep)
        return old - keep
    except Exception:
        return None


class DeadObjects:
    """The heap objects of the session released so far, by collection, until the collection
    is freed (``free``). The releases of a stage count once it is done (``free``): a stage
    that raises leaves them out (``begin`` drops them), its values still being the staged
    ones."""

    def __init__(self, w):
        self.w = w
        self.dead = {}           # collection address -> set of dead object indexes
        self.staging = {}        # the same, released by the stage under way
        self.erase = []          # collections freed at the next commit: signatures to erase

    def begin(self):
        self.staging = {}

    def all_dead(self, addr, count):
        """True when the ``count`` objects of the collection at ``addr`` are all released
        (asked at every object put: the sets are joined only when they could add up)."""
        dead, staging = self.dead.get(addr, ()), self.staging.get(addr, ())
        if len(dead) + len(staging) < count:
            return False
        return len(set(dead) | set(staging)) >= count

    def release(self, ids):
        for coll, index in ids or ():
            self.staging.setdefault(coll, set()).add(index)

    def free(self, gheaps):
        """At the end of a stage (after ``gheaps.finish()``): release the collections all of
        whose objects are dead. Returns their addresses."""
        w = self.w
        new = {c[0] for c in gheaps.collections}
        tail = gheaps.tail
        freed = []
        touched, self.staging = self.staging, {}
        for coll, indexes in touched.items():
            self.dead.setdefault(coll, set()).update(indexes)
        for coll in sorted(touched):
            dead = self.dead.get(coll)
            if not dead or coll in new:
                continue
            if tail is not None and tail[0] == coll:
                size, live = tail[1], set(range(1, len(tail[2]) + 1))
            else:
                try:
                    heap = global_heap.GlobalHeap.decode(w.ctx, coll)
                except Exception:
                    continue
                if np.any(heap.refcounts > 1):
                    continue     # an object counted as referenced twice: keep it
                size = heap.size
                live = {int(i) for i in np.nonzero(heap.offsets >= 0)[0]}
            if not live or not dead <= live:
                continue         # an ID of no object: something is off, keep the collection
            if live <= dead:
                fresh = w.alloc.fresh.get(coll) == size
                w.alloc.release(coll, size)
                # its signature erased once it is free (before any of it is taken again),
                # so that no stale collection is found in free space (purehep check scans
                # unclaimed bytes for collections); at once for one the last commit did not
                # have, which no commit on disk refers to
                if fresh:
                    w.sink.write(w.absolute(coll), bytes(4))
                else:
                    self.erase.append(coll)
                del self.dead[coll]
                freed.append(coll)
        return freed

    def erase_freed(self):
        """After a commit: erase the signatures of the collections it freed (free space now,
        that nothing has taken yet)."""
        w = self.w
        for coll in self.erase:
            w.sink.write(w.absolute(coll), bytes(4))
        self.erase = []
