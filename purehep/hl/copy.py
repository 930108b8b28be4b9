"""Copying objects between and within files (h5py's ``Group.copy``; libhdf5's H5Ocopy):
groups with their members, datasets with their values, storage settings (shape, maximum
shape, chunking, filter pipeline, fill value, fill and allocation times, compact layout),
attribute creation order and attributes, and named datatypes. References are null in the
copy of an attribute of a reference type, and of a dataset of one copied to another file.
Hard links inside the copied tree stay hard links to one copy; soft and external links are
copied as links unless expanded. A dataset or attribute sharing a committed datatype
shares its copy: each committed type is copied once per copy, linked where the type itself is
in the copied tree, else anonymous (no link; counted by its uses, spec IV.A.1), as H5Ocopy
copies them.

A dataset stored in external files is copied as libhdf5 copies it: the copy names the same
files (their data is not copied, the two share it).

Not copied as libhdf5 does: sparse datasets are copied as chunked datasets holding the same
values; datasets and attributes of types holding references (compound members, sequences)
cannot be copied to another file (libhdf5 copies the addresses, which point nowhere there)
and raise.
"""
import numpy as np

from ..errors import UnsupportedFeatureError
from .base import DATATYPE, Empty, ExternalLink, HardLink, SoftLink

SLAB_BYTES = 64 << 20        # values are copied in slabs of about this size


class Options:
    def __init__(self, shallow=False, expand_soft=False, expand_external=False,
                 expand_refs=False, without_attrs=False):
        self.shallow, self.without_attrs = shallow, without_attrs
        self.expand_soft, self.expand_external = expand_soft, expand_external
        self.expand_refs = expand_refs


def copy_object(source, dest, name, options):
    """Copy ``source`` (a Group, Dataset or Datatype of any open file) to ``dest[name]``
    (``dest`` a group of a file being written or modified). A group is copied into a new
    group linked only when complete, so that copying a group into its own subtree does not
    copy the copy (as H5Ocopy)."""
    from .group import Group
    copier = _Copier(dest, options)   # (objects copied for references are linked in dest)
    if not isinstance(source, Group):
        return copier.copy(source, dest, name, depth=0)
    from .writing import bind
    node = group_node(source)
    top = bind(dest.file, node, dest._wpath(name))
    copier.fill_group(source, top, depth=0)
    return dest._link_new(name, node)


class _Copier:
    def __init__(self, dest, options):
        self.options = options
        self.dest = dest
        self.file = dest.file
        self.copied = {}          # (source file, address) -> the copy (hard links kept)

    def copy(self, source, group, name, depth):
        from .dataset import Dataset
        from .group import Group
        key = _identity(source)
        if key in self.copied:
            group[name] = self.copied[key]
            return self.copied[key]
        if name is None and not isinstance(source, (Group, Dataset)):
            return self._type_copy(source.file, source._address)
        if isinstance(source, Group):
            out = group._link_new(name, group_node(source))
            self.fill_group(source, out, depth)
            return out
        if isinstance(source, Dataset):
            out = self.copied[key] = self._dataset(source, group, name)
        else:
            group[name] = source.dtype
            out = self.copied[key] = group[name]
        if not self.options.without_attrs:
            self._attributes(source, out)
        return out

    def _type_copy(self, file, address):
        """The copy (a Datatype of the destination) of the committed datatype at
        ``address`` of ``file``: made once, with no link (linked if the copy meets the type
        itself, ``copy``)."""
        from ..write import model
        from .base import open_object
        source = open_object(file, address, None)
        key = _identity(source)
        if key not in self.copied:
            out = self.copied[key] = self.file._link_new(None, model.DatatypeNode(source.dtype))
            if not self.options.without_attrs:
                self._attributes(source, out)
        return self.copied[key]

    def _shared(self, source, address):
        """The node of the copy of the committed datatype at ``address`` (None: none) that
        ``source`` shares. Asked before the copy is made: reading the source stages the
        destination when both are one file."""
        return None if address is None else self._type_copy(source.file, address)._node

    def fill_group(self, source, out, depth):
        """Copy the attributes and members of group ``source`` into the new group ``out``."""
        self.copied[_identity(source)] = out
        if not self.options.without_attrs:
            self._attributes(source, out)
        if not (self.options.shallow and depth > 0):
            for child in list(source):
                self._member(source, child, out, depth)

    def _member(self, source, name, out, depth):
        link = source.get(name, getlink=True)
        if isinstance(link, SoftLink) and not self.options.expand_soft or \
                isinstance(link, ExternalLink) and not self.options.expand_external:
            out[name] = link
            return
        target = source.get(name)
        if target is None and not isinstance(link, HardLink):
            return                 # a dangling link expands to nothing, as in libhdf5
        self.copy(target, out, name, depth + 1)

    def _dataset(self, ds, group, name):
        from ..format.messages import committed_address
        expand = _is_ref(ds.dtype) and self.options.expand_refs
        foreign_refs = _is_ref(ds.dtype) and not self._same_file(ds) and not expand
        if not (foreign_refs or expand):                                # (copied as null)
            self._refuse_foreign_refs(ds, ds.dtype)
        named = self._shared(ds, committed_address(ds._ctx, ds._oh.first(DATATYPE)))
        if ds.shape is None:
            out = group.create_dataset(name, data=Empty(ds.dtype))
            _share(out._node, named)
            return out
        if ds.is_virtual:
            return self._virtual(ds, group, name, named)
        kw = dict(shape=ds.shape, dtype=ds.dtype, chunks=ds.chunks,   # (a maximum shape
                  maxshape=ds.maxshape if ds.chunks is not None else None,   # makes chunks)
                  stored_chunks=True)
        fill = ds._msg(0x05, required=False)
        if fill is not None and fill.value:
            kw["fillvalue"] = ds.fillvalue
        kw.update(_settings(ds))
        if ds.chunks is not None and ds._pipeline is not None:
            kw["filter_pipeline"] = tuple(ds._pipeline.filters)
        if ds._layout.layout_class == 0:
            kw["layout"] = "compact"
        external = ds.external
        if external:            # H5Ocopy copies the file list: the copy names the same files
            kw.update(maxshape=ds.maxshape, external=external)
        out = group.create_dataset(name, **kw)
        _share(out._node, named)            # (before a value read stages the file)
        if external:
            return out
        for sel in _slabs(ds.shape, ds.chunks, ds.dtype.itemsize) if not foreign_refs else ():
            values = ds[sel]
            out._write_read_values(sel, self._expanded(ds.file, values) if expand else values)
        return out

    def _virtual(self, ds, group, name, named):
        """A virtual dataset keeps its mappings; "." (its own file) becomes the source file's
        name when copied to another file."""
        from ..write import model
        from .creation import fill_bytes
        node = model.DatasetNode(ds.shape, ds.maxshape, ds.dtype, "virtual",
                                 fill=fill_bytes(ds.dtype, ds.fillvalue))
        node.index = node.store = None
        here = ds.file.filename
        node.virtual = [(m.source_file if m.source_file != "." or self._same_file(ds)
                         else here, m.source_dataset, m.source_selection, m.virtual_selection)
                        for m in ds._storage.mappings]
        _share(node, named)
        return group._link_new(name, node)

    def _attributes(self, source, out):
        """Copy the attributes; one of a reference type is copied as null references, as
        H5Ocopy copies it, unless references are expanded."""
        for attr in source.attrs:
            dtype = source.attrs.get_dtype(attr)
            named = self._shared(source, source.attrs.get_id(attr)._attr.type_address)
            if not _is_ref(dtype):
                self._refuse_foreign_refs(source, dtype)
            value = source.attrs[attr]
            if _is_ref(dtype) and not isinstance(value, Empty):
                value = self._expanded(source.file, value) if self.options.expand_refs else \
                    np.full(source.attrs.get_id(attr).shape, None, object)
            out.attrs.create(attr, value, dtype=dtype)
            _share(out._node.attrs[attr], named)

    def _expanded(self, file, refs):
        """``refs`` (references of ``file``: one, or an array) pointing to the copies of their
        targets instead (H5Ocopy's expand_refs): each target copied once, linked in the
        copy's destination group as "~obj_pointed_by_<n>" unless the copy already met it;
        a region keeps its selection; null stays null."""
        if not isinstance(refs, np.ndarray):
            return self._expanded_one(file, refs)
        out = np.empty(refs.shape, object)
        for i, ref in np.ndenumerate(refs):
            out[i] = self._expanded_one(file, ref)
        return out

    def _expanded_one(self, file, ref):
        from ..reference import RegionReference
        if not ref:
            return None
        target = file[ref]
        key = _identity(target)
        if key not in self.copied:        # linked in the copy's destination group, as
            n = 0                         # libhdf5 links it (named by the address of the
            while f"~obj_pointed_by_{n}" in self.dest:      # copy there: purehep numbers
                n += 1                                      # them, having no address yet)
            self.copy(target, self.dest, f"~obj_pointed_by_{n}", depth=0)
        copy = self.copied[key]
        if isinstance(ref, RegionReference):
            return copy.regionref.of_selection(ref.selection)
        return copy.ref

    def _same_file(self, obj):
        return obj.file == self.file

    def _refuse_foreign_refs(self, obj, dtype):
        if not self._same_file(obj) and _has_refs(dtype):
            raise UnsupportedFeatureError(f"copying object references of {obj.name!r} to "
                                          "another file (their targets are not there)")


def _settings(ds):
    """create_dataset's options for what else H5Ocopy keeps of a dataset's header: whether
    attribute creation order is tracked, the fill and allocation times."""
    from ..h5d import ALLOC_TIME_EARLY
    plist = ds.id.get_create_plist()
    out = {"track_order": bool(plist.get_attr_creation_order()),
           "fill_time": ("alloc", "never", "ifset")[plist.get_fill_time()]}
    if plist.get_alloc_time() == ALLOC_TIME_EARLY and plist.get_layout() != 0:
        out["alloc_time"] = "early"
    return out


def _is_ref(dtype):
    """True for a reference type itself (H5T_REFERENCE class), not a type holding one."""
    return (dtype.metadata or {}).get("ref") is not None


def _share(entry, named):
    """Make ``entry`` (a new dataset node or attribute entry) share ``named``, the copy of its
    source's committed datatype (purehep.write.model: uses counted in its reference count)."""
    if named is not None and named.dtype == entry.dtype:
        entry.named = named


def _identity(obj):
    """What names one object of one open file (its node while being written, else its
    object header address)."""
    return id(obj.file), id(obj._node) if obj._node is not None else obj._address


def group_node(group):
    """A new, empty group node with the creation order settings of ``group``, which H5Ocopy
    keeps with its header: whether its links' and its attributes' orders are tracked."""
    from ..write import model
    node = group._node
    if node is not None:
        return model.GroupNode(track_order=node.track_order, link_order=node.link_order)
    plist = group.id.get_create_plist()
    return model.GroupNode(track_order=bool(plist.get_attr_creation_order()),
                           link_order=bool(plist.get_link_creation_order()))


def _has_refs(dtype):
    if dtype.names:
        return any(_has_refs(dtype.fields[n][0]) for n in dtype.names)
    if dtype.subdtype is not None:
        return _has_refs(dtype.subdtype[0])
    meta = dtype.metadata or {}
    return "ref" in meta or ("vlen" in meta and isinstance(meta["vlen"], np.dtype)
                             and _has_refs(meta["vlen"]))


def _slabs(shape, chunks, itemsize):
    """Selections along the first dimension covering ``shape``, about SLAB_BYTES each and
    aligned to the chunk rows."""
    if not shape or not shape[0]:
        return [()]
    row = int(np.prod(shape[1:], dtype=np.int64)) * itemsize or 1
    step = max(1, SLAB_BYTES // row)
    if chunks:
        step = max(chunks[0], step - step % chunks[0])
    return [(slice(i, min(i + step, shape[0])),) for i in range(0, shape[0], step)]
