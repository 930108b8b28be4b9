"""Where the files a dataset names are looked for, as libhdf5 looks: the raw data files of an
External Data Files message (spec IV.A.2.h) and the source files of a virtual dataset's
mappings (IV.A.2.i, layout class 3).

A dataset access property list may give a prefix for each (h5py's ``efile_prefix`` and
``virtual_prefix``; H5Pset_efile_prefix, H5Pset_virtual_prefix); without one, the
environment variable HDF5_EXTFILE_PREFIX or HDF5_VDS_PREFIX gives it (libhdf5 reads them as
the access list's defaults), and a prefix starting with ``${ORIGIN}`` starts at the folder of
the dataset's HDF5 file instead (H5D__build_file_prefix). An external raw data file's name is
joined to the prefix unless it is absolute. A virtual source file is looked for under each
folder HDF5_VDS_PREFIX lists (separated by ``os.pathsep``), under the prefix, beside the
virtual dataset's file, then in the working directory; an absolute name is tried as it is
first, then by its base name in those places (H5F_prefix_open_file).
"""
import os

ENVIRONMENT = {"efile": "HDF5_EXTFILE_PREFIX", "virtual": "HDF5_VDS_PREFIX"}
ORIGIN = "${ORIGIN}"


def in_force(kind, given, file_path):
    """The prefix of ``kind`` ("efile" or "virtual") of a dataset of the file at
    ``file_path`` whose access list gives ``given`` (str, bytes or None): ``given``, else
    the environment variable (libhdf5 takes it as the access list's default), ``${ORIGIN}``
    expanded; None when neither sets one."""
    prefix = os.fsdecode(given) if given else os.environ.get(ENVIRONMENT[kind])
    return _expanded(prefix, file_path) if prefix else None


def _expanded(prefix, file_path):
    """``prefix`` with a leading ``${ORIGIN}`` replaced by the folder of the file at
    ``file_path`` and a separator (libhdf5's "extpath")."""
    if not prefix.startswith(ORIGIN):
        return prefix
    here = os.path.dirname(os.path.abspath(file_path)) if file_path else os.getcwd()
    return here + os.sep + prefix[len(ORIGIN):]


def joined(prefix, name):
    """``name`` under ``prefix`` (None: none), unless it is absolute (H5_combine_path)."""
    return name if prefix is None or os.path.isabs(name) else os.path.join(prefix, name)


def external_file(prefix, name, file_path):
    """The path of an external raw data file ``name``: joined to ``prefix`` when one is in
    force; else ``name`` from the working directory as libhdf5 opens it (or, when there is
    no such file, beside the HDF5 file at ``file_path``)."""
    if prefix is not None:
        return joined(prefix, name)
    if os.path.exists(name) or not file_path:
        return name
    return os.path.join(os.path.dirname(file_path), name)


def source_files(prefix, name, file_path, environment="virtual"):
    """The paths tried in order for a virtual dataset's source file ``name`` (or an external
    link's target file, which libhdf5 finds the same way; ``environment`` None) of a
    dataset in the file at ``file_path`` with ``prefix`` in force (None: none): under each
    folder the environment variable lists, then under ``prefix``, beside the file, and in
    the working directory; an absolute name is tried first as it is, then by its base name
    in those places."""
    here = os.path.dirname(file_path) if file_path else os.getcwd()
    tried = [name] if os.path.isabs(name) else []
    base = os.path.basename(name) if os.path.isabs(name) else name
    listed = os.environ.get(ENVIRONMENT[environment], "") if environment else ""
    places = [_expanded(p, file_path) for p in listed.split(os.pathsep) if p] + \
        ([prefix] if prefix else []) + [here, os.getcwd()]
    for place in places:
        path = os.path.join(place, base)
        if path not in tried:
            tried.append(path)
    return tried
