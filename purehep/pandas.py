"""``purehep.pandas``: pandas HDFStore files without PyTables (purehep.integrations.pandas_hdf)
under a short name; importing it imports pandas (``import purehep`` alone does not)."""
from .integrations.pandas_hdf import (HDFStore, PandasFormatError, UnsafePickleError,
                                      UnsupportedWhereError, read_hdf, to_hdf)

__all__ = ["read_hdf", "to_hdf", "HDFStore", "UnsafePickleError", "PandasFormatError",
           "UnsupportedWhereError"]
