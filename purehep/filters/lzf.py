"""Filter 32000, LZF (h5py's filter): raw LZF data, no header; client_data[2] = chunk bytes.

h5py registers LZF as optional: a chunk that does not shrink is stored unfiltered with its
mask bit set, so the encoder returns None then.
"""
import numpy as np

from ..errors import FormatError

ID, NAME = 32000, "lzf"
_PY_SECONDS_PER_BYTE = 1e-6     # the plain-Python loop against the compiled one


def decode(data, client_data, element_size, chunk_nbytes):
    from ..kernels.lzf import lzf_decompress
    src = np.frombuffer(data, np.uint8)
    size = int(client_data[2]) if len(client_data) > 2 and client_data[2] else int(chunk_nbytes)
    out = np.empty(max(size, 1), np.uint8)
    n = lzf_decompress.run(out.size * _PY_SECONDS_PER_BYTE, src, out)
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
