"""Object, region and attribute references (spec VIII.B and VIII.C).

``Reference`` mirrors h5py's object reference: ``.address`` (the referenced object header),
falsy when null, hashable. ``RegionReference`` adds the decoded selection. References of the
revised type (HDF5 1.12+, datatype version 4) may name an external file (``file_name``) or an
attribute (``attr_name``); dereferencing them is the job of the hl layer, which may raise
UnsupportedFeatureError for external targets. Their file encodings are decoded in
purehep.format.convert.
"""
from .errors import UnsupportedFeatureError

H5R_OBJECT1, H5R_DATASET_REGION1, H5R_OBJECT2, H5R_DATASET_REGION2, H5R_ATTR = 0, 1, 2, 3, 4


class Reference:
    """An object reference: ``address`` of the target's object header (0/None = null)."""
    __slots__ = ("address", "file_name", "attr_name", "ref_type")

    def __init__(self, address=None, file_name=None, attr_name=None, ref_type=H5R_OBJECT1):
        self.address = address
        self.file_name = file_name
        self.attr_name = attr_name
        self.ref_type = ref_type

    def __bool__(self):
        return bool(self.address)

    @property
    def external(self):
        return self.file_name is not None

    def _key(self):
        return (type(self).__name__, self.address or 0, self.file_name, self.attr_name)

    def __eq__(self, other):
        if not isinstance(other, Reference):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if not self:
            return f"<HDF5 {self._what()} reference (null)>"
        extra = f" in {self.file_name!r}" if self.file_name else ""
        attr = f" attribute {self.attr_name!r}" if self.attr_name is not None else ""
        return f"<HDF5 {self._what()} reference{attr} to {self.address:#x}{extra}>"

    def _what(self):
        return "object"

    def dereference(self, file):
        """The object this reference points to, via the hl File (``file.deref``)."""
        if self.external:
            raise UnsupportedFeatureError(
                f"reference to an object in the external file {self.file_name!r}")
        return file.deref(self)


class RegionReference(Reference):
    """A dataset region reference: target dataset ``address`` and its ``selection``."""
    __slots__ = ("selection",)

    def __init__(self, address, selection=None, file_name=None, ref_type=H5R_DATASET_REGION1):
        super().__init__(address, file_name, None, ref_type)
        self.selection = selection

    def _key(self):
        return super()._key() + (id(self.selection) if self.selection is not None else None,)

    def __eq__(self, other):
        if not isinstance(other, RegionReference):
            return NotImplemented
        return (super()._key() == other._key()[:-1]
                and (self.selection == other.selection
                     if self.selection is not None and other.selection is not None
                     else self.selection is other.selection))

    def __hash__(self):
        return hash(super()._key())

    def _what(self):
        return "region"


class AttributeReference(Reference):
    """A revised (H5R_ATTR) reference to attribute ``attr_name`` of the object at ``address``."""
    __slots__ = ()

    def _what(self):
        return "attribute"
