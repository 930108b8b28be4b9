"""The attribute and fill-value encodings HEP001 prescribes, as the validator checks them:
fixed-length ASCII / UTF-8 strings (§5.1–§5.3, §6.5, §8.3), object references (§6.5, §7.1,
§8.2, §8.6), booleans (§6.6, §8.5, §8.6), unsigned scalars (§8.5, §8.7) and explicitly set
fill values (§6.4). Each check returns a list of problem messages (empty: conforms)."""
import numpy as np

from ..format.messages.fill_value import FillValue

STRING, REFERENCE = 3, 7               # datatype classes (spec IV.A.2.d)
SPACEPAD = 2                           # string padding type
OBJECT_REFS = (0, 2)                   # H5R_OBJECT1 and the revised H5R_OBJECT2
FILL_OLD, FILL = 0x04, 0x05            # fill value message types


def attr_type(obj, name):
    """The Datatype message of attribute ``name`` (None when absent): string padding and
    character set are not in the numpy dtype h5py's API gives."""
    attr = obj.attrs._attrs.get(name)     # noqa: SLF001 - the messages the manager reads
    return None if attr is None else attr.datatype


def _shape(obj, name):
    return obj.attrs.get_shape(name)


def _rank_problem(obj, name, rank, section):
    shape = _shape(obj, name)
    if shape is None or len(shape) != rank:
        return [f"{name} has shape {shape}, must be {'scalar' if rank == 0 else '1-D'} ({section})"]
    return []


def string_attr(obj, name, *, ascii=False, fixed=True, rank=0, size=None, required=False,
                section="§5.3"):
    """Problems of a string attribute: scalar (or 1-D), fixed-length unless ``fixed`` is
    False, ASCII or UTF-8 bytes that decode, null-terminated or null-padded (§5.3 note)."""
    dt = attr_type(obj, name)
    if dt is None:
        return [f"missing attribute {name} ({section})"] if required else []
    problems = _rank_problem(obj, name, rank, section)
    if dt.cls != STRING and dt.kind != "vlen_str":
        return problems + [f"{name} must be a string, is {dt.class_name.lower()} ({section})"]
    if fixed and dt.cls != STRING:
        problems.append(f"{name} must be a fixed-length string, is variable-length ({section})")
    if ascii and dt.charset != 0:
        problems.append(f"{name} must have the ASCII character set, not UTF-8 ({section})")
    if dt.cls == STRING and dt.padding == SPACEPAD:
        rule = section if section == "§5.1" else "§5.3"
        problems.append(f"{name} is space-padded; strings are null-terminated or null-padded ({rule})")
    if size is not None and dt.cls == STRING and dt.size != size:
        problems.append(f"{name} is {dt.size} bytes long, must be exactly {size} ({section})")
    return problems + _encoding_problems(obj, name, "ascii" if ascii else "utf-8", dt)


def _encoding_problems(obj, name, encoding, dt):
    if _shape(obj, name) is None:
        return []
    for value in np.asarray(obj.attrs[name], dtype=object).reshape(-1).tolist():
        raw = value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")
        try:
            raw.decode(encoding)
        except UnicodeDecodeError:
            cut = "; cut short? fixed-length strings are sized to hold the whole value" \
                if dt.cls == STRING and encoding == "utf-8" else ""
            return [f"{name} holds bytes that are not {encoding.upper()}: {bytes(raw)!r}{cut} (§5.3)"]
    return []


def ref_attr(obj, name, rank, section="§6.5"):
    """Problems of an object-reference attribute of the given rank (0 scalar, 1 array)."""
    dt = attr_type(obj, name)
    if dt is None:
        return [f"missing attribute {name} ({section})"]
    if dt.cls != REFERENCE or dt.ref_type not in OBJECT_REFS:
        return [f"{name} must hold HDF5 object references, not {dt.class_name.lower()} ({section})"]
    return _rank_problem(obj, name, rank, section)


def bool_attr(obj, name, required=True, section="§6.6"):
    """Problems of a scalar boolean attribute (numpy/h5py bool: enum FALSE=0, TRUE=1)."""
    if attr_type(obj, name) is None:
        return [f"missing attribute {name} ({section})"] if required else []
    problems = _rank_problem(obj, name, 0, section)
    if obj.attrs.get_dtype(name).kind != "b":
        problems.append(f"{name} must be a boolean, is {obj.attrs.get_dtype(name)} ({section})")
    return problems


def uint_attr(obj, name, itemsize, section):
    """Problems of a scalar unsigned integer attribute of ``itemsize`` bytes."""
    if attr_type(obj, name) is None:
        return [f"missing attribute {name} ({section})"]
    dtype = obj.attrs.get_dtype(name)
    problems = _rank_problem(obj, name, 0, section)
    if dtype.kind != "u" or dtype.itemsize != itemsize:
        problems.append(f"{name} must be uint{8 * itemsize}, is {dtype} ({section})")
    return problems


def explicit_fill(ds):
    """Whether the dataset's creation properties carry a fill value set by its producer
    (a fill value message with a value; libhdf5's default writes none)."""
    for mtype in (FILL, FILL_OLD):
        msg = ds._msg(mtype, required=False)  # noqa: SLF001 - no public fill-value property
        if isinstance(msg, FillValue):
            return msg.value is not None
    return False
