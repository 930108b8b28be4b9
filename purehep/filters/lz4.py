"""Filter 32004, LZ4 (the HDF Group's H5Z-lz4 plugin, as hdf5plugin builds it).

A chunk is a 12-byte header, the decoded size (big-endian uint64) and the block size
(big-endian uint32), then for each block of that many input bytes (the last may be shorter)
its stored size (big-endian uint32) and the block: raw LZ4 block data, or the input bytes
themselves when compression did not make the block smaller (stored size = block size).
client_data[0] = block size in bytes, 0 for the plugin's default of 1 GiB.

Codec: ``imagecodecs`` (raw LZ4 blocks from liblz4 1.10, hdf5plugin's release: the same
bytes as libhdf5's; python-lz4 bundles liblz4 1.9.4, whose blocks come out up to 6 % larger
or smaller).
"""
import numpy as np

from ..errors import FormatError
from .libs import be_u32, check_decoded_size, need

ID, NAME = 32004, "lz4"
STORED_NAME = ("HDF5 lz4 filter; see https://github.com/HDFGroup/hdf5_plugins/blob/master/docs/"
               "RegisteredFilterPlugins.md")
DEFAULT_BLOCK = 1 << 30
MAX_INPUT = 0x7FFFFFFF


def require(client_data=None):
    return need("imagecodecs", ID, NAME)


def set_local(opts, dtype, chunks):
    """The stored client data for hdf5plugin.LZ4(nbytes) options ``(nbytes,)``."""
    nbytes = int(opts[0]) if opts else 0
    if not 0 <= nbytes <= 0x7E000000:
        raise ValueError("LZ4 block size must be in the range [0, 2113929216]")
    return (nbytes,)


def decode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    buf = np.frombuffer(data, np.uint8)
    if buf.size < 12:
        raise FormatError(f"an LZ4 chunk of {buf.size} bytes is shorter than its header")
    total = int.from_bytes(buf[:8].tobytes(), "big")
    bsize = be_u32(buf, 8, "LZ4 chunk header")
    check_decoded_size(total, chunk_nbytes, "LZ4 chunk")
    if bsize == 0 and total:
        raise FormatError("LZ4 chunk has block size 0")
    bsize = min(bsize, total)
    out = np.empty(total, np.uint8)
    pos, done = 12, 0
    while done < total:
        n = min(bsize, total - done)
        stored = be_u32(buf, pos, "LZ4 block header")
        pos += 4
        if pos + stored > buf.size:
            raise FormatError(f"LZ4 block of {stored} bytes runs past the chunk's end")
        piece = buf[pos:pos + stored]
        if stored == n:
            out[done:done + n] = piece
        else:
            got = ic.lz4_decode(piece, header=False, out=n)
            if len(got) != n:
                raise FormatError(f"LZ4 block decoded to {len(got)} bytes, expected {n}")
            out[done:done + n] = np.frombuffer(got, np.uint8)
        pos += stored
        done += n
    return out


def encode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    src = memoryview(data).cast("B")
    total = len(src)
    if total > MAX_INPUT:
        return None
    bsize = int(client_data[0]) if client_data and client_data[0] else DEFAULT_BLOCK
    bsize = max(min(bsize, total), 1)
    parts = [total.to_bytes(8, "big"), bsize.to_bytes(4, "big")]
    for start in range(0, total, bsize):
        piece = src[start:start + bsize]
        comp = ic.lz4_encode(piece, header=False)
        if len(comp) >= len(piece):
            comp = piece.tobytes()
        parts.append(len(comp).to_bytes(4, "big"))
        parts.append(comp)
    return b"".join(parts)
