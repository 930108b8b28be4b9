"""Data Layout message (spec IV.A.2.i), versions 1-4, and version 5: class 2 as HDF5 2.0
writes it, class 4 (structured chunk storage) as the sparse RFC ("File Format Changes for
Enabling Sparse Storage", Tables 13-16, 19-20) and its prototype write it.

Chunk dimensions are stored with one extra trailing dimension, the element size (spec
Appendix F, note 3); ``chunk_shape`` drops it and ``element_size`` keeps it.
"""
import struct
from dataclasses import dataclass, field, replace

COMPACT, CONTIGUOUS, CHUNKED, VIRTUAL, STRUCTURED = 0, 1, 2, 3, 4
# chunk indexing types of layout v4/v5 (v1-v3 chunked storage always uses a v1 B-tree: 0)
BTREE1, SINGLE, IMPLICIT, FIXED_ARRAY, EXTENSIBLE_ARRAY, BTREE2 = 0, 1, 2, 3, 4, 5
INDEX_NAMES = {BTREE1: "v1 B-tree", SINGLE: "single chunk", IMPLICIT: "implicit",
               FIXED_ARRAY: "fixed array", EXTENSIBLE_ARRAY: "extensible array", BTREE2: "v2 B-tree"}

STRUCT_SPARSE, STRUCT_VL = 0x0001, 0x0002      # structured chunk type bits (RFC Table 14)
STRUCT_OFFSET_SIZE = 8                           # the prototype's only offset size


def struct_chunk_size_len(layout_size, offset_size=STRUCT_OFFSET_SIZE, nsections=2):
    """Bytes of a structured chunk's size in index records and single-chunk index info: the
    prototype's rule, 1 + (floor(log2(chunk bytes)) + offset size) // offset size, at most the
    offset size; 8 for three-section (variable-length) chunks."""
    if nsections == 3:
        return 8
    n = 1 + ((max(int(layout_size), 1).bit_length() - 1) + offset_size) // offset_size
    return min(n, offset_size)


# chunked layout flags (v4)
DONT_FILTER_PARTIAL_EDGE_CHUNKS = 0x01
SINGLE_INDEX_WITH_FILTER = 0x02


@dataclass(frozen=True)
class Layout:
    version: int
    layout_class: int
    address: int | None = None          # contiguous data / chunk index / virtual heap collection
    size: int = 0                       # contiguous: bytes of storage
    compact_data: bytes | None = None   # compact: the raw data
    compact_offset: int | None = field(default=None, compare=False)  # compact: its file offset
    dims: tuple = ()                    # v1/v2 contiguous and compact: the stored dimensions
    chunk_shape: tuple = ()             # chunked: chunk dims without the element-size dim
    element_size: int = 0               # chunked: the trailing dimension
    flags: int = 0                      # chunked v4/v5
    index_type: int = BTREE1            # chunked
    index_info: dict = field(default_factory=dict)
    virtual_index: int = 0              # virtual: object index in the global heap collection
    # structured chunk storage (class 4): RFC Table 13 "Structured Chunk Type" (bit 0 sparse)
    # and Table 15 "Structured Chunk Composition"
    struct_type: int = 0
    offset_size: int = 0
    nsections: int = 0
    metadata_sections: tuple = ()
    property_version: int = 0
    # absolute file offset of the decoded message body, named by errors about the layout
    offset: int | None = field(default=None, compare=False)

    @property
    def sparse(self):
        return self.layout_class == STRUCTURED and bool(self.struct_type & STRUCT_SPARSE)

    @property
    def index_name(self):
        return INDEX_NAMES.get(self.index_type, f"index type {self.index_type}")

    @property
    def wide_chunk_sizes(self):
        """HDF5 2.0's version 5 stores filtered chunk sizes in 8 bytes (spec addendum)."""
        return self.version >= 5


def decode(cur):
    return replace(_decode(cur), offset=cur.base)


def _decode(cur):
    version = cur.version((1, 2, 3, 4, 5))
    if version <= 2:
        return _decode_v1(cur, version)
    cls = cur.u8()
    if cls == COMPACT:
        size = cur.u16()
        at = cur.offset
        return Layout(version, cls, compact_data=bytes(cur.bytes(size)), compact_offset=at)
    if cls == CONTIGUOUS:
        return Layout(version, cls, address=cur.address(), size=cur.length())
    if cls == CHUNKED:
        if version == 3:
            ndims = cur.u8()
            addr = cur.address()
            dims = tuple(cur.u32() for _ in range(ndims))
            return _chunked(cur, version, addr, dims, 0, BTREE1, {})
        return _decode_chunked_v4(cur, version)
    if cls == VIRTUAL and version >= 4:
        return Layout(version, cls, address=cur.address(), virtual_index=cur.u32())
    if cls == STRUCTURED and version >= 5:
        return _decode_structured(cur, version)
    raise cur.error(f"unknown layout class {cls} for layout message version {version}")


def _decode_v1(cur, version):
    ndims = cur.u8()
    cls = cur.u8()
    cur.skip(5)
    if cls not in (COMPACT, CONTIGUOUS, CHUNKED):
        raise cur.error(f"unknown layout class {cls}")
    addr = cur.address() if cls != COMPACT else None
    dims = tuple(cur.u32() for _ in range(ndims))
    if cls == CHUNKED:
        # the spec lists a separate element size here; libhdf5 writes none (the last
        # dimension is the element size), so it is read only when present
        if cur.remaining >= 4:
            cur.skip(4)
        return _chunked(cur, version, addr, dims, 0, BTREE1, {})
    if cls == COMPACT:
        size = cur.u32()
        at = cur.offset
        return Layout(version, cls, compact_data=bytes(cur.bytes(size)), dims=dims,
                      compact_offset=at)
    size = 1
    for d in dims:
        size *= d
    return Layout(version, cls, address=addr, dims=dims, size=size)


def _decode_chunked_v4(cur, version):
    flags = cur.u8()
    ndims = cur.u8()
    width = cur.u8()
    if not 1 <= width <= 8:
        raise cur.error(f"dimension size encoded length {width} is not 1-8")
    dims = tuple(cur.uint(width) for _ in range(ndims))
    index_type = cur.u8()
    info = {}
    if index_type == SINGLE:
        if flags & SINGLE_INDEX_WITH_FILTER:
            info["filtered_size"] = cur.length()
            info["filter_mask"] = cur.u32()
    elif index_type == IMPLICIT:
        pass
    else:
        _array_index_info(cur, index_type, info)
    return _chunked(cur, version, cur.address(), dims, flags, index_type, info)


def _decode_structured(cur, version):
    """Structured Chunk Storage Property Description (RFC Table 13, field order of RFC v25 and
    the prototype: the composition follows the dimensions)."""
    pversion = cur.u8()
    if pversion not in (0, 1):
        cur.pos -= 1
        raise cur.error(f"unsupported structured chunk storage property version {pversion}")
    stype = cur.u16()
    flags = cur.u8()
    if flags & ~(DONT_FILTER_PARTIAL_EDGE_CHUNKS | SINGLE_INDEX_WITH_FILTER):
        raise cur.error(f"unknown structured chunk layout flags {flags:#x}")
    ndims = cur.u8()
    width = cur.u8()
    if not 1 <= width <= 8:
        raise cur.error(f"dimension size encoded length {width} is not 1-8")
    dims = tuple(cur.uint(width) for _ in range(ndims))
    if len(dims) < 2 or any(d == 0 for d in dims):
        raise cur.error(f"bad structured chunk dimensions {dims}")
    offset_size = cur.u8()
    if offset_size != STRUCT_OFFSET_SIZE:
        raise cur.error(f"structured chunk offset size {offset_size} (only 8 is defined)")
    nsects = cur.u8()
    nmd = cur.u8()
    if not 1 <= nsects <= 8 or nmd > nsects:
        raise cur.error(f"bad structured chunk composition: {nsects} sections, {nmd} with "
                        "metadata")
    md = tuple(cur.u8() for _ in range(nmd))
    if any(m >= nsects for m in md) or list(md) != sorted(set(md)):
        raise cur.error(f"bad metadata section numbers {md}")
    index_type = cur.u8()
    info = {}
    if index_type in (BTREE1, IMPLICIT):
        cur.pos -= 1
        raise cur.error(f"{INDEX_NAMES[index_type]} chunk index is not allowed for structured "
                        "chunks (RFC section 4)")
    if index_type == SINGLE:
        size = 1
        for d in dims:
            size *= d
        width = struct_chunk_size_len(size, offset_size, nsects)
        info["chunk_size"] = cur.uint(width)
        info["offsets"] = tuple(cur.u64() for _ in range(nsects - 1))
        if flags & SINGLE_INDEX_WITH_FILTER:
            info["unfiltered_sizes"] = tuple(cur.u64() for _ in range(nsects))
            info["filter_masks"] = tuple(cur.u32() for _ in range(nsects))
    else:
        _array_index_info(cur, index_type, info)
    return Layout(version, STRUCTURED, address=cur.address(), chunk_shape=dims[:-1],
                  element_size=dims[-1], flags=flags, index_type=index_type, index_info=info,
                  struct_type=stype, offset_size=offset_size, nsections=nsects,
                  metadata_sections=md, property_version=pversion)


def _array_index_info(cur, index_type, info):
    """Indexing information of the fixed array, extensible array and v2 B-tree indexes (the
    same fields for chunked and structured-chunk layouts; spec IV.A.2.i, Appendix F note 1)."""
    if index_type == FIXED_ARRAY:
        info["page_bits"] = cur.u8()
    elif index_type == EXTENSIBLE_ARRAY:
        for key in _EA_FIELDS:
            info[key] = cur.u8()
    elif index_type == BTREE2:
        info["node_size"] = cur.u32()
        info["split_percent"] = cur.u8()
        info["merge_percent"] = cur.u8()
    else:
        raise cur.error(f"unknown chunk indexing type {index_type}")


ARRAY_INDEXES = (FIXED_ARRAY, EXTENSIBLE_ARRAY, BTREE2)
_EA_FIELDS = ("max_bits", "index_elements", "min_pointers", "min_elements", "page_bits")


def _encode_array_index_info(index_type, info):
    """The bytes ``_array_index_info`` decodes."""
    if index_type == FIXED_ARRAY:
        return bytes((info["page_bits"],))
    if index_type == EXTENSIBLE_ARRAY:
        return bytes(info[k] for k in _EA_FIELDS)
    return struct.pack("<IBB", info["node_size"], info["split_percent"], info["merge_percent"])


def _chunked(cur, version, addr, dims, flags, index_type, info):
    if len(dims) < 2:
        raise cur.error("chunked layout needs at least one dimension plus the element size")
    if any(d == 0 for d in dims):
        raise cur.error(f"chunk dimension of 0 in {dims}")
    return Layout(version, CHUNKED, address=addr, chunk_shape=dims[:-1], element_size=dims[-1],
                  flags=flags, index_type=index_type, index_info=info)


DECODERS = {0x08: decode}


def _dim_width(dims):
    """Bytes the library uses for v4 chunk dimensions: enough for the largest one."""
    biggest = max(dims)
    return max(1, (biggest.bit_length() + 7) // 8)


def encode(layout, ctx):
    """Encode a Data Layout message, versions 3 and 4 (spec IV.A.2.i).

    Chunked: ``chunk_shape`` plus ``element_size`` form the stored dimensions; version 3
    always means a v1 B-tree index, version 4 stores ``index_type`` and its ``index_info``."""
    version, cls = layout.version, layout.layout_class
    if cls == STRUCTURED:
        return _encode_structured(layout, ctx)
    if version not in (3, 4):
        raise ValueError(f"purehep writes layout message versions 3 and 4, not {version}")
    out = bytearray((version, cls))
    if cls == COMPACT:
        data = bytes(layout.compact_data or b"")
        if len(data) > 0xFFFF:
            raise ValueError("compact data exceeds 64 KiB")
        out += struct.pack("<H", len(data)) + data
    elif cls == CONTIGUOUS:
        out += ctx.pack_address(layout.address) + ctx.pack_length(layout.size)
    elif cls == CHUNKED:
        dims = tuple(layout.chunk_shape) + (layout.element_size,)
        if version == 3:
            out += bytes((len(dims),)) + ctx.pack_address(layout.address)
            out += struct.pack(f"<{len(dims)}I", *dims)
        else:
            width = _dim_width(dims)
            out += bytes((layout.flags, len(dims), width))
            for d in dims:
                out += int(d).to_bytes(width, "little")
            out += bytes((layout.index_type,))
            info = layout.index_info
            if layout.index_type == SINGLE:
                if layout.flags & SINGLE_INDEX_WITH_FILTER:
                    out += ctx.pack_length(info["filtered_size"]) + struct.pack("<I", info["filter_mask"])
            elif layout.index_type in ARRAY_INDEXES:
                out += _encode_array_index_info(layout.index_type, info)
            elif layout.index_type != IMPLICIT:
                raise ValueError(f"unknown chunk index type {layout.index_type}")
            out += ctx.pack_address(layout.address)
    elif cls == VIRTUAL and version == 4:
        out += ctx.pack_address(layout.address) + struct.pack("<I", layout.virtual_index)
    else:
        raise ValueError(f"purehep does not write layout class {cls} in version {version}")
    return bytes(out)


def _encode_structured(layout, ctx):
    """Version 5, class 4: the Structured Chunk Storage Property Description (RFC Tables
    13-16; field widths as the prototype writes them: u16 type, u8 offset size)."""
    if layout.index_type in (BTREE1, IMPLICIT):
        raise ValueError("structured chunks cannot use a v1 B-tree or implicit index")
    dims = tuple(layout.chunk_shape) + (layout.element_size,)
    width = _dim_width(dims)
    out = bytearray((5, STRUCTURED, layout.property_version))
    out += struct.pack("<HBBB", layout.struct_type, layout.flags, len(dims), width)
    for d in dims:
        out += int(d).to_bytes(width, "little")
    md = tuple(layout.metadata_sections)
    out += bytes((layout.offset_size or STRUCT_OFFSET_SIZE, layout.nsections, len(md))) + bytes(md)
    out += bytes((layout.index_type,))
    info = layout.index_info
    if layout.index_type == SINGLE:
        size = 1
        for d in dims:
            size *= d
        w = struct_chunk_size_len(size, layout.offset_size or STRUCT_OFFSET_SIZE,
                                  layout.nsections)
        out += int(info.get("chunk_size", 0)).to_bytes(w, "little")
        offs = tuple(info.get("offsets", (0,) * (layout.nsections - 1)))
        out += struct.pack(f"<{len(offs)}Q", *offs)
        if layout.flags & SINGLE_INDEX_WITH_FILTER:
            n = layout.nsections
            out += struct.pack(f"<{n}Q", *info.get("unfiltered_sizes", (0,) * n))
            out += struct.pack(f"<{n}I", *info.get("filter_masks", (0,) * n))
    elif layout.index_type in ARRAY_INDEXES:
        out += _encode_array_index_info(layout.index_type, info)
    else:
        raise ValueError(f"unknown chunk index type {layout.index_type}")
    out += ctx.pack_address(layout.address)
    return bytes(out)
