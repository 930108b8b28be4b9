"""The checks h5py makes of create_dataset's arguments before anything is created, with its
exception types: the same call fails the same way in both libraries, and fails at the call
rather than at close."""
import numpy as np

from .base import Empty


def check_create_args(shape, dtype, data, chunks, maxshape, compression, compression_opts,
                      scaleoffset, fillvalue, track_times, fill_time=None):
    """Raise h5py's TypeError / ValueError for arguments it refuses (``dtype`` as given, or
    None when it comes from ``data``)."""
    if shape is None and data is None:
        if chunks not in (None, False):
            raise TypeError("Empty datasets don't support chunk/filter options")
        if maxshape is not None:
            raise TypeError("Empty datasets cannot be extended")
    if fill_time is not None and fill_time not in ("alloc", "never", "ifset"):
        raise ValueError(f"fill_time must be one of the following choices: 'alloc', 'never' "
                         f"or 'ifset', but it is {fill_time!r}.")
    scalar = shape == () or (shape is None and data is not None and np.ndim(data) == 0
                             and not isinstance(data, Empty))
    if scalar and (chunks not in (None, False) or compression is not None or
                   scaleoffset not in (None, False)):
        raise TypeError("Scalar datasets don't support chunk/filter options")
    if track_times is not None and track_times not in (True, False):
        raise TypeError("track_times must be either True or False")
    if compression == "lzf" and compression_opts is not None:
        raise ValueError("LZF compression filter accepts no options")
    if scaleoffset in (None, False) and fillvalue is None:
        return
    dt = np.dtype(dtype) if dtype is not None else \
        (np.asarray(data).dtype if data is not None else None)
    if scaleoffset is not None and scaleoffset is not False:
        if scaleoffset < 0:
            raise ValueError("scale factor must be >= 0")
        if dt is not None and dt.kind not in "iuf":
            raise TypeError("scale/offset filter only supported for integer and "
                            "floating-point types")
    if fillvalue is not None and dt is not None:
        given = np.asarray(fillvalue)
        if dt.names is not None and given.dtype.names is None:
            # libhdf5 has no conversion from a number or a sequence to a compound type
            raise ValueError("Unable to synchronously create dataset (no appropriate "
                             "function for conversion path)")
        if given.dtype.kind == "U" and dt.kind not in "OSUT":
            raise TypeError(f"No conversion path for dtype: {given.dtype!r}")
