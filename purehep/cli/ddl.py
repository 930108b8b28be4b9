"""h5dump's DDL text for datatypes and dataspaces (the ``DATATYPE`` and ``DATASPACE`` lines of
``h5dump``), made from the decoded datatype message (spec IV.A.2.d) and dataspace message
(IV.A.2.b) rather than from numpy dtypes, so that string padding, character sets, bitfields,
opaque tags and non-standard integer and float layouts print as libhdf5's tools print them."""
from ..format.messages import datatype as T

INDENT = "   "
_STRPAD = ("H5T_STR_NULLTERM", "H5T_STR_NULLPAD", "H5T_STR_SPACEPAD")
_CSET = ("H5T_CSET_ASCII", "H5T_CSET_UTF8")
_REF = {0: "H5T_STD_REF_OBJECT", 1: "H5T_STD_REF_DSETREG"}
_IEEE = {4: (31, 23, 8, 0, 23), 8: (63, 52, 11, 0, 52)}


def _order(dt):
    return "BE" if dt.order == ">" else "LE"


def _layout_text(dt, what):
    """libhdf5's tools' description of a type no standard name matches."""
    order = "" if dt.size == 1 else " big-endian" if dt.order == ">" else " little-endian"
    sign = " unsigned" if what == "integer" and not dt.signed else ""
    return f"{dt.size * 8}-bit{order}{sign} {what} {dt.precision}-bit precision"


def _integer(dt, prefix):
    if dt.bit_offset or dt.precision != dt.size * 8 or dt.size not in (1, 2, 4, 8):
        return _layout_text(dt, "integer" if prefix != "B" else "bitfield")
    return f"H5T_STD_{prefix}{dt.size * 8}{_order(dt)}"


def _float(dt):
    layout = _IEEE.get(dt.size)
    if layout is None or tuple(dt.float_layout[:5]) != layout:
        return _layout_text(dt, "floating-point")
    return f"H5T_IEEE_F{dt.size * 8}{_order(dt)}"


def _string_block(size, dt, pad):
    inner = pad + INDENT
    return "\n".join(["H5T_STRING {", f"{inner}STRSIZE {size};",
                      f"{inner}STRPAD {_STRPAD[dt.padding] if dt.padding < 3 else 'ERROR'};",
                      f"{inner}CSET {_CSET[dt.charset] if dt.charset < 2 else 'unknown'};",
                      f"{inner}CTYPE H5T_C_S1;", f"{pad}}}"])


def type_text(dt, pad=""):
    """The DDL of a format-level Datatype; ``pad`` is the indentation of the line the type
    starts on (nested blocks are indented from it)."""
    cls = dt.cls
    if cls == T.FIXED:
        return _integer(dt, "I" if dt.signed else "U")
    if cls == T.BITFIELD:
        return _integer(dt, "B")
    if cls == T.FLOAT:
        return _float(dt)
    if cls == T.TIME:
        return "H5T_TIME: not yet implemented"
    if cls == T.STRING:
        return _string_block(dt.size, dt, pad)
    if cls == T.VLEN and dt.vlen_string:
        return _string_block("H5T_VARIABLE", dt, pad)
    if cls == T.OPAQUE:
        tag = dt.tag.decode("utf-8", "surrogateescape")
        return f'H5T_OPAQUE {{\n{pad}{INDENT}OPAQUE_TAG "{tag}";\n{pad}}}'
    if cls == T.COMPOUND:
        inner = pad + INDENT
        lines = [f'{inner}{type_text(m.type, inner)} "{m.name}";' for m in dt.members]
        return "\n".join(["H5T_COMPOUND {", *lines, f"{pad}}}"])
    if cls == T.REFERENCE:
        return f"H5T_REFERENCE {{ {_REF.get(dt.ref_type, 'UNDEFINED')} }}"
    if cls == T.ENUM:
        inner = pad + INDENT
        lines = [f"{inner}{type_text(dt.base, inner)};"]
        lines += [f'{inner}{_quoted_name(n):<18} {v};'
                  for n, v in zip(dt.enum_names, dt.enum_values)]
        return "\n".join(["H5T_ENUM {", *lines, f"{pad}}}"])
    if cls == T.VLEN:
        return f"H5T_VLEN {{ {type_text(dt.base, pad)}}}"
    if cls == T.ARRAY:
        dims = "".join(f"[{d}]" for d in dt.dims)
        return f"H5T_ARRAY {{ {dims} {type_text(dt.base, pad)} }}"
    if cls == T.COMPLEX:
        return f"H5T_COMPLEX {{ {type_text(dt.base, pad)} }}"
    return "unknown datatype"


def _quoted_name(name):
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    return f'"{name}"'


def space_text(shape, maxshape):
    """``SIMPLE { ( 10, 20 ) / ( 10, H5S_UNLIMITED ) }``, ``SCALAR`` or ``NULL``."""
    if shape is None:
        return "NULL"
    if shape == ():
        return "SCALAR"
    maxshape = maxshape or shape
    cur = ", ".join(str(s) for s in shape)
    mx = ", ".join("H5S_UNLIMITED" if m is None else str(m) for m in maxshape)
    return f"SIMPLE {{ ( {cur} ) / ( {mx} ) }}"
