"""Filter 32013, ZFP (LLNL's H5Z-ZFP plugin 1.1, ZFP 1.0, as hdf5plugin builds it).

client_data: [0] versions, ``zfp library << 16 | codec << 12 | plugin``; [1...] the ZFP stream
header as little-endian 32-bit words: 32 bits of magic (``z f p`` and the codec version 5),
52 bits of field metadata (scalar type, rank - 1, and the chunk's non-unity dimensions less
one, fastest first) and the mode: 12 bits for fixed rate, precision, accuracy or reversible,
or all ones followed by 52 more bits of expert parameters (min/max bits, max precision, min
exponent). A chunk is the headerless ZFP stream of the chunk's values (4- or 8-byte floats or
integers of the native byte order), padded to 64-bit words.

The plugin computes the header at dataset creation from hdf5plugin's options (mode 1 rate,
2 precision, 3 accuracy, 4 expert, 5 reversible; none: ZFP's default expert parameters); so
does ``set_local`` here. Decoding puts the header before the chunk's bits and hands the whole
stream to ZFP; encoding passes the header's parameters as ZFP's expert parameters (which every
mode is) and takes the header off again.

Codec: ``imagecodecs`` (ZFP 1.0.1, the plugin's release; zfpy, ZFP's own binding, cannot set
expert parameters, which hdf5plugin's default mode is).
"""
import math
import struct

import numpy as np

from ..errors import FormatError, UnsupportedFeatureError
from .libs import check_decoded_size, need

ID, NAME = 32013, "zfp"
STORED_NAME = "H5Z-ZFP-1.1.1 (ZFP-1.0.1)"
VERSIONS = 0x1010 << 16 | 5 << 12 | 0x111
MIN_BITS, MAX_BITS, MAX_PREC, MIN_EXP = 1, 16658, 64, -1074
SHORT_MAX = (1 << 12) - 2
CODEC = 5
TYPES = (np.dtype("<i4"), np.dtype("<i8"), np.dtype("<f4"), np.dtype("<f8"))
RATE, PRECISION, ACCURACY, EXPERT, REVERSIBLE = 1, 2, 3, 4, 5


def require(client_data=None):
    return need("imagecodecs", ID, NAME)


# --- the header ----------------------------------------------------------------------------

def _user_params(opts, ztype, ndims):
    """(minbits, maxbits, maxprec, minexp) for hdf5plugin.Zfp's options, as ZFP sets them."""
    if not opts:
        return MIN_BITS, MAX_BITS, MAX_PREC, MIN_EXP
    mode = opts[0]
    double = struct.unpack("<d", struct.pack("<II", opts[2], opts[3]))[0] \
        if len(opts) > 3 else 0.0
    if mode == RATE:
        bits = int(math.floor((1 << 2 * ndims) * double + 0.5))
        bits = max(bits, 1 + 8) if ztype == 2 else max(bits, 1 + 11) if ztype == 3 else bits
        return bits, bits, MAX_PREC, MIN_EXP
    if mode == PRECISION:
        return MIN_BITS, MAX_BITS, min(opts[2], MAX_PREC) if opts[2] else MAX_PREC, MIN_EXP
    if mode == ACCURACY:
        return MIN_BITS, MAX_BITS, MAX_PREC, math.frexp(double)[1] - 1 if double > 0 \
            else MIN_EXP
    if mode == EXPERT:
        minexp = opts[5] - (1 << 32) if opts[5] >= 1 << 31 else opts[5]
        return opts[2], opts[3], opts[4], minexp
    if mode == REVERSIBLE:
        return MIN_BITS, MAX_BITS, MAX_PREC, MIN_EXP - 1
    raise ValueError(f"invalid ZFP mode {mode}")


def _mode_value(minbits, maxbits, maxprec, minexp):
    """ZFP's ``zfp_stream_mode``: the 12-bit code of a common mode, else the 64-bit one."""
    if minbits > maxbits or not 0 < maxprec <= 64:
        raise ValueError("invalid ZFP parameters")
    default = (minbits, maxbits, maxprec, minexp) == (MIN_BITS, MAX_BITS, MAX_PREC, MIN_EXP)
    wide = minbits <= MIN_BITS and maxbits >= MAX_BITS
    if not default:
        if minbits == maxbits and 1 <= maxbits <= MAX_BITS and maxprec >= MAX_PREC \
                and minexp == MIN_EXP:
            if maxbits <= 2048:
                return maxbits - 1
        elif wide and maxprec >= 1 and minexp == MIN_EXP:
            return maxprec - 1 + 2048
        elif wide and maxprec >= MAX_PREC and minexp >= MIN_EXP:
            if minexp <= 843:
                return minexp - MIN_EXP + 2048 + 128 + 1
        elif wide and maxprec >= MAX_PREC and minexp < MIN_EXP:
            return 2048 + 128
    mode = max(0, min(minexp + 16495, 0x7FFF))
    mode = mode << 7 | (max(1, min(maxprec, 0x80)) - 1)
    mode = mode << 15 | (max(1, min(maxbits, 0x8000)) - 1)
    mode = mode << 15 | (max(1, min(minbits, 0x8000)) - 1)
    return mode << 12 | 0xFFF


def _params_from_mode(mode):
    """ZFP's ``zfp_stream_set_mode``: (minbits, maxbits, maxprec, minexp) of a mode code."""
    if mode <= SHORT_MAX:
        if mode < 2048:
            return mode + 1, mode + 1, MAX_PREC, MIN_EXP
        if mode < 2048 + 128:
            return MIN_BITS, MAX_BITS, mode + 1 - 2048, MIN_EXP
        if mode == 2048 + 128:
            return MIN_BITS, MAX_BITS, MAX_PREC, MIN_EXP - 1
        return MIN_BITS, MAX_BITS, MAX_PREC, mode + MIN_EXP - (2048 + 128 + 1)
    mode >>= 12
    minbits = (mode & 0x7FFF) + 1
    maxbits = (mode >> 15 & 0x7FFF) + 1
    maxprec = (mode >> 30 & 0x7F) + 1
    minexp = (mode >> 37 & 0x7FFF) - 16495
    return minbits, maxbits, maxprec, minexp


def set_local(opts, dtype, chunks):
    """Stored client data for hdf5plugin.Zfp's options, as H5Z-ZFP's set_local writes it."""
    opts = tuple(int(v) for v in opts)
    if dtype.kind not in "iuf" or dtype.itemsize not in (4, 8):
        raise ValueError(f"ZFP compresses 4- and 8-byte integers and floats, not {dtype}")
    if dtype.byteorder == ">":
        raise ValueError("ZFP compresses only native (little-endian) byte order")
    used = [int(c) for c in chunks if c > 1]
    if not 1 <= len(used) <= 4:
        raise ValueError("ZFP chunks must have 1 to 4 non-unity dimensions")
    ztype = (2 if dtype.kind == "f" else 0) + (dtype.itemsize == 8)
    width = 48 // len(used)
    dims = 0
    for n in used:
        if n - 1 >> width:
            raise ValueError(f"ZFP chunk dimension {n} is too large")
        dims = dims << width | (n - 1)
    meta = dims << 4 | (len(used) - 1) << 2 | ztype
    mode = _mode_value(*_user_params(opts, ztype, len(used)))
    nbits = 32 + 52 + (12 if mode <= SHORT_MAX else 64)
    header = (ord("z") | ord("f") << 8 | ord("p") << 16 | CODEC << 24) | meta << 32 | mode << 84
    raw = header.to_bytes(-(-nbits // 32) * 4, "little")
    return (VERSIONS,) + struct.unpack(f"<{len(raw) // 4}I", raw)


def _parse(client_data):
    """(header int, header bits, dtype, shape, params, swapped) of the stored client data."""
    cd = tuple(int(v) & 0xFFFFFFFF for v in client_data)
    if len(cd) < 4:
        raise FormatError(f"ZFP needs 4+ client data values, has {len(cd)}")
    for swapped in (False, True):
        words = cd[1:] if not swapped else tuple(int.from_bytes(w.to_bytes(4, "little"), "big")
                                                 for w in cd[1:])
        header = int.from_bytes(struct.pack(f"<{len(words)}I", *words), "little")
        if header & 0xFFFFFF == ord("z") | ord("f") << 8 | ord("p") << 16:
            break
    else:
        raise FormatError("ZFP client data does not start with the ZFP magic")
    codec = header >> 24 & 0xFF
    if codec != CODEC:
        raise UnsupportedFeatureError(f"ZFP codec version {codec} (purehep reads 5)")
    meta = header >> 32 & ((1 << 52) - 1)
    mode = header >> 84 & 0xFFF
    nbits = 96
    if mode == 0xFFF:
        if len(cd) < 6:
            raise FormatError("ZFP client data is too short for its expert-mode header")
        mode = header >> 84 & ((1 << 64) - 1)
        nbits = 148
    ndims = (meta >> 2 & 3) + 1
    width = 48 // ndims
    shape = tuple(((meta >> 4 >> (width * i)) & ((1 << width) - 1)) + 1
                  for i in range(ndims))[::-1]
    header &= (1 << nbits) - 1
    return header, nbits, TYPES[meta & 3], shape, _params_from_mode(mode), swapped


def _decode(ic, header, nbits, shape, params, body):
    """ZFP's decoding of the header and ``body``, followed by zero bytes up to the most any
    block can read (ZFP reads its stream without bounds)."""
    nblocks = int(np.prod([-(-n // 4) for n in shape]))
    per_block = min(params[1], 64 * (2 * 4 ** len(shape) + 1) + 12)
    room = max(len(body), -(-nblocks * per_block // 8)) + 16
    stream = (int.from_bytes(body, "little") << nbits | header).to_bytes(
        len(body) + -(-nbits // 8), "little")
    return np.ascontiguousarray(ic.zfp_decode(stream + bytes(room - len(body))))


def decode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    header, nbits, dtype, shape, params, swapped = _parse(client_data)
    size = int(np.prod(shape)) * dtype.itemsize
    check_decoded_size(size, chunk_nbytes, "ZFP chunk")
    out = _decode(ic, header, nbits, shape, params, bytes(data))
    if out.dtype != dtype or out.nbytes != size:
        raise FormatError(f"ZFP chunk decoded to {out.dtype} {out.shape}, expected "
                          f"{dtype} {shape}")
    if swapped:
        out = out.byteswap()
    return out.reshape(-1).view(np.uint8)


def encode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    header, nbits, dtype, shape, params, swapped = _parse(client_data)
    src = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    if swapped or src.size != int(np.prod(shape)) * dtype.itemsize:
        return None
    minbits, maxbits, maxprec, minexp = params
    # imagecodecs writes the header even when asked not to: encode with it, then drop it.
    # Its stream is padded to 64-bit words, the plugin's (8-bit words) to bytes: fixed rate
    # has a known length; otherwise the stream keeps up to 7 trailing zero bytes, as a shorter
    # guess could cut bits the decoder reads (a zero byte may be data)
    full = bytes(ic.zfp_encode(src.view(dtype).reshape(shape),
                               (minbits, maxbits, maxprec, minexp & 0xFFFFFFFF),
                               mode=ic.ZFP.MODE.EXPERT, header=True))
    nbytes = -(-(8 * len(full) - nbits) // 8)
    if minbits == maxbits:
        nbytes = min(nbytes, -(-int(np.prod([-(-n // 4) for n in shape])) * maxbits // 8))
    return (int.from_bytes(full, "little") >> nbits).to_bytes(nbytes + 8, "little")[:nbytes]
