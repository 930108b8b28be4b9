"""Arkouda's HDF5 schema constants: ObjType values (Chapel ``ServerConfig.ObjType``), the
attribute names and types ``writeArkoudaMetaData``/``writeBigIntMetaData`` write, member names
(``HDF5Msg.chpl`` constants) and the file format values of ``prepFiles``."""
import numpy as np

from ..version import version

ARRAYVIEW, PDARRAY, STRINGS, SEGARRAY, CATEGORICAL, GROUPBY, DATAFRAME = range(7)
INDEX, MULTIINDEX = 12, 13
SINGLE_FILE, MULTI_FILE = 0, 1
FILE_VERSION = np.float32(2.0)
ARKOUDA_VERSION = f"purehep {version}"
# the legacy file-level metadata group; readAllHdfMsg skips a dataset of this name
LEGACY_METADATA_GROUP = "_arkouda_metadata"


def metadata(obj, objtype, is_bool=False, counts=None):
    """writeArkoudaMetaData (+ the NumKeys/NumCols/NumIdx counts): scalar attributes; ObjType
    and isBool Chapel ``int`` (int64), file_version ``real(32)``, arkouda_version an
    ``H5T_C_S1`` of strlen + 1 bytes, null-terminated."""
    attrs = obj.attrs
    attrs.create("ObjType", np.int64(objtype), dtype="<i8")
    if is_bool:
        attrs.create("isBool", np.int64(1), dtype="<i8")
    for name, count in (counts or {}).items():
        attrs.create(name, np.int64(count), dtype="<i8")
    attrs.create("file_version", FILE_VERSION, dtype="<f4")
    text = ARKOUDA_VERSION.encode("ascii")
    attrs.create("arkouda_version", np.bytes_(text), dtype=np.dtype(
        f"S{len(text) + 1}", metadata={"h5py_encoding": "ascii", "strpad": "nullterm"}))


def bigint_metadata(group, max_bits, num_limbs):
    """writeBigIntMetaData: isBigInt 1, MaxBits, NumLimbs (int64 scalars) on the group."""
    for name, value in (("isBigInt", 1), ("MaxBits", max_bits), ("NumLimbs", num_limbs)):
        group.attrs.create(name, np.int64(value), dtype="<i8")
