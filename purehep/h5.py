"""h5py's ``h5`` as far as purehep has it: ``get_config()``, the process-wide settings h5py
reads its defaults from (its H5PYConfig), and the index types and iteration orders of H5L /
H5A iteration.

``track_order`` is honoured: the default of ``track_order`` for new files, groups and
datasets; so is ``complex_names``, the member names of the compounds that stand for complex
numbers, read and written (purehep.format.messages.datatype.complex_names). The names of
the FALSE/TRUE enum that stands for numpy bool are those h5py uses by default and fixed:
setting others raises UnsupportedFeatureError (checked first as h5py checks them: two names,
TypeError otherwise).
No MPI, ROS3 or direct file driver; HDF5 2.0's complex datatype class is read and written.
"""
from .errors import UnsupportedFeatureError
from .format.messages.datatype import complex_names as _complex_names

INDEX_NAME, INDEX_CRT_ORDER = 0, 1                 # H5_index_t
ITER_INC, ITER_DEC, ITER_NATIVE = 0, 1, 2          # H5_iter_order_t


def in_index_order(items, index_type, order, creation_order, name, what):
    """``items`` sorted as libhdf5 iterates an index (H5_index_t ``index_type``, H5_iter_order_t
    ``order``): by ``creation_order(item)`` (RuntimeError naming ``what`` when one has none
    tracked) or by ``name(item)``'s UTF-8 bytes; with libhdf5's errors for other values."""
    if index_type == INDEX_CRT_ORDER:
        if any(creation_order(i) is None for i in items):
            raise RuntimeError(f"{what} iteration failed (no creation order index to query)")
        items.sort(key=creation_order)
    elif index_type == INDEX_NAME:
        items.sort(key=lambda i: name(i).encode("utf-8", "surrogateescape"))
    else:
        raise ValueError("Invalid index type specified (invalid index type specified)")
    if order == ITER_DEC:
        items.reverse()
    elif order not in (ITER_INC, ITER_NATIVE):
        raise ValueError("Invalid iteration order specified (invalid iteration order "
                         "specified)")
    return items
BOOL_NAMES = (b"FALSE", b"TRUE")      # the enum purehep.format.messages.datatype maps to bool


class H5PYConfig:
    """The settings (one object: ``get_config()``)."""
    mpi = ros3 = direct_vfd = False
    has_native_complex = True

    def __init__(self):
        self._track_order = False

    @property
    def track_order(self):
        """Whether new files, groups and datasets track creation order by default."""
        return self._track_order

    @track_order.setter
    def track_order(self, value):
        self._track_order = bool(value)

    @property
    def complex_names(self):
        """The names of the real and imaginary members of the compounds read and written
        as complex numbers (h5py's default ('r', 'i'))."""
        return _complex_names()

    @complex_names.setter
    def complex_names(self, names):
        """Two names, str or UTF-8 bytes, as h5py takes them (TypeError otherwise)."""
        try:
            if isinstance(names, (str, bytes)) or len(names) != 2:
                raise TypeError
            names = [n.decode("utf-8") if isinstance(n, bytes) else n for n in names]
            if not all(isinstance(n, str) for n in names):
                raise TypeError
        except (TypeError, UnicodeDecodeError):
            raise TypeError("complex_names must be a length-2 sequence of strings "
                            "(real, img)") from None
        _complex_names(names)

    @property
    def _r_name(self):
        """The name of the real part's member, as compound members name it (bytes)."""
        return _complex_names()[0].encode()

    @property
    def _i_name(self):
        return _complex_names()[1].encode()

    @property
    def bool_names(self):
        return BOOL_NAMES

    @bool_names.setter
    def bool_names(self, names):
        _fixed(names, BOOL_NAMES, "bool enum names", bytes)


def _fixed(names, fixed, what, kind):
    if not (isinstance(names, tuple) and len(names) == 2 and
            all(isinstance(n, kind) for n in names)):
        raise TypeError(f"{what} must be a tuple of two {kind.__name__}")
    if names != fixed:
        raise UnsupportedFeatureError(f"{what} other than {fixed} (purehep's are fixed)")


_CONFIG = H5PYConfig()


def get_config():
    """The process-wide settings object (always the same one)."""
    return _CONFIG
