"""Data Layout message (spec IV.A.2.i), versions 1-4, and version 5 of HDF5 2.0 (class 2).

Chunk dimensions are stored with one extra trailing dimension, the element size (spec
Appendix F, note 3); ``chunk_shape`` drops it and ``element_size`` keeps it.
"""
from dataclasses import dataclass, field

COMPACT, CONTIGUOUS, CHUNKED, VIRTUAL, STRUCTURED = 0, 1, 2, 3, 4
# chunk indexing types of layout v4/v5 (v1-v3 chunked storage always uses a v1 B-tree: 0)
BTREE1, SINGLE, IMPLICIT, FIXED_ARRAY, EXTENSIBLE_ARRAY, BTREE2 = 0, 1, 2, 3, 4, 5
INDEX_NAMES = {BTREE1: "v1 B-tree", SINGLE: "single chunk", IMPLICIT: "implicit",
               FIXED_ARRAY: "fixed array", EXTENSIBLE_ARRAY: "extensible array", BTREE2: "v2 B-tree"}

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
    dims: tuple = ()                    # v1/v2 contiguous and compact: the stored dimensions
    chunk_shape: tuple = ()             # chunked: chunk dims without the element-size dim
    element_size: int = 0               # chunked: the trailing dimension
    flags: int = 0                      # chunked v4/v5
    index_type: int = BTREE1            # chunked
    index_info: dict = field(default_factory=dict)
    virtual_index: int = 0              # virtual: object index in the global heap collection

    @property
    def index_name(self):
        return INDEX_NAMES.get(self.index_type, f"index type {self.index_type}")

    @property
    def wide_chunk_sizes(self):
        """HDF5 2.0's version 5 stores filtered chunk sizes in 8 bytes (spec addendum)."""
        return self.version >= 5


def decode(cur):
    version = cur.version((1, 2, 3, 4, 5))
    if version <= 2:
        return _decode_v1(cur, version)
    cls = cur.u8()
    if cls == COMPACT:
        size = cur.u16()
        return Layout(version, cls, compact_data=bytes(cur.bytes(size)))
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
        from ...errors import UnsupportedFeatureError
        raise UnsupportedFeatureError("structured chunk storage (layout class 4) is not supported yet")
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
        return Layout(version, cls, compact_data=bytes(cur.bytes(size)), dims=dims)
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
    elif index_type == FIXED_ARRAY:
        info["page_bits"] = cur.u8()
    elif index_type == EXTENSIBLE_ARRAY:
        for key in ("max_bits", "index_elements", "min_pointers", "min_elements", "page_bits"):
            info[key] = cur.u8()
    elif index_type == BTREE2:
        info["node_size"] = cur.u32()
        info["split_percent"] = cur.u8()
        info["merge_percent"] = cur.u8()
    else:
        raise cur.error(f"unknown chunk indexing type {index_type}")
    return _chunked(cur, version, cur.address(), dims, flags, index_type, info)


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
    import struct
    version, cls = layout.version, layout.layout_class
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
            elif layout.index_type == FIXED_ARRAY:
                out += bytes((info["page_bits"],))
            elif layout.index_type == EXTENSIBLE_ARRAY:
                out += bytes(info[k] for k in ("max_bits", "index_elements", "min_pointers",
                                               "min_elements", "page_bits"))
            elif layout.index_type == BTREE2:
                out += struct.pack("<IBB", info["node_size"], info["split_percent"],
                                   info["merge_percent"])
            elif layout.index_type != IMPLICIT:
                raise ValueError(f"unknown chunk index type {layout.index_type}")
            out += ctx.pack_address(layout.address)
    else:
        raise ValueError(f"purehep does not write layout class {cls}")
    return bytes(out)
