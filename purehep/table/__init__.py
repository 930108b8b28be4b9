"""HEP001 column-oriented tables: table groups, columns, row indexes, the four search
indexes (CHUNK_MINMAX, SORTED_ROWS, BITMAP, CHUNK_BLOOM), a validator and a query engine
that uses the indexes. Choices where the standard is silent: README.md in this package."""
from .indexes import KINDS, SearchIndex
from .table import CLASS, VERSION, Table, create_table, is_table, open_table
from .validate import validate

__all__ = ["Table", "create_table", "open_table", "is_table", "validate", "KINDS",
           "SearchIndex", "CLASS", "VERSION"]
