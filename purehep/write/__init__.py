"""The writer: one write path for new and existing files (a new file is an empty file opened
for modification).

``newfile`` writes the superblock and empty root group of a new file for its ``libver``;
``writer`` is the session over a file (stage, commit, close; locking in purehep.io.sink);
``model`` holds the in-memory object graph (groups, datasets, committed datatypes, their links
and attributes), with the objects already in the file as ``existing`` nodes; ``policy`` decides
what libhdf5 would write for a ``libver`` (format versions, group and attribute storage, chunk
index, chunk shape guess); ``values`` turns numpy values into the bytes the file stores
(variable-length data into global heap collections); ``storage`` buffers, filters (on a thread
pool) and places raw data; ``emit`` encodes new objects with the encoders of
``purehep.format``; ``update`` rewrites changed existing objects (``incremental`` edits their
B-trees, heaps and arrays in place; ``header`` rewrites their object headers); ``allocator``
finds file space.
"""
