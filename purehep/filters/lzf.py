"""Filter 32000, LZF (h5py's filter): raw LZF data, no header; client_data[2] = chunk bytes.

h5py registers LZF as optional: a chunk that does not shrink is stored unfiltered with its
mask bit set, so the encoder returns None then.
"""
import numpy as np

from ..errors import FormatError

ID, NAME = 32000, "lzf"
STORED_NAME = "lzf"


def set_local(opts, dtype, chunks):
    """h5py's client data: filter version 4, LZF version 0x0105, the chunk's bytes (any
    options given are ignored, as the old client data of a copied dataset)."""
    return (4, 261, dtype.itemsize * int(np.prod(chunks)))


def decode(data, client_data, element_size, chunk_nbytes):
    from ..kernels.lzf import lzf_decompress
    src = np.frombuffer(data, np.uint8)
    size = int(client_data[2]) if len(client_data) > 2 and client_data[2] else int(chunk_nbytes)
    out = np.empty(max(size, 1), np.uint8)
    n = lzf_decompress(src, out)
    if n < 0:
        raise FormatError("corrupt LZF data")
    return out[:n]


def encode(data, client_data, element_size, chunk_nbytes):
    from ..kernels.lzf import lzf_compress
    src = np.frombuffer(data, np.uint8)
    out = np.empty(src.size + 16, np.uint8)
    n = lzf_compress(src, out)
    if n <= 0 or n >= src.size:
        return None
    return out[:n]
