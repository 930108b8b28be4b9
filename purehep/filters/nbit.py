"""Filter 5, n-bit: bit-packed significant bits (client data computed by the library).

client_data: [0] number of values, [1] 1 = no packing needed (identity), [2] elements per
chunk, then the datatype description: atomic ``1, size, order, precision, offset``; array
``2, size, <base>``; compound ``3, size, nmembers, (member offset, <member>)...``; other
``4, size``. The description is flattened into a table of atomic/no-op members.
"""
import functools

import numpy as np

from ..errors import FormatError

ID, NAME = 5, "nbit"
_MAX_OPS = 1 << 16


def _plan(cd):
    ops = []

    def desc(i, base):
        if i + 1 >= len(cd):
            raise FormatError("truncated n-bit datatype description")
        cls, size = cd[i], cd[i + 1]
        if len(ops) > _MAX_OPS:
            raise FormatError("n-bit datatype description too large")
        if cls == 1:
            if i + 4 >= len(cd):
                raise FormatError("truncated n-bit atomic description")
            order, prec, off = cd[i + 2], cd[i + 3], cd[i + 4]
            if size == 0 or prec > size * 8 or prec + off > size * 8 or order > 1:
                raise FormatError(f"invalid n-bit atomic member (size {size}, precision {prec},"
                                  f" offset {off})")
            ops.append((1, base, size, order, prec, off))
            return i + 5
        if cls == 2:
            if i + 3 >= len(cd) or cd[i + 3] == 0:
                raise FormatError("invalid n-bit array description")
            base_size = cd[i + 3]
            end = i + 2
            for k in range(size // base_size):
                end = desc(i + 2, base + k * base_size)
            return end
        if cls == 3:
            nmembers = cd[i + 2]
            j = i + 3
            for _ in range(nmembers):
                if j >= len(cd):
                    raise FormatError("truncated n-bit compound description")
                moff = cd[j]
                j = desc(j + 1, base + moff)
            return j
        if cls == 4:
            ops.append((4, base, size, 0, 0, 0))
            return i + 2
        raise FormatError(f"unknown n-bit datatype class {cls}")

    desc(3, 0)
    return np.array(ops, np.int64).reshape(-1, 6)


def decode(data, client_data, element_size, chunk_nbytes):
    ops, nelmts, size = _checked_plan(tuple(client_data))
    if ops is None:
        return data
    from ..kernels.nbit import nbit_decompress
    out = np.empty(nelmts * size, np.uint8)
    nbit_decompress(np.frombuffer(data, np.uint8), out, nelmts, size, ops)
    return out


@functools.lru_cache(maxsize=64)
def _checked_plan(client_data):
    """(``_plan`` (read-only: shared by every chunk of the dataset), elements, element
    size) of ``client_data``, its members checked to lie inside the element; ops None
    when the filter packs nothing."""
    cd = tuple(int(v) for v in client_data)
    if len(cd) < 5:
        raise FormatError(f"n-bit filter needs at least 5 client data values, has {len(cd)}")
    if cd[1]:
        return None, 0, 0
    ops = _plan(cd)
    if np.any(ops[:, 1] + ops[:, 2] > cd[4]):
        raise FormatError("n-bit member lies outside its element")
    ops.flags.writeable = False
    return ops, cd[2], cd[4]
