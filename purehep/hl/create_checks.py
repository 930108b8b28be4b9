"""h5py's rules for the arguments of the calls that create: the checks h5py makes before
anything is created, with its exception types (the same call fails the same way in both
libraries, and at the call rather than at close), and the values it takes as others do."""
import numpy as np


def check_create_args(shape, dtype, data, chunks, maxshape, compression, compression_opts,
                      scaleoffset, fillvalue, track_times, fill_time=None, fletcher32=False):
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
    from .base import Empty
    scalar = shape == () or (shape is None and data is not None and np.ndim(data) == 0
                             and not isinstance(data, Empty))
    if scalar and (chunks not in (None, False) or compression is not None or
                   scaleoffset not in (None, False)):
        raise TypeError("Scalar datasets don't support chunk/filter options")
    if track_times is not None and track_times not in (True, False):
        raise TypeError("track_times must be either True or False")
    if compression == "lzf" and compression_opts is not None:
        raise ValueError("LZF compression filter accepts no options")
    if fletcher32 and _variable_length(dtype, data):
        # H5Z_ignore_filters: a variable-length type takes no filter that is not optional
        raise ValueError("Unable to synchronously create dataset (not suitable for filters)")
    if (scaleoffset is None or scaleoffset is False) and fillvalue is None:   # (0 is a factor)
        return
    dt = np.dtype(dtype) if dtype is not None else \
        (np.asarray(data).dtype if data is not None else None)
    if scaleoffset is not None and scaleoffset is not False:
        if scaleoffset < 0:
            raise ValueError("scale factor must be >= 0")
        if fletcher32:
            raise ValueError("fletcher32 cannot be used with potentially lossy scale/offset "
                             "filter")
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


def _variable_length(dtype, data):
    """Whether the dataset's type is variable-length (h5py's object dtypes: strings and
    sequences; numpy's StringDType), from ``dtype`` or else from ``data``."""
    if dtype is None:
        dtype = getattr(data, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "OT"


def link_name(name):
    """A link name or path as h5py takes it: str, or bytes (UTF-8)."""
    if isinstance(name, bytes):
        return name.decode("utf-8", "surrogateescape")
    if not isinstance(name, str):
        raise TypeError(f"A name should be string or bytes, not {type(name)}")
    return name


def h5py_dtype(dtype):
    """``dtype`` as h5py stores it: numpy 2's variable-width StringDType ('T') is a
    variable-length UTF-8 string."""
    dtype = np.dtype(dtype)
    if dtype.kind == "T":
        from ..dtypes import string_dtype
        return string_dtype()
    return dtype


def no_embedded_nul(arr):
    """libhdf5 keeps variable-length strings as C strings: h5py refuses a NUL inside one."""
    for item in arr.reshape(-1):
        if isinstance(item, (str, bytes)) and ("\0" if isinstance(item, str) else b"\0") in item:
            raise ValueError("VLEN strings do not support embedded NULLs")


def check_required(have_shape, have_maxshape, have_dtype, shape, dtype, exact, kwds):
    """require_dataset's checks of an existing dataset against the shape, ``maxshape`` (in
    ``kwds``) and dtype asked for, h5py's TypeErrors."""
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
    if tuple(have_shape) != shape:
        if "maxshape" not in kwds:
            raise TypeError(f"Shapes do not match (existing {have_shape} vs new {shape})")
        maxshape = kwds["maxshape"]
        maxshape = (maxshape,) if isinstance(maxshape, int) or maxshape is None else \
            tuple(maxshape)
        if maxshape != tuple(have_maxshape):
            raise TypeError(f"Max shapes do not match (existing {have_maxshape} vs new "
                            f"{maxshape})")
    dt = np.dtype(dtype)
    if exact and dt != have_dtype:
        raise TypeError(f"Datatypes do not exactly match (existing {have_dtype} vs new {dt})")
    if not np.can_cast(dt, have_dtype):
        raise TypeError(f"Datatypes cannot be safely cast (existing {have_dtype} vs new {dt})")


def check_storable(val, dtype):
    """Raise now, as h5py does when values are given, for values ``dtype`` cannot store
    (they would fail the commit at flush or close)."""
    from ..write import values as V
    kind = (dtype.metadata or {}).get("ref")
    if kind is not None:
        _check_refs(val, kind)
    V.check(val, dtype)


def _check_refs(val, kind):
    """h5py's TypeError for a reference of the other kind (object or region) than the
    dataset's, or a value that is no reference."""
    from ..reference import RegionReference
    region = issubclass(kind, RegionReference)
    for v in np.ravel(np.asarray(val, dtype=object)):
        if v is not None and (isinstance(v, RegionReference) != region or
                              not isinstance(v, kind)):
            raise TypeError(f"Can't convert element {v!r} to "
                            f"{'hdset_reg_ref_t' if region else 'hobj_ref_t'}")
