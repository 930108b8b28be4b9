"""Filter 1, deflate: a zlib stream (RFC 1950) per chunk.

Decoded with ISA-L's zlib-compatible inflate when the optional ``isal`` package is installed
(about twice as fast), else with the standard library's zlib; both release the GIL.
"""
import zlib

try:
    from isal import isal_zlib as _inflater
except ImportError:  # pragma: no cover - optional accelerator
    _inflater = zlib

ID, NAME = 1, "deflate"


def decode(data, client_data, element_size, chunk_nbytes):
    return _inflater.decompress(data, bufsize=max(int(chunk_nbytes), 64))


def encode(data, client_data, element_size, chunk_nbytes):
    level = int(client_data[0]) if client_data else 6
    return zlib.compress(data, max(0, min(level, 9)))
