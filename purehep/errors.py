"""purehep's exceptions: every failure to read a file names the structure and the offset."""
import sys
import warnings


def warn(message, category):
    """``warnings.warn`` attributed to the code that called purehep: the first frame outside
    the package (as h5py's warnings point at the caller's line), however many purehep calls
    lie between (hl/serialize.py's wrappers among them)."""
    frame, level = sys._getframe(1), 2      # (stacklevel 2: the caller of warn)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("purehep."):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class PurehepError(Exception):
    """Base class of every error purehep raises on purpose."""


class FormatError(PurehepError, OSError, ValueError):
    """The bytes do not form the structure the spec describes.

    It is an ``OSError``, as h5py's errors for unreadable files are (code written for h5py
    catches those), and stays a ``ValueError`` for code written against earlier purehep.

    ``structure`` names the spec structure being decoded and ``offset`` is the absolute file
    offset (in bytes from the start of the file, not the base address) where it was read.
    """

    def __init__(self, message, structure=None, offset=None):
        self.structure = structure
        self.offset = offset
        where = []
        if structure:
            where.append(structure)
        if offset is not None:
            where.append(f"at offset {offset}")
        prefix = f"{' '.join(where)}: " if where else ""
        super().__init__(prefix + message)
        self.reason = message


class ChecksumError(FormatError):
    """A stored checksum does not match the bytes it covers."""


class TruncatedError(FormatError):
    """A structure extends past the end of the file (or of its enclosing block)."""


class FilterConfigurationError(FormatError, TypeError):
    """A filter's client data is no configuration of it (an szip option mask naming neither
    entropy coding nor nearest neighbour): a ``TypeError`` too, as h5py's reading of the
    pipeline raises for it."""


class AllocationError(PurehepError, MemoryError):
    """A read needs an array larger than memory holds (or than numpy can index): the
    extent a file declares is valid, but no array of its size can be made. It is a
    ``MemoryError``, as numpy's failure to allocate the same array under h5py is."""


class LinkTraversalError(PurehepError, RuntimeError):
    """Resolving a path followed more soft or external links than libhdf5 does (16): a link
    cycle. A ``RuntimeError``, as h5py raises for it."""


class DimensionScaleError(PurehepError, RuntimeError):
    """A dimension-scale call failed as libhdf5's H5DS functions fail (a DIMENSION_LIST
    naming a dataset that is not a scale, for one): h5py reports those as ``RuntimeError``."""


class UnsupportedFeatureError(PurehepError, NotImplementedError):
    """The file is well formed but uses a feature purehep does not implement (named)."""


class ValidationError(PurehepError, ValueError):
    """A file or object breaks a convention layered on HDF5 (e.g. HEP001 conformance)."""


class PurehepWarning(UserWarning):
    """Something in a file deserves attention but does not stop reading it."""


class ReadOnlyError(PurehepError, PermissionError, ValueError):
    """A write mode was asked of a file that can only be read (one reached through fsspec).
    An ``OSError``, as h5py's failure to open a file for writing is."""
