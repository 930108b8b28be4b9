"""``purehep.dask``: the dask bridge (purehep.integrations.dask) under a short name; importing
it imports dask, ``import purehep`` does not."""
from .integrations.dask import dataset_chunks, from_dataset, read_table

__all__ = ["from_dataset", "read_table", "dataset_chunks"]
