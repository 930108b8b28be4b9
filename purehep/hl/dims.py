"""Dimension scales, with h5py's interface (``ds.dims``, ``ds.make_scale``, ``ds.is_scale``),
stored as the HDF5 Dimension Scales specification prescribes and libhdf5's H5DS library
writes them:

- a scale has CLASS = "DIMENSION_SCALE" and NAME, scalar null-terminated ASCII strings of
  strlen + 1 bytes (H5LT_set_attribute_string), and REFERENCE_LIST, one compound
  {dataset: object reference at 0, dimension: uint32 at 8; 16 bytes} per attachment;
- a dataset has DIMENSION_LIST, one variable-length sequence of object references per
  dimension, and DIMENSION_LABELS, one variable-length ASCII string per dimension (NULL where
  no label was set).

Updates follow H5DS: DIMENSION_LIST and DIMENSION_LABELS are rewritten in place with their
stored types, CLASS, NAME and REFERENCE_LIST deleted and created again; a detach moves the
last entry into the removed one's place and deletes DIMENSION_LIST and REFERENCE_LIST once
empty. H5DS failures raise DimensionScaleError, a RuntimeError as h5py reports them.
"""

import numpy as np

from ..dtypes import check_ref_dtype, check_vlen_dtype, ref_dtype, string_dtype, vlen_dtype
from ..errors import DimensionScaleError, PurehepWarning, warn
from ..reference import Reference
from ..write.values import vlen_stored
from .dataset import Dataset
from .serialize import serialized

DIMENSION_SCALE = b"DIMENSION_SCALE"
RESERVED_CLASSES = (b"IMAGE", b"PALETTE", b"TABLE")        # datasets that take no scales
NULLTERM = 0                                               # string padding type
DIMENSION_LIST_DTYPE = vlen_dtype(ref_dtype)
REFERENCE_LIST_DTYPE = np.dtype({"names": ["dataset", "dimension"],
                                 "formats": [ref_dtype, "<u4"], "offsets": [0, 8],
                                 "itemsize": 16})
DIMENSION_LABELS_DTYPE = string_dtype("ascii")


def _failure(function):
    return DimensionScaleError(f"Unspecified error in {function} (return value <0)")


def _e(name):
    """h5py's encoding of names: str as UTF-8, bytes unchanged."""
    if isinstance(name, str):
        return name.encode("utf-8")
    if isinstance(name, bytes):
        return name
    raise TypeError(f"A name should be string or bytes, not {type(name)}")


def _c_string(text):
    """``text`` as the C string H5DS receives: cut at its first NUL."""
    return text.split(b"\0", 1)[0]


def _d(name):
    """h5py's decoding of names: str when UTF-8, else the bytes."""
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError:
        return name


def _as_bytes(value):
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)


# --- attributes -------------------------------------------------------------------------------

def _attr(obj, name):
    """The value of ``obj``'s attribute ``name``, None without one."""
    return obj.attrs[name] if name in obj.attrs else None


def _stored_dtype(obj, name, default):
    """The dtype attribute ``name`` is stored with (libhdf5 rewrites with the stored type)."""
    return obj.attrs.get_dtype(name) if name in obj.attrs else default


def _set_string(obj, name, text):
    """H5LT_set_attribute_string: ``name`` deleted and created as a scalar null-terminated
    ASCII string of strlen + 1 bytes."""
    if name in obj.attrs:
        del obj.attrs[name]
    dtype = np.dtype(f"S{len(text) + 1}", metadata={"h5py_encoding": "ascii",
                                                     "strpad": "nullterm"})
    obj.attrs.create(name, np.bytes_(text), dtype=dtype)


def _class(obj):
    """(datatype, value) of ``obj``'s CLASS attribute, None without one."""
    if "CLASS" not in obj.attrs:
        return None
    return obj.attrs._attrs["CLASS"].datatype, obj.attrs["CLASS"]


def _prefixed(text, word):
    """libhdf5's strncmp(text, word, MIN(strlen(word), strlen(text))) == 0."""
    return isinstance(text, bytes) and (text.startswith(word) or word.startswith(text))


def is_scale(ds):
    """H5DSis_scale: CLASS is a 16-byte null-terminated string reading DIMENSION_SCALE (one
    reading anything else makes libhdf5 fail; it is no scale here)."""
    found = _class(ds)
    if found is None:
        return False
    dtype, value = found
    return dtype.kind == "string" and dtype.padding == NULLTERM and dtype.size == 16 and \
        _prefixed(value, DIMENSION_SCALE)


def _check_not_reserved(ds, function):
    """H5DS_is_reserved: images, palettes and tables take no scales; a CLASS that is not a
    null-terminated string fails the check. A variable-length CLASS passes (libhdf5 compares
    the bytes of the string's pointer, with varying outcome)."""
    found = _class(ds)
    if found is None:
        return
    dtype, value = found
    if dtype.kind not in ("string", "vlen_str") or dtype.padding != NULLTERM or \
            any(_prefixed(value, word) for word in RESERVED_CLASSES):
        raise _failure(function)


def _dimension_list(ds):
    """DIMENSION_LIST as one list of scale datasets per dimension (None without one)."""
    value = _dimension_refs(ds)
    if value is None:
        return None
    return [[ds.file[ref] for ref in refs] for refs in value]


def _dimension_refs(ds):
    """DIMENSION_LIST's value, one array of references per dimension (None without one);
    DimensionScaleError when it is not variable-length lists of object references (the
    type H5DSattach_scale writes, which libhdf5 reads it as)."""
    value = _attr(ds, "DIMENSION_LIST")
    if value is None:
        return None
    base = check_vlen_dtype(ds.attrs.get_dtype("DIMENSION_LIST"))
    if base is None or isinstance(base, type) or check_ref_dtype(base) is not Reference:
        raise DimensionScaleError("DIMENSION_LIST is not variable-length lists of object "
                                  "references")
    if np.shape(value) != (max(ds.ndim, 1),):
        # libhdf5 reads it into a buffer of the dataset's rank, whatever its size
        raise DimensionScaleError(f"DIMENSION_LIST of shape {np.shape(value)} for a "
                                  f"rank-{ds.ndim} dataset")
    return value


def _write_dimension_list(ds, dimension_list):
    """DIMENSION_LIST rewritten in place; deleted when no dimension has a scale left."""
    if not any(dimension_list):
        del ds.attrs["DIMENSION_LIST"]
        return
    value = np.empty(len(dimension_list), object)
    for i, row in enumerate(dimension_list):
        value[i] = np.array([scale.ref for scale in row], object)
    if "DIMENSION_LIST" in ds.attrs:
        ds.attrs.modify("DIMENSION_LIST", value)
    else:
        ds.attrs.create("DIMENSION_LIST", value, dtype=DIMENSION_LIST_DTYPE)


def _reference_list(scale):
    """REFERENCE_LIST as (dataset, dimension) pairs ([] without one)."""
    value = _attr(scale, "REFERENCE_LIST")
    if value is None:
        return []
    names = getattr(getattr(value, "dtype", None), "names", None) or ()
    if np.ndim(value) != 1 or "dataset" not in names or "dimension" not in names:
        raise DimensionScaleError("REFERENCE_LIST is not a list of (dataset, dimension) pairs")
    return [(scale.file[ref], int(dim)) for ref, dim in zip(value["dataset"],
                                                             value["dimension"])]


def _write_reference_list(scale, pairs):
    """REFERENCE_LIST deleted and, unless empty, created again with its stored type."""
    dtype = _stored_dtype(scale, "REFERENCE_LIST", REFERENCE_LIST_DTYPE)
    if "REFERENCE_LIST" in scale.attrs:
        del scale.attrs["REFERENCE_LIST"]
    if pairs:
        value = np.empty(len(pairs), dtype)
        for i, (ds, dim) in enumerate(pairs):
            value[i] = (ds.ref, dim)
        scale.attrs.create("REFERENCE_LIST", value, dtype=dtype)


def _labels(ds):
    """DIMENSION_LABELS as one label per dimension, None where NULL."""
    if "DIMENSION_LABELS" not in ds.attrs:
        return [None] * ds.ndim
    attr = ds.attrs._attrs["DIMENSION_LABELS"]
    value = ds.attrs["DIMENSION_LABELS"]
    if np.shape(value) != (max(ds.ndim, 1),) or attr.datatype.kind not in ("string", "vlen_str"):
        raise DimensionScaleError(f"DIMENSION_LABELS of shape {np.shape(value)} for a "
                                  f"rank-{ds.ndim} dataset, or not strings")
    labels = list(value)
    if attr.datatype.kind == "vlen_str":
        stored = np.frombuffer(attr.data, vlen_stored(ds._ctx.sizeof_offsets), len(labels))
        labels = [None if coll == 0 else label
                  for label, coll in zip(labels, stored["collection"])]
    return labels


def _remove(items, item):
    """H5DS's removal: the last entry replaces the first equal to ``item``; False if none."""
    for i, found in enumerate(items):
        if found == item:
            items[i] = items[-1]
            items.pop()
            return True
    return False


# --- H5DS operations ------------------------------------------------------------------------

def _check_pair(ds, scale, function):
    """The checks H5DSattach_scale and H5DSdetach_scale share (plus write intent and one
    file, which libhdf5 finds when writing)."""
    if not isinstance(scale, Dataset):
        raise TypeError(f"Argument 'dscale' has incorrect type (expected Dataset, got "
                        f"{type(scale).__name__})")
    if ds._node is None or scale._node is None or scale.file is not ds.file or \
            is_scale(ds) or scale == ds:
        raise _failure(function)


def make_scale(ds, name):
    """H5DSset_scale: CLASS and NAME on ``ds``, which must have no scales of its own."""
    name = _c_string(_e(name))
    if ds._node is None or "DIMENSION_LIST" in ds.attrs:
        raise _failure("H5DSset_scale")
    _set_string(ds, "CLASS", DIMENSION_SCALE)
    _set_string(ds, "NAME", name)


def attach_scale(ds, dim, scale):
    """H5DSattach_scale: ``scale`` joins DIMENSION_LIST[dim] (once), (ds, dim) joins the
    scale's REFERENCE_LIST (each time); a scale without a CLASS gets one."""
    _check_pair(ds, scale, "H5DSattach_scale")
    if "DIMENSION_LIST" in scale.attrs:
        raise _failure("H5DSattach_scale")
    _check_not_reserved(ds, "H5DSattach_scale")
    dimension_list = _dimension_list(ds) or [[] for _ in range(max(ds.ndim, 1))]
    if scale not in dimension_list[dim]:
        dimension_list[dim].append(scale)
    _write_dimension_list(ds, dimension_list)
    _write_reference_list(scale, _reference_list(scale) + [(ds, dim)])
    if "CLASS" not in scale.attrs:
        _set_string(scale, "CLASS", DIMENSION_SCALE)


def detach_scale(ds, dim, scale):
    """H5DSdetach_scale: the entries attach_scale made removed from both lists (the dataset's
    first, as libhdf5 does, which leaves it changed if the scale's list lacks the entry)."""
    _check_pair(ds, scale, "H5DSdetach_scale")
    if "DIMENSION_LIST" not in ds.attrs or "REFERENCE_LIST" not in scale.attrs:
        raise _failure("H5DSdetach_scale")
    dimension_list = _dimension_list(ds)
    if not _remove(dimension_list[dim], scale):
        raise _failure("H5DSdetach_scale")
    _write_dimension_list(ds, dimension_list)
    pairs = _reference_list(scale)
    if not _remove(pairs, (ds, dim)):
        raise _failure("H5DSdetach_scale")
    _write_reference_list(scale, pairs)


def is_attached(ds, dim, scale):
    """H5DSis_attached: ``scale`` is in DIMENSION_LIST[dim] and (ds, dim) in its
    REFERENCE_LIST; a scale dataset, the scale itself or a dimension out of range fail."""
    if not isinstance(scale, Dataset) or scale == ds or is_scale(ds) or \
            not 0 <= dim < max(ds.ndim, 1):
        raise _failure("H5DSis_attached")
    return scale in scales(ds, dim) and (ds, dim) in _reference_list(scale)


def num_scales(ds, dim):
    """H5DSget_num_scales: how many scales dimension ``dim`` has."""
    value = _dimension_refs(ds)
    return len(value[dim]) if value is not None else 0


def scales(ds, dim):
    """The scales attached to dimension ``dim``, in DIMENSION_LIST order."""
    found = _dimension_list(ds)
    return found[dim] if found is not None else []


def scale_name(scale):
    """H5DSget_scale_name as h5py calls it: NAME's first size - 1 bytes up to a NUL (b"" if
    the scale has no NAME)."""
    if not is_scale(scale):
        raise _failure("H5DSget_scale_name")
    value = _attr(scale, "NAME")
    if value is None:
        return b""
    if isinstance(value, str):       # variable length: libhdf5 would copy the pointer's bytes
        return _as_bytes(value)
    dtype = scale.attrs.get_dtype("NAME")
    return _c_string(np.asarray(value, dtype).tobytes()[:dtype.itemsize - 1])


def get_label(ds, dim):
    """H5DSget_label: the label of dimension ``dim`` (b"" when NULL or absent)."""
    label = _labels(ds)[dim]
    return b"" if label is None else _c_string(_as_bytes(label))


def set_label(ds, dim, label):
    """H5DSset_label: DIMENSION_LABELS created with NULL labels, or rewritten in place."""
    label = _c_string(_e(label))
    if ds._node is None:
        raise _failure("H5DSset_label")
    labels = [v if v is None else _e(v) for v in _labels(ds)]   # the others as stored: bytes
    labels[dim] = label
    if "DIMENSION_LABELS" in ds.attrs:            # rewritten in place (its creation order)
        ds.attrs.modify("DIMENSION_LABELS", np.array(labels, object))
    else:
        ds.attrs.create("DIMENSION_LABELS", np.array(labels, object),
                        dtype=DIMENSION_LABELS_DTYPE)


# --- h5py's interface ---------------------------------------------------------------------------

@serialized("_ds")
class DimensionProxy:
    """One dimension of a dataset (h5py's DimensionProxy): its label and attached scales."""

    def __init__(self, dataset, dimension):
        self._ds = dataset
        self._dimension = dimension

    @property
    def label(self):
        """The dimension's label (DIMENSION_LABELS)."""
        return _d(get_label(self._ds, self._dimension))

    @label.setter
    def label(self, value):
        set_label(self._ds, self._dimension, value)

    def __hash__(self):
        return hash((type(self), self._ds, self._dimension))

    def __eq__(self, other):
        return hash(self) == hash(other)

    def __iter__(self):
        yield from self.keys()

    def __len__(self):
        return num_scales(self._ds, self._dimension)

    def __getitem__(self, item):
        """The scale at position ``item``, or the first named ``item``; like H5DSiterate,
        fails on a dimension without scales."""
        found = scales(self._ds, self._dimension)
        if not found:
            raise _failure("H5DSiterate_scales")
        if isinstance(item, int):
            return found[item]
        for scale in found:
            if scale_name(scale) == _e(item):
                return scale
        raise KeyError(item)

    def attach_scale(self, dset):
        """Attach the scale ``dset`` to this dimension."""
        attach_scale(self._ds, self._dimension, dset)

    def detach_scale(self, dset):
        """Detach the scale ``dset`` from this dimension."""
        detach_scale(self._ds, self._dimension, dset)

    def items(self):
        """(name, scale) pairs of the scales attached to this dimension."""
        return [(_d(scale_name(scale)), scale) for scale in scales(self._ds, self._dimension)]

    def keys(self):
        return [name for name, _ in self.items()]

    def values(self):
        return [scale for _, scale in self.items()]

    def __repr__(self):
        if not self._ds:
            return "<Dimension of closed HDF5 dataset>"
        return f'<"{self.label}" dimension {self._dimension} of HDF5 dataset at {id(self._ds)}>'


@serialized("_ds")
class DimensionManager:
    """``ds.dims`` (h5py's DimensionManager): the dataset's dimensions, one per axis."""

    def __init__(self, parent):
        self._ds = parent

    def __getitem__(self, index):
        if index > len(self) - 1:
            raise IndexError("Index out of range")
        if index < 0:                 # h5py fails converting it to an unsigned index
            raise OverflowError("can't convert negative value to unsigned int")
        return DimensionProxy(self._ds, index)

    def __len__(self):
        return self._ds.ndim

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        if not self._ds:
            return "<Dimensions of closed HDF5 dataset>"
        return f"<Dimensions of HDF5 object at {id(self._ds)}>"

    def create_scale(self, dset, name=""):
        """Deprecated (as in h5py): ``dset.make_scale(name)``."""
        warn("other_ds.dims.create_scale(ds, name) is deprecated. "
             "Use ds.make_scale(name) instead.", PurehepWarning)
        dset.make_scale(name)
