"""The shape of values written to a dataset, checked against the selection as h5py checks it.

h5py's Dataset.__setitem__ first makes the values an array (its conversions decide the
shape: a variable-length sequence's values are sequences along their last axis, an array
type's dimensions are not the selection's), then fits that shape to the selection
(``selections.h5py_broadcast``). The values come back shaped for numpy's assignment.
"""
import numpy as np

from ..selections import h5py_broadcast


def check_array_values(shape, dtype):
    """h5py's TypeError for values of an array datatype whose last dimensions are not the
    array's (a constant is not broadcast into each array)."""
    sub = dtype.subdtype
    if sub is not None and tuple(shape[len(shape) - len(sub[1]):]) != sub[1]:
        raise TypeError(f"When writing to array types, last N dimensions have to match (got "
                        f"{tuple(shape[-len(sub[1]):])}, but should be {sub[1]})")


def _sequences(val, base):
    """(shape, values) h5py's Dataset.__setitem__ makes of values for a dataset of
    variable-length sequences of ``base``: values that make a regular array of ``base`` are
    one sequence per row of its last axis (shape: the array's but that axis; a 1-d array is
    one sequence, of shape (1,)); others are one sequence per item, left as given (each
    converted to ``base`` when stored)."""
    try:
        arr = np.asarray(val, dtype=base)
    except (ValueError, TypeError):
        return (np.shape(val) if isinstance(val, np.ndarray) else (len(val),)), val
    shape = arr.shape[:-1] if arr.ndim > 1 else (1,)
    if arr.ndim == 0:
        return shape, val
    out = np.empty(arr.shape[:-1], object)
    for index in np.ndindex(out.shape):
        out[index] = arr[index]
    return shape, out


def _as_h5py_array(val, dtype):
    """``val`` as the array h5py's Dataset.__setitem__ makes of it (numpy's conversion
    errors are h5py's too): an object array for variable-length strings and references,
    an array given left as it is (h5py converts one to a compound type, keeping its shape),
    other values converted to the dataset's (base) type."""
    if dtype.kind == "O":
        return np.asarray(val, dtype=object)
    if isinstance(val, np.ndarray):     # (of the shape h5py's conversion gives them)
        return val
    return np.asarray(val, dtype=dtype.base)


def fit_values(node, args, val):
    """``val`` for ``dataset[args] = val`` checked as h5py checks it, and reshaped where
    h5py fits it to the selection differently from numpy (extra leading dimensions of
    length 1, the points of a mask in any shape); ``args`` as given (MultiBlockSlices
    unexpanded)."""
    dtype = node.dtype
    base = (dtype.metadata or {}).get("vlen")
    if base is not None and base not in (str, bytes):
        shape, val = _sequences(val, base)
        arr = val if isinstance(val, np.ndarray) else None     # (made below if needed)
    else:
        arr = _as_h5py_array(val, dtype)
        check_array_values(arr.shape, dtype)
        shape = arr.shape[:arr.ndim - len(dtype.shape)]
        arr = val if isinstance(val, np.ndarray) else arr
    fitted = h5py_broadcast(node.shape, args, shape, dtype.subdtype is not None)
    if fitted == shape:
        return val
    if arr is None:
        arr = _as_h5py_array(val, dtype)
    return arr.reshape(fitted + dtype.shape)


def field_values_shape(node, args, names, val):
    """Check values written to the fields ``names`` of ``dataset[args]`` as h5py checks
    them; returns them shaped for the selection (one field's values are converted to its
    type first, as h5py converts them)."""
    dtype = node.dtype
    if len(names) == 1 and not (isinstance(val, np.ndarray) and val.dtype.names):
        field = dtype.fields[names[0]][0]
        val = np.asarray(val, dtype=field.base)
        shape = val.shape[:val.ndim - len(field.shape)]
        extra = field.shape
    else:
        val = np.asarray(val)
        shape, extra = val.shape, ()
    fitted = h5py_broadcast(node.shape, args, shape)
    return val if fitted == shape else val.reshape(fitted + extra)
