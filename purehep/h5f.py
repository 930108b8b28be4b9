"""h5py's ``h5f`` constants as far as purehep has them: the library version bounds of
H5Pset_libver_bounds (purehep.h5p.LIBVER, h5py's ``libver`` names) and the access flags of
H5Fopen, numbered as libhdf5 2.0's H5F_libver_t and H5F_ACC_*, and the file space strategies
of H5Pset_file_space_strategy (H5F_fspace_strategy_t)."""
from . import h5p
from .h5p import LIBVER

LIBVER_EARLIEST, LIBVER_V18, LIBVER_V110, LIBVER_V112, LIBVER_V114, LIBVER_V200 = \
    (LIBVER[n] for n in ("earliest", "v108", "v110", "v112", "v114", "v200"))
LIBVER_LATEST = LIBVER["latest"]
ACC_RDONLY, ACC_RDWR, ACC_TRUNC, ACC_EXCL = 0x00, 0x01, 0x02, 0x04
ACC_SWMR_WRITE, ACC_SWMR_READ, ACC_DEFAULT = 0x20, 0x40, 0xFFFF
UNLIMITED = (1 << 64) - 1    # H5F_UNLIMITED: an external file of unlimited size
FSPACE_STRATEGY_FSM_AGGR, FSPACE_STRATEGY_PAGE, FSPACE_STRATEGY_AGGR, FSPACE_STRATEGY_NONE = \
    (getattr(h5p, f"FSPACE_STRATEGY_{n}") for n in ("FSM_AGGR", "PAGE", "AGGR", "NONE"))
