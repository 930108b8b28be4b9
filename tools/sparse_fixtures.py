"""Generate spec-fixtures/sparse/: small sparse (structured chunk) files written by purehep for
every chunk index x filtered/unfiltered x selection encoding, plus manifest.json (the defined
elements and values of each file). Run: python -m tools.sparse_fixtures [outdir]"""
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
                with purehep.File(path) as f:
                    ds = f["data"]
                    chunk_kinds = {}
                    for info in ds.struct_chunk_iter():
                        st = ds._storage.sparse
                        row = st.row_of([o // c for o, c in zip(info.offset, chunks)])
                        secs = st.sections(row)
                        sel = S.decode_image(purehep.format.context.Cursor(secs[0], 0, "s"))[1]
                        label = {S.POINTS: "points", S.ALL: "all", S.NONE: "none"}.get(
                            sel.kind, "regular hyperslab" if sel.regular else
                            "irregular hyperslab")
                        chunk_kinds[str(list(info.offset))] = f"{label} (version {sel.version})"
                manifest[name] = {
                    "dataset": "/data", "shape": list(shape), "maxshape": [m for m in maxshape],
                    "chunks": list(chunks), "dtype": "<f8", "fillvalue": -1.0,
                    "chunk_index": index,
                    "section_filters": {"0": ["deflate(4)"], "1": ["shuffle(8)", "deflate(4)"]}
                    if filtered else {},
                    "chunk_selections": chunk_kinds,
                    "coords": coords.tolist(), "values": values.tolist()}
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return manifest


if __name__ == "__main__":
    generate(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..",
                                                                "spec-fixtures", "sparse"))
