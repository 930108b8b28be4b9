"""Generate spec-fixtures/sparse/: small sparse (structured chunk) files written by purehep for
every chunk index x filtered/unfiltered x selection encoding, two files with an empty section 0
and an encoded empty selection, plus manifest.json (the defined elements and values of each
file). Run: python -m tools.sparse_fixtures [outdir]"""
import json
import os
import sys

import numpy as np

import purehep
from purehep.format import selection as S

INDEXES = ["single", "fixed_array", "extensible_array", "btree2"]
KINDS = ["points", "hyperslab", "all"]
SHAPE, CHUNKS = (8, 8), (4, 4)


def pattern(kind, shape):
    """A boolean mask whose chunks (4x4) encode as ``kind``."""
    m = np.zeros(shape, bool)
    if kind == "all":
        m[:4, :] = True                      # two full chunks, the others empty
    elif kind == "hyperslab":
        m[0:4:2, 0:4] = True                 # regular: rows 0 and 2 of chunk (0, 0)
        m[1:3, 5:7] = True                   # regular block in chunk (0, 1)
        m[4:8, 4:6] = True                   # two-column block of chunk (1, 1)
        m[4, 0:4] = True                     # irregular (an L) in chunk (1, 0)
        m[5:8, 0] = True
    else:
        m[0, 1] = m[2, 3] = m[3, 0] = True   # scattered points
        m[5, 6] = m[7, 4] = True
        m[6, 1] = True
    return m


def _chunk_kinds(path):
    """{chunk origin: how its section 0 encodes the defined elements}."""
    kinds = {}
    with purehep.File(path) as f:
        ds = f["data"]
        st = ds._storage.sparse
        for info in ds.struct_chunk_iter():
            row = st.row_of([o // c for o, c in zip(info.offset, ds.chunks)])
            secs = st.sections(row)
            if not len(secs[0]):
                kinds[str(list(info.offset))] = "empty section 0 (every element defined)"
                continue
            sel = S.decode_image(purehep.format.context.Cursor(secs[0], 0, "s"))[1]
            label = {S.POINTS: "points", S.ALL: "all", S.NONE: "none"}.get(
                sel.kind, "regular hyperslab" if sel.regular else "irregular hyperslab")
            kinds[str(list(info.offset))] = f"{label} (version {sel.version})"
    return kinds


def _entry(path, index, maxshape, filtered, coords, values):
    return {"dataset": "/data", "shape": list(SHAPE), "maxshape": list(maxshape),
            "chunks": list(SHAPE if index == "single" else CHUNKS), "dtype": "<f8",
            "fillvalue": -1.0, "chunk_index": index,
            "section_filters": {"0": ["deflate(4)"], "1": ["shuffle(8)", "deflate(4)"]}
            if filtered else {},
            "chunk_selections": _chunk_kinds(path),
            "coords": coords.tolist(), "values": values.tolist()}


def _empty_section0(path, filtered):
    """A fixed array dataset with chunk (0, 0) stored with an empty section 0 (every element
    defined: README decision 9), chunk (0, 4) with an encoded empty selection ("none", empty
    section 1: nothing defined) and chunk (4, 4) as purehep writes it (points)."""
    from purehep.format import structured_chunk as SC
    from purehep.format import sparse_sections
    kw = {"section_filters": {0: "gzip", 1: {"compression": "gzip", "shuffle": True}}} \
        if filtered else {}
    full = (np.arange(16, dtype="<f8") + 1) * 1.5
    with purehep.File(path, "w", libver="latest") as f:
        ds = f.create_dataset("data", SHAPE, "<f8", chunks=CHUNKS, sparse=True, fillvalue=-1.0,
                              chunk_index="fixed_array", **kw)
        pipes = ds._sparse_store().pipelines()
        for origin, sec0, vals in (
                ((0, 0), b"", full),
                ((0, 4), sparse_sections.encode_section0(np.zeros(0, np.int64), CHUNKS), full[:0])):
            raw, offs, unf, masks = SC.assemble([sec0, vals.tobytes()], (0,), pipes, 8)
            secs = SC.split(raw, offs)
            ds.write_struct_chunk(origin, secs, masks if filtered else None,
                                  unf if filtered else None)
        ds.write_sparse([[5, 6], [7, 4]], [100.5, 102.0])
    coords = np.concatenate([np.argwhere(np.ones(CHUNKS, bool)), [[5, 6], [7, 4]]])
    values = np.concatenate([full, [100.5, 102.0]])
    order = np.lexsort(coords.T[::-1])
    return _entry(path, "fixed_array", SHAPE, filtered, coords[order], values[order])


def generate(outdir):
    from purehep.filters import deflate
    with deflate.using("zlib"):     # the fixtures' sections are zlib's bytes
        return _generate(outdir)


def _generate(outdir):
    os.makedirs(outdir, exist_ok=True)
    manifest = {}
    for index in INDEXES:
        for filtered in (False, True):
            for kind in KINDS:
                name = f"{index}_{'gzip' if filtered else 'plain'}_{kind}.h5"
                shape, chunks, maxshape = SHAPE, CHUNKS, SHAPE
                if index == "single":
                    chunks = shape
                elif index == "extensible_array":
                    maxshape = (None, 8)
                elif index == "btree2":
                    maxshape = (None, None)
                mask = pattern(kind, shape) if not (kind == "all" and index == "single") \
                    else np.ones(shape, bool)
                coords = np.argwhere(mask)
                values = (np.arange(len(coords), dtype="<f8") + 1) * 1.5
                kw = {"section_filters": {0: "gzip", 1: {"compression": "gzip",
                                                         "shuffle": True}}} if filtered else {}
                path = os.path.join(outdir, name)
                with purehep.File(path, "w", libver="latest") as f:
                    ds = f.create_dataset("data", shape, "<f8", chunks=chunks, maxshape=maxshape,
                                          sparse=True, fillvalue=-1.0, chunk_index=index, **kw)
                    ds.write_sparse(coords, values)
                manifest[name] = _entry(path, index, maxshape, filtered, coords, values)
    for filtered in (False, True):
        name = f"fixed_array_{'gzip' if filtered else 'plain'}_empty_section0.h5"
        manifest[name] = _empty_section0(os.path.join(outdir, name), filtered)
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return manifest


if __name__ == "__main__":
    generate(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..",
                                                                "spec-fixtures", "sparse"))
