"""h5py's ``h5d`` constants as far as purehep has them: the fill times and allocation times
of the Fill Value message (spec IV.A.2.f) and the layout classes of the Data Layout message
(IV.A.2.i), numbered as libhdf5's H5D_fill_time_t, H5D_alloc_time_t and H5D_layout_t."""
FILL_TIME_ALLOC, FILL_TIME_NEVER, FILL_TIME_IFSET = 0, 1, 2
ALLOC_TIME_DEFAULT, ALLOC_TIME_EARLY, ALLOC_TIME_LATE, ALLOC_TIME_INCR = 0, 1, 2, 3
COMPACT, CONTIGUOUS, CHUNKED, VIRTUAL = 0, 1, 2, 3
