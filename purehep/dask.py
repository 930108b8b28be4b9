"""``purehep.dask``: the dask bridge (purehep.integrations.dask) under a short name; dask is
imported when its functions are first called, never by ``import purehep``."""
from .integrations.dask import close_files, dataset_chunks, from_dataset, read_table

__all__ = ["from_dataset", "read_table", "dataset_chunks", "close_files"]
