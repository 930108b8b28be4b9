"""purehep's exceptions: every failure to read a file names the structure and the offset."""


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


class UnsupportedFeatureError(PurehepError, NotImplementedError):
    """The file is well formed but uses a feature purehep does not implement (named)."""


class AllocationError(PurehepError, MemoryError):
    """A read would need more memory than the machine has (the bytes needed named). It is a
    ``MemoryError``, as numpy's failure to allocate the same array under h5py is."""


class ValidationError(PurehepError, ValueError):
    """A file or object breaks a convention layered on HDF5 (e.g. HEP001 conformance)."""


class PurehepWarning(UserWarning):
    """Something in a file deserves attention but does not stop reading it."""
