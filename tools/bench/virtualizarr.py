"""Issue 19: building VirtualiZarr chunk manifests, purehep's parser (no h5py) and
VirtualiZarr's own HDFParser (h5py) side by side, for every chunk index kind and two index
sizes (the files of tools.bench.lookup: chunks of 16 int32).

    python -m tools.bench.virtualizarr [max chunks, default 100000]
"""
import os
import sys

from .common import best_of, report
from .lookup import KINDS, index_file


def _parse(parser, fname):
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    url = "file://" + os.path.abspath(fname)
    return lambda: parser(url, registry)


def manifests(max_chunks=100_000):
    import warnings
    from virtualizarr.parsers import HDFParser
    from purehep.integrations.virtualizarr import PurehepParser
    warnings.simplefilter("ignore")
    out = []
    for kind in KINDS:
        for nchunks in (n for n in (10_000, 100_000, 1_000_000) if n <= max_chunks):
            fname = index_file(kind, nchunks)
            rows = [("HDFParser (h5py)", best_of(_parse(HDFParser(), fname), repeat=3)),
                    ("PurehepParser", best_of(_parse(PurehepParser(), fname), repeat=3))]
            out += report(f"ManifestStore of {nchunks:,} chunks ({kind})", rows,
                          baseline="HDFParser (h5py)")
    return out


ALL = [manifests]

if __name__ == "__main__":
    manifests(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
