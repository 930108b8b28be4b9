"""Filter 307, bzip2 (PyTables' filter, as hdf5plugin builds it): one bzip2 stream per chunk.

client_data[0] = block size in units of 100 kB (1-9, default 9). Codec: Python's ``bz2``
(libbzip2, as the plugin; same default work factor, so the same bytes).
"""
import bz2

from ..errors import FormatError
from .libs import check_decoded_size

ID, NAME = 307, "bzip2"
STORED_NAME = "bzip2"


def set_local(opts, dtype, chunks):
    """Stored client data for hdf5plugin.BZip2(blocksize) options ``(blocksize,)``; values
    after the block size are kept as given (the plugin has no set-local callback: PyTables
    stores its object version and class there, the codec reads only the first)."""
    size = int(opts[0]) if opts else 9
    if not 1 <= size <= 9:
        raise ValueError("bzip2 blocksize must be in the range [1, 9]")
    return (size,) + tuple(int(v) for v in opts[1:])


def decode(data, client_data, element_size, chunk_nbytes):
    d = bz2.BZ2Decompressor()
    limit = 2 * max(int(chunk_nbytes), 1) + (1 << 20)
    out = d.decompress(bytes(data), max_length=limit)
    if not d.eof:
        if d.needs_input:
            raise FormatError("bzip2 stream is truncated")
        check_decoded_size(limit + 1, chunk_nbytes, "bzip2 stream")
    return out


def encode(data, client_data, element_size, chunk_nbytes):
    level = int(client_data[0]) if client_data else 9
    if not 1 <= level <= 9:
        raise FormatError(f"bzip2 block size {level} is not in 1..9")
    return bz2.compress(memoryview(data).cast("B"), level)
