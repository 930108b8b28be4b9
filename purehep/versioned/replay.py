"""Deleting versions for good, as the package's ``replay.delete_versions``: the chunks only
deleted versions used leave raw_data, the chunks kept move down in raw_data order (edge chunks
re-padded with the fill value), the hash table is rebuilt in that order and the kept
versions' virtual datasets are rewritten to the new rows. ``modify_metadata``,
``recreate_dataset``, ``swap`` and ``tmp_group`` (:mod:`.metadata`) are importable from here
too, as from the package's replay module."""
from .api import FIRST_VERSION
from .backend import (DATA_GROUP, dataset_names, is_vlen_string, raw_path, read_mapping,
                      source_blocks, write_virtual_dataset)
from .hashing import Hashtable
from .metadata import modify_metadata, recreate_dataset, swap, tmp_group

__all__ = ["delete_version", "delete_versions", "modify_metadata", "recreate_dataset", "swap",
           "tmp_group"]


def delete_versions(f, versions_to_delete):
    """Delete the versions named (a name or names) from ``f`` (a purehep.File or a
    VersionedHDF5File) with the data only they reference; versions based on a deleted one
    get its nearest kept ancestor as ``prev_version``, and so does the current version."""
    f = getattr(f, "f", f)
    names = [versions_to_delete] if isinstance(versions_to_delete, str) \
        else list(versions_to_delete)
    versions = f[f"{DATA_GROUP}/versions"]
    if FIRST_VERSION in names:
        raise ValueError("Cannot delete first version")
    for name in names:
        if name not in versions:
            raise ValueError(f"Version {name!r} does not exist")
    doomed = set(names)
    kept = [v for v in versions if v != FIRST_VERSION and v not in doomed]
    current = _kept_ancestor(versions, versions.attrs["current_version"], doomed)
    for name in dataset_names(f[DATA_GROUP]):
        _delete_dataset(f, name, doomed, kept)
    for version in kept:
        prev = versions[version].attrs["prev_version"]
        if prev in doomed:
            versions[version].attrs["prev_version"] = _kept_ancestor(versions, prev, doomed)
    for name in names:
        del versions[name]
    versions.attrs["current_version"] = current


delete_version = delete_versions


def _kept_ancestor(versions, name, doomed):
    while name in doomed:
        name = versions[name].attrs["prev_version"]
    return name


def _delete_dataset(f, name, doomed, kept):
    """Drop from dataset ``name``'s raw data what only the ``doomed`` versions use."""
    versions = f[f"{DATA_GROUP}/versions"]
    if all(name not in versions[v] or versions[v][name].shape[0] == 0 for v in doomed):
        return
    holders = [versions[v] for v in kept if name in versions[v]]
    moved = _compact_raw_data(f[raw_path(name)], holders, name)
    if not holders:
        del f[DATA_GROUP][name]
        return
    _rebuild_hash_table(f[f"{DATA_GROUP}/{name}"], moved)
    for group in holders:
        _remap_virtual_dataset(group, name, moved)


def _compact_raw_data(raw, holders, name):
    """Move the raw_data blocks the ``holders`` map to the front, in row order; the old rows
    -> the new rows of each (in that order)."""
    blocks = {block[0][0]: block for group in holders
              for _, block in source_blocks(group[name])}
    chunks = tuple(int(c) for c in raw.attrs["chunks"])
    fill = b"" if is_vlen_string(raw.dtype) else raw.fillvalue
    moved = {}
    for slot, start in enumerate(sorted(blocks)):
        block = blocks[start]
        data = raw[tuple(slice(a, b) for a, b in block)]
        new = slot * chunks[0]
        if data.shape != chunks:
            raw[new:new + chunks[0]] = fill
        raw[(slice(new, new + data.shape[0]),) + tuple(slice(0, n) for n in data.shape[1:])] = data
        moved[block[0]] = (new, new + data.shape[0])
    raw.resize((len(blocks) * chunks[0],) + chunks[1:])
    return moved


def _rebuild_hash_table(group, moved):
    """A new hash table of the moved rows, in their new order."""
    digests = {rows: digest for digest, rows in Hashtable(group["hash_table"]).index.items()}
    del group["hash_table"]
    table = Hashtable.create(group)
    for old, new in moved.items():
        table.add(digests[old], *new)
    table.write()


def _remap_virtual_dataset(group, name, moved):
    """Rewrite version ``group``'s virtual dataset ``name`` onto the moved rows."""
    dataset = group[name]
    chunks = tuple(int(c) for c in dataset.attrs["chunks"])
    mapping = {index: moved[rows] for index, rows in read_mapping(dataset, chunks).items()}
    attrs = dict(dataset.attrs)
    shape, raw = dataset.shape, group.file[raw_path(name)]
    del group[name]
    vds = write_virtual_dataset(group, name, shape, raw.dtype, chunks, raw.fillvalue, mapping,
                                raw.shape)
    for key, value in attrs.items():
        if key not in ("chunks", "raw_data"):
            vds.attrs[key] = value
