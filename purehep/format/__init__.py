"""HDF5 format structures, levels 0-2 of the spec: one module per structure, no policy."""
