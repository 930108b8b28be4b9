"""h5py's ``h5r`` as far as purehep has it: the reference classes (purehep.reference) and
H5Rcreate of object and dataset region references (spec VIII.B, VIII.C), the region given as
a dataspace's selection (purehep.h5s)."""
from .h5d import location
from .reference import Reference, RegionReference

OBJECT, DATASET_REGION = 0, 1

__all__ = ["Reference", "RegionReference", "OBJECT", "DATASET_REGION", "create"]


def create(loc, name, ref_type, space=None):
    """A reference to the object ``name`` of ``loc`` ("." for ``loc`` itself), or to the
    region of the dataset ``name`` that ``space`` selects."""
    name = name.decode() if isinstance(name, bytes) else name
    obj = location(loc) if name == "." else location(loc)[name]
    if ref_type == OBJECT:
        return obj.ref
    if ref_type != DATASET_REGION:
        raise ValueError(f"unknown reference type {ref_type!r}")
    if space is None:
        raise ValueError("a dataset region reference needs a dataspace")
    from .h5s import as_selection
    return obj.regionref.of_selection(as_selection(space))
