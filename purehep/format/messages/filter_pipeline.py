"""Filter Pipeline message (spec IV.A.2.l), versions 1 and 2; version 3 (per-section
pipelines of structured chunks) is decoded by struct_pipeline."""
from dataclasses import dataclass

OPTIONAL = 0x0001
MAX_FILTERS = 32


@dataclass(frozen=True)
class FilterInfo:
    id: int
    flags: int
    name: str
    client_data: tuple

    @property
    def optional(self):
        return bool(self.flags & OPTIONAL)


@dataclass(frozen=True)
class FilterPipeline:
    version: int
    filters: tuple

    def __len__(self):
        return len(self.filters)

    def __iter__(self):
        return iter(self.filters)


def decode(cur):
    if cur.remaining and cur.buf[cur.pos] == 3:
        # version 3: one pipeline per structured-chunk section (sparse RFC Table 17)
        from .struct_pipeline import decode as decode_v3
        return decode_v3(cur)
    version = cur.version((1, 2))
    nfilters = cur.u8()
    if nfilters > MAX_FILTERS:
        raise cur.error(f"{nfilters} filters exceed the maximum of {MAX_FILTERS}")
    if version == 1:
        cur.skip(6)
    filters = []
    for _ in range(nfilters):
        fid = cur.u16()
        name_len = cur.u16() if (version == 1 or fid >= 256) else 0
        flags = cur.u16()
        nvalues = cur.u16()
        name = b""
        if name_len:
            raw = bytes(cur.bytes(name_len + ((-name_len) % 8 if version == 1 else 0)))
            name = raw.split(b"\0", 1)[0]
        values = tuple(cur.u32() for _ in range(nvalues))
        if version == 1 and nvalues % 2:
            cur.skip(4)
        filters.append(FilterInfo(fid, flags, name.decode("ascii", "replace"), values))
    return FilterPipeline(version, tuple(filters))


DECODERS = {0x0B: decode}


def encode(pipeline):
    """Encode a Filter Pipeline message, version 1 (names padded to 8, client data padded to
    an even count) or version 2 (names only for ids >= 256, no padding), spec IV.A.2.l."""
    import struct
    version = pipeline.version
    out = bytearray((version, len(pipeline.filters)))
    if version == 1:
        out += bytes(6)
    for f in pipeline.filters:
        name = f.name.encode("ascii") + b"\0" if f.name else b""
        values = tuple(int(v) & 0xFFFFFFFF for v in f.client_data)
        if version == 1:
            padded = name + bytes((-len(name)) % 8)
            out += struct.pack("<HHHH", f.id, len(padded), f.flags, len(values)) + padded
            out += struct.pack(f"<{len(values)}I", *values)
            if len(values) % 2:
                out += bytes(4)
        else:
            # id, [name length], flags, number of values, [name], values (spec IV.A.2.l)
            if f.id >= 256:
                out += struct.pack("<HHHH", f.id, len(name), f.flags, len(values)) + name
            else:
                out += struct.pack("<HHH", f.id, f.flags, len(values))
            out += struct.pack(f"<{len(values)}I", *values)
    return bytes(out)
