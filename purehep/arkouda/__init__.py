"""Arkouda's HDF5 schema: objects, single files and distributed (one file per locale) sets.

Modules: ``schema`` (ObjType values, attribute writers), ``objects`` (the objects, their
distribution over locales, builders from Python data), ``convert`` (plain data to objects and
the check that the current server reads what is written), ``files`` (write, read).

Sources: the schema document (Arkouda ``pydoc/file_io/HDF5.md``, seed
``arkouda-hdf5-schema.txt``) and, where it is silent or loose, what the Arkouda server writes
(``src/HDF5Msg.chpl``, ``src/ServerConfig.chpl``, ``src/FileIO.chpl`` of Bears-R-Us/arkouda).

Attributes (``writeArkoudaMetaData`` and its siblings), all with a scalar dataspace:

* ``ObjType``: Chapel ``int`` = 64-bit little-endian signed integer; values from the
  ``ServerConfig.ObjType`` enum: ARRAYVIEW 0, PDARRAY 1, STRINGS 2, SEGARRAY 3,
  CATEGORICAL 4, GROUPBY 5, DATAFRAME 6, INDEX 12, MULTIINDEX 13. ARRAYVIEW is still in the
  enum but ``readAllHdfMsg`` no longer reads it ("Unknown object type found"; removed with
  arkouda #3752): purehep reads it and writes it only when asked (``arrayview=True``).
* ``isBool``: int64 ``1``, written only when the data are boolean (the server tests
  ``dtype == H5T_NATIVE_HBOOL``); boolean data are stored as ``H5T_NATIVE_HBOOL``, which
  libhdf5 (H5T.c) makes a native unsigned integer of ``sizeof(bool)``: uint8. A SegArray group of boolean values carries it too (its dtype is passed on).
* ``file_version``: ``real(32)`` = float32 ``2.0``.
* ``arkouda_version``: ``H5T_C_S1`` copy = fixed-length ASCII string of strlen + 1 bytes,
  null-terminated (``H5T_STR_NULLTERM``).
* ArrayView datasets add ``Rank`` (int64 scalar) and ``Shape`` (int64, 1-D of length Rank).
* GroupBy, DataFrame and Index groups add ``NumKeys``, ``NumCols``, ``NumIdx`` (int64) and
  carry no ``isBool``.
* The root of each file gets ``File_Format`` (int64): 0 single file, 1 one file per locale,
  written when the file is created (``prepFiles``).

Layouts (member names are the server's constants): Strings and SegArray groups hold
``values`` and ``segments`` (int64 start offsets; Strings values are the UTF-8 bytes of every
string followed by a null byte, uint8); Categorical groups hold ``codes``, ``categories`` (a
Strings group), ``NA_Codes`` and, when the Categorical has them, ``permutation`` and
``segments``; GroupBy groups hold ``segments``, ``permutation``, ``unique_key_idx`` and
``KEY_<i>``; DataFrame groups hold ``Index`` and one member per column; Index groups hold
``IDX_<i>``. All datasets are one-dimensional (ArrayView data are flattened).

BigInt pdarrays (``pdarray_tohdfMsg``, DType.BigInt) are groups, not datasets: the group
carries ``isBigInt`` 1, ``MaxBits`` (-1 = unbounded) and ``NumLimbs`` (``writeBigIntMetaData``,
int64 scalars) plus the pdarray metadata (ObjType 1), and holds ``Limb_0`` .. ``Limb_<n-1>``,
uint64 datasets with their own pdarray metadata, least significant 64 bits first
(``bigintToUint``: the low 64 bits, then shift right until every value is 0; at least one
limb). Reading sums ``limb_i << 64 i`` and masks with ``2**MaxBits - 1`` when MaxBits is
not -1 (``readBigIntPdarrayFromFile``). The same group stands for a BigInt wherever a
pdarray may (SegArray ``values``, GroupBy ``KEY_<i>``, DataFrame columns, Index levels); a
distributed BigInt has the group in every file with the whole array's limb count, each limb
block-distributed. purehep returns them as ``BigInt`` (Python ints in an object array).

Files from before ``file_version`` 2.0 carry a ``/_arkouda_metadata`` group (file-level
``arkouda_version`` and ``file_version`` 1.0); ``readAllHdfMsg`` skips that name, and so does
``read``.

Distributed files are named ``<prefix>_LOCALE<i:04d><extension>`` (``generateFilename``).
Every array is block-distributed on its own (Chapel's Block distribution, ``_computeBlock``:
locale ``i`` of ``L`` holds ``[ceil(n*i/L), ceil(n*(i+1)/L))``), so each component of a Categorical, GroupBy,
DataFrame or Index is split independently, and empty parts are empty datasets. Strings and
SegArrays are split by their segments: each file holds whole elements, with its segments
rebased to start at 0 (``writeSegmentedDistDset``: ``localSegs - startValIdx``); reading
concatenates the parts and adds back the running length of the values.

Choices where the server is irregular: every member dataset and group gets the full metadata
the schema document lists (the server omits it on single-file Categorical members and Index
``IDX_<i>`` datasets, and writes only ``ObjType`` on empty distributed Strings parts).
What is written is what the current server reads (``convert`` lists it, checked at the call);
where the seed's schema and the server disagree (ArrayView; DataFrame index and column types;
GroupBy keys), files of both forms are read. Reading needs only what the schema requires: missing optional attributes are fine, a missing
``ObjType`` is inferred from the members (the schema's legacy rule: a group whose ``values``
are uint8 is a Strings), and Strings without ``segments`` are split at their null bytes.
DataFrame columns are read back in the file's member order (by name). As in Arkouda, a
truncating distributed write replaces only the files of its own locales; reading a prefix
globs every ``<prefix>_LOCALE*`` file.
"""

from .convert import coerce
from .files import locale_filenames, read, write
from .objects import (ArrayView, BigInt, Categorical, DataFrame, GroupBy, Index, SegArray,
                      Strings)
from .schema import (ARKOUDA_VERSION, ARRAYVIEW, CATEGORICAL, DATAFRAME, FILE_VERSION, GROUPBY,
                     INDEX, MULTI_FILE, MULTIINDEX, PDARRAY, SEGARRAY, SINGLE_FILE, STRINGS)

__all__ = ["ArrayView", "BigInt", "Strings", "SegArray", "Categorical", "GroupBy", "DataFrame",
           "Index", "write", "read", "locale_filenames", "coerce", "ARKOUDA_VERSION",
           "FILE_VERSION", "ARRAYVIEW", "PDARRAY", "STRINGS", "SEGARRAY", "CATEGORICAL",
           "GROUPBY", "DATAFRAME", "INDEX", "MULTIINDEX", "SINGLE_FILE", "MULTI_FILE"]
