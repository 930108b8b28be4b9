"""Filter 305, LZO (PyTables' filter; read only).

client_data: [0] compression level (unused), [1] the PyTables object version, [2] the
object type. A chunk is LZO1X data, followed (PyTables >= 2.0 objects) by the Adler-32
checksum of the decoded bytes and the decoded size, both little-endian uint32. The trailer's
presence follows from client data the filter does not always store (its object-type slot may
be absent), so it is recognised by its checksum: the chunk decodes as data plus a matching
trailer, or else as data alone.

Codec: ``imagecodecs`` (its LZO1X decoder is lzokay's; python-lzo has no wheels for current
Pythons). Writing is not offered: no maintained Python package has LZO1X-1, the compressor
PyTables uses.
"""
import zlib

import numpy as np

from ..errors import ChecksumError, FormatError
from .libs import check_decoded_size, need

ID, NAME = 305, "lzo"
STORED_NAME = "lzo"


def require(client_data=None):
    return need("imagecodecs", ID, NAME)


def decode(data, client_data, element_size, chunk_nbytes):
    ic = require()
    buf = bytes(data)
    if len(buf) >= 8:
        n = int.from_bytes(buf[-4:], "little")
        if n <= 2 * max(int(chunk_nbytes), 1) + (1 << 20):
            try:
                out = bytes(ic.lzo_decode(buf[:-8], out=n))
            except Exception:  # noqa: BLE001 - not data plus trailer: try data alone
                out = None
            if out is not None and len(out) == n:
                if zlib.adler32(out) != int.from_bytes(buf[-8:-4], "little"):
                    raise ChecksumError("LZO chunk checksum mismatch")
                return out
    n = check_decoded_size(int(chunk_nbytes), chunk_nbytes, "LZO chunk")
    try:
        out = bytes(ic.lzo_decode(buf, out=n))
    except Exception as e:  # noqa: BLE001
        raise FormatError(f"LZO data is corrupt: {e}") from None
    return np.frombuffer(out, np.uint8)
