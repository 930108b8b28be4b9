"""What the ``purehep`` command prints for sparse datasets (layout class 4, structured chunk
storage): the layout in ``ls -v`` and the data in ``dump``, as coordinates and values of the
defined elements (the fill value is everywhere else), never the dense array: a 10,000 x 10,000
dataset with a few thousand defined elements dumps in their number of lines, not 10^8 values.

Both list the defined elements in row-major order; memory grows with their number only.
"""
import numpy as np

SECTION_NAMES = {0: "selection", 1: "values", 2: "heap"}


def _filters_text(filters, names):
    return ", ".join(f"{f.name or names.get(f.id, 'filter')} ({f.id})" +
                     (f" {list(f.client_data)}" if f.client_data else "") for f in filters)


def ls_lines(ds, filter_names):
    """The ``ls -v`` lines naming a sparse dataset's layout, chunks, index and per-section
    filter pipelines (``filter_names``: filter id -> name for filters stored without one)."""
    lay = ds._layout
    chunks = ", ".join(str(c) for c in lay.chunk_shape)
    lines = [f"    Layout:    structured chunk (sparse, {lay.nsections} sections)",
             f"    Chunks:    ({chunks}), {lay.index_name} index"]
    st = ds._sparse_storage()
    for n in sorted(st.pipelines):
        lines.append(f"    Filters:   section {n} ({SECTION_NAMES.get(n, n)}): "
                     + _filters_text(st.pipelines[n], filter_names))
    return lines


def layout_lines(ds, fmt):
    """``dump``'s storage lines of a sparse dataset: layout, chunk shape and the fill value
    (the value of every element not defined; ``fmt`` formats it as dump formats values)."""
    chunks = ", ".join(str(c) for c in ds.chunks)
    return [f"STORAGE_LAYOUT {{ STRUCTURED_CHUNK SPARSE ( {chunks} ) }}",
            f"FILLVALUE {fmt(ds.fillvalue)}"]


def data_lines(ds, pad, out, fmt):
    """``dump``'s DATA block of a sparse dataset: one ``(i,j): value`` line per defined
    element, then their number (``fmt`` formats a value as the dense dump does)."""
    out(f"{pad}DATA {{")
    coords, values = ds.read_sparse()
    for c, v in zip(coords.tolist(), values):
        out(f"{pad}({','.join(str(i) for i in c)}): {fmt(v)}")
    out(f"{pad}}}")
    out(f"{pad}DEFINED {len(coords)}")


def json_value(ds, encode):
    """``dump --json``'s value of a sparse dataset: {"sparse": true, "fillvalue", "coords"
    (n, rank), "values" (encoded as dense values are, 1-D)} in row-major order."""
    coords, values = ds.read_sparse()
    return {"sparse": True, "fillvalue": encode(np.asarray(ds.fillvalue, ds.dtype), ds.dtype),
            "coords": coords.tolist(), "values": encode(values, ds.dtype)}
