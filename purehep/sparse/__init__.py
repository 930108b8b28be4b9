"""Sparse datasets (Lifeboat/HDF Group sparse RFCs) are structured chunk storage, layout class
4, which the core knows as it knows every layout the spec registers (DESIGN.md, "Extensions
are modules, not flags"): the section codecs are in purehep.format (sparse_sections,
structured_chunk, messages.struct_pipeline), reading in purehep.chunks (structured,
structured_index), writing in purehep.write.structured, and the programming model (``defined``,
``erase``, ``read_sparse``, ``write_sparse``, the structured chunk calls, and create_dataset's
``sparse=True``) on purehep.Dataset in purehep.hl.sparse. This package holds what sits above:
how the ``purehep`` command shows sparse datasets (dump)."""
