"""The filter pipeline (spec IV.A.2.l, "Data Storage - Filter Pipeline Message").

A registry of filters by filter id. Chunks are written by applying the pipeline's filters in
order and read by undoing them in reverse order; bit *i* of a chunk's filter mask says that
filter *i* was skipped for that chunk (spec III.A.1, chunk keys; Appendix C element records).

A decode function has the signature ``decode(data, client_data, element_size, chunk_nbytes)``:
``data`` is a bytes-like object, ``client_data`` the filter's tuple of client data values from
the pipeline message, ``element_size`` the dataset element size in bytes and ``chunk_nbytes``
the size of the fully decoded chunk (a hint for intermediate stages). It returns a bytes-like
object (bytes, bytearray, memoryview or a 1-D uint8 numpy array). An encode function has the
same signature and returns the filtered bytes, or None when the filter declines the chunk
(an optional filter is then skipped and its mask bit set).

The plugin filters (LZ4, bitshuffle, Blosc, Blosc2, bzip2, ZFP, szip, LZO) use codec
libraries of the optional ``codecs`` extra, imported on first use (``libs.py``); a filter
whose library is missing is still known, and raises UnsupportedFeatureError naming the
filter and the extra. ``options.py`` turns create_dataset's compression arguments into the
client data libhdf5 and the plugins would store.
"""
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, UnsupportedFeatureError

DEFLATE, SHUFFLE, FLETCHER32, SZIP, NBIT, SCALEOFFSET = 1, 2, 3, 4, 5, 6
LZF, ZSTD = 32000, 32015

# Names of the registered filter ids (filter-ids.md): used in error messages.
KNOWN_NAMES = {
    1: "deflate", 2: "shuffle", 3: "fletcher32", 4: "szip", 5: "nbit", 6: "scaleoffset",
    257: "hzip", 258: "fpzip", 305: "LZO", 307: "bzip2", 32000: "LZF", 32001: "blosc",
    32002: "MAFISC", 32003: "Snappy", 32004: "LZ4", 32005: "APAX", 32006: "CBF",
    32007: "JPEG-XR", 32008: "bitshuffle", 32009: "SPDP", 32010: "LPC-Rice",
    32011: "CCSDS-123", 32012: "JPEG-LS", 32013: "zfp", 32014: "fpzip", 32015: "zstd",
    32016: "B3D", 32017: "SZ", 32018: "FCIDECOMP", 32019: "JPEG", 32020: "VBZ",
    32021: "FAPEC", 32022: "BitGroom", 32023: "Granular BitRound", 32024: "SZ3",
    32025: "Delta-Rice", 32026: "blosc2", 32027: "FLAC", 32028: "SPERR", 32029: "TERSE/PROLIX",
    32030: "FFMPEG", 32031: "JPEG2000", 32032: "BitRound", 32033: "HTJ2K",
}


# Filters hdf5plugin provides that purehep cannot: why (the error message says it).
WITHOUT_LIBRARY = {
    32017: "no Python package binds SZ 2",
    32024: "the SZ3 packages on PyPI (imagecodecs, pysz) are SZ3 3.3, which cannot read the "
           "SZ3 streams hdf5plugin writes",
    32018: "no Python package binds FCIDECOMP",
    32028: "hdf5plugin's SPERR chunk framing has no Python implementation",
    32033: "hdf5plugin's HTJ2K chunk framing has no Python implementation",
}


@dataclass(frozen=True)
class Filter:
    """A registered filter: id, name, its decode/encode functions (encode may be None) and
    ``require(client_data)``, which raises UnsupportedFeatureError when the codec library
    that this use of the filter needs is missing (None: nothing beyond numpy)."""
    id: int
    name: str
    decode: object
    encode: object = None
    require: object = None
    decode_into: object = None    # decode_into(data, client_data, element_size, out): the
                                  # decoded bytes written into the uint8 array ``out``


_REGISTRY = {}
_BUILTINS_LOADED = [False]
_LOCK = __import__("threading").RLock()


def register_filter(id, decode, encode=None, name=None):
    """Register (or replace) the decoder and optional encoder of filter ``id``."""
    if not 0 < int(id) < 65536:
        raise ValueError(f"filter id {id} is not in 1..65535")
    _load_builtins()
    _REGISTRY[int(id)] = Filter(int(id), name or KNOWN_NAMES.get(int(id), f"filter {id}"),
                                decode, encode)


def unregister_filter(id):
    _load_builtins()
    _REGISTRY.pop(int(id), None)


def get_filter(id, name=None):
    """The registered Filter for ``id``; UnsupportedFeatureError naming it when there is none."""
    _load_builtins()
    f = _REGISTRY.get(id)
    if f is None:
        label = name or KNOWN_NAMES.get(id, "unknown filter")
        why = WITHOUT_LIBRARY.get(id)
        if why:
            raise UnsupportedFeatureError(f"filter {id} ({label}) is not available: {why}")
        raise UnsupportedFeatureError(f"filter {id} ({label}) is not available; register a "
                                      f"decoder with purehep.filters.register_filter({id}, ...)")
    return f


def available(id):
    _load_builtins()
    return id in _REGISTRY


def _load_builtins():
    """Register the built-in filters once. The flag is set only after they are registered,
    under a lock, so that a thread arriving meanwhile waits instead of seeing an empty
    registry."""
    if _BUILTINS_LOADED[0]:
        return
    with _LOCK:
        if _BUILTINS_LOADED[0]:
            return
        for mod in builtin_modules():
            if getattr(mod, "AVAILABLE", True):
                _REGISTRY.setdefault(mod.ID, Filter(mod.ID, mod.NAME, mod.decode,
                                                    getattr(mod, "encode", None),
                                                    getattr(mod, "require", None),
                                                    getattr(mod, "decode_into", None)))
        _BUILTINS_LOADED[0] = True


def builtin_modules():
    """The modules of the built-in filters (each: ID, NAME, decode, and optionally encode,
    require, set_local and STORED_NAME)."""
    from . import (bitshuffle, blosc, blosc2, bzip2, deflate, fletcher32, lz4, lzf, lzo, nbit,
                   scaleoffset, shuffle, szip, zfp, zstd)
    return (deflate, shuffle, fletcher32, szip, nbit, scaleoffset, lzo, bzip2, lzf, blosc, lz4,
            bitshuffle, zfp, zstd, blosc2)


def check_pipeline(filters):
    """Raise UnsupportedFeatureError unless every filter of the pipeline has a decoder and
    the codec library it needs."""
    for f in (filters or ()):
        flt = get_filter(f.id, f.name or None)
        if flt.require is not None:
            flt.require(f.client_data)


def decode_pipeline(data, filters, filter_mask, element_size, chunk_nbytes, where=(None, None),
                    out=None):
    """Undo the pipeline ``filters`` (FilterPipeline or sequence of FilterInfo) on ``data``.

    Filters whose bit is set in ``filter_mask`` are skipped. ``where`` = (structure, offset)
    names the chunk in errors. Returns a bytes-like object; given ``out`` (a uint8 array of
    ``chunk_nbytes``), the decoded chunk is written there instead (by the last filter itself
    when it can, saving a pass over the chunk) and ``out`` is returned.
    """
    structure, offset = where
    flist = tuple(filters or ())
    steps = [i for i in range(len(flist) - 1, -1, -1) if not filter_mask & (1 << i)]
    for i in steps:
        info = flist[i]
        flt = get_filter(info.id, info.name or None)
        try:
            if out is not None and i == steps[-1] and flt.decode_into is not None:
                data = flt.decode_into(data, info.client_data, element_size, out)
            else:
                data = flt.decode(data, info.client_data, element_size, chunk_nbytes)
        except FormatError as e:     # a codec's finding (a checksum, a bad header): here
            if e.offset is None:
                raise type(e)(e.reason, structure, offset) from None
            raise
        except UnsupportedFeatureError:
            raise
        except Exception as e:  # a codec's own error (zlib.error, ZstdError, ...)
            raise FormatError(f"{flt.name} filter (id {flt.id}) failed to decode: {e}",
                              structure, offset) from e
        if data is None:
            raise FormatError(f"{flt.name} filter (id {flt.id}) failed to decode",
                              structure, offset)
    if out is not None and data is not out:
        got = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else \
            data.reshape(-1).view(np.uint8)
        if len(got) < len(out):
            raise FormatError(f"chunk holds {len(got)} bytes after decoding, expected "
                              f"{len(out)}", structure, offset)
        out[:] = got[:len(out)]
        return out
    return data


def encode_pipeline(data, filters, element_size, chunk_nbytes=None):
    """Apply the pipeline to ``data``; returns (bytes-like, filter_mask).

    An optional filter whose encoder declines (returns None) is skipped and its mask bit set;
    a mandatory one raises. Filters without an encoder raise UnsupportedFeatureError.
    """
    flist = tuple(filters or ())
    if chunk_nbytes is None:
        chunk_nbytes = len(memoryview(data).cast("B")) if not hasattr(data, "nbytes") else data.nbytes
    mask = 0
    for i, info in enumerate(flist):
        flt = get_filter(info.id, info.name or None)
        if flt.encode is None:
            raise UnsupportedFeatureError(f"filter {flt.id} ({flt.name}) has no encoder")
        if flt.require is not None:
            flt.require(info.client_data)
        out = flt.encode(data, info.client_data, element_size, chunk_nbytes)
        if out is None:
            if info.optional:
                mask |= 1 << i
                continue
            raise FormatError(f"mandatory filter {flt.id} ({flt.name}) failed to encode")
        data = out
    return data, mask


# h5py's names of the filters create_dataset takes by name (h5py.filters.encode / .decode)
_H5PY_NAMES = {"gzip": DEFLATE, "szip": SZIP, "lzf": LZF, "shuffle": SHUFFLE,
               "fletcher32": FLETCHER32, "scaleoffset": SCALEOFFSET}


def _usable(fid, encoding):
    _load_builtins()
    flt = _REGISTRY.get(fid)
    if flt is None or (encoding and flt.encode is None):
        return False
    try:
        if flt.require is not None:
            flt.require(())
    except UnsupportedFeatureError:
        return False
    return True


class FilterRefBase(Mapping):
    """h5py's filter reference (``h5py.filters.FilterRefBase``, as hdf5plugin's filters
    are): a filter id and its client data, given to create_dataset as ``compression=`` or
    unpacked as its ``compression`` / ``compression_opts`` keywords; equal when both are."""
    filter_id = None
    filter_options = ()

    @property
    def _kwargs(self):
        return {"compression": self.filter_id, "compression_opts": self.filter_options}

    def __hash__(self):
        return hash((self.filter_id, self.filter_options))

    def __eq__(self, other):
        return isinstance(other, FilterRefBase) and self.filter_id == other.filter_id and \
            self.filter_options == other.filter_options

    def __len__(self):
        return len(self._kwargs)

    def __iter__(self):
        return iter(self._kwargs)

    def __getitem__(self, item):
        return self._kwargs[item]


class FilterRef(FilterRefBase):
    """A filter given by its id and client data (as a copy of a stored pipeline gives it:
    the id is not read as h5py's legacy gzip level)."""

    def __init__(self, filter_id, filter_options=()):
        self.filter_id, self.filter_options = int(filter_id), tuple(filter_options)


class Gzip(FilterRefBase):
    """h5py.filters.Gzip: deflate at ``level`` (default 4, h5py's)."""
    filter_id = DEFLATE

    def __init__(self, level=4):
        self.filter_options = (level,)


def __getattr__(name):
    """``encode`` / ``decode``: h5py's tuples of the named filters usable here, by direction."""
    if name in ("encode", "decode"):
        return tuple(n for n, fid in _H5PY_NAMES.items() if _usable(fid, name == "encode"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
