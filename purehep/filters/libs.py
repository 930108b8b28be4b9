"""The optional codec libraries of the plugin filters (the ``codecs`` extra), and the checks
their chunk framings share.

Each library is imported when a filter first needs it. A missing one raises
UnsupportedFeatureError naming the filter and the extra that installs it, for reading and for
writing alike.
"""
import importlib

from ..errors import FormatError, UnsupportedFeatureError

EXTRA = "codecs"
_LOADED = {}


def need(module, fid, name, package=None):
    """The imported ``module`` (dotted name), which filter ``fid`` (``name``) needs."""
    mod = _LOADED.get(module)
    if mod is None:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            raise UnsupportedFeatureError(
                f"filter {fid} ({name}) needs the Python package '{package or module}': "
                f"pip install purehep[{EXTRA}]") from None
        _LOADED[module] = mod
    return mod


def be_u32(buf, pos, what):
    """The big-endian uint32 at ``pos`` of ``buf`` (a uint8 array); FormatError past its end."""
    if pos + 4 > buf.size:
        raise FormatError(f"{what} is truncated (needs byte {pos + 4}, has {buf.size})")
    return int.from_bytes(buf[pos:pos + 4].tobytes(), "big")


def check_decoded_size(n, chunk_nbytes, what):
    """Refuse a decoded size a chunk header claims beyond what the chunk can hold (twice the
    chunk plus 1 MiB: room for the filters that grow data, none for a corrupt size field)."""
    if n > 2 * max(int(chunk_nbytes), 1) + (1 << 20):
        raise FormatError(f"{what} claims {n} decoded bytes for a chunk of {chunk_nbytes}")
    return n
