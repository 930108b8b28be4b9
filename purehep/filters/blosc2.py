"""Filter 32026, Blosc2 (PyTables' hdf5-blosc2 plugin, as hdf5plugin builds it).

client_data: [0] the plugin's version (1), [1] block size in bytes (0: Blosc2 chooses),
[2] type size (an array type's base type's), [3] chunk size in bytes, [4] compression level
(default 5), [5] filter (0 none, 1 shuffle, 2 bitshuffle, 3 delta, 4 truncate precision;
default 1), [6] compressor (0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd), and for chunks of
2 to 8 dimensions [7] the rank and [8...] the chunk shape.
A chunk is a Blosc2 contiguous frame ("cframe") of a super-chunk holding one Blosc2 chunk;
with the chunk shape recorded it is a B2ND array (metalayer "b2nd") of the chunk's shape and
the opaque NumPy type ``|V<size>``, split in blocks whose shape the plugin derives from the
block size Blosc2 would pick (doubling block dimensions from the innermost one).

Codec: ``blosc2`` (python-blosc2, the Blosc project's binding of c-blosc2; super-chunks,
frames and B2ND arrays are only reachable there, imagecodecs encodes bare chunks).
"""
import numpy as np

from ..errors import FormatError
from .blosc import base_size
from .libs import check_decoded_size, need

ID, NAME = 32026, "blosc2"
STORED_NAME = "blosc2"
VERSION = 1
MAX_DIM = 8
DEFAULTS = (5, 1, 0)          # clevel, filter, compressor


def require(client_data=None):
    return need("blosc2", ID, NAME)


def set_local(opts, dtype, chunks):
    """Stored client data for hdf5plugin.Blosc2 options ``(_, _, _, _, clevel, filters,
    compressor)``."""
    user = tuple(int(v) for v in opts[4:7])
    if user and not 0 <= user[0] <= 9:
        raise ValueError("blosc2 clevel must be in the range [0, 9]")
    if len(user) > 1 and user[1] not in (0, 1, 2, 3, 4):
        raise ValueError(f"blosc2 filter {user[1]} is not 0-4")
    cd = (VERSION, int(opts[1]) if len(opts) > 1 else 0, base_size(dtype),
          dtype.itemsize * int(np.prod(chunks))) + user
    if 1 < len(chunks) <= MAX_DIM:
        cd = cd + DEFAULTS[len(user):] + (len(chunks),) + tuple(int(c) for c in chunks)
    return cd


def decode(data, client_data, element_size, chunk_nbytes):
    b2 = require()
    cd = tuple(int(v) for v in client_data)
    raw = bytes(data)
    try:
        schunk = b2.schunk_from_cframe(raw, copy=True)
    except Exception as e:  # noqa: BLE001 - the library's own error types vary
        raise FormatError(f"blosc2 frame is not readable: {e}") from None
    if "b2nd" in schunk.meta or "caterva" in schunk.meta:
        arr = b2.ndarray_from_cframe(raw, copy=True)
        if len(cd) > 7 and tuple(arr.shape) != cd[8:8 + cd[7]]:
            raise FormatError(f"blosc2 array shape {tuple(arr.shape)} is not the chunk's "
                              f"{cd[8:8 + cd[7]]}")
        check_decoded_size(int(np.prod(arr.shape)) * arr.dtype.itemsize, chunk_nbytes,
                           "blosc2 array")
        return np.ascontiguousarray(arr[()]).reshape(-1).view(np.uint8)
    if schunk.nchunks != 1:
        raise FormatError(f"blosc2 frame holds {schunk.nchunks} chunks, expected 1")
    check_decoded_size(schunk.nbytes, chunk_nbytes, "blosc2 frame")
    return np.frombuffer(schunk.decompress_chunk(0), np.uint8)


def _cparams(b2, cd, blocksize):
    clevel, filt, code = (tuple(cd[4:7]) + DEFAULTS[len(cd[4:7]):])[:3]
    filters = [b2.Filter.NOFILTER] * 5 + [b2.Filter(filt)]
    return b2.CParams(codec=b2.Codec(code), clevel=clevel, typesize=cd[2] or 1,
                      filters=filters, blocksize=blocksize, nthreads=1,
                      splitmode=b2.SplitMode.FORWARD_COMPAT_SPLIT)


def _block_shape(block_bytes, size, chunks):
    """The plugin's block shape: dimensions of 2 (1 where the chunk has 1), doubled from the
    innermost while the block stays within ``block_bytes``."""
    nitems = block_bytes // size
    dims = [1 if c == 1 else 2 for c in chunks]
    n = int(np.prod(dims))
    while n < nitems:
        before = n
        for i in range(len(chunks) - 1, -1, -1):
            if dims[i] * 2 <= chunks[i]:
                if n * 2 <= nitems:
                    n *= 2
                    dims[i] *= 2
            elif dims[i] < chunks[i]:
                wider = n // dims[i] * chunks[i]
                if wider <= nitems:
                    n, dims[i] = wider, chunks[i]
        if n == before:
            break
    return tuple(dims)


def encode(data, client_data, element_size, chunk_nbytes):
    b2 = require()
    cd = tuple(int(v) for v in client_data)
    if len(cd) < 6:
        raise FormatError(f"blosc2 needs 6+ client data values to compress, has {len(cd)}")
    src = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    size = cd[2] or 1
    ndim = cd[7] if len(cd) > 7 else -1
    chunks = cd[8:8 + ndim] if ndim > 1 else ()
    if ndim > 1 and src.size == size * int(np.prod(chunks)):
        block = cd[1]
        if block == 0:
            zeros = b2.compress2(np.zeros(cd[3], np.uint8), cparams=_cparams(b2, cd, 0))
            block = b2.get_cbuffer_sizes(zeros)[2]
        blocks = _block_shape(block, size, chunks)
        cparams = _cparams(b2, cd, int(np.prod(blocks)) * size)
        # python-blosc2 spells an opaque type "[('f0', 'V4')]": build the array as bytes
        # strings, then put the plugin's "|V4" over "|S4" in the frame's b2nd metalayer (the
        # type is its last item: a big-endian uint32 length and the text)
        arr = b2.asarray(src.view(f"S{size}").reshape(chunks), chunks=chunks, blocks=blocks,
                         cparams=cparams)
        frame = arr.to_cframe()
        text = f"|S{size}".encode()
        tag = len(text).to_bytes(4, "big")
        return frame.replace(tag + text, tag + f"|V{size}".encode(), 1)
    schunk = b2.SChunk(chunksize=src.size, data=src, cparams=_cparams(b2, cd, cd[1]),
                       contiguous=False)
    return schunk.to_cframe()
