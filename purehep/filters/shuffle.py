"""Filter 2, shuffle: byte transpose of the elements; trailing ``nbytes % size`` bytes as is.

client_data[0] is the element size the library stored; the dataset element size is the
fallback when reading (libhdf5 stores none for a variable-length type, and writes its chunks
unshuffled: so does the encoder).
"""
import numpy as np

ID, NAME = 2, "shuffle"


def _size(client_data, element_size):
    return int(client_data[0]) if client_data else int(element_size)


def decode(data, client_data, element_size, chunk_nbytes):
    size = _size(client_data, element_size)
    src = np.frombuffer(data, np.uint8)
    if size <= 1 or src.size < size:
        return data
    from ..kernels.shuffle import unshuffle
    out = np.empty(src.size, np.uint8)
    unshuffle(src, out, size)
    return out


def decode_into(data, client_data, element_size, out):
    """``decode`` writing into the uint8 array ``out`` (the whole decoded chunk)."""
    size = _size(client_data, element_size)
    src = np.frombuffer(data, np.uint8)
    if src.size != out.size or size <= 1 or src.size < size:
        return decode(data, client_data, element_size, out.size)
    from ..kernels.shuffle import unshuffle
    unshuffle(src, out, size)
    return out


def encode(data, client_data, element_size, chunk_nbytes):
    """The shuffled chunk; None (the optional filter skipped, its mask bit set) without a
    stored element size, as libhdf5's H5Z__filter_shuffle fails then (a variable-length
    dataset's pipeline, which gets no set-local callback)."""
    if not client_data or not client_data[0]:
        return None
    size = _size(client_data, element_size)
    src = np.frombuffer(data, np.uint8)
    if size <= 1 or src.size < size:
        return bytes(src)
    from ..kernels.shuffle import shuffle
    out = np.empty(src.size, np.uint8)
    shuffle(src, out, size)
    return out
