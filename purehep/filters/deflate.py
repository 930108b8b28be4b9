"""Filter 1, deflate: a zlib stream (RFC 1950) per chunk; zlib releases the GIL."""
import zlib

ID, NAME = 1, "deflate"


def decode(data, client_data, element_size, chunk_nbytes):
    return zlib.decompress(data, bufsize=max(int(chunk_nbytes), 64))


def encode(data, client_data, element_size, chunk_nbytes):
    level = int(client_data[0]) if client_data else 6
    return zlib.compress(data, max(0, min(level, 9)))
