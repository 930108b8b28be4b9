"""Filter 3, fletcher32: the chunk followed by its 4-byte Fletcher-32 checksum (little-endian).

A mismatch raises ChecksumError (the pipeline adds the chunk's location). Like the library,
the value with the bytes of each 16-bit half swapped (files of libhdf5 < 1.6.3) is accepted.
"""
import numpy as np

from ..errors import ChecksumError, FormatError

ID, NAME = 3, "fletcher32"


def _sum(buf):
    from ..kernels.checksum import fletcher32
    return int(fletcher32(buf))


def decode(data, client_data, element_size, chunk_nbytes):
    buf = np.frombuffer(data, np.uint8)
    if buf.size < 4:
        raise FormatError(f"a fletcher32 chunk of {buf.size} bytes has no room for its checksum")
    body = buf[:-4]
    stored = int(buf[-4]) | (int(buf[-3]) << 8) | (int(buf[-2]) << 16) | (int(buf[-1]) << 24)
    computed = _sum(body)
    if stored != computed:
        swapped = ((computed & 0x00FF00FF) << 8) | ((computed >> 8) & 0x00FF00FF)
        if stored != swapped:
            raise ChecksumError(f"fletcher32 checksum mismatch (stored {stored:#010x}, "
                                f"computed {computed:#010x})")
    return body


def encode(data, client_data, element_size, chunk_nbytes):
    body = np.frombuffer(data, np.uint8)
    return body.tobytes() + _sum(body).to_bytes(4, "little")
