"""h5py's ``h5i`` as far as purehep has it: what kind of thing an identifier is (H5Iget_type),
the name it was opened by (H5Iget_name) and its file (H5Iget_file_id), for the identifiers
purehep has: files (``f.id`` is the File), groups, datasets, committed and transient datatypes,
attributes, dataspaces and property lists."""
BADID, FILE, GROUP, DATATYPE, DATASPACE, DATASET, ATTR = -1, 1, 2, 3, 4, 5, 7
GENPROP_CLS, GENPROP_LST = 10, 11
INVALID_HID = -1

__all__ = ["BADID", "FILE", "GROUP", "DATATYPE", "DATASPACE", "DATASET", "ATTR",
           "GENPROP_CLS", "GENPROP_LST", "INVALID_HID", "get_type", "get_name", "get_file_id"]


def _object(oid):
    """The File, Group, Dataset or Datatype the identifier stands for (None: none)."""
    from .h5a import AttrID
    from .h5t import TypeID
    if isinstance(oid, AttrID):
        return oid._obj
    if isinstance(oid, TypeID):
        return oid._named
    for attr in ("_group", "_ds"):
        obj = getattr(oid, attr, None)
        if obj is not None:
            return obj
    return oid if hasattr(oid, "create_group") else None


def get_type(oid):
    """H5Iget_type: FILE, GROUP, DATASET, DATATYPE, ATTR, DATASPACE or GENPROP_LST; BADID
    for a closed one."""
    from .h5a import AttrID
    from .h5p import PropID
    from .h5s import SpaceID
    from .h5t import TypeID
    if isinstance(oid, TypeID):
        return DATATYPE
    if isinstance(oid, SpaceID):
        return DATASPACE
    if isinstance(oid, PropID):
        return GENPROP_LST
    if isinstance(oid, AttrID):
        return ATTR
    obj = _object(oid)
    if obj is None or not obj:
        return BADID
    if getattr(obj, "_file", None) is obj:
        return FILE
    return GROUP if hasattr(obj, "create_group") else DATASET


def get_name(oid):
    """H5Iget_name: the path (bytes) of the object (an attribute's: of its object); None for
    transient types, dataspaces and property lists, and for closed identifiers."""
    obj = _object(oid)
    if obj is None or not obj:
        return None
    name = obj.name
    return None if name is None else name.encode("utf-8", "surrogateescape")


def get_file_id(oid):
    """H5Iget_file_id: the file of the object (its FileID: the File)."""
    obj = _object(oid)
    if obj is None:
        raise TypeError(f"{oid!r} is not an identifier of an object in a file")
    return obj.file.id
