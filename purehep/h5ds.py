"""h5py's ``h5ds``: the HDF5 Dimension Scales functions on low-level dataset ids
(``ds.id``), as h5py names them — each one the H5DS operation purehep.hl.dims implements
(the attributes CLASS, NAME, REFERENCE_LIST, DIMENSION_LIST, DIMENSION_LABELS as the HDF5
Dimension Scales specification lays them out). H5DS failures raise RuntimeError, as h5py's.
"""
from .hl import dims
from .hl.dsid import DatasetID

__all__ = ["set_scale", "is_scale", "attach_scale", "is_attached", "detach_scale",
           "get_num_scales", "set_label", "get_label", "get_scale_name", "iterate"]


def _ds(dsid, argument="dsid"):
    if not isinstance(dsid, DatasetID):
        raise TypeError(f"Argument '{argument}' has incorrect type (expected "
                        f"purehep DatasetID, got {type(dsid).__name__})")
    return dsid._ds


def set_scale(dsid, dimname=b""):
    """Make the dataset a dimension scale, with optional name ``dimname``."""
    dims.make_scale(_ds(dsid), dimname)


def is_scale(dsid):
    """True if the dataset is a dimension scale."""
    return dims.is_scale(_ds(dsid))


def attach_scale(dsid, dscale, idx):
    """Attach the scale ``dscale`` to dimension ``idx`` of the dataset."""
    dims.attach_scale(_ds(dsid), idx, _ds(dscale, "dscale"))


def is_attached(dsid, dscale, idx):
    """True if ``dscale`` is attached to dimension ``idx`` of the dataset."""
    return dims.is_attached(_ds(dsid), idx, _ds(dscale, "dscale"))


def detach_scale(dsid, dscale, idx):
    """Detach the scale ``dscale`` from dimension ``idx`` of the dataset."""
    dims.detach_scale(_ds(dsid), idx, _ds(dscale, "dscale"))


def get_num_scales(dsid, idx):
    """How many scales are attached to dimension ``idx``."""
    return dims.num_scales(_ds(dsid), idx)


def set_label(dsid, idx, label):
    """Set the label of dimension ``idx``."""
    dims.set_label(_ds(dsid), idx, label)


def get_label(dsid, idx):
    """The label of dimension ``idx`` (bytes, b"" when none)."""
    return dims.get_label(_ds(dsid), idx)


def get_scale_name(dscale):
    """The NAME of the dimension scale (bytes)."""
    return dims.scale_name(_ds(dscale, "dscale"))


def iterate(dsid, idx, func, startidx=0):
    """Call ``func(scale id)`` for the scales of dimension ``idx`` from ``startidx`` on, in
    DIMENSION_LIST order, until it returns something other than None; return that."""
    for scale in dims.scales(_ds(dsid), idx)[startidx:]:
        result = func(scale.id)
        if result is not None:
            return result
    return None
