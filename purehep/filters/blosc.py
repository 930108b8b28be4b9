"""Filter 32001, Blosc (the Blosc project's hdf5-blosc plugin, c-blosc 1.x).

client_data: [0] the plugin's version (2), [1] the Blosc format version (2), [2] type size
(the base type's for arrays; 1 above 255), [3] chunk size in bytes, then the user's [4]
compression level (default 5), [5] shuffle (0 none, 1 byte, 2 bit; default 1) and [6]
compressor (0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib, 5 zstd; default blosclz).
A chunk is one Blosc 1 buffer (its own 16-byte header: format versions, flags, type size,
decoded size, block size, compressed size, all little-endian). The plugin is optional: a
chunk that does not fit in its own size is stored unfiltered.

Codec: ``imagecodecs`` (its c-blosc is 1.21.6, the release hdf5plugin 7.1 builds, called
through the thread-safe ``blosc_compress_ctx``); python-blosc wraps the same library but
through the global-state API and without snappy.
"""
import numpy as np

from ..errors import FormatError, UnsupportedFeatureError
from .libs import check_decoded_size, need

ID, NAME = 32001, "blosc"
STORED_NAME = "blosc"
COMPRESSORS = ("blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd")
MAX_TYPESIZE = 255


def require(client_data=None):
    return need("imagecodecs", ID, NAME)


def base_size(dtype):
    """The element size the Blosc plugins shuffle by: an array type's base type's."""
    return dtype.subdtype[0].itemsize if dtype.subdtype is not None else dtype.itemsize


def set_local(opts, dtype, chunks):
    """Stored client data for hdf5plugin.Blosc options ``(_, _, _, _, clevel, shuffle,
    compressor)``."""
    size = base_size(dtype)
    nbytes = dtype.itemsize * int(np.prod(chunks))
    user = tuple(int(v) for v in opts[4:7])
    if user and not 0 <= user[0] <= 9:
        raise ValueError("blosc clevel must be in the range [0, 9]")
    if len(user) > 1 and user[1] not in (0, 1, 2):
        raise ValueError(f"blosc shuffle {user[1]} is not 0, 1 or 2")
    if len(user) > 2 and not 0 <= user[2] < len(COMPRESSORS):
        raise ValueError(f"blosc compressor {user[2]} is unknown")
    return (2, 2, size if size <= MAX_TYPESIZE else 1, nbytes) + user


def decode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    buf = np.frombuffer(data, np.uint8)
    if buf.size < 16:
        raise FormatError(f"a blosc chunk of {buf.size} bytes is shorter than its header")
    nbytes = int.from_bytes(buf[4:8].tobytes(), "little")
    cbytes = int.from_bytes(buf[12:16].tobytes(), "little")
    check_decoded_size(nbytes, chunk_nbytes, "blosc chunk")
    if cbytes > buf.size:
        raise FormatError(f"blosc chunk claims {cbytes} bytes, has {buf.size}")
    return np.frombuffer(ic.blosc_decode(buf[:cbytes], out=nbytes), np.uint8)


def encode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    cd = tuple(int(v) for v in client_data)
    if len(cd) < 4:
        raise FormatError(f"blosc needs 4+ client data values, has {len(cd)}")
    clevel = cd[4] if len(cd) > 4 else 5
    shuffle = cd[5] if len(cd) > 5 else 1
    code = cd[6] if len(cd) > 6 else 0
    if not 0 <= code < len(COMPRESSORS):
        raise UnsupportedFeatureError(f"blosc compressor {code} is unknown")
    src = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    size = cd[2] or 1
    if src.size % size == 0:
        src = src.view(f"V{size}")      # imagecodecs takes the type size from the array's
    out = ic.blosc_encode(src, clevel, compressor=COMPRESSORS[code], shuffle=shuffle,
                          typesize=size, numthreads=1)
    return out if len(out) <= src.nbytes else None
