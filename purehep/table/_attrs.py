"""Attribute encodings HEP001 prescribes (§5.1–5.3, §6.5, §8.3): fixed-length ASCII,
fixed-length UTF-8, object-reference arrays, booleans, uint64 scalars."""
import numpy as np

from ..dtypes import ref_dtype, string_dtype
from ..hl.dataset import Dataset
from ..hl.group import Group


def set_ascii(obj, name, value):
    """Scalar fixed-length ASCII string sized exactly to ``value`` (CLASS, VERSION, KIND)."""
    obj.attrs.create(name, np.bytes_(value.encode("ascii")), dtype=f"S{max(len(value), 1)}")


def set_utf8(obj, name, value):
    """Scalar fixed-length UTF-8 string, sized in bytes to hold ``value``."""
    raw = value.encode("utf-8")
    obj.attrs.create(name, np.bytes_(raw), dtype=string_dtype("utf-8", max(len(raw), 1)))


def set_utf8_list(obj, name, values):
    """1-D fixed-length UTF-8 string array (column-order)."""
    raw = [v.encode("utf-8") for v in values]
    width = max([len(r) for r in raw] + [1])
    obj.attrs.create(name, np.array(raw, dtype=f"S{width}"), dtype=string_dtype("utf-8", width))


def text(value):
    """A string attribute's value as str (bytes, numpy scalars and 0-d arrays decoded)."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def get_text(obj, name):
    """A string attribute as str, or None when absent."""
    return text(obj.attrs[name]) if name in obj.attrs else None


def set_refs(obj, name, targets):
    """1-D object-reference array to ``targets``; the attribute is removed when empty."""
    if not targets:
        if name in obj.attrs:
            del obj.attrs[name]
        return
    obj.attrs.create(name, np.array([t.ref for t in targets], dtype=ref_dtype), dtype=ref_dtype)


def set_ref(obj, name, target):
    """Scalar object reference."""
    obj.attrs.create(name, target.ref, dtype=ref_dtype)


def set_bool(obj, name, value):
    obj.attrs[name] = np.bool_(value)


def set_u64(obj, name, value):
    obj.attrs.create(name, np.uint64(value), dtype=np.uint64)


def deref(file, refs):
    """Objects an attribute's reference (scalar or array) points to; unresolvable -> None."""
    out = []
    for ref in np.asarray(refs, dtype=object).reshape(-1):
        try:
            out.append(file[ref])
        except (KeyError, ValueError, TypeError):
            out.append(None)
    return out


def get_refs(obj, name):
    """Objects referenced by attribute ``name`` ([] when absent)."""
    return deref(obj.file, obj.attrs[name]) if name in obj.attrs else []


def same(a, b):
    """True when two handles are the same HDF5 object."""
    return a is not None and b is not None and a.addr == b.addr


def is_dataset(obj):
    return isinstance(obj, Dataset)


def is_group(obj):
    return isinstance(obj, Group)
