"""Filter 4, szip (spec IV.A.2.l; libhdf5's H5Zszip.c): Rice coding as CCSDS 121.0 defines it.

client_data: [0] option mask (1 allow K=13, 4 entropy coding, 8 LSB first, 16 MSB first, 32
nearest neighbour, 128 raw: no szip header), [1] pixels per block, [2] bits per pixel, [3]
pixels per scanline. A chunk is its decoded size (little-endian uint32) and the coded data.
libhdf5 sets bits per pixel from the type's precision (rounded up to 32 or 64 above 24), the
byte order bit from the type, and the scanline from the chunk's fastest dimension (at most
128 blocks); ``H5Pset_szip`` adds the K=13 and raw bits to the user's mask. The filter is
optional: a chunk that does not shrink is stored unfiltered.

Codec: ``imagecodecs`` (its szip functions are libaec's SZ_BufftoBuffCompress/Decompress,
the same library libhdf5 links for szip; no other Python package binds libaec).
"""
import numpy as np

from ..errors import FormatError
from .libs import check_decoded_size, need

ID, NAME = 4, "szip"
STORED_NAME = "szip"
ALLOW_K13, EC, LSB, MSB, NN, RAW = 1, 4, 8, 16, 32, 128
MAX_BLOCKS_PER_SCANLINE, MAX_PIXELS_PER_SCANLINE = 128, 128 * 32


def require(client_data=None):
    return need("imagecodecs", ID, NAME)


def set_local(opts, dtype, chunks):
    """Stored client data for h5py's ``compression_opts=(method, pixels_per_block)``, method
    'ec' or 'nn' (or the option mask), as H5Pset_szip and the filter's set_local store it."""
    method, ppb = opts if opts else ("nn", 8)
    mask = {"ec": EC, "nn": NN}.get(method, method)
    if not isinstance(mask, int) or not (mask & (EC | NN)):
        raise ValueError(f"szip method must be 'ec' or 'nn', not {method!r}")
    ppb = int(ppb)
    if ppb % 2 or not 2 <= ppb <= 32:
        raise ValueError("pixels per block must be an even number from 2 to 32")
    if dtype.kind not in "iuf" or dtype.itemsize not in (1, 2, 4, 8):
        raise ValueError(f"szip cannot compress {dtype}")
    bpp = dtype.itemsize * 8
    scanline = int(chunks[-1])
    npoints = int(np.prod(chunks))
    if scanline < ppb:
        if npoints < ppb:
            raise ValueError("pixels per block greater than total number of elements in the "
                             "chunk")
        scanline = min(ppb * MAX_BLOCKS_PER_SCANLINE, npoints)
    elif scanline <= MAX_PIXELS_PER_SCANLINE:
        scanline = min(ppb * MAX_BLOCKS_PER_SCANLINE, scanline)
    else:
        scanline = ppb * MAX_BLOCKS_PER_SCANLINE
    order = MSB if dtype.byteorder == ">" or (dtype.byteorder == "=" and
                                               np.little_endian is False) else LSB
    mask = (mask & ~(LSB | MSB)) | ALLOW_K13 | RAW | order
    return (mask, ppb, bpp, scanline)


def _params(client_data):
    cd = tuple(int(v) for v in client_data)
    if len(cd) != 4:
        raise FormatError(f"szip needs 4 client data values, has {len(cd)}")
    mask, ppb, bpp, pps = cd
    if not (ppb and bpp and pps) or bpp > 64:
        raise FormatError(f"invalid szip parameters {cd}")
    return mask, ppb, bpp, pps


def decode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    mask, ppb, bpp, pps = _params(client_data)
    buf = np.frombuffer(data, np.uint8)
    if buf.size < 4:
        raise FormatError(f"an szip chunk of {buf.size} bytes has no size header")
    n = check_decoded_size(int.from_bytes(buf[:4].tobytes(), "little"), chunk_nbytes,
                           "szip chunk")
    out = ic.szip_decode(buf[4:], mask, ppb, bpp, pps, out=n)
    if len(out) != n:
        raise FormatError(f"szip chunk decoded to {len(out)} bytes, expected {n}")
    return np.frombuffer(out, np.uint8)


def encode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    mask, ppb, bpp, pps = _params(client_data)
    src = memoryview(data).cast("B")
    out = ic.szip_encode(src, mask, ppb, bpp, pps)
    if len(out) > len(src):
        return None
    return len(src).to_bytes(4, "little") + bytes(out)
