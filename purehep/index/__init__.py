"""High-level indexing (the 2005 RFC "High Level Indexing in HDF5"): index tables and queries.

An index is an HDF5 table (H5TB layout) whose records hold key fields, sorted in precedence
order, and one variable-length target field of object references, region references or
element coordinates. ``create_index`` writes one, ``open_index`` binds to one, ``Index.query``
answers query strings (:mod:`purehep.query`) by binary search on the sorted keys,
``cache_index`` keeps one in memory, ``delete_index`` removes one, ``export_index`` /
``import_index`` move one through XML. Every choice the RFC leaves open is in README.md.
"""
from .model import Index, build_index, cache_index, create_index, delete_index, open_index
from .storage import TARGET_TYPES, is_index
from .xmlio import UnresolvedTargetError, export_index, import_index

__all__ = ["Index", "build_index", "create_index", "open_index", "cache_index",
           "delete_index", "export_index", "import_index", "is_index", "TARGET_TYPES",
           "UnresolvedTargetError"]
