"""PyTables' conventions on top of purehep's h5py-like objects: how its nodes (groups, Array,
CArray, VLArray of objects, Table) and their attributes are stored, read and written.

Attributes as PyTables stores them (tables/attributeset.py, hdf5extension.pyx): Python str
values as null-terminated UTF-8 strings ("" as a null dataspace), bytes as null-terminated
ASCII, bools as 8-bit bitfields, ints and floats as 64-bit numbers, numpy scalars in their own
type, everything else (None, lists, tuples, dicts, offsets, time zones) as a protocol-0 pickle
in an ASCII string. Reading undoes this: a string ending in "." is tried as a pickle (with the
restricted unpickler), as PyTables does.
"""
import math
from collections import namedtuple

import numpy as np

from ...hl.base import Empty
from ...errors import PurehepError, PurehepWarning, warn
from . import pickles


class PandasFormatError(PurehepError, ValueError):
    """A group that is not a pandas object purehep reads: no ``pandas_type`` (nor a table of
    pandas' layout), a kind purehep does not know, or members missing."""

BOOL = np.dtype("u1", metadata={"bitfield": True})


def str_dtype(size, utf8):
    """PyTables' fixed-length string type: null-terminated, UTF-8 or ASCII."""
    return np.dtype(f"S{max(size, 1)}", metadata={"h5py_encoding": "utf-8" if utf8 else "ascii",
                                                  "strpad": "nullterm"})


# -- reading -----------------------------------------------------------------------------------

def is_bitfield(ds):
    """True when the dataset (or the base of its array type) is a bitfield: a PyTables bool."""
    from ... import h5t
    return ds.id.get_type().get_class() == h5t.BITFIELD


def read(node, start=None, stop=None):
    """``node[start:stop]`` as PyTables reads it: a fixed-length string keeps the bytes after
    an embedded NUL. PyTables reads in the file's own string type, which HDF5 leaves as it is,
    where h5py's conversion, which purehep's reads follow, ends a null-terminated string at its
    first NUL ('a\\0b' came back as 'a'); the other values are converted as usual."""
    dtype = node.dtype
    fields = dtype.names or ()
    strings = [n for n in fields if dtype[n].base.kind == "S"]
    if not (strings or dtype.kind == "S") or not node.shape:
        return node[start:stop]
    from ... import selections
    from ...chunks.storage import as_elements
    sel = selections.select(node.shape, (slice(start, stop),), strict=True)
    if not sel.nselected:
        return node[start:stop]
    stored = sel.finish(node._storage.read(sel))          # read once: stored bytes
    raw = as_elements(stored, node._type.file_dtype)
    if not fields:
        return raw.astype(dtype)
    values = node._convert(stored, ())                    # converted as node[...] does
    for name in strings:
        values[name] = raw[name]
    return values


def attr(node, name, default=None):
    """The attribute ``name`` of ``node`` as PyTables (and so pandas) sees it: str for strings,
    Python numbers for scalars, unpickled objects for pickles; ``default`` when absent."""
    if name not in node.attrs:
        return default
    value = node.attrs[name]
    if isinstance(value, Empty):
        return ""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bytes, np.bytes_)):
        value = bytes(value)
        if value.endswith(b".") and value not in (b"0", b"0."):
            try:
                return pickles.loads(value)
            except pickles.UnsafePickleError:
                raise
            except Exception:       # not a pickle after all: the string itself, as PyTables
                pass
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    return value


# -- writing -----------------------------------------------------------------------------------

def set_attr(node, name, value, utf8=True):
    """Store ``value`` as PyTables' ``node._v_attrs.name = value`` does (module docstring).
    ``utf8=False`` writes a str as ASCII, as PyTables' C code does for some system names."""
    attrs = node.attrs
    if isinstance(value, np.str_):
        value = str(value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        dt = str_dtype(len(raw), utf8)
        attrs.create(name, Empty(dt) if not raw else np.array(raw, dt), dtype=dt)
    elif isinstance(value, (bool, np.bool_)):
        attrs.create(name, np.array(value, "u1"), dtype=BOOL)
    elif isinstance(value, (bytes, np.bytes_)):
        dt = str_dtype(len(value), False)
        attrs.create(name, np.array(bytes(value), dt), dtype=dt)
    elif isinstance(value, int) and not isinstance(value, np.generic):
        attrs.create(name, np.array(value, np.int64))
    elif isinstance(value, float):
        attrs.create(name, np.array(value, np.float64))
    elif isinstance(value, np.generic) and value.dtype.kind in "iufc":
        attrs.create(name, np.array(value))
    else:
        raw = pickles.dumps_attr(value)
        dt = str_dtype(len(raw), False)
        attrs.create(name, np.array(raw, dt), dtype=dt)


def _system_attrs(node, cls, version, utf8=True, flavor=False):
    set_attr(node, "CLASS", cls, utf8)
    if flavor:
        set_attr(node, "FLAVOR", "numpy", utf8)
    set_attr(node, "TITLE", "", utf8)
    set_attr(node, "VERSION", version, utf8)


def mark_root(f):
    """The root group's PyTables attributes, on a new (empty) file as PyTables writes them; an
    existing file's root is left as it is (PyTables reads a root without them)."""
    if not len(f) and not len(f.attrs):
        _system_attrs(f, "GROUP", "1.0")
        set_attr(f, "PYTABLES_FORMAT_VERSION", "2.1")


def create_group(parent, name):
    """A PyTables group (CLASS GROUP) ``name`` in ``parent``."""
    g = parent.create_group(name)
    _system_attrs(g, "GROUP", "1.0")
    return g


def _file_dtype(dtype):
    """The stored dtype of a numpy dtype: bools as bitfields, strings null-terminated ASCII."""
    if dtype.kind == "b":
        return BOOL
    if dtype.kind == "S":
        return str_dtype(dtype.itemsize, False)
    return dtype


class Filters(namedtuple("Filters", "complevel complib fletcher32")):
    """PyTables' Filters as pandas makes them: ``complib`` one of ``COMPLIBS`` (lzo, which
    purehep cannot compress, becomes zlib with PyTables' FiltersWarning words, as PyTables does
    where LZO is not built in), compression only at a ``complevel`` above 0."""

    __slots__ = ()

    @classmethod
    def make(cls, complevel, complib, fletcher32=False):
        """The Filters of ``complevel``/``complib``/``fletcher32``, or None when they filter
        nothing (PyTables then writes contiguous arrays)."""
        complib = complib or "zlib"
        if complib not in COMPLIBS:
            raise ValueError(f"complib only supports {COMPLIBS} compression.")
        if complib == "lzo":
            warn("compression library ``lzo`` is not available; using ``zlib`` instead",
                 PurehepWarning)
            complib = "zlib"
        complevel = int(complevel or 0)
        return cls(complevel, complib, bool(fletcher32)) if complevel or fletcher32 else None


# tables.filters.all_complibs
COMPLIBS = (["zlib", "lzo", "bzip2", "blosc", "blosc2"]
            + [f"blosc:{c}" for c in ("blosclz", "lz4", "lz4hc", "zlib", "zstd")]
            + [f"blosc2:{c}" for c in ("blosclz", "lz4", "lz4hc", "zlib", "zstd")])
BLOSC2_CODES = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
# PyTables' cd_values[1:3] for bzip2/lzo: its object version x 10 and class id
_CLASS_DATA = {"TABLE": (27, 0), "CARRAY": (11, 4), "VLARRAY": (14, 3)}


def filter_options(filters, dtype, node_class="CARRAY"):
    """create_dataset keywords for PyTables' Filters (hdf5extension/utils.c set_filters):
    zlib is deflate after byte shuffle, bzip2 (filter 307, client data level, object version
    x 10, class id) likewise; blosc[:codec] and blosc2[:codec] their plugins with their own
    byte shuffle (blosc2's client data without a codec when none was named); fletcher32
    last."""
    if filters is None:
        return {}
    level, lib, fletcher32 = filters
    opts = {"fletcher32": True} if fletcher32 else {}
    if not level:
        return opts
    family, _, codec = lib.partition(":")
    if family == "zlib":
        opts.update(compression="gzip", compression_opts=level, shuffle=True)
    elif family == "bzip2":
        opts.update(compression=307, compression_opts=(level,) + _CLASS_DATA[node_class],
                    shuffle=True)
    elif family == "blosc":
        from ...filters.blosc import COMPRESSORS
        opts.update(compression=32001, compression_opts=(0, 0, 0, 0, level, 1,
                                                         COMPRESSORS.index(codec or "blosclz")))
    else:
        code = (BLOSC2_CODES[codec],) if codec else ()
        opts.update(compression=32026, compression_opts=(0, 0, 0, 0, level, 1) + code)
    return opts


def _chunk_rows(row_bytes, nrows):
    """Rows per chunk: about 64 KiB, as PyTables' default buffer sizing gives for small sets."""
    return max(1, min(max(nrows, 1), 65536 // max(row_bytes, 1)))


def table_chunk_rows(rowsize, expectedrows, complib=None):
    """PyTables' Leaf._calc_chunkshape for a Table: 8 KiB x 2**log10(expected MB) x 8 bytes
    (expected MB clamped to 1..10**7), x 16 for blosc2 (PyTables then prefers the CPU's L3
    cache size when py-cpuinfo reports one: purehep does not probe it), in whole rows."""
    expected_mb = min(max((expectedrows * rowsize) // (1 << 20), 1), 10 ** 7)
    chunksize = 8192 * 2 ** int(math.log10(expected_mb)) * 8
    if complib is not None and complib.startswith("blosc2"):
        chunksize = min(chunksize * 16, 2 ** 31 - 32)
    return max(1, chunksize // rowsize)


def create_array(group, name, values, filters=None):
    """A PyTables Array (contiguous) or, with ``filters``, a CArray holding ``values``."""
    values = np.asarray(values)
    fdt = _file_dtype(values.dtype)
    data = values.view("u1") if values.dtype.kind == "b" else values
    if filters is None:
        ds = group.create_dataset(name, data=data, dtype=fdt)
        _system_attrs(ds, "ARRAY", "2.4", flavor=True)
    else:
        rows = _chunk_rows(values.dtype.itemsize * int(np.prod(values.shape[1:])), len(values))
        ds = group.create_dataset(name, data=data, dtype=fdt, chunks=(rows,) + values.shape[1:],
                                  **filter_options(filters, values.dtype))
        _system_attrs(ds, "CARRAY", "1.1", utf8=False)
    return ds


def create_object_vlarray(group, name, values, filters=None):
    """A PyTables VLArray of ObjectAtom with one row: ``values`` pickled (pickles module),
    compressed with ``filters`` when given."""
    from ...dtypes import vlen_dtype
    dt = vlen_dtype(np.uint8)
    ds = group.create_dataset(name, shape=(1,), dtype=dt, maxshape=(None,), chunks=(1024,),
                              **filter_options(filters, dt, "VLARRAY"))
    ds[0] = np.frombuffer(pickles.dumps_object_array(values), np.uint8)
    _system_attrs(ds, "VLARRAY", "1.4")
    set_attr(ds, "PSEUDOATOM", "object")
    return ds


def table_dtype(columns):
    """The stored compound type of a Table with ``columns`` [(name, numpy dtype, shape)]."""
    return np.dtype([(n, _file_dtype(dt), shape) if shape else (n, _file_dtype(dt))
                     for n, dt, shape in columns])


def create_table(group, name, columns, filters=None, expectedrows=10000, track_times=True):
    """An empty PyTables Table ``name`` (CLASS TABLE, FIELD_n_NAME/FILL, NROWS 0) of
    ``columns`` [(name, numpy dtype, shape)], extendible, chunked for ``expectedrows`` as
    PyTables chunks it; ``track_times`` as PyTables' create_table."""
    dt = table_dtype(columns)
    rows = table_chunk_rows(dt.itemsize, expectedrows, filters and filters.complib)
    ds = group.create_dataset(name, shape=(0,), dtype=dt, maxshape=(None,), chunks=(rows,),
                              track_times=track_times,
                              **filter_options(filters, dt, "TABLE"))
    _system_attrs(ds, "TABLE", "2.7")
    for i, (cname, cdt, _shape) in enumerate(columns):
        set_attr(ds, f"FIELD_{i}_NAME", cname)
        if cdt.kind == "S":
            set_attr(ds, f"FIELD_{i}_FILL", b"")
        elif cdt.kind == "b":
            set_attr(ds, f"FIELD_{i}_FILL", False)
        else:
            set_attr(ds, f"FIELD_{i}_FILL", np.zeros((), cdt)[()])
    set_attr(ds, "NROWS", 0)
    return ds


def append_rows(table, rows, chunksize=None):
    """Append the structured array ``rows`` to a Table, ``chunksize`` rows at a time when
    given (pandas' write_data), and update its NROWS."""
    step = max(int(chunksize or len(rows)), 1)
    for begin in range(0, len(rows), step):
        part = rows[begin:begin + step]
        n = table.shape[0]
        table.resize((n + len(part),))
        table[n:] = part.astype(table.dtype) if part.dtype != table.dtype else part
    set_attr(table, "NROWS", table.shape[0])


def remove_rows(table, rows):
    """Delete the rows numbered ``rows`` (sorted) from a Table, moving the later rows up and
    shrinking the dataset and NROWS, as PyTables' Table.remove_rows (H5TBOdelete_records)
    leaves it; the number removed."""
    if not len(rows):
        return 0
    keep = np.ones(table.shape[0], bool)
    keep[rows] = False
    first = int(rows[0])
    kept = read(table, first)[keep[first:]]
    table.resize((first + len(kept),))
    if len(kept):
        table[first:] = kept
    set_attr(table, "NROWS", table.shape[0])
    return len(rows)
