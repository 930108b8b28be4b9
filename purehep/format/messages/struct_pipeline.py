"""Filter pipelines per structured-chunk section: Filter Pipeline message (type 0x000B)
version 3 (sparse RFC Tables 17-18, "Filter Pipeline Message - Version 3").

Layout: u8 version (3), u8 number of filtered sections, then per filtered section u8 section
number, u8 number of filters, u16 byte size of its filter description list, and the list in
the version 2 filter description format (id, [name length, for ids >= 256], flags, number of
client data values, [name], client data). Decided from the RFC of 2025-10-09 (revision 18:
"Used Version 3 for Filter Pipeline Message instead of the new type of message"); see
spec-fixtures/sparse/README.md.
"""
from dataclasses import dataclass
import struct

from .filter_pipeline import FilterInfo, MAX_FILTERS

VERSION = 3
SECTION_SELECTION, SECTION_FIXED, SECTION_VL = 0, 1, 2    # H5_section_type_t


@dataclass(frozen=True)
class StructuredFilterPipeline:
    version: int
    sections: tuple            # ((section number, (FilterInfo, ...)), ...) ascending

    def section(self, n):
        """The filters of section ``n`` (an empty tuple when it is not filtered)."""
        for s, filters in self.sections:
            if s == n:
                return filters
        return ()

    def __len__(self):
        return sum(len(f) for _, f in self.sections)

    def __iter__(self):
        seen = []
        for _, filters in self.sections:
            for f in filters:
                if f not in seen:
                    seen.append(f)
        return iter(seen)


def decode(cur):
    version = cur.version((VERSION,))
    nsect = cur.u8()
    sections, last = [], -1
    for _ in range(nsect):
        number = cur.u8()
        nfilters = cur.u8()
        size = cur.u16()
        if number <= last:
            raise cur.error(f"filtered section {number} out of order")
        last = number
        if nfilters > MAX_FILTERS:
            raise cur.error(f"{nfilters} filters exceed the maximum of {MAX_FILTERS}")
        end = cur.pos + size
        if end > cur.end:
            raise cur.error(f"filter description list of {size} bytes runs past the message")
        filters = []
        for _ in range(nfilters):
            fid = cur.u16()
            name_len = cur.u16() if fid >= 256 else 0
            flags = cur.u16()
            nvalues = cur.u16()
            name = b""
            if name_len:
                name = bytes(cur.bytes(name_len)).split(b"\0", 1)[0]
            values = tuple(cur.u32() for _ in range(nvalues))
            filters.append(FilterInfo(fid, flags, name.decode("ascii", "replace"), values))
        if cur.pos != end:
            raise cur.error(f"filter description list is {cur.pos - end + size} bytes, the "
                            f"message says {size}")
        sections.append((number, tuple(filters)))
    return StructuredFilterPipeline(version, tuple(sections))


def encode(pipeline):
    """Encode a version 3 Filter Pipeline message (sections with no filters are left out)."""
    out = bytearray()
    secs = [(n, tuple(f)) for n, f in sorted(pipeline.sections) if f]
    out += bytes((VERSION, len(secs)))
    for number, filters in secs:
        body = bytearray()
        for f in filters:
            name = f.name.encode("ascii") + b"\0" if (f.name and f.id >= 256) else b""
            values = tuple(int(v) & 0xFFFFFFFF for v in f.client_data)
            if f.id >= 256:
                body += struct.pack("<HHHH", f.id, len(name), f.flags, len(values)) + name
            else:
                body += struct.pack("<HHH", f.id, f.flags, len(values))
            body += struct.pack(f"<{len(values)}I", *values)
        out += struct.pack("<BBH", number, len(filters), len(body)) + body
    return bytes(out)
