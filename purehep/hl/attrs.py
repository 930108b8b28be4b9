"""Attributes: compact (attribute messages in the header) and dense (attribute info message,
fractal heap and v2 B-trees), read as h5py's AttributeManager reads them."""
from collections.abc import MutableMapping

import numpy as np

from ..format import messages
from .base import Empty, MappingExtras
from .serialize import serialized
from .writing import AttributesWriter

ATTRIBUTE, ATTRIBUTE_INFO = 0x0C, 0x15


def attribute_messages(ctx, header):
    """name -> Attribute message, in h5py's order (creation order when tracked, else name)."""
    return attribute_table(ctx, header)[0]


def attribute_table(ctx, header):
    """(name -> Attribute message in h5py's order, name -> creation order): the creation
    order of a compact attribute's message (version 2 headers tracking it; else its position
    among the header's attribute messages, as libhdf5 numbers them) or of a dense
    attribute's index record."""
    def load():
        info_raw = header.first(ATTRIBUTE_INFO)
        info = messages.decode(ctx, info_raw) if info_raw is not None else None
        by_order = bool(info and info.track_order)
        found = []
        if info is not None and info.dense:
            from ..format.dense_storage import dense_records
            for record, body, offset in dense_records(
                    ctx, info.fractal_heap_address, info.name_index_address,
                    info.creation_order_index_address, by_order):
                found.append((getattr(record, "creation_order", None),
                              messages.decode_body(ctx, ATTRIBUTE, body, offset)))
        for i, raw in enumerate(header.find(ATTRIBUTE)):
            order = raw.creation_order if by_order else i
            found.append((order, messages.decode(ctx, raw)))
        if by_order and all(order is not None for order, _ in found):
            found.sort(key=lambda x: x[0])
        elif not by_order:
            found.sort(key=lambda x: x[1].name.encode("utf-8", "surrogateescape"))
        return ({attr.name: attr for _, attr in found},
                {attr.name: order for order, attr in found})
    return ctx.cached("attrs", header.address, load)


def attribute_value(ctx, attr):
    """An attribute's value as h5py returns it: numpy scalar for scalars, str for
    variable-length strings, Empty for a null dataspace."""
    from ..format.convert import from_file
    datatype = attr.datatype
    space = attr.dataspace
    if space.shape is None:
        return Empty(datatype.dtype)
    from ..chunks.storage import element_dtype, as_elements
    from ..io.memory import check_size
    check_size(space.shape, datatype.size, f"attribute {attr.name!r}")
    raw = np.frombuffer(attr.data, element_dtype(datatype.file_dtype), count=space.size)
    value = from_file(ctx, datatype, as_elements(raw.reshape(space.shape), datatype.file_dtype),
                      (f"value of attribute {attr.name!r}", attr.offset))
    value = _strings_as_str(value, datatype.dtype)
    if space.shape == ():
        return value[()]
    return value


def _strings_as_str(value, dtype):
    """h5py decodes variable-length string attributes (ASCII or UTF-8), and arrays of them,
    to str (not strings inside compounds), in an array whose dtype keeps the string's
    metadata (h5py.check_string_dtype finds it)."""
    meta = dtype.base.metadata or {}
    if meta.get("vlen") in (str, bytes):
        out = np.empty(value.shape, dtype.base)
        flat_in, flat_out = value.reshape(-1), out.reshape(-1)
        for i, item in enumerate(flat_in):
            flat_out[i] = item.decode("utf-8", "surrogateescape") if isinstance(item, bytes) else item
        return out
    return value


@serialized("_parent", extra=("_rename",))
class AttributeManager(AttributesWriter, MappingExtras, MutableMapping):
    """``obj.attrs``: a mapping of attribute names to values (writable in write mode)."""

    def __init__(self, parent):
        self._parent = parent
        self._ctx = parent._ctx

    @property
    def _attrs(self):
        return attribute_messages(self._ctx, self._parent._oh)

    def __getitem__(self, name):
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        self._parent._live(KeyError)     # h5py's KeyError for the attribute of a closed object
        attr = self._attrs.get(name)
        if attr is None:
            raise KeyError(f"Can't open attribute (can't locate attribute: '{name}')")
        return attribute_value(self._ctx, attr)

    def __iter__(self):
        if self._wnode is not None:
            return iter(self._wnames())
        return iter(self._attrs)

    def __len__(self):
        if self._wnode is not None:
            return len(self._wnode.attrs)
        return len(self._attrs)

    def __contains__(self, name):
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        if self._wnode is not None:
            return name in self._wnode.attrs
        return name in self._attrs

    def get_id(self, name):
        """h5py's low-level AttrID of attribute ``name`` (purehep.h5a)."""
        from ..h5a import AttrID
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        if name not in self:
            raise KeyError(f"Can't open attribute (can't locate attribute: '{name}')")
        return AttrID(self._attrs[name], self._parent)

    def get_dtype(self, name):
        return self._attrs[name].datatype.dtype

    def get_shape(self, name):
        return self._attrs[name].dataspace.shape

    def __repr__(self):
        if not self._parent:
            return "<Attributes of closed HDF5 object>"
        return f"<Attributes of purehep object {self._parent.name!r} ({len(self)} attributes)>"
