"""How a numpy compound is laid out in the file by h5py and libhdf5 when some of its members
take another size there than in numpy (variable-length types, region references): the
member offsets and size the compound datatype message records (datatype.py) and the raw
data is written with (write.values.stored_dtype). Spec IV.A.2.d, compound class.
"""
import numpy as np

from ...reference import RegionReference


def member_layout(dt, sizes):
    """(member offsets, size) of the numpy compound ``dt`` whose members (in ``dt.names``
    order) take ``sizes`` bytes in the file, where some differ from numpy's (variable-length
    types, region references), laid out as h5py and libhdf5 lay it out. h5py places the
    members by increasing numpy offset, each at its numpy offset or after the member before,
    whichever is later, at its size in memory (a variable-length string is a pointer, 8
    bytes; a sequence 16), the whole at least numpy's itemsize; an aligned numpy struct
    (``align=True``) that this changes is refused (TypeError, as h5py). libhdf5 then moves
    the members after one that grows in the file (a string, to 16 bytes) by its growth, and
    the whole (H5T__set_loc)."""
    at, size, mem, by_offset = _memory_layout(dt)
    grown = 0
    for i in by_offset:
        at[i] += grown
        grown += sizes[i] - mem[i]
    return at, size + grown


def _memory_layout(dt):
    """(member offsets, size, member sizes, members by numpy offset) of the compound ``dt``
    in h5py's memory (its py_create): each member at its numpy offset or after the member
    before, the whole at least numpy's itemsize; TypeError for an aligned struct this
    changes."""
    mem = [_memory_size(dt.fields[name][0]) for name in dt.names]
    at, end = [0] * len(mem), 0
    by_offset = sorted(range(len(mem)), key=lambda i: dt.fields[dt.names[i]][1])
    for i in by_offset:
        member, off = dt.fields[dt.names[i]][:2]
        if dt.isalignedstruct and (end > off or mem[i] != member.itemsize):
            raise TypeError("Enforced alignment not compatible with HDF5 type")
        at[i] = max(end, off)
        end = at[i] + mem[i]
    if dt.isalignedstruct and end > dt.itemsize:
        raise TypeError("Enforced alignment not compatible with HDF5 type")
    return at, max(end, dt.itemsize), mem, by_offset


def _memory_size(dt):
    """The size h5py gives a member of numpy type ``dt`` in memory (its py_create)."""
    meta = dt.metadata or {}
    if "vlen" in meta:
        return 8 if meta["vlen"] in (str, bytes) else 16
    if "ref" in meta:
        return 12 if is_region(meta["ref"]) else 8
    if dt.subdtype is not None:
        base, dims = dt.subdtype
        return int(np.prod(dims)) * _memory_size(base)
    if dt.names is not None and needs_conversion_in_file(dt):
        return _memory_layout(dt)[1]
    return dt.itemsize


def is_region(ref):
    """True for a region reference class: purehep's, or one of that name from the dtype of
    another library (h5py's ``regionref_dtype``, as code written for h5py passes)."""
    return ref is RegionReference or (isinstance(ref, type) and (
        issubclass(ref, RegionReference) or ref.__name__ == "RegionReference"))


def needs_conversion_in_file(dt):
    """Whether libhdf5 converts values of ``dt`` between memory and file (its force_conv):
    variable-length and reference types, and compounds and arrays holding one."""
    meta = dt.metadata or {}
    if "vlen" in meta or "ref" in meta:
        return True
    if dt.subdtype is not None:
        return needs_conversion_in_file(dt.subdtype[0])
    return dt.names is not None and any(needs_conversion_in_file(dt.fields[n][0])
                                        for n in dt.names)
