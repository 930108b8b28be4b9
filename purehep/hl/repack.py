"""``purehep repack SRC DST``: rewrite a file compactly (no free space, no stale structures).

Every object is read from SRC and written to DST with the writer, in the format generation of
SRC's superblock (version 0/1 -> earliest, 2 -> v108, 3 -> latest): groups (creation order
tracking kept), datasets with their layout, chunk shape, maximum shape and filters,
attributes, soft and external links, committed datatypes, and hard links that share one
object. Dataset values are copied in slices of at most ``block_bytes``.
"""
import numpy as np

from ..filters import FilterRef
from .base import LINK_INFO, Empty, ExternalLink, HardLink, SoftLink, message
from .copy import group_node
from .dataset import Dataset
from .files import File
from .group import Group

LIBVER = {0: "earliest", 1: "earliest", 2: "v108", 3: "latest"}
_GZIP, _LZF, _ZSTD = 1, 32000, 32015


def repack(src, dst, block_bytes=64 << 20):
    """Rewrite ``src`` as ``dst`` (replaced if it exists); returns the path of ``dst``."""
    with File(src, "r") as inp:
        libver = LIBVER.get(inp.superblock_version, "latest")
        with File(dst, "w", libver=libver, userblock_size=inp.userblock_size or 0,
                  track_order=_tracks_order(inp)) as out:
            _copy_attrs(inp, out)
            _copy_group(inp, out, {inp._address: "/"}, block_bytes)
    return dst


def _tracks_order(group):
    info = message(group._ctx, group._oh, LINK_INFO, required=False)
    return bool(info and info.track_order)


def _copy_attrs(src, dst):
    for name in src.attrs:
        value = src.attrs[name]
        dtype = src.attrs.get_dtype(name)
        dst.attrs.create(name, value, dtype=dtype if not isinstance(value, str) else None)


def _copy_group(src, dst, done, block_bytes):
    for name in src:
        link = src.get(name, getlink=True)
        if isinstance(link, SoftLink):
            dst[name] = SoftLink(link.path)
            continue
        if isinstance(link, ExternalLink):
            dst[name] = ExternalLink(link.filename, link.path)
            continue
        if not isinstance(link, HardLink):
            continue
        obj = src[name]
        if obj._address in done:               # a second hard link to a copied object
            dst[name] = dst.file[done[obj._address]]
            continue
        path = (dst.name.rstrip("/") + "/" + name)
        done[obj._address] = path
        if isinstance(obj, Group):
            new = dst._link_new(name, group_node(obj))
            _copy_attrs(obj, new)
            _copy_group(obj, new, done, block_bytes)
        elif isinstance(obj, Dataset):
            new = _copy_dataset(obj, dst, name, block_bytes)
            _copy_attrs(obj, new)
        else:
            dst[name] = obj.dtype
            _copy_attrs(obj, dst[name])


def _copy_dataset(ds, dst, name, block_bytes):
    if ds.shape is None:
        return dst.create_dataset(name, data=Empty(ds.dtype))
    kw = {}
    if ds.chunks is not None:
        kw.update(chunks=ds.chunks, maxshape=ds.maxshape)
        pipeline = ds._pipeline or ()
        for f in pipeline:
            if f.id == _GZIP:
                kw.update(compression="gzip", compression_opts=ds.compression_opts)
            elif f.id == _LZF:
                kw.update(compression="lzf")
            elif f.id == _ZSTD:
                kw.update(compression=_ZSTD,
                          compression_opts=tuple(f.client_data[:1]) or None)
            elif f.id == 2:
                kw.update(shuffle=True)
            elif f.id == 3:
                kw.update(fletcher32=True)
            elif f.id == 6:
                kw.update(scaleoffset=ds.scaleoffset)
            else:
                kw.update(compression=FilterRef(f.id, f.client_data))
    elif ds._layout.layout_class == 0:
        kw.update(layout="compact")
    fill = ds._msg(0x05, required=False)
    if fill is not None and fill.value is not None and any(fill.value):
        kw.update(fillvalue=ds.fillvalue)
    meta = ds.dtype.metadata or {}
    rows = ds.shape[0] if ds.shape else 1
    row_bytes = max(1, ds.dtype.itemsize * int(np.prod(ds.shape[1:] or (1,))))
    if "vlen" in meta or "ref" in meta or not ds.shape or rows * row_bytes <= block_bytes:
        return dst.create_dataset(name, data=ds[()], dtype=ds.dtype, **kw)
    new = dst.create_dataset(name, shape=ds.shape, dtype=ds.dtype, **kw)
    step = max(1, block_bytes // row_bytes)
    if ds.chunks:
        step = max(ds.chunks[0], step - step % ds.chunks[0])
    for a in range(0, rows, step):
        new[a:a + step] = ds[a:a + step]
    return new
