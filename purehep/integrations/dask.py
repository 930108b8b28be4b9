"""Dask bridge (the ``dask`` extra): purehep datasets as ``dask.array`` arrays and HEP001
tables as ``dask.dataframe`` frames, for the threaded scheduler and distributed clusters.

Tasks hold picklable purehep objects: a Dataset of a file opened read-only by path or URL
pickles as what reopens it (purehep.hl.reopen), and each worker process opens each file once.
``dask.array.from_array(ds, chunks=ds.chunks)`` works on a purehep Dataset directly; this
module adds blocks aligned with the stored chunks, many files as one array, and tables.
Dask is imported here only (https://docs.dask.org/en/stable/array-creation.html,
https://docs.dask.org/en/stable/dataframe-create.html).
"""
import glob
import os

import numpy as np

from ..hl.reopen import close_shared as close_files, reopen_spec, shared_file

__all__ = ["from_dataset", "read_table", "dataset_chunks", "close_files"]


def _paths(path_or_url):
    """The files named: a list of them, a glob pattern of local files (an Arkouda locale set
    ``prefix_LOCALE*``, in sorted order), or one path or URL."""
    if isinstance(path_or_url, (list, tuple)):
        return [os.fspath(p) for p in path_or_url]
    path = os.fspath(path_or_url)
    if "://" not in path and glob.has_magic(path):
        found = sorted(glob.glob(os.path.expanduser(path)))
        if not found:
            raise FileNotFoundError(f"no file matches {path!r}")
        return found
    return [path]


def _open(path, open_kw):
    """The file at ``path`` read-only, shared by this process (as workers share theirs) until
    ``close_files()``."""
    name, options = reopen_spec(path, "r", open_kw)
    return shared_file(name, options)


def dataset_chunks(ds, chunks=None):
    """Dask blocks for ``ds``: ``chunks`` as dask takes them (default "auto": blocks near
    dask's ``array.chunk-size``), made multiples of the stored chunks where the dataset is
    chunked (block sizes given rounded to the nearest multiple), so that no stored chunk is
    decoded by two tasks."""
    from dask.array.core import normalize_chunks
    blocks = normalize_chunks("auto" if chunks is None else chunks, ds.shape, dtype=ds.dtype,
                              previous_chunks=ds.chunks)
    if ds.chunks is None:
        return blocks
    return tuple(_aligned(b, c, n) for b, c, n in zip(blocks, ds.chunks, ds.shape))


def _aligned(blocks, chunk, n):
    """One dimension's blocks, regular multiples of ``chunk`` unless they already are
    multiples (the last block may be short)."""
    if all(b % chunk == 0 for b in blocks[:-1]):
        return blocks
    size = max(1, round(blocks[0] / chunk)) * chunk
    return tuple(min(size, n - lo) for lo in range(0, n, size))


def _array(ds, chunks, path):
    import dask.array as da
    from dask.base import tokenize
    stat = os.stat(path) if os.path.exists(path) else None
    token = tokenize(path, ds.name, chunks, stat and (stat.st_size, stat.st_mtime_ns))
    return da.from_array(ds, chunks=chunks, name=f"purehep-{token}", lock=False,
                         inline_array=True, meta=np.empty((0,) * ds.ndim, ds.dtype))


def from_dataset(path_or_url, name, chunks=None, **open_kw):
    """Dataset ``name`` as a ``dask.array``; many files (a list or a glob pattern)
    concatenated along axis 0 into one array (their other dimensions and dtypes must agree).
    ``chunks``: dask's chunks argument for each file's dataset (default: see
    ``dataset_chunks``); ``open_kw``: purehep.File's keyword arguments."""
    import dask.array as da
    parts = []
    for path in _paths(path_or_url):
        ds = _open(path, open_kw)[name]
        if parts and (ds.shape[1:] != parts[0].shape[1:] or ds.dtype != parts[0].dtype):
            raise ValueError(f"{path}:{name} has shape {ds.shape} and dtype {ds.dtype}; the "
                             f"first file's has {parts[0].shape}, {parts[0].dtype}")
        parts.append(_array(ds, dataset_chunks(ds, chunks), path))
    return parts[0] if len(parts) == 1 else da.concatenate(parts, axis=0)


class _TablePart:
    """Reads one span of rows of a table (a partition): on a worker, its file is opened once
    per process; with a filter, the rows where it holds, evaluated as table.query does."""

    def __init__(self, file, group, columns, filter):
        self.file, self.group, self.columns, self.filter = file, group, columns, filter

    def __call__(self, span):
        from ..query import parse
        from ..table import Table
        from ..table.planner import rows_in_span
        lo, hi = span
        table = Table(shared_file(*self.file)[self.group], indexes="ignore")
        rows = np.arange(lo, hi, dtype=np.int64) if self.filter is None else \
            rows_in_span(table, parse(self.filter), lo, hi)
        return table.to_pandas(rows=rows, fields=self.columns)


def _rows_per_partition(table, fields, length, rows):
    """Rows in each partition: a multiple of the column chunk length ``length``, by default
    near dask's ``array.chunk-size`` of the columns read."""
    if rows is None:
        import dask
        from dask.utils import parse_bytes
        target = parse_bytes(dask.config.get("array.chunk-size"))
        row_bytes = sum(max(table._ds(f).dtype.itemsize, 8) for f in fields)
        rows = target // max(row_bytes, 1)
    return max(1, -(-int(rows) // length)) * length


def read_table(path, name, columns=None, filter=None, *, rows_per_partition=None,
               indexes="verify", **open_kw):
    """HEP001 table ``name`` as a ``dask.dataframe``: one partition per span of stored
    chunks (``rows_per_partition`` rounded up to whole chunks of the first column read).

    With ``filter`` (purehep.table's query language, e.g. ``"energy > 5"``) each partition
    holds exactly the rows where it holds, as ``Table.query``; spans that the table's
    CHUNK_MINMAX (or CHUNK_BLOOM) indexes rule out are dropped before any data is read.
    ``indexes`` is the Table's index mode for that pruning, with the Table's default:
    "verify" checks each index against its column first (reading the column once, HEP001
    §12); "trust" reads only the indexes, so an index made stale behind the Table API's back
    could drop rows; "ignore" prunes nothing.
    Rows are labelled by their row numbers (or the table's ``_index`` when ``columns`` is
    None and it has one, as ``Table.to_pandas``)."""
    import dask.dataframe as dd
    from ..query import parse
    from ..table import Table
    from ..table.frames import _index_name
    from ..table.indexes import chunk_length
    from ..table.planner import chunk_candidates
    f = _open(path, open_kw)
    table = Table(f[name], indexes=indexes)
    fields = list(columns) if columns is not None else table.columns
    n = len(table)
    step = _rows_per_partition(table, fields, chunk_length(table._ds(fields[0])) if n else 1,
                               rows_per_partition)
    spans = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
    if filter is not None:
        may = chunk_candidates(table, parse(filter))
        spans = [(lo, hi) for lo, hi in spans if may.rows_in(lo, hi).any()]
    part = _TablePart(f._reopen, table.group.name, None if columns is None else fields, filter)
    meta = part((0, 0))
    if not spans:
        return dd.from_pandas(meta, npartitions=1)
    divisions = None
    if _index_name(table, part.columns) is None:      # labels are row numbers: sorted
        divisions = [lo for lo, _ in spans] + [spans[-1][1] - 1]
    return dd.from_map(part, spans, meta=meta, divisions=divisions, label="purehep-table",
                       enforce_metadata=False)
