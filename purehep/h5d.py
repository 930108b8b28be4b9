"""h5py's ``h5d`` as far as purehep has it: the fill times and allocation times of the Fill
Value message (spec IV.A.2.f) and the layout classes of the Data Layout message (IV.A.2.i),
numbered as libhdf5's H5D_fill_time_t, H5D_alloc_time_t, H5D_fill_value_t and H5D_layout_t;
H5Dcreate and H5Dopen on a group's id mapped onto create_dataset and item access, their
property lists onto its keywords (DatasetID: hl.dsid)."""
from .format.messages.fill_value import (ALLOC_EARLY as ALLOC_TIME_EARLY,
                                        ALLOC_INCREMENTAL as ALLOC_TIME_INCR,
                                        ALLOC_LATE as ALLOC_TIME_LATE,
                                        FILL_IF_SET as FILL_TIME_IFSET,
                                        FILL_NEVER as FILL_TIME_NEVER,
                                        FILL_ON_ALLOC as FILL_TIME_ALLOC)
from .format.messages.layout import CHUNKED, COMPACT, CONTIGUOUS, VIRTUAL
from .hl.dsid import DatasetID, StoreInfo

ALLOC_TIME_DEFAULT = 0
FILL_VALUE_UNDEFINED, FILL_VALUE_DEFAULT, FILL_VALUE_USER_DEFINED = 0, 1, 2
SPACE_STATUS_NOT_ALLOCATED, SPACE_STATUS_PART_ALLOCATED, SPACE_STATUS_ALLOCATED = 0, 1, 2

__all__ = ["FILL_TIME_ALLOC", "FILL_TIME_NEVER", "FILL_TIME_IFSET", "ALLOC_TIME_DEFAULT",
           "ALLOC_TIME_EARLY", "ALLOC_TIME_LATE", "ALLOC_TIME_INCR", "COMPACT", "CONTIGUOUS",
           "CHUNKED", "VIRTUAL", "FILL_VALUE_UNDEFINED", "FILL_VALUE_DEFAULT",
           "FILL_VALUE_USER_DEFINED", "SPACE_STATUS_NOT_ALLOCATED", "SPACE_STATUS_PART_ALLOCATED",
           "SPACE_STATUS_ALLOCATED", "DatasetID", "StoreInfo", "create", "open"]


def location(loc):
    """The file, group or dataset an identifier stands for (``f.id`` is the File itself)."""
    for attr in ("_group", "_ds"):
        obj = getattr(loc, attr, None)
        if obj is not None:
            return obj
    if hasattr(loc, "attrs"):
        return loc
    raise TypeError(f"not a location identifier: {loc!r}")


def value_args(tid, space):
    """create_dataset / attrs.create keywords for a value of type ``tid`` over ``space`` (the
    TypeID itself: one of a committed datatype is then shared, as libhdf5 shares it)."""
    from . import h5s
    from .hl.base import Empty
    cls = space.get_simple_extent_type()
    if cls == h5s.NULL:
        return dict(data=Empty(tid.dtype))
    if cls == h5s.SCALAR:
        return dict(shape=(), dtype=tid)
    return dict(shape=space.shape, dtype=tid)


def create(loc, name, tid, space, dcpl=None, lcpl=None, dapl=None):
    """H5Dcreate: dataset ``name`` of type ``tid`` over ``space`` in the group ``loc``, with
    the settings of the creation list ``dcpl`` (layout, chunks, fill value and time, early
    allocation, filters: purehep.h5p.PropDCID.create_args), the access list ``dapl`` and
    the link creation list ``lcpl`` (missing groups on the path created)."""
    from . import h5s
    group = location(loc)
    name = name.decode() if isinstance(name, bytes) else name
    path_exists(group, name, lcpl, "dataset")
    if dcpl is not None and dcpl.get_layout() == VIRTUAL:
        return _create_virtual(group, name, tid, space, dcpl)
    kw = value_args(tid, space)
    if space.get_simple_extent_type() == h5s.SIMPLE and space.maxshape() != space.shape:
        kw["maxshape"] = space.maxshape()
    if dcpl is not None:
        kw.update(dcpl.create_args(tid.get_size()))
    kw.update(_access_args(dapl))
    return group.create_dataset(name, **kw).id


def path_exists(group, name, lcpl, what):
    """libhdf5's ValueError for a new object whose path has missing groups, unless the link
    creation list ``lcpl`` asks for them to be created."""
    head = name.rstrip("/").rpartition("/")[0]
    if head and group.get(head) is None and \
            not (lcpl is not None and lcpl.get_create_intermediate_group()):
        raise ValueError(f"Unable to synchronously create {what} (component not found)")


def _create_virtual(group, name, tid, space, dcpl):
    """A virtual dataset of the mappings of ``dcpl`` (set_virtual), its fill value."""
    from .h5t import as_dtype
    from .hl.vds import VirtualLayout
    layout = VirtualLayout(space.shape, as_dtype(tid), space.maxshape(), group.file.filename)
    for vspace, path, source, sspace in dcpl._virtual:
        layout.mappings.append((path, source, sspace.mapping_dims(), vspace.mapping_dims()))
    fill = dcpl._fill[0] if dcpl.fill_value_defined() == FILL_VALUE_USER_DEFINED else None
    return group.create_virtual_dataset(name, layout, fill).id


def open(loc, name, dapl=None):     # noqa: A001 - h5py's name
    """H5Dopen: the dataset ``name`` in the group ``loc``, with the chunk cache and file
    prefixes of the access list ``dapl``."""
    from .hl.creation import access_prefixes, chunk_cache_options
    group = location(loc)
    ds = group[name.decode() if isinstance(name, bytes) else name]
    if not hasattr(ds, "id") or type(ds).__name__ != "Dataset":
        raise TypeError(f"{name!r} is not a dataset")
    kw = _access_args(dapl)
    cache = chunk_cache_options(group.file, kw)
    return ds._with_chunk_cache(cache)._with_prefixes(access_prefixes(kw)).id


def _access_args(dapl):
    """The create_dataset keywords of a dataset access list's settings other than the
    defaults: chunk cache (``rdcc_*``), external and virtual file prefixes."""
    from .h5p import PropDAID
    if dapl is None:
        return {}
    kw = {}
    if dapl.get_chunk_cache() != PropDAID().get_chunk_cache():
        kw.update(zip(("rdcc_nslots", "rdcc_nbytes", "rdcc_w0"), dapl.get_chunk_cache()))
    for key in ("efile", "virtual"):
        prefix = getattr(dapl, f"get_{key}_prefix")()
        if prefix:
            kw[f"{key}_prefix"] = prefix
    return kw
