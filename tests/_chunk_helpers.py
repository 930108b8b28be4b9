"""Test helpers: open a dataset written by h5py through purehep's chunk layer only."""
import h5py
import numpy as np

from purehep.chunks import ChunkedStorage
from purehep.format.messages import decode as decode_message
from purehep.format.object_header import ObjectHeader
from purehep.format.superblock import Superblock
from purehep.io import open_source


def storage(path, name, threads=None, dtype=None):
    """ChunkedStorage of dataset ``name`` and the h5py dataset's numpy dtype."""
    with h5py.File(path, "r") as f:
        ds = f[name]
        addr = h5py.h5o.get_info(ds.id).addr
        np_dtype = ds.dtype if dtype is None else dtype
        fill = ds.fillvalue
    src = open_source(str(path))
    sb = Superblock.find(src)
    ctx = sb.context(src)
    oh = ObjectHeader.decode(ctx, addr)
    msgs = {}
    for raw in oh.messages:
        if raw.type in (0x01, 0x08, 0x0B):
            msgs[raw.type] = decode_message(ctx, raw)
    space, layout, pipeline = msgs[0x01], msgs[0x08], msgs.get(0x0B)
    file_dtype = np.dtype(np_dtype)
    fillarr = np.array(fill, dtype=file_dtype)
    st = ChunkedStorage(ctx, layout, space.shape, file_dtype, pipeline, fillarr, threads=threads,
                        maxshape=space.maxshape)
    return st
