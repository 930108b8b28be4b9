"""The writer: plan, then emit.

``model`` holds the in-memory object graph (groups, datasets, committed datatypes, their links
and attributes); ``policy`` decides what libhdf5 would write for a ``libver`` (format versions,
group and attribute storage, chunk index, chunk shape guess); ``values`` turns numpy values into
the bytes the file stores (variable-length data into global heap collections); ``chunked``
buffers, filters (on a thread pool) and places chunks; ``emit`` allocates addresses and writes
every metadata structure once, with the encoders of ``purehep.format``; ``writer`` ties it to a
``purehep.io.sink.FileSink`` (temporary file, atomic rename on close).
"""
