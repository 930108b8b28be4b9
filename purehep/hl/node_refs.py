"""References made in write mode (h5py's ``obj.ref``, ``ds.regionref[...]``) to objects of a
file being written: their addresses are known once the file is flushed (the writer's
``address_of`` the object's node)."""
from ..reference import Reference as _Reference, RegionReference as _RegionReference


class RegionMaker:
    """``Dataset.regionref`` in write mode: ``ds.regionref[sel]`` makes a region reference
    to a dataset of the file being written."""

    def __init__(self, ds):
        self._ds = ds

    def __getitem__(self, args):
        from ..format import selection as S
        sel = S.from_args(self._ds.shape, args if isinstance(args, tuple) else (args,))
        return self.of_selection(sel)

    def of_selection(self, sel):
        """A reference to the region ``sel`` (a purehep.format.selection.Selection)."""
        ref = NodeRegionReference(None, sel)
        ref._node = self._ds._node
        ref._file = self._ds._file
        return ref

    def shape(self, ref):
        """The shape of the dataspace ``ref`` selects in: its dataset's (h5py's)."""
        return self._ds._file[ref].shape

    def selection(self, ref):
        """The shape h5py gives what ``ref`` selects: the dataset's for "all", (n,) for n
        points, a regular hyperslab's counts times blocks, else (n,) elements; None for
        "none"."""
        from ..format import selection as S
        sel, shape = ref.selection, self.shape(ref)
        if sel.kind == S.ALL:
            return shape
        if sel.kind == S.NONE:
            return None
        n = sel.count_selected(shape)
        regular = sel.as_regular() if sel.kind == S.HYPERSLABS and n else None
        if regular is None:
            return (n,) if n or sel.kind == S.POINTS else (0,) * len(shape)
        return tuple(int(c) * int(b) for c, b in zip(regular[2], regular[3]))


def _node_address(ref):
    """The address of the object, once staged; 0 when it was deleted since (written as a
    null reference, purehep.write.emit)."""
    return ref._file._writer.address_of(ref._node) or 0




class _NodeAddressed:
    """A reference made in write mode: its address is known once the file is flushed."""
    __slots__ = ()

    @property
    def address(self):
        return _node_address(self)

    @address.setter
    def address(self, value):
        pass

    def __bool__(self):
        return True


class NodeReference(_NodeAddressed, _Reference):
    """An object reference made in write mode."""
    __slots__ = ("_node", "_file")

    def _key(self):
        return ("Reference", id(self._node), None, None)


class NodeRegionReference(_NodeAddressed, _RegionReference):
    """A region reference made in write mode."""
    __slots__ = ("_node", "_file")

    def _key(self):
        return ("RegionReference", id(self._node), None, None, None)
