"""Object, region and attribute references (spec VIII.B and VIII.C).

``Reference`` mirrors h5py's object reference: ``.address`` (the referenced object header),
falsy when null, hashable. ``RegionReference`` adds the decoded selection. References of the
revised type (HDF5 1.12+, datatype version 4) may name an external file (``file_name``) or an
attribute (``attr_name``); dereferencing them is the job of the hl layer, which may raise
UnsupportedFeatureError for external targets.
"""
from .errors import FormatError, UnsupportedFeatureError

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


def decode_region_blob(ctx, blob, offset=None):
    """An old-style (H5R_DATASET_REGION1) global heap object: address ‖ selection (VIII.C)."""
    from .format.context import Cursor
    from .format import selection
    cur = Cursor(memoryview(blob), offset or 0, "region reference", ctx)
    addr = cur.address()
    sel = selection.decode(cur)
    return RegionReference(addr, sel)


def decode_encoded(ctx, ref_type, flags, block, offset=None):
    """Decode a revised reference block (VIII.B "Reference Block") that follows the 2-byte
    header; ``block`` holds the token size, token, optional file name, selection, attr name."""
    from .format.context import Cursor
    from .format import selection
    cur = Cursor(memoryview(block), offset or 0, "revised reference", ctx)
    token_size = cur.u8()
    if token_size > 16:
        raise cur.error(f"invalid object token size {token_size}")
    token = bytes(cur.bytes(token_size))
    address = int.from_bytes(token[:ctx.sizeof_offsets if ctx else 8], "little")
    file_name = None
    if flags & 1:
        n = cur.u16()
        file_name = bytes(cur.bytes(n)).decode("utf-8", "surrogateescape")
    if ref_type == H5R_OBJECT2:
        return Reference(address, file_name, None, H5R_OBJECT2)
    if ref_type == H5R_DATASET_REGION2:
        size = cur.u32()
        rank = cur.u32()
        if size > cur.remaining:
            raise cur.error(f"selection of {size} bytes overruns the reference")
        sub = Cursor(cur.buf[cur.pos:cur.pos + size], cur.offset, "revised reference", ctx)
        sel = selection.decode(sub, rank)
        cur.skip(size)
        return RegionReference(address, sel, file_name, H5R_DATASET_REGION2)
    if ref_type == H5R_ATTR:
        n = cur.u16()
        name = bytes(cur.bytes(n)).decode("utf-8", "surrogateescape")
        return AttributeReference(address, file_name, name, H5R_ATTR)
    raise cur.error(f"unknown revised reference type {ref_type}")


def decode_revised(ctx, raw, offset=None):
    """One element of the revised reference datatype (H5R_REF) as stored in the file.

    Layout (libhdf5, checked against HDF5 2.0 files): type u8, flags u8, then for an internal
    object reference the reference block itself (token size, token); for every other kind
    (region, attribute, external object) u32 blob size + global heap ID of the reference block
    (without its 2-byte header). A null reference has type 0.
    """
    raw = bytes(raw)
    if len(raw) < 2:
        raise FormatError("revised reference shorter than its header", "revised reference",
                          offset)
    ref_type, flags = raw[0], raw[1]
    so = ctx.sizeof_offsets
    if ref_type == 0:
        return Reference(0, ref_type=H5R_OBJECT2)
    if ref_type not in (H5R_OBJECT2, H5R_DATASET_REGION2, H5R_ATTR):
        raise FormatError(f"invalid revised reference type {ref_type}", "revised reference",
                          offset)
    if ref_type == H5R_OBJECT2 and not flags & 1:
        # an internal object reference is stored directly: header ‖ token size ‖ token
        return decode_encoded(ctx, ref_type, flags, raw[2:], offset)
    if len(raw) < 2 + 4 + so + 4:
        raise FormatError("revised reference too short for a global heap ID",
                          "revised reference", offset)
    size = int.from_bytes(raw[2:6], "little")
    coll = int.from_bytes(raw[6:6 + so], "little")
    index = int.from_bytes(raw[6 + so:10 + so], "little")
    if coll in (0, ctx.undefined):
        return Reference(0, ref_type=ref_type)
    from .format.global_heap import get_object
    blob = get_object(ctx, coll, index)
    if size > len(blob):
        raise FormatError(f"reference blob of {size} bytes exceeds heap object of "
                          f"{len(blob)}", "revised reference", offset)
    return decode_encoded(ctx, ref_type, flags, blob[:size], offset)
