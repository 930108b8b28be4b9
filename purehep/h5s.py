"""h5py's ``h5s`` as far as purehep has it: dataspaces (spec IV.A.2.b, the Dataspace
message) as libhdf5's H5S calls make them — null, scalar, or simple with an extent and a
maximum extent — for the calls that create datasets and attributes (purehep.h5d, purehep.h5a).
Selections within a dataspace are not offered."""
SCALAR, SIMPLE, NULL = 0, 1, 2
UNLIMITED = 2 ** 64 - 1          # H5S_UNLIMITED as h5py gives it


class SpaceID:
    """A dataspace: its class and, when simple, its current and maximum dimensions."""

    def __init__(self, cls, dims=(), maxdims=None):
        self._cls = cls
        self._dims = tuple(int(d) for d in dims)
        self._maxdims = self._dims if maxdims is None else tuple(int(d) for d in maxdims)

    @property
    def shape(self):
        return None if self._cls == NULL else self._dims

    def get_simple_extent_type(self):
        return self._cls

    def get_simple_extent_ndims(self):
        return len(self._dims)

    def get_simple_extent_dims(self, maxdims=False):
        return self._maxdims if maxdims else self._dims

    def get_simple_extent_npoints(self):
        import math
        return 0 if self._cls == NULL else math.prod(self._dims)

    def copy(self):
        return SpaceID(self._cls, self._dims, self._maxdims)

    def maxshape(self):
        """The maximum shape as h5py's create_dataset takes it (None: unlimited)."""
        return tuple(None if m == UNLIMITED else m for m in self._maxdims)


def create(cls):
    """H5Screate: an empty dataspace of class SCALAR or NULL (SIMPLE: of rank 0)."""
    if cls not in (SCALAR, SIMPLE, NULL):
        raise ValueError(f"invalid dataspace class {cls!r}")
    return SpaceID(cls)


def create_simple(dims, maxdims=None):
    """H5Screate_simple: a simple dataspace of ``dims`` (maximum ``maxdims``)."""
    dims = tuple(dims)
    if maxdims is not None and len(tuple(maxdims)) != len(dims):
        raise ValueError("maxdims must have the rank of dims")
    if maxdims is not None and any(m != UNLIMITED and m < d for d, m in zip(dims, maxdims)):
        raise ValueError("maxdims must not be smaller than dims")
    return SpaceID(SIMPLE, dims, maxdims)
