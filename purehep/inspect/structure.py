"""The records of the byte map: one ``Structure`` per spec structure (or block of raw data),
one ``Finding`` per broken rule."""
from dataclasses import dataclass, field

# spec sections of the structures the walker emits (hdf5-file-format-spec.md headings)
SECTIONS = {
    "user block": "II.A",
    "superblock": "II.A",
    "driver info block": "II.B",
    "superblock extension": "II.C",
    "v1 B-tree node": "III.A.1",
    "v2 B-tree header": "III.A.2",
    "v2 B-tree internal node": "III.A.2",
    "v2 B-tree leaf node": "III.A.2",
    "symbol table node": "III.B",
    "symbol table entry": "III.C",
    "local heap": "III.D",
    "local heap data segment": "III.D",
    "local heap free block": "III.D",
    "global heap collection": "III.E",
    "global heap free space": "III.E",
    "fractal heap header": "III.G",
    "fractal heap indirect block": "III.G",
    "fractal heap direct block": "III.G",
    "fractal heap huge object": "III.G",
    "free-space manager header": "III.H",
    "free-space section list": "III.H",
    "free-space section": "III.H",
    "shared object header message table": "III.I",
    "shared message record list": "III.I",
    "object header": "IV.A.1",
    "object header continuation block": "IV.A.2.q",
    "object header gap": "IV.A.1.b",
    "contiguous raw data": "IV.B",
    "raw data chunk": "IV.B",
    "external data files": "IV.A.2.h",
    "fixed array header": "VII.C",
    "fixed array data block": "VII.C",
    "fixed array data block page": "VII.C",
    "extensible array header": "VII.D",
    "extensible array index block": "VII.D",
    "extensible array secondary block": "VII.D",
    "extensible array data block": "VII.D",
    "extensible array data block page": "VII.D",
    "bytes past the end-of-file address": "II.A",
    "metadata cache image": "IV.A.2",
}

MESSAGE_SECTIONS = {
    0x00: "IV.A.2.a", 0x01: "IV.A.2.b", 0x02: "IV.A.2.c", 0x03: "IV.A.2.d", 0x04: "IV.A.2.e",
    0x05: "IV.A.2.f", 0x06: "IV.A.2.g", 0x07: "IV.A.2.h", 0x08: "IV.A.2.i", 0x09: "IV.A.2.j",
    0x0A: "IV.A.2.k", 0x0B: "IV.A.2.l", 0x0C: "IV.A.2.m", 0x0D: "IV.A.2.n", 0x0E: "IV.A.2.o",
    0x0F: "IV.A.2.p", 0x10: "IV.A.2.q", 0x11: "IV.A.2.r", 0x12: "IV.A.2.s", 0x13: "IV.A.2.t",
    0x14: "IV.A.2.u", 0x15: "IV.A.2.v", 0x16: "IV.A.2.w", 0x17: "IV.A.2.x",
}

# kinds of bytes, in the priority the account gives them when extents overlap
METADATA, RAW, FREE, USERBLOCK = "metadata", "raw", "free", "userblock"


def section_of(name):
    """The spec section of a structure name ("" when unknown)."""
    if name in SECTIONS:
        return SECTIONS[name]
    for key, sec in SECTIONS.items():
        if name.startswith(key):
            return sec
    return ""


@dataclass
class Structure:
    """One structure: ``offset`` is the absolute file offset, ``size`` its extent in bytes.

    ``kind`` says how the account counts its bytes (metadata, raw data, free space, user
    block); ``unused`` is the part of the extent that holds nothing (NIL messages, heap free
    lists, unused node capacity), still counted as the structure's. ``checksum`` is
    (start, end, stored_at, zeroed): lookup3 over [start, end) (with the 4 bytes at
    ``stored_at`` zeroed when ``zeroed``) must equal the value stored at ``stored_at``.
    """
    name: str
    offset: int
    size: int
    version: int | None = None
    fields: dict = field(default_factory=dict)
    children: list = field(default_factory=list)
    section: str = ""
    kind: str = METADATA
    owner: str = ""
    unused: int = 0
    checksum: tuple | None = None

    def __post_init__(self):
        if not self.section:
            self.section = section_of(self.name)

    @property
    def end(self):
        return self.offset + self.size

    def walk(self, depth=0):
        """Yield (depth, structure) for this structure and its children, depth first."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)

    def to_json(self):
        out = {"name": self.name, "offset": self.offset, "size": self.size}
        if self.version is not None:
            out["version"] = self.version
        out["section"] = self.section
        out["kind"] = self.kind
        if self.owner:
            out["owner"] = self.owner
        if self.unused:
            out["unused"] = self.unused
        if self.fields:
            out["fields"] = {k: _jsonable(v) for k, v in self.fields.items()}
        if self.children:
            out["children"] = [c.to_json() for c in self.children]
        return out


@dataclass
class Finding:
    """A broken rule: which structure, where, which rule and the spec section that states it."""
    structure: str
    offset: int | None
    rule: str
    section: str
    message: str

    def __str__(self):
        where = f"at offset {self.offset}" if self.offset is not None else "(no offset)"
        sec = f" [spec {self.section}]" if self.section else ""
        return f"{self.structure} {where}: {self.rule}: {self.message}{sec}"

    def to_json(self):
        return {"structure": self.structure, "offset": self.offset, "rule": self.rule,
                "section": self.section, "message": self.message}


def _jsonable(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        try:
            return b.decode("ascii") if all(32 <= c < 127 for c in b) else b.hex()
        except UnicodeDecodeError:
            return b.hex()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "item"):
        return v.item()
    if v is None or isinstance(v, (int, float, str, bool)):
        return v
    return str(v)
