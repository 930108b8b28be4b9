"""Dataspace message (spec IV.A.2.b), versions 1 and 2: scalar, simple and null dataspaces."""
from dataclasses import dataclass

SCALAR, SIMPLE, NULL = 0, 1, 2
MAX_RANK = 32
MAX_EXTENT = (1 << 63) - 1   # beyond it no element could be addressed (libhdf5's hssize_t)
UNLIMITED = None  # a maxshape entry of None, as h5py reports unlimited dimensions


@dataclass(frozen=True)
class Dataspace:
    kind: int                  # SCALAR, SIMPLE or NULL
    shape: tuple               # () for scalar; None for null (as h5py's Empty)
    maxshape: tuple            # None entries for unlimited dimensions
    version: int = 2

    @property
    def rank(self):
        return len(self.shape) if self.shape is not None else 0

    @property
    def size(self):
        if self.shape is None:
            return 0
        n = 1
        for d in self.shape:
            n *= d
        return n


def decode(cur):
    version = cur.version((1, 2))
    rank = cur.u8()
    if rank > MAX_RANK:
        raise cur.error(f"rank {rank} exceeds the maximum of {MAX_RANK}")
    flags = cur.u8()
    if version == 1:
        cur.skip(5)
        kind = SIMPLE if rank else SCALAR
    else:
        kind = cur.u8()
        if kind not in (SCALAR, SIMPLE, NULL):
            raise cur.error(f"unknown dataspace type {kind}")
    nbytes = cur.ctx.sizeof_lengths
    shape = tuple(cur.uint(nbytes) for _ in range(rank))
    unlimited = (1 << (8 * nbytes)) - 1
    if flags & 0x01:
        maxshape = tuple(None if m == unlimited else m for m in (cur.uint(nbytes) for _ in range(rank)))
    else:
        maxshape = shape
    if any(d > MAX_EXTENT for d in shape + tuple(m for m in maxshape if m is not None)):
        raise cur.error(f"dimension sizes {shape} / {maxshape} exceed 2**63 - 1 elements")
    for d, (n, m) in enumerate(zip(shape, maxshape)):
        if m is not None and n > m:     # as libhdf5 refuses it (H5O__sdspace_decode)
            raise cur.error(f"dimension {d} of size {n} exceeds its maximum size {m}")
    if kind == NULL:
        return Dataspace(NULL, None, None, version)
    if kind == SCALAR:
        return Dataspace(SCALAR, (), (), version)
    return Dataspace(SIMPLE, shape, maxshape, version)


DECODERS = {0x01: decode}


def encode(space, ctx):
    """Encode a Dataspace (spec IV.A.2.b). Version 1 cannot express a null dataspace, so a
    null dataspace is always written as version 2 (as libhdf5 does). Maximum dimensions are
    always stored for simple dataspaces; None entries encode as unlimited."""
    version = 2 if space.kind == NULL else space.version
    shape = () if space.kind != SIMPLE else tuple(space.shape)
    rank = len(shape)
    flags = 0x01 if rank else 0
    nbytes = ctx.sizeof_lengths
    unlimited = (1 << (8 * nbytes)) - 1
    if version == 1:
        out = bytearray((1, rank, flags, 0, 0, 0, 0, 0))
    else:
        out = bytearray((2, rank, flags, space.kind))
    for d in shape:
        out += int(d).to_bytes(nbytes, "little")
    if rank:
        maxshape = space.maxshape if space.maxshape is not None else shape
        for m in maxshape:
            out += (unlimited if m is None else int(m)).to_bytes(nbytes, "little")
    return bytes(out)
