"""Versioned HDF5 in purehep: files laid out as the ``versioned-hdf5`` package (D. E. Shaw /
Quansight) writes them, read and written with purehep alone.

Layout (``/work/shared/reference/versioned-hdf5-layout.md``, verified against files of
versioned-hdf5 2.6.0): every dataset path ``p`` of any version owns
``/_version_data/p/raw_data`` (its unique chunks stacked along axis 0, edge chunks padded with
the fill value, chunks of fill values not stored) and ``/_version_data/p/hash_table`` (compound
``{hash: u1[32], shape: i8[2]}``, LZF, chunks 4096, attribute ``largest_index``). A chunk's key
is ``sha256(payload || str(trimmed shape))``. Each version is a group
``/_version_data/versions/<name>`` (attributes ``prev_version``, ``committed``, ``timestamp``
as ``%Y-%m-%d %H:%M:%S.%f%z`` UTC, plus the user's) of virtual datasets, one mapping per stored
chunk into raw_data of the same file (``"."``), with attributes ``chunks`` and ``raw_data``.
``/_version_data/versions`` holds ``current_version`` and ``data_version`` (4).

Usage, as the package's::

    import purehep
    from purehep.versioned import VersionedHDF5File

    with purehep.File("data.h5", "a") as f:
        vf = VersionedHDF5File(f)
        with vf.stage_version("v1") as group:
            group.create_dataset("x", data=np.arange(10_000.0), chunks=(1000,))
        with vf.stage_version("v2") as group:
            group["x"][0] = -10             # only the first chunk is stored again
        vf["v1"]["x"][()], vf["v2"]["x"][()], vf.current_version

Staging works chunk by chunk: a read of a staged dataset reads only the chunks it touches (from
raw_data through the previous version's mapping, or the chunks already modified), a write keeps
the chunks it touches (and resized edges) in memory; the commit hashes those, re-uses rows of
identical chunks, appends the others and writes each version's virtual datasets. Versions read
back as ordinary purehep groups of virtual datasets; ``delete_versions`` removes versions and
the chunks only they used; ``modify_metadata`` rewrites a dataset of every version for new
chunks, filters, dtype or fill value.
"""
from .api import VersionedHDF5File, DATA_VERSION, TIMESTAMP_FMT, Region
from .hashing import chunk_hash
from .replay import delete_version, delete_versions, modify_metadata

__all__ = ["VersionedHDF5File", "DATA_VERSION", "TIMESTAMP_FMT", "Region", "chunk_hash",
           "delete_version", "delete_versions", "modify_metadata"]
