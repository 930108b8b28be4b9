"""Filter 32015, Zstandard (registered by hdf5plugin): one zstd frame per chunk.

Uses the ``zstandard`` package; one decompressor per thread (they are not thread-safe), and
decompression releases the GIL.
"""
import threading

ID, NAME = 32015, "zstd"
STORED_NAME = ("HDF5 zstd filter; see https://github.com/HDFGroup/hdf5_plugins/blob/master/docs/"
               "RegisteredFilterPlugins.md")


def set_local(opts, dtype, chunks):
    """Stored client data for hdf5plugin.Zstd(clevel) options ``(clevel,)`` (default 3)."""
    return (int(opts[0]) if opts else 3,)

try:
    import zstandard as _zstd
    AVAILABLE = True
except ImportError:  # pragma: no cover
    _zstd = None
    AVAILABLE = False

_local = threading.local()


def _dctx():
    d = getattr(_local, "d", None)
    if d is None:
        d = _local.d = _zstd.ZstdDecompressor()
    return d


def decode(data, client_data, element_size, chunk_nbytes):
    try:
        return _dctx().decompress(data, max_output_size=max(int(chunk_nbytes), 1))
    except _zstd.ZstdError:
        # frames without a content size and larger than the hint: stream them
        return _dctx().decompressobj().decompress(bytes(data))


def encode(data, client_data, element_size, chunk_nbytes):
    level = int(client_data[0]) if client_data else 3
    return _zstd.ZstdCompressor(level=level).compress(bytes(memoryview(data).cast("B")))
