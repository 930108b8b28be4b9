"""Filter 32008, bitshuffle (Kiyoshi Masui's plugin, as hdf5plugin builds it).

client_data: [0], [1] the plugin's major and minor version, [2] element size, [3] block size
in elements (0: 8 KiB worth, a multiple of 8, at least 128), [4] compression: 0 none, 2 LZ4,
3 Zstandard, [5] the Zstandard level.

The chunk's elements are bit-transposed in blocks (kernels/bitshuffle.py): whole blocks, then
the rest rounded down to a multiple of 8 elements as one last block; the last ``n % 8``
elements are copied as they are. Without compression that is the whole chunk. With it, the
chunk starts with the decoded size (big-endian uint64) and the block size in bytes
(big-endian uint32), and each block is stored as its compressed size (big-endian uint32) and
an LZ4 block or a Zstandard frame; the trailing elements follow uncompressed.

Codecs: ``imagecodecs`` for LZ4 blocks (liblz4 1.10, as the plugin's; see lz4.py) and
``zstandard`` (a purehep dependency) for Zstandard frames; the transpose is a numba kernel.
"""
import numpy as np

from ..errors import FormatError
from .libs import be_u32, check_decoded_size, need

ID, NAME = 32008, "bitshuffle"
STORED_NAME = "bitshuffle; see https://github.com/kiyo-masui/bitshuffle"
VERSION = (0, 4)
NONE, LZ4, ZSTD = 0, 2, 3
TARGET_BLOCK_BYTES, MIN_BLOCK = 8192, 128


def require(client_data=None):
    mode = _mode(client_data) if client_data is not None else LZ4
    if mode == LZ4:
        return need("imagecodecs", ID, NAME)
    if mode == ZSTD:
        return need("zstandard", ID, NAME)
    return None


def _mode(cd):
    return int(cd[4]) if len(cd) > 4 else NONE


def default_block(size):
    """The plugin's default block size in elements for ``size``-byte elements."""
    return max(TARGET_BLOCK_BYTES // size // 8 * 8, MIN_BLOCK)


def set_local(opts, dtype, chunks):
    """Stored client data for hdf5plugin.Bitshuffle options ``(nelems, cname[, clevel])``."""
    opts = tuple(int(v) for v in opts)
    if opts and opts[0] % 8:
        raise ValueError(f"bitshuffle block size {opts[0]} is not a multiple of 8")
    if len(opts) > 1 and opts[1] not in (NONE, LZ4, ZSTD):
        raise ValueError(f"bitshuffle compression {opts[1]} is not 0, 2 or 3")
    return VERSION + (dtype.itemsize,) + opts


def _blocks(n, block):
    """(start, count) of the bit-transposed blocks of ``n`` elements."""
    out = [(s, block) for s in range(0, n - n % block, block)]
    last = n % block - n % 8
    if last:
        out.append((n - n % block, last))
    return out


def _params(client_data, element_size):
    cd = tuple(int(v) for v in client_data)
    if len(cd) < 3:
        raise FormatError(f"bitshuffle needs 3+ client data values, has {len(cd)}")
    size = cd[2] or int(element_size)
    block = cd[3] if len(cd) > 3 and cd[3] else default_block(size)
    if block % 8:
        raise FormatError(f"bitshuffle block size {block} is not a multiple of 8")
    return cd, size, block


def decode(data, client_data, element_size, chunk_nbytes):
    from ..kernels.bitshuffle import bitunshuffle_block
    cd, size, block = _params(client_data, element_size)
    mode = _mode(cd)
    buf = np.frombuffer(data, np.uint8)
    if mode == NONE:
        total, pos = buf.size, 0
    else:
        if mode not in (LZ4, ZSTD):
            raise FormatError(f"bitshuffle compression {mode} is not 0, 2 or 3")
        codec = require(cd)
        if buf.size < 12:
            raise FormatError(f"a bitshuffle chunk of {buf.size} bytes is shorter than its "
                              f"header")
        total = int.from_bytes(buf[:8].tobytes(), "big")
        block = be_u32(buf, 8, "bitshuffle header") // size
        check_decoded_size(total, chunk_nbytes, "bitshuffle chunk")
        if block == 0 or block % 8:
            raise FormatError(f"bitshuffle block of {block} elements is not a multiple of 8")
        pos = 12
    if total % size:
        raise FormatError(f"bitshuffle chunk of {total} bytes is not whole {size}-byte "
                          f"elements")
    n = total // size
    out = np.empty(total, np.uint8)
    for start, count in _blocks(n, block):
        nb = count * size
        if mode == NONE:
            piece = buf[pos:pos + nb]
            pos += nb
        else:
            stored = be_u32(buf, pos, "bitshuffle block header")
            pos += 4
            if pos + stored > buf.size:
                raise FormatError(f"bitshuffle block of {stored} bytes runs past the chunk")
            raw = buf[pos:pos + stored].tobytes()
            pos += stored
            if mode == LZ4:
                got = codec.lz4_decode(raw, header=False, out=nb)
            else:
                got = codec.ZstdDecompressor().decompress(raw, max_output_size=nb)
            piece = np.frombuffer(got, np.uint8)
            if piece.size != nb:
                raise FormatError(f"bitshuffle block decoded to {piece.size} bytes, "
                                  f"expected {nb}")
        bitunshuffle_block(piece, out[start * size:], count, size)
    rest = (n % 8) * size
    tail = buf[pos:pos + rest]
    if tail.size != rest:
        raise FormatError("bitshuffle chunk is truncated")
    out[total - rest:] = tail
    return out


def encode(data, client_data, element_size, chunk_nbytes):
    from ..kernels.bitshuffle import bitshuffle_block
    cd, size, block = _params(client_data, element_size)
    mode = _mode(cd)
    src = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    if src.size % size:
        return None
    n = src.size // size
    codec = require(cd)
    if mode == ZSTD:
        level = cd[5] if len(cd) > 5 else 3
        zc = codec.ZstdCompressor(level=level)
    parts = [] if mode == NONE else [src.size.to_bytes(8, "big"),
                                     (block * size).to_bytes(4, "big")]
    tmp = np.empty(block * size, np.uint8)
    for start, count in _blocks(n, block):
        nb = count * size
        bitshuffle_block(src[start * size:start * size + nb], tmp, count, size)
        piece = tmp[:nb].tobytes()
        if mode == LZ4:
            piece = codec.lz4_encode(piece, header=False)
        elif mode == ZSTD:
            piece = zc.compress(piece)
        if mode != NONE:
            parts.append(len(piece).to_bytes(4, "big"))
        parts.append(piece)
    parts.append(src[(n - n % 8) * size:].tobytes())
    return b"".join(parts)
