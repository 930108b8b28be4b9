"""Filter 32000, LZF (h5py's filter): raw LZF data, no header; client_data[2] = chunk bytes.

h5py registers LZF as optional: a chunk that does not shrink is stored unfiltered with its
mask bit set, so the encoder returns None then.

The decoded size is not stored with the data. client_data[2] (the dense chunk size h5py's
``set_local`` puts there) and ``chunk_nbytes`` (the caller's size: the dense chunk, or the
unfiltered size a structured chunk's index stores for each section, which may exceed the dense
chunk size) are both hints: the buffer takes the larger, and data that decodes to more (as
h5py's filter does by growing its buffer on E2BIG) is measured by a walk of its control bytes
and decoded again into a buffer of that exact size, so nothing is allocated beyond what the
data holds. Decoding runs the compiled loop kernel or, until that repays loading numba (and
without numba), its vectorised numpy form.
"""
import numpy as np

from ..errors import FormatError

ID, NAME = 32000, "lzf"
STORED_NAME = "lzf"


def set_local(opts, dtype, chunks):
    """h5py's client data: filter version 4, LZF version 0x0105, the chunk's bytes (any
    options given are ignored, as the old client data of a copied dataset)."""
    return (4, 261, dtype.itemsize * int(np.prod(chunks)))


_PY_SECONDS_PER_BYTE = 1e-6     # the plain-Python compressor against the compiled one


def decode(data, client_data, element_size, chunk_nbytes):
    from ..kernels.lzf import decoded_size, decompress
    src = np.frombuffer(data, np.uint8)
    hint = int(client_data[2]) if len(client_data) > 2 else 0
    out = np.empty(max(hint, int(chunk_nbytes or 0), 1), np.uint8)
    n = decompress(src, out)
    if n == -2:
        size = decoded_size(src)
        if size >= 0:
            out = np.empty(max(size, 1), np.uint8)
            n = decompress(src, out)
    if n < 0:
        raise FormatError("corrupt LZF data")
    return out[:n]


def encode(data, client_data, element_size, chunk_nbytes):
    from ..kernels.lzf import lzf_compress
    src = np.frombuffer(data, np.uint8)
    out = np.empty(src.size + 16, np.uint8)
    n = lzf_compress.run(src.size * 4 * _PY_SECONDS_PER_BYTE, src, out)
    if n <= 0 or n >= src.size:
        return None
    return out[:n]
