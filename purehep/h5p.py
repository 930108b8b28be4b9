"""h5py's ``h5p`` as far as purehep has it: the creation-order flags of an object's creation
property list, read back from the file as libhdf5 reads them — attribute creation order from
the version 2 object header's flags (spec IV.A.1.b, bits 2 and 3), link creation order from
the Link Info message (spec IV.A.2.c, bits 0 and 1).
"""
CRT_ORDER_TRACKED, CRT_ORDER_INDEXED = 0x01, 0x02


class PropOCID:
    """An object creation property list (what ``obj.id.get_create_plist()`` gives)."""

    def __init__(self, attr_order):
        self._attr_order = attr_order

    def get_attr_creation_order(self):
        """CRT_ORDER_TRACKED | CRT_ORDER_INDEXED bits for the object's attributes."""
        return self._attr_order


class PropGCID(PropOCID):
    """A group creation property list: adds the order of the group's links."""

    def __init__(self, attr_order, link_order):
        super().__init__(attr_order)
        self._link_order = link_order

    def get_link_creation_order(self):
        """CRT_ORDER_TRACKED | CRT_ORDER_INDEXED bits for the group's links."""
        return self._link_order
