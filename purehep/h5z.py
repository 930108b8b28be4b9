"""h5py's ``h5z`` as far as purehep has it: the filter identifiers of the Filter Pipeline
message (spec IV.A.2.l; registered ids such as LZF's from The HDF Group's list), their
flags, and ``filter_avail``, whether purehep can apply a filter (purehep.filters)."""
FILTER_DEFLATE, FILTER_SHUFFLE, FILTER_FLETCHER32, FILTER_SZIP, FILTER_NBIT, \
    FILTER_SCALEOFFSET = 1, 2, 3, 4, 5, 6
FILTER_LZF = 32000
FILTER_ALL = 0                      # H5Premove_filter: every filter
FLAG_MANDATORY, FLAG_OPTIONAL = 0, 1    # a filter's flags (bit 0: optional)


def filter_avail(filter_id):
    """H5Zfilter_avail: whether a filter of this id is available (built in, or registered)."""
    from .filters import available
    return bool(available(filter_id))
