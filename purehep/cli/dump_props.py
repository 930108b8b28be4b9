"""``purehep dump -p``: a dataset's storage properties as h5dump prints them: the layout
(spec IV.A.2.i) with its size, the filter pipeline (IV.A.2.l), the fill value (IV.A.2.f) and the
allocation time."""
from ..format.messages import fill_value as FV
from ..format.messages import layout as L
from .ddl import INDENT

_FILL_TIME = {FV.FILL_ON_ALLOC: "H5D_FILL_TIME_ALLOC", FV.FILL_NEVER: "H5D_FILL_TIME_NEVER",
              FV.FILL_IF_SET: "H5D_FILL_TIME_IFSET"}
_ALLOC = {FV.ALLOC_EARLY: "H5D_ALLOC_TIME_EARLY", FV.ALLOC_LATE: "H5D_ALLOC_TIME_LATE",
          FV.ALLOC_INCREMENTAL: "H5D_ALLOC_TIME_INCR"}
_FILTERS = {1: "COMPRESSION DEFLATE", 2: "PREPROCESSING SHUFFLE", 3: "CHECKSUM FLETCHER32",
            4: "COMPRESSION SZIP", 5: "COMPRESSION NBIT", 6: "COMPRESSION SCALEOFFSET"}
FILL, FILL_OLD = 0x05, 0x04


def _filter_lines(pipeline):
    if pipeline is None or not len(pipeline):
        return ["NONE"]
    lines = []
    for f in pipeline:
        if f.id == 1:
            level = f.client_data[0] if f.client_data else 0
            lines.append(f"COMPRESSION DEFLATE {{ LEVEL {level} }}")
        elif f.id in _FILTERS:
            lines.append(_FILTERS[f.id])
        else:
            lines += ["USER_DEFINED_FILTER {", f"{INDENT}FILTER_ID {f.id}"]
            if f.name:
                lines.append(f"{INDENT}COMMENT {f.name}")
            if f.client_data:
                lines.append(f"{INDENT}PARAMS {{ {' '.join(map(str, f.client_data))} }}")
            lines.append("}")
    return lines


def properties(ds, ctx):
    """The lines (indentation relative to the dataset's members) of ``-p``."""
    lay = ds._layout
    lines = ["STORAGE_LAYOUT {"]
    stored = ds.id.get_storage_size()
    if lay.layout_class == L.CHUNKED:
        lines.append(f"{INDENT}CHUNKED ( {', '.join(map(str, lay.chunk_shape))} )")
        ratio = ""
        if ds._pipeline is not None and len(ds._pipeline) and stored:
            ratio = f" ({ds.nbytes / stored:.3f}:1 COMPRESSION)"
        lines.append(f"{INDENT}SIZE {stored}{ratio}")
    elif lay.layout_class == L.CONTIGUOUS:
        lines += [f"{INDENT}CONTIGUOUS", f"{INDENT}SIZE {stored}"]
        if lay.address is not None:
            lines.append(f"{INDENT}OFFSET {ctx.absolute(lay.address)}")
    elif lay.layout_class == L.COMPACT:
        lines += [f"{INDENT}COMPACT", f"{INDENT}SIZE {stored}"]
    else:
        lines.append(f"{INDENT}{lay.index_name if lay.layout_class != 3 else 'VIRTUAL'}")
    lines.append("}")
    lines += ["FILTERS {"] + [INDENT + x for x in _filter_lines(ds._pipeline)] + ["}"]
    fill = ds._msg(FILL, required=False) or ds._msg(FILL_OLD, required=False)
    fill_time = getattr(fill, "fill_time", FV.FILL_IF_SET)
    value = "H5D_FILL_VALUE_DEFAULT"
    if fill is not None and fill.value is not None and getattr(fill, "defined", True):
        from .ddl_data import strings
        import numpy as np
        shown = strings(ds._type, np.asarray(ds.fillvalue).reshape(1), 2, lambda r: "NULL")
        value = shown[0] if shown else value
    lines += ["FILLVALUE {", f"{INDENT}FILL_TIME {_FILL_TIME.get(fill_time, fill_time)}",
              f"{INDENT}VALUE  {value}", "}"]
    alloc = getattr(fill, "alloc_time", FV.ALLOC_LATE)
    lines += ["ALLOCATION_TIME {", f"{INDENT}{_ALLOC.get(alloc, alloc)}", "}"]
    return lines
