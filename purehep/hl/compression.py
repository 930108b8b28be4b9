"""create_dataset's compression arguments -> the filter pipeline entry libhdf5 would store.

``compression`` is what h5py takes, a name ('gzip', 'lzf', 'szip') or a filter id, plus the
names of the plugin filters ('zstd', 'lz4', 'bitshuffle', 'blosc', 'blosc2', 'bzip2', 'zfp')
and hdf5plugin's filter objects (``compression=hdf5plugin.Blosc()``, or ``**hdf5plugin.Blosc()``
which passes the id and options). ``compression_opts`` is h5py's: the deflate level, szip's
``(method, pixels per block)``, or a plugin's client data values as hdf5plugin builds them.
Each filter module's ``set_local(opts, dtype, chunks)`` completes the client data the way the
library's or the plugin's own set-local callback does (element and chunk sizes, ZFP's stream
header, ...); the entry is flagged optional, as h5py sets every compression filter.
"""
from ..errors import UnsupportedFeatureError
from ..filters import WITHOUT_LIBRARY, available, builtin_modules, get_filter
from ..format.messages.filter_pipeline import FilterInfo

NAMES = {"gzip": 1, "deflate": 1, "szip": 4, "lzf": 32000, "zstd": 32015, "lz4": 32004,
         "bitshuffle": 32008, "bshuf": 32008, "blosc": 32001, "blosc2": 32026, "bzip2": 307,
         "zfp": 32013}
OPTIONAL = 1


def _module(fid):
    """The built-in filter module of ``fid``, or None (a filter registered by the user, or
    one unknown: its options are stored as they are, as h5py's allow_unknown_filter does)."""
    for mod in builtin_modules():
        if mod.ID == fid:
            return mod
    if fid in WITHOUT_LIBRARY:
        get_filter(fid)     # raises, saying why
    return None


def compression_filter(compression, compression_opts, dtype, chunks, allow_unknown=False,
                       set_local=True):
    """The FilterInfo of create_dataset's ``compression``/``compression_opts`` for a dataset of
    (stored) ``dtype`` and chunk shape ``chunks``. A filter id outside 1..65535 is refused, and
    one no library here provides unless ``allow_unknown`` (h5py's allow_unknown_filter).
    Without ``set_local`` (a variable-length type: libhdf5's H5Z_ignore_filters) the client
    data are the options as given, or, for a filter whose data the property list sets
    (``PLIST_DATA``: deflate's level), those."""
    if hasattr(compression, "filter_id"):          # an hdf5plugin / h5py FilterRef object
        compression, compression_opts = compression.filter_id, compression.filter_options
    if isinstance(compression, str):
        if compression not in NAMES:
            raise ValueError(f'Compression filter "{compression}" is unavailable')
        fid = NAMES[compression]
    else:
        fid = int(compression)
    if not 0 < fid < 65536:
        raise ValueError(f"Invalid filter identification number ({compression})")
    mod = _module(fid)
    if mod is None and not allow_unknown and not available(fid):
        raise ValueError(f"Unknown compression filter number: {fid}")
    if compression_opts is None:
        opts = ()
    elif isinstance(compression_opts, (tuple, list)):
        opts = tuple(compression_opts)
    else:
        opts = (compression_opts,)
    if mod is None:
        return FilterInfo(fid, OPTIONAL, "", tuple(int(v) for v in opts))
    if getattr(mod, "encode", None) is None or not hasattr(mod, "set_local"):
        raise UnsupportedFeatureError(f"filter {fid} ({mod.NAME}) can be read, not written")
    cd = mod.set_local(opts, dtype, chunks) \
        if set_local or getattr(mod, "PLIST_DATA", False) else opts
    if getattr(mod, "require", None) is not None:
        mod.require(cd)
    return FilterInfo(fid, OPTIONAL, mod.STORED_NAME, tuple(int(v) for v in cd))
