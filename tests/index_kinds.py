"""One gzip-compressed dataset per storage kind, written by h5py: contiguous and each chunk
index (v1 B-tree via libver earliest, single chunk, fixed array, extensible array, v2
B-tree). Integer values, so that sums and means compare exactly whatever the order of
summation. Shared by the thread-safety and dask tests."""
import numpy as np

# name: (libver, create_dataset keywords, shape, purehep layout index type or None)
KINDS = {
    "contiguous": ("earliest", {}, (3000, 7), None),
    "btree1": ("earliest", dict(chunks=(64, 5), compression="gzip"), (3000, 7), 0),
    "single": ("latest", dict(chunks=(3000, 7), compression="gzip"), (3000, 7), 1),
    "fixed_array": ("latest", dict(chunks=(64, 5), compression="gzip"), (3000, 7), 3),
    "extensible_array": ("latest", dict(chunks=(64, 5), maxshape=(None, 7),
                                        compression="gzip"), (3000, 7), 4),
    "btree2": ("latest", dict(chunks=(64, 5), maxshape=(None, None), compression="gzip"),
               (3000, 7), 5),
}


def values(shape, seed=0):
    return np.random.default_rng(seed).integers(-1000, 1000, size=shape).astype(np.int32)


def write(path, kind, seed=0):
    """Write dataset "x" of storage ``kind`` at ``path``; returns its values."""
    import h5py
    libver, kw, shape, _ = KINDS[kind]
    data = values(shape, seed)
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("x", data=data, **kw)
    return data


def index_type(ds):
    """The chunk index type purehep finds (None: not chunked)."""
    layout = ds._layout
    return layout.index_type if ds.chunks else None
