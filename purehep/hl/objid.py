"""``Group.id``: the part of h5py's low-level GroupID that reports how the group was
created — its creation property list's creation-order flags (see purehep.h5p)."""
from ..h5p import CRT_ORDER_INDEXED, CRT_ORDER_TRACKED, PropGCID
from .base import LINK_INFO, message
from .serialize import serialized

ATTR_TRACKED, ATTR_INDEXED = 0x04, 0x08      # version 2 object header flags (spec IV.A.1.b)
MTIME_OLD, MTIME = 0x0E, 0x12                 # Object Modification Time messages (IV.A.2.o, .r)


def attr_creation_order(header):
    """The attribute creation-order flags of an object header (none in version 1)."""
    if header.version != 2:
        return 0
    return (CRT_ORDER_TRACKED if header.flags & ATTR_TRACKED else 0) | \
        (CRT_ORDER_INDEXED if header.flags & ATTR_INDEXED else 0)


def object_settings(header):
    """The object creation settings an object header records: attribute creation order,
    whether times are tracked (version 2: flag bit 5; version 1: an Object Modification
    Time message, new or old) and the attribute phase change (v2 flag bit 4, else 8/6)."""
    times = header.times is not None if header.version == 2 else \
        any(header.first(t) is not None for t in (MTIME, MTIME_OLD))
    return dict(attr_order=attr_creation_order(header), track_times=times,
                phase_change=header.attr_phase_change or (8, 6))


@serialized("_group")
class GroupID:
    def __init__(self, group):
        self._group = group

    @property
    def valid(self):
        """h5py's ``ObjectID.valid``: false once the group's file, or this id, is closed."""
        return bool(self._group)

    def __bool__(self):
        return bool(self._group)

    def __eq__(self, other):
        """Ids of one group compare equal, as h5py's ObjectID do."""
        return isinstance(other, GroupID) and other._group == self._group

    def __hash__(self):
        return hash(self._group)

    def close(self):
        """Close this handle: the Group it is the id of is closed (the group opened again
        is not), as h5py's ``id.close()`` closes its object."""
        self._group.__dict__["_closed"] = True

    _close = close

    def get_create_plist(self):
        return PropGCID(**group_settings(self._group))

    @property
    def links(self):
        """The group's links (purehep.h5l.LinkProxy)."""
        from ..h5l import LinkProxy
        return LinkProxy(self._group)


def group_settings(group):
    """The creation settings of ``group`` (a file's root group among them): its links'
    creation-order flags (Link Info message) and its object settings."""
    header = group._oh
    info = message(group._ctx, header, LINK_INFO, required=False)
    links = 0 if info is None else \
        (CRT_ORDER_TRACKED if info.track_order else 0) | \
        (CRT_ORDER_INDEXED if info.index_order else 0)
    return dict(link_order=links, **object_settings(header))
