"""pandas HDFStore files (``DataFrame.to_hdf`` / ``pandas.read_hdf``) with no PyTables and no
libhdf5: ``read_hdf``, ``to_hdf`` and pandas' ``HDFStore`` (``store``), on purehep's File.

Both of pandas' formats are read: "fixed" (``fixed`` module) and "table" (``table`` module,
with ``where=`` conditions evaluated by numpy in ``where``). Both are written, for what pandas
itself can write and read back; see the README ("pandas HDFStore files") for what is not
covered. pandas is needed (the results are pandas objects); PyTables is not. What is read and
written follows the installed pandas, 2 or 3 (``convert`` names the differences).

Pickles: PyTables keeps some attribute values, and pandas' fixed format keeps object (string)
columns, as Python pickles. purehep unpickles them with an allow-list (numpy arrays, dtypes and
scalars, builtin values, fixed-offset, pytz and zoneinfo time zones, pandas date offsets,
pd.NA); a pickle naming any
other class or function raises ``UnsafePickleError`` without importing or calling it.
"""
from .convert import STORE_API_3_1
from .pickles import UnsafePickleError
from .pytables import PandasFormatError
from .store import NOT_GIVEN, HDFStore
from .where import UnsupportedWhereError

__all__ = ["read_hdf", "to_hdf", "HDFStore", "UnsafePickleError", "PandasFormatError",
           "UnsupportedWhereError"]


def read_hdf(path_or_buf, key=None, mode="r", where=None, start=None, stop=None, columns=None,
             iterator=False, chunksize=None):
    """pandas.read_hdf: the DataFrame or Series at ``key`` (optional when the file holds one
    object) of a file, file object, purehep File or HDFStore. ``where`` (a condition string
    or a list of them, ANDed), ``columns``: table format only; ``start``/``stop``: a row
    range; ``iterator``/``chunksize``: a TableIterator, which closes the file at its end."""
    if mode not in ("r", "r+", "a"):
        raise ValueError(f"mode {mode} is not allowed while performing a read. Allowed modes "
                         "are r, r+ and a.")
    opened = not isinstance(path_or_buf, HDFStore)
    store = HDFStore(path_or_buf, mode) if opened else path_or_buf
    try:
        if key is None:
            keys = store.keys()
            if not keys:
                raise ValueError("Dataset(s) incompatible with Pandas data types, not table, "
                                 "or no datasets found in HDF5 file.")
            if any(not k.startswith(keys[0] + "/meta/") for k in keys[1:]):
                raise ValueError("key must be provided when HDF5 file contains multiple "
                                 "datasets.")
            key = keys[0]
        return store.select(key, where=where, start=start, stop=stop, columns=columns,
                            iterator=iterator, chunksize=chunksize, auto_close=opened)
    except BaseException:
        if opened:
            store.close()
        raise


def to_hdf(obj, path_or_buf, key, mode="a", format=None, data_columns=None, complevel=None,
           complib=None, index=True, min_itemsize=None, append=False, nan_rep=None,
           encoding="UTF-8", errors="strict", dropna=NOT_GIVEN):
    """DataFrame.to_hdf / Series.to_hdf with purehep: HDFStore(path_or_buf, mode, complevel,
    complib).put(key, obj, ...), or .append with ``append`` (``dropna`` to either, as
    pandas; pandas 3.1 also gives put track_times=False). ``path_or_buf`` may be an open
    HDFStore. ``format`` "fixed" (the default) or "table" ("f"/"t"; the default with
    ``append``)."""
    put_options = {"dropna": dropna, **({"track_times": False} if STORE_API_3_1 else {})}

    def write(store):
        if append:
            store.append(key, obj, format=format, index=index, min_itemsize=min_itemsize,
                         nan_rep=nan_rep, dropna=dropna, data_columns=data_columns,
                         errors=errors, encoding=encoding)
        else:
            store.put(key, obj, format=format, index=index, min_itemsize=min_itemsize,
                      nan_rep=nan_rep, data_columns=data_columns, errors=errors,
                      encoding=encoding, **put_options)
    if isinstance(path_or_buf, HDFStore):
        write(path_or_buf)
    else:
        with HDFStore(path_or_buf, mode, complevel=complevel, complib=complib) as store:
            write(store)
