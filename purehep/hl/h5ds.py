"""The dimension scale functions of h5py's ``h5py.h5ds`` module, on dataset ids (``ds.id``), as
h5py code calls them: ``h5ds.set_scale(ds.id, b"x")``, ``h5ds.attach_scale(ds.id, scale.id, 0)``.
They are the H5DS calls of the Dimension Scales specification, done by ``hl/dims.py``; names
and labels are bytes, as h5py gives and takes them.
"""
from . import dims


def _ds(dsid, argument="dsid"):
    ds = getattr(dsid, "_ds", None)
    if ds is None:
        raise TypeError(f"Argument {argument!r} has incorrect type (expected DatasetID, got "
                        f"{type(dsid).__name__})")
    return ds


def set_scale(dsid, dimname=b""):
    """H5DSset_scale: make the dataset a dimension scale named ``dimname``."""
    dims.make_scale(_ds(dsid), dimname)


def is_scale(dsid):
    """H5DSis_scale."""
    return dims.is_scale(_ds(dsid))


def attach_scale(dsid, dscale_id, idx):
    """H5DSattach_scale: attach the scale ``dscale_id`` to dimension ``idx``."""
    dims.attach_scale(_ds(dsid), idx, _ds(dscale_id, "dscale"))


def detach_scale(dsid, dscale_id, idx):
    """H5DSdetach_scale."""
    dims.detach_scale(_ds(dsid), idx, _ds(dscale_id, "dscale"))


def is_attached(dsid, dscale_id, idx):
    """H5DSis_attached: whether the scale is attached to dimension ``idx``."""
    return _ds(dscale_id, "dscale") in dims.scales(_ds(dsid), idx)


def get_num_scales(dsid, idx):
    """H5DSget_num_scales."""
    return dims.num_scales(_ds(dsid), idx)


def get_scale_name(dsid):
    """H5DSget_scale_name (bytes)."""
    return dims.scale_name(_ds(dsid))


def set_label(dsid, idx, label):
    """H5DSset_label."""
    dims.set_label(_ds(dsid), idx, label)


def get_label(dsid, idx):
    """H5DSget_label (bytes; b"" for no label)."""
    return dims.get_label(_ds(dsid), idx)


def iterate(dsid, idx, func, startidx=0):
    """H5DSiterate_scales: ``func(scale_id)`` for the scales of dimension ``idx`` from
    ``startidx`` on, until it returns something other than None, which is returned."""
    for scale in dims.scales(_ds(dsid), idx)[startidx:]:
        result = func(scale.id)
        if result is not None:
            return result
    return None
