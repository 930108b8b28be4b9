"""Sparse datasets in structured chunk storage (Lifeboat/HDF Group sparse RFCs): the format
codecs live in purehep.format (layout class 4, per-section filter pipelines, structured chunk
metadata, dataspace selections, chunk index records); this package holds the sparse logic:
section 0/1 codecs (chunkcodec), chunk indexes of structured chunks (index), reading
(storage), writing (store, create) and the dataset API (api)."""
