"""The byte map of an HDF5 file (``purehep inspect``) and the conformance checker
(``purehep check``): see ``walker``, ``account`` and ``check``."""
from .structure import Finding, Structure
from .walker import FileMap, walk, walk_path
from .account import account

__all__ = ["Finding", "Structure", "FileMap", "walk", "walk_path", "account"]
