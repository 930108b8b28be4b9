"""A VirtualiZarr parser built on purehep: virtual Zarr stores (and from them kerchunk
references) for HDF5 and netCDF-4 files, without h5py.

VirtualiZarr 2.x takes any callable ``parser(url, registry) -> ManifestStore`` (its
``virtualizarr.parsers.typing.Parser`` protocol)::

    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    import virtualizarr

    registry = ObjectStoreRegistry({"file://": LocalStore()})
    vds = virtualizarr.open_virtual_dataset("file:///data/x.nc", registry=registry,
                                            parser=PurehepParser())
    vds.vz.to_kerchunk("x.json", format="json")

The file is read through the registry's store (ranged ``get_range`` requests and one
``head`` for its size). Each HDF5 dataset becomes a Zarr v3 array described as
VirtualiZarr's own ``HDFParser`` describes it (its attribute clean-up, netCDF-4 dimension
names, fill value and filter-to-codec mapping), with a chunk manifest pointing at the
stored chunks: every chunk index of the spec (IV.A.2.i, Appendix C), contiguous data as
one chunk covering the array, and compact data as the bytes inside the layout message.
Filters no Zarr codec decodes in HDF5's byte format are refused by name
(UnsupportedFeatureError), and so is what a Zarr array would read differently from HDF5:
chunks that skipped a filter, unfiltered partial edge chunks, variable-length, reference and
space-padded string types, dtypes without an exact Zarr v3 equivalent, virtual and external
storage, group cycles.

virtualizarr, zarr and numcodecs are imported here only.
"""
import functools
import json
import math
import re

import numpy as np

from ..errors import PurehepWarning, UnsupportedFeatureError, warn
from ..hl.base import Empty
from ..hl.dataset import Dataset
from ..hl.files import File
from ..hl.group import Group
from ..format.messages.layout import COMPACT, DONT_FILTER_PARTIAL_EDGE_CHUNKS
from ..chunks.storage import ContiguousStorage, ChunkedAdapter, FillStorage

# attributes that carry HDF5 / netCDF-4 bookkeeping, not user metadata (HDFParser hides the
# same set: dimension scale plumbing and netCDF-4's own markers)
_HIDDEN_ATTRS = frozenset({"REFERENCE_LIST", "CLASS", "DIMENSION_LIST", "NAME",
                           "_Netcdf4Dimid", "_Netcdf4Coordinates", "_nc3_strict",
                           "_NCProperties"})

SPACE_PADDED = 2     # string padding type (spec IV.A.2.d, class 3 bit field)
# HDF5 filter ids (spec IV.A.2.l; registered plugin ids at the HDF Group's filter registry)
DEFLATE, SHUFFLE, FLETCHER32, SZIP, NBIT, SCALEOFFSET = 1, 2, 3, 4, 5, 6
BZIP2, LZF, BLOSC, LZ4, BITSHUFFLE, ZSTD = 307, 32000, 32001, 32004, 32008, 32015
_FILTER_NAMES = {SZIP: "szip", NBIT: "nbit", SCALEOFFSET: "scaleoffset", LZF: "lzf",
                 LZ4: "lz4", BITSHUFFLE: "bitshuffle", 32026: "blosc2", 32017: "sz",
                 32013: "zfp", 32018: "fcidecomp"}
# the numcodecs names of the blosc compressors, by the code the HDF5 blosc filter stores
_BLOSC_COMPRESSORS = ("blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd")

# VirtualiZarr releases from which HDFParser gives other chunk shapes (see _chunk_shape)
CLAMPS_ZERO_LENGTH_CHUNKS = (2, 6, 1)    # its PR #977
TRIMS_OVERSIZED_CHUNKS = (2, 7, 0)       # its PR #1017
# ... and from which its bytes codec is big-endian for compounds of big-endian members (#1047)
BIG_ENDIAN_COMPOUNDS = (2, 7, 2)


@functools.cache
def _virtualizarr_release():
    """The installed VirtualiZarr's version as a tuple of its first three numbers."""
    from importlib.metadata import version
    return tuple(int(n) for n in re.findall(r"\d+", version("virtualizarr"))[:3])


class PurehepParser:
    """VirtualiZarr parser for HDF5 / netCDF-4 files read by purehep.

    ``group`` is the group to virtualize (default the root), ``drop_variables`` names
    datasets of that group to leave out; both as VirtualiZarr's ``HDFParser`` takes them.
    """

    def __init__(self, group=None, drop_variables=None):
        self.group = group
        self.drop_variables = drop_variables

    def __call__(self, url, registry):
        """The file at ``url`` (resolved through ``registry``, an obspec_utils
        ObjectStoreRegistry) as a VirtualiZarr ManifestStore."""
        from virtualizarr.manifests import ManifestStore
        store, path = registry.resolve(url)
        reader = store_reader(store, path)
        with File(reader, size=reader.size) as f:
            group = f.get(self.group or "/")
            if not isinstance(group, Group):
                raise ValueError(f"Group {self.group!r} is not an HDF Group")
            manifest_group = _manifest_group(url, group, self.drop_variables)
        return ManifestStore(registry=registry, group=manifest_group)


def store_reader(store, path):
    """``reader(offset, size) -> bytes`` over one object of an obspec store (its
    ``get_range``), with the object's length (from ``head``) as ``reader.size``."""
    size = int(store.head(path)["size"])

    def reader(offset, n):
        n = min(n, size - offset)
        if n <= 0:
            return b""
        return bytes(store.get_range(path, start=offset, length=n))

    reader.size = size
    return reader


# -- groups ------------------------------------------------------------------------------
def _manifest_group(url, group, drop_variables=None, enclosing=()):
    """A ManifestGroup of the datasets and subgroups of ``group`` (recursively; a hard
    link back to an enclosing group is refused, as Zarr hierarchies are trees)."""
    from virtualizarr.manifests import ManifestGroup
    enclosing = enclosing + (group,)
    members = {name: group.get(name) for name in group.keys()}
    drop = set(drop_variables or ()) | _unstored_dimensions(members)
    for name, obj in members.items():
        if name not in drop:
            _check_member(group, name, obj, enclosing)
    arrays = {name: _manifest_array(url, obj, group.name) for name, obj in members.items()
              if name not in drop and isinstance(obj, Dataset)}
    groups = {name: _manifest_group(url, obj, enclosing=enclosing)
              for name, obj in members.items() if name not in drop and isinstance(obj, Group)}
    return ManifestGroup(arrays=arrays, groups=groups, attributes=_attributes(group))


def _check_member(group, name, obj, enclosing):
    """Refuse members a Zarr hierarchy cannot hold."""
    if "\\" in name or name in (".", "..") or name.startswith("__"):
        raise UnsupportedFeatureError(f"{group.name}: member name {name!r} is no Zarr node "
                                      "name (zarr-python reads a backslash as '/')")
    if isinstance(obj, Group) and obj in enclosing:
        raise UnsupportedFeatureError(f"{group.name}: member {name!r} links back to an "
                                      "enclosing group (a cycle)")


def _unstored_dimensions(members):
    """netCDF-4 dimensions without a coordinate variable: the dimension scales netCDF-4
    writes (marked ``_Netcdf4Dimid``) with no data stored. HDFParser leaves them out, as
    netCDF-4 readers do."""
    return {name for name, obj in members.items()
            if isinstance(obj, Dataset) and "_Netcdf4Dimid" in obj.attrs
            and obj.id.get_storage_size() == 0}


# -- arrays ------------------------------------------------------------------------------
def _manifest_array(url, ds, group_name):
    """A ManifestArray for dataset ``ds``: Zarr v3 metadata and the chunk manifest."""
    from virtualizarr.manifests import ManifestArray
    from virtualizarr.manifests.utils import create_v3_array_metadata
    from virtualizarr.codecs import zarr_codec_config_to_v3
    from virtualizarr.parsers.utils import encode_cf_fill_value
    _check_virtualizable(ds)
    attrs = _attributes(ds)
    # HDFParser encodes _FillValue for the dtype (base64 for floats), but a string's, already
    # decoded to str, it keeps as it is from VirtualiZarr 2.7.2 (before, it failed)
    if "_FillValue" in attrs and ds.dtype.kind != "S":
        attrs["_FillValue"] = encode_cf_fill_value(attrs["_FillValue"], ds.dtype)
    codecs = [zarr_codec_config_to_v3(c) for c in codec_configs(ds)]
    fill = ds.fillvalue
    chunks = _chunk_shape(ds)
    metadata = create_v3_array_metadata(
        shape=ds.shape, data_type=ds.dtype, chunk_shape=chunks,
        fill_value=fill.item() if hasattr(fill, "item") else fill, codecs=codecs,
        dimension_names=_dimension_names(ds, group_name), attributes=attrs)
    return ManifestArray(metadata=metadata, chunkmanifest=chunk_manifest(url, ds, chunks))


def _chunk_shape(ds):
    """The Zarr chunk shape HDFParser gives dataset ``ds``: the HDF5 chunk shape, or the
    array's shape for unchunked data. From VirtualiZarr 2.6.1 an unchunked array's zero-length
    axes get chunk length 1 (zarr-python 3.2 refuses zero-length chunks). From 2.7.0 a chunk
    longer than the array along some axis is cut to the array's length (at least 1) when the
    cut chunk is a leading run of the stored chunk's bytes: unfiltered, and cut along the
    first axis only; otherwise the HDF5 chunk shape stays."""
    release = _virtualizarr_release()
    if ds.chunks is None:
        if release < CLAMPS_ZERO_LENGTH_CHUNKS:
            return ds.shape
        return tuple(max(n, 1) for n in ds.shape)
    cut = tuple(min(c, max(n, 1)) for c, n in zip(ds.chunks, ds.shape))
    if release >= TRIMS_OVERSIZED_CHUNKS and not ds._pipeline and cut[1:] == ds.chunks[1:]:
        return cut
    return ds.chunks


def _check_virtualizable(ds):
    """Refuse what a chunk manifest cannot describe: data outside the file's chunks, or
    stored bytes a Zarr data type would not decode to the values HDF5 gives."""
    if ds.shape is None:
        raise UnsupportedFeatureError(f"{ds.name}: a null dataspace (no Zarr equivalent)")
    if ds.is_virtual:
        raise UnsupportedFeatureError(f"{ds.name}: a virtual dataset (its data lie in "
                                      "other datasets)")
    if ds.external:
        raise UnsupportedFeatureError(f"{ds.name}: external raw data storage")
    if ds.dtype.hasobject:
        raise UnsupportedFeatureError(
            f"{ds.name}: variable-length or reference datatype {ds.dtype} (the values lie "
            "in the global heap, not in the chunks)")
    if not _stored_as_values(ds._type):
        raise UnsupportedFeatureError(
            f"{ds.name}: datatype {ds.dtype} is stored in a form HDF5 converts on reading "
            "(space-padded strings, odd precisions or float layouts, ...)")
    _check_zarr_dtype(ds)
    if ds._pipeline and ds._layout.flags & DONT_FILTER_PARTIAL_EDGE_CHUNKS and \
            any(n % c for n, c in zip(ds.shape, ds.chunks)):
        raise UnsupportedFeatureError(f"{ds.name}: partial edge chunks stored unfiltered "
                                      "(a Zarr codec pipeline applies to every chunk alike)")


def _stored_as_values(t):
    """True when the stored bytes of datatype ``t`` are the values themselves. Null-
    terminated strings count as such: numpy drops the trailing zero bytes either way."""
    if t.kind == "string":
        return t.padding != SPACE_PADDED
    if t.members:
        return t.file_dtype == t.dtype and all(_stored_as_values(m.type) for m in t.members)
    return not t.needs_conversion


def _check_zarr_dtype(ds):
    """The Zarr v3 data type must give back the dataset's dtype exactly (subarrays and
    padding included). A compound's bytes are decoded in the one byte order of the array's
    bytes codec, which VirtualiZarr sets big-endian for compounds with big-endian members
    only from 2.7.2 (before, little-endian whatever the members' order; a mix of orders it
    refuses): compounds whose members it would misread are refused."""
    from zarr.dtype import parse_data_type
    try:
        same = parse_data_type(ds.dtype, zarr_format=3).to_native_dtype() == ds.dtype
    except (ValueError, TypeError):
        same = False
    if ds.dtype.names:
        orders = _byte_orders(ds.dtype)
        big_endian_read = _virtualizarr_release() >= BIG_ENDIAN_COMPOUNDS and orders == {">"}
        same = same and (">" not in orders or big_endian_read)
    if not same:
        raise UnsupportedFeatureError(f"{ds.name}: datatype {ds.dtype} has no exact Zarr v3 "
                                      "data type")


def _byte_orders(dtype):
    """The byte orders ('<', '>') of the multi-byte numbers in ``dtype``."""
    if dtype.subdtype is not None:
        return _byte_orders(dtype.base)
    if dtype.names:
        return set().union(*(_byte_orders(dtype.fields[n][0]) for n in dtype.names))
    return {dtype.str[0]} - {"|"}


def _dimension_names(ds, group_name):
    """One name per axis, as HDFParser gives them: the attached dimension scale, the
    dataset itself when it is a scale, else ``phony_dim_<axis>``; paths are made relative
    to the group."""
    names = []
    for axis in range(ds.ndim):
        scales = ds.dims[axis]
        if len(scales) == 1:
            names.append(str(scales[0].name))
        elif ds.is_scale:
            names.append(str(ds.name))
        elif len(scales) > 1:
            raise ValueError(f"{ds.name} has {len(scales)} dimension scales attached to "
                             f"dimension #{axis}; require exactly 1")
        else:
            names.append(f"phony_dim_{axis}")
    return [n.removeprefix(group_name).removeprefix("/") for n in names]


def _attributes(obj):
    """The object's attributes as JSON values, HDFParser's way: bookkeeping attributes
    hidden, strings decoded as UTF-8 (arrays of them as lists of str, as from VirtualiZarr
    2.8.0), one-element arrays as scalars, arrays as lists. Values JSON
    cannot hold (references, complex numbers, ...) are left out with a warning."""
    out = {}
    for name, value in obj.attrs.items():
        if name in _HIDDEN_ATTRS:
            continue
        value = _attribute_value(value)
        if isinstance(value, str) and value == "DIMENSION_SCALE":
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            warn(f"{obj.name}: attribute {name!r} ({type(value).__name__}) has no "
                 "JSON form; left out", PurehepWarning)
            continue
        out[name] = value
    return out


def _attribute_value(value):
    if isinstance(value, bytes):
        return value.decode("utf-8") or " "
    if isinstance(value, Empty):
        return ""
    if isinstance(value, (np.ndarray, np.number, np.bool_)):
        if value.dtype.kind == "S":
            return np.char.decode(value, "utf-8").tolist()
        if value.size == 1:
            value = value.flatten()[0]
            return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value
        return value.tolist()
    return value


# -- filters -> codecs -------------------------------------------------------------------
def codec_configs(ds):
    """numcodecs configurations decoding the dataset's filter pipeline, in pipeline order
    (Zarr decodes bytes-to-bytes codecs last-first, as HDF5 undoes its filters)."""
    return [_codec(ds, f) for f in ds._pipeline or ()]


def _codec(ds, f):
    values = tuple(int(v) for v in f.client_data or ())
    if f.id == DEFLATE:
        return {"id": "zlib", "level": values[0] if values else 6}
    if f.id == SHUFFLE:
        return {"id": "shuffle", "elementsize": values[0] if values else ds.dtype.itemsize}
    if f.id == FLETCHER32:
        return {"id": "fletcher32"}
    if f.id == ZSTD:
        return {"id": "zstd", "level": values[0] if values else 0, "checksum": False}
    if f.id == BZIP2:
        return {"id": "bz2", "level": values[0] if values else 9}
    if f.id == BLOSC:
        return _blosc(values)
    name = _FILTER_NAMES.get(f.id) or getattr(f, "name", None) or "unnamed"
    raise UnsupportedFeatureError(
        f"{ds.name}: HDF5 filter {f.id} ({name}) has no Zarr codec decoding its byte format")


def _blosc(values):
    """The HDF5 blosc filter stores one blosc1 buffer per chunk, as numcodecs' Blosc
    decodes; client data: revision, blosc version, type size, chunk bytes, then clevel,
    shuffle and compressor code, each optional (defaults 5, byte shuffle, blosclz), as
    hdf5-blosc's blosc_filter.c reads them. numcodecs' blocksize only steers encoding:
    0, automatic, as the filter encodes."""
    clevel, shuffle, code = (values[i] if len(values) > i else d
                             for i, d in ((4, 5), (5, 1), (6, 0)))
    return {"id": "blosc", "cname": _BLOSC_COMPRESSORS[code], "clevel": clevel,
            "shuffle": shuffle, "blocksize": 0}


# -- chunk manifests ---------------------------------------------------------------------
def chunk_manifest(url, ds, chunks):
    """Where each stored chunk lies: ``url`` and the chunk's byte range, keyed by its
    position in the grid of Zarr chunks of shape ``chunks`` (see _chunk_shape); unallocated
    chunks are left out (read as fill values)."""
    from virtualizarr.manifests import ChunkManifest
    storage = ds._storage
    if ds._layout.layout_class == COMPACT:      # the bytes inside the layout message
        return _one_chunk(url, ds.shape, ds._layout.compact_offset,
                          math.prod(ds.shape) * ds.dtype.itemsize)
    if isinstance(storage, ChunkedAdapter):
        return _chunked_manifest(url, ds, chunks)
    if isinstance(storage, FillStorage):
        return ChunkManifest(entries={}, shape=_grid(ds.shape, chunks))
    if isinstance(storage, ContiguousStorage):
        return _one_chunk(url, ds.shape, ds.id.get_offset(), storage.storage_size)
    raise UnsupportedFeatureError(f"{ds.name}: raw data storage {type(storage).__name__}")


def _grid(shape, chunks):
    return tuple(math.ceil(n / c) if c else 0 for n, c in zip(shape, chunks))


def _one_chunk(url, shape, offset, length):
    """Contiguous or compact data: one chunk covering the whole array."""
    return _manifest(url, (1,) * len(shape), (0,) * len(shape), offset, length)


def _chunked_manifest(url, ds, chunks):
    """The stored chunks; a chunk cut to the array (see _chunk_shape) is the leading bytes
    of the stored one, which keeps its grid position (the cut axis has one chunk)."""
    scaled, masks, offsets, sizes = ds.id.chunk_table()
    if masks.any():
        first = np.flatnonzero(masks)[0]
        raise UnsupportedFeatureError(
            f"{ds.name}: chunk {tuple(int(p) for p in scaled[first])} skips filters (mask "
            f"{int(masks[first]):#x}); a Zarr codec pipeline applies to every chunk alike")
    if chunks != ds.chunks:
        sizes = math.prod(chunks) * ds.dtype.itemsize
    return _manifest(url, _grid(ds.shape, chunks), tuple(scaled.T), offsets, sizes)


def _manifest(url, grid, where, offsets, lengths):
    """A ChunkManifest over a chunk grid of shape ``grid`` holding chunks at the grid
    positions ``where`` (an index into the grid), all in the file at ``url`` (normalized
    once, as VirtualiZarr would for each chunk)."""
    from virtualizarr.manifests import ChunkManifest
    from virtualizarr.manifests.manifest import validate_and_normalize_path_to_uri
    paths = np.full(grid, "", dtype=np.dtypes.StringDType())
    paths[where] = validate_and_normalize_path_to_uri(url)
    offset_grid = np.zeros(grid, dtype=np.uint64)
    offset_grid[where] = offsets
    length_grid = np.zeros(grid, dtype=np.uint64)
    length_grid[where] = lengths
    return ChunkManifest.from_arrays(paths=paths, offsets=offset_grid, lengths=length_grid,
                                     validate_paths=False)
