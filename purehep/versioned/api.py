"""VersionedHDF5File: versions of a file's datasets, read and staged (the package's api.py and
versions.py, over /work/shared/reference/versioned-hdf5-layout.md §1, §2, §6)."""
import datetime
from contextlib import contextmanager

import numpy as np

from .backend import (DATA_GROUP, check_raw_data, commit_chunks, create_raw_data, dataset_names,
                      is_vlen_string, open_raw_data, raw_path, rebuild_hash_table,
                      remember_mapping, write_virtual_dataset)
from .group import StagedGroup

DATA_VERSION = 4
CORRUPT_DATA_VERSIONS = frozenset([2, 3])
FIRST_VERSION = "__first_version__"
TIMESTAMP_FMT = "%Y-%m-%d %H:%M:%S.%f%z"
FORBIDDEN_NAMES = ("versions",)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def format_timestamp(timestamp):
    """A version timestamp as stored (``%Y-%m-%d %H:%M:%S.%f%z``, UTC): from a UTC
    datetime or a (UTC) numpy datetime64."""
    if isinstance(timestamp, np.datetime64):
        timestamp = timestamp.astype("datetime64[us]").astype(datetime.datetime).replace(
            tzinfo=datetime.timezone.utc)
    elif not isinstance(timestamp, datetime.datetime):
        raise TypeError("timestamp must be either a datetime.datetime or numpy.datetime64 "
                        "object")
    if timestamp.utcoffset() != datetime.timedelta(0):
        raise ValueError("timestamp must be in UTC")
    return timestamp.strftime(TIMESTAMP_FMT)


def initialize(f):
    """The ``_version_data/versions`` tree of a new versioned file."""
    versions = f.create_group(f"{DATA_GROUP}/versions")
    first = versions.create_group(FIRST_VERSION)
    versions.attrs["current_version"] = FIRST_VERSION
    first.attrs["timestamp"] = format_timestamp(utc_now())
    versions.attrs["data_version"] = np.int64(DATA_VERSION)


class VersionedHDF5File:
    """The versions stored in an open ``purehep.File`` (created on first use if the file is
    writable), as versioned-hdf5's class of the same name."""

    def __init__(self, f):
        self.f = f
        self._closed = False
        self._written = []      # (virtual dataset, chunks, mapping) of the last commit
        self._tables = {}       # dataset name -> the Hashtable the last commit left
        if DATA_GROUP not in f:
            initialize(f)
        self._check_data_version()

    @property
    def closed(self):
        """True once :meth:`close` was called or the file was closed."""
        if not self._closed and not self.f:
            self._closed = True
        return self._closed

    def close(self):
        """Let go of the file (which stays open: close it separately), as the package's."""
        self.__dict__.pop("f", None)
        self._closed = True

    def _check_open(self, message="File is closed"):
        if self.closed:
            raise ValueError(message)

    def _check_data_version(self):
        version = int(self._versions.attrs.get("data_version", 1))
        if version in CORRUPT_DATA_VERSIONS:
            raise ValueError(f"Versioned HDF5 file {self.f.filename} has data_version "
                             f"{version}, which has corrupted hash tables")
        if version > DATA_VERSION:
            raise ValueError(f"{self.f.filename} was written by a later version of "
                             "versioned-hdf5")
        if version < DATA_VERSION and self.f.mode == "r+" and not self._has_string_data():
            self._versions.attrs["data_version"] = np.int64(DATA_VERSION)

    def _has_string_data(self):
        found = []
        self.f[DATA_GROUP].visititems(lambda name, obj: found.append(name)
                                      if name.endswith("raw_data")
                                      and is_vlen_string(obj.dtype) else None)
        return bool(found)

    @property
    def _versions(self):
        return self.f[f"{DATA_GROUP}/versions"]

    @property
    def data_version_identifier(self):
        return int(self._versions.attrs.get("data_version", 1))

    @property
    def current_version(self):
        return self._versions.attrs["current_version"]

    @current_version.setter
    def current_version(self, name):
        if name not in self._versions:
            raise ValueError(f"Version {name!r} not found")
        self._versions.attrs["current_version"] = name

    @property
    def versions(self):
        """Names of the committed versions (``__first_version__`` excluded)."""
        return [name for name in self._versions if name != FIRST_VERSION]

    def __iter__(self):
        return iter(self.versions)

    def __getitem__(self, item):
        """A version's group, by name, by ``None`` (the current version), by a negative
        integer (that many versions before the current one) or by timestamp."""
        self._check_open()
        if item is None:
            return self.get_version_by_name(self.current_version)
        if isinstance(item, str):
            return self.get_version_by_name(item)
        if isinstance(item, (int, np.integer)):
            if item > 0:
                raise IndexError("Integer version slice must be negative")
            return self.get_version_by_name(self._nth_previous(self.current_version, -item))
        if isinstance(item, (datetime.datetime, np.datetime64)):
            return self.get_version_by_timestamp(item)
        raise KeyError(f"Don't know how to get the version for {item!r}")

    def get_version_by_name(self, name):
        """The committed version ``name`` (``''``: ``__first_version__``, which, having no
        ``committed`` attribute, raises KeyError as the package's lookup of that attribute
        does; so do ``vf[None]`` and ``vf[0]`` while it is the current version)."""
        if name.startswith("/"):
            raise ValueError("Versions cannot start with '/'")
        name = name or FIRST_VERSION
        if name not in self._versions:
            raise KeyError(f"Version {name!r} not found")
        group = self._versions[name]
        if "committed" not in group.attrs:
            raise KeyError(f"Version {name!r} has no 'committed' attribute")
        if not group.attrs["committed"]:
            raise ValueError("Version groups cannot be accessed before they are committed")
        return group

    def get_version_by_timestamp(self, timestamp, exact=False):
        """The version of timestamp ``timestamp``, or else (unless ``exact``) the latest one
        before it; timestamps compare as their stored strings, as the package does."""
        wanted = format_timestamp(timestamp)
        best = None
        for name in self.versions:
            stamp = self._versions[name].attrs["timestamp"]
            if stamp == wanted:
                return self.get_version_by_name(name)
            if not exact and stamp < wanted and (best is None or best[0] < stamp):
                best = (stamp, name)
        if best is None:
            raise KeyError(f"Version with timestamp {'' if exact else 'before '}{timestamp} "
                           "not found")
        return self.get_version_by_name(best[1])

    def __delitem__(self, name):
        """Delete version ``name`` (its chunks stay in raw_data); deleting the current
        version makes its previous version current, which must still exist (ValueError
        otherwise, nothing deleted: the package's delete_version)."""
        versions = self._versions
        if name not in versions or name == FIRST_VERSION:
            raise KeyError(name)
        current = self.current_version
        if name == current:
            current = versions[name].attrs["prev_version"] or FIRST_VERSION
            if current not in versions:
                raise ValueError(f"version {current!r} does not exist")
        self._written = []
        del versions[name]
        versions.attrs["current_version"] = current

    def _nth_previous(self, name, n):
        version = name
        for _ in range(n):
            version = self._versions[version].attrs["prev_version"]
            if version == FIRST_VERSION:
                raise IndexError(f"{name!r} has fewer than {n} versions before it")
        return version

    @contextmanager
    def stage_version(self, version_name, prev_version=None, make_current=True,
                      timestamp=None):
        """Yield a group mirroring ``prev_version`` (default the current version, ``''`` for
        none) to modify; on exit it is committed as version ``version_name``."""
        self._check_open()
        versions = self._versions
        prev_version = FIRST_VERSION if prev_version == "" else \
            prev_version or self.current_version
        if version_name in versions:
            raise ValueError(f"There is already a version with the name {version_name}")
        if prev_version not in versions:
            raise ValueError(f"Previous version {prev_version!r} not found")
        self._remember_written()
        staged = StagedGroup.from_version(self.f, versions[prev_version])
        yield staged
        stamp = format_timestamp(utc_now() if timestamp is None else timestamp)
        self._commit(staged, version_name, prev_version, stamp)
        if make_current:
            versions.attrs["current_version"] = version_name

    def _remember_written(self):
        """Tell the backend what the last commit's virtual datasets map (once the file has
        staged them: asking earlier would stage the commit's writes halfway)."""
        for vds, chunks, mapping in self._written:
            try:
                remember_mapping(vds, chunks, mapping)
            except KeyError:      # no longer linked (delete_versions rewrote or removed it)
                pass
        self._written = []

    def _commit(self, staged, version_name, prev_version, stamp):
        """Write the staged version; on failure the version group is removed again (raw
        rows past ``largest_index`` are garbage the next commit overwrites)."""
        datasets = staged.datasets()
        for name in datasets:
            if name.partition("/")[0] in FORBIDDEN_NAMES:
                raise ValueError(f"{name} is a forbidden dataset or group name; aborting.")
        versions = self._versions
        opened = {name: open_raw_data(self.f, name, dataset.dtype,    # reads first: a read
                                      self._tables.pop(name, None))   # after a write stages
                  for name, dataset in datasets.items()}
        for name, dataset in datasets.items():
            check_raw_data(opened[name][0], dataset)
        group = versions.create_group(version_name)
        try:
            group.attrs["prev_version"] = prev_version
            group.attrs["committed"] = False
            for sub in staged.groups():
                _set_attrs(group.require_group(sub.name), sub.attrs)
            for name, dataset in datasets.items():
                _set_attrs(self._commit_dataset(group, dataset, *opened[name]),
                           dataset.attrs)
            _set_attrs(group, staged.attrs)
            group.attrs["committed"] = True
            group.attrs["timestamp"] = stamp
        except BaseException:
            self._written, self._tables = [], {}
            del versions[version_name]
            raise

    def _commit_dataset(self, group, staged, raw, table):
        """raw_data/hash_table (``raw``, ``table``: :func:`open_raw_data`) updated with the
        staged chunks; the version's virtual dataset."""
        staged.settle_grid()
        if raw is None:
            raw, table = create_raw_data(self.f, staged.name, staged.dtype, staged.grid,
                                         staged.fillvalue, staged.filters)
        raw_shape = raw.shape
        if staged.dirty:
            raw_shape, table = commit_chunks(raw, table, staged.modified_chunks(),
                                             staged.grid, staged.dtype, staged.fillvalue,
                                             staged.mapping)
        if table is not None:
            self._tables[staged.name] = table
        vds = write_virtual_dataset(group, staged.name, staged.shape, staged.dtype,
                                    staged.grid, staged.fillvalue, staged.mapping, raw_shape)
        self._written.append((vds, staged.grid, dict(staged.mapping)))
        return vds

    def get_diff(self, name, version1, version2):
        """The chunk regions of dataset ``name`` that differ between two versions, as the
        package's: ``{region: (data in version1, data in version2)}``, None for a region
        only the other version maps; regions mapped to the same raw_data rows in both (and
        regions of fill values in both) are left out. Regions are :class:`Region` keys."""
        self._check_open("File is not open.")
        first, second = self[version1][name], self[version2][name]
        before, after = _regions(first), _regions(second)
        diff = {}
        for region, rows in after.items():
            if region not in before:
                diff[region] = (None, second[region])
            elif rows != before[region]:
                diff[region] = (first[region], second[region])
        for region in before:
            if region not in after:
                diff[region] = (first[region], None)
        return diff

    def rebuild_hashtables(self):
        """Rebuild every dataset's hash table from what the versions map."""
        for name in dataset_names(self.f[DATA_GROUP]):
            rebuild_hash_table(self.f, name)

    def rebuild_object_dtype_hashtables(self):
        """Rebuild the hash tables of the string datasets, then mark the file as of the
        current data version."""
        for name in dataset_names(self.f[DATA_GROUP]):
            if is_vlen_string(self.f[raw_path(name)].dtype):
                rebuild_hash_table(self.f, name)
        self._versions.attrs["data_version"] = np.int64(DATA_VERSION)

    def __repr__(self):
        if self.closed:
            return "<Closed VersionedHDF5File>"
        return f'<VersionedHDF5File object "{self.f.filename}" (mode {self.f.mode})>'


class Region(tuple):
    """A region of a dataset as a tuple of slices (step 1), usable as a dict key (the
    package's ``ndindex.Tuple`` keys; ``.raw`` is the plain tuple, as ndindex's)."""

    def __hash__(self):
        return hash(tuple((s.start, s.stop, s.step) for s in self))

    raw = property(tuple)

    def __repr__(self):
        return f"Region{tuple(self)!r}"


def _regions(dataset):
    """Region of each mapping of a committed virtual dataset -> its source's bounds."""
    found = {}
    for vmap in dataset.virtual_sources():
        start, stop = vmap.vspace.get_select_bounds()
        found[Region(slice(int(a), int(b) + 1, 1) for a, b in zip(start, stop))] = \
            vmap.src_space.get_select_bounds()
    return found


def _set_attrs(obj, attrs):
    for key, value in attrs.items():
        obj.attrs[key] = value
