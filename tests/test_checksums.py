"""Every checksummed structure purehep reads is verified when read: a bit flipped inside any of
them (files written by purehep and by libhdf5, earliest and latest formats, plus corpus files
for the shared message table and its lists) makes reading the file fail with a FormatError
naming structure and offset, in a worker process with memory and time limits."""
import os
import random

import pytest

import purehep
import fuzzfiles
import fuzzing

CORPUS_FILES = {   # what the built samples lack: a shared message table, its list and B-tree
    "sohm list": "hdf5-repo/tools/test/h5dump/testfiles/err_attr_dspace.h5",
    "sohm btree": "hdf5-repo/tools/test/h5stat/testfiles/h5stat_tsohm.h5",
    "sohm unused": "hdf5-repo/test/testfiles/h5fc_ext2_sf.h5",
}
REQUIRED = {
    "superblock", "superblock extension", "object header", "object header continuation block",
    "fractal heap header", "fractal heap indirect block", "fractal heap direct block",
    "v2 B-tree header", "v2 B-tree internal node", "v2 B-tree leaf node",
    "fixed array header", "fixed array data block", "fixed array data block page",
    "extensible array header", "extensible array index block",
    "extensible array secondary block", "extensible array data block",
    "extensible array data block page", "free-space manager header", "free-space section list",
    "structured chunk section 0",
}
CORPUS_REQUIRED = {"shared object header message table", "shared message record list"}
PER_STRUCTURE = 3          # instances of each structure kind flipped per file (one bit each)
FORMAT_ERRORS = {"FormatError", "ChecksumError", "TruncatedError"}


@pytest.fixture(scope="module")
def samples(fuzz_samples):
    return fuzz_samples + [os.path.join(fuzzing.CORPUS, p) for p in CORPUS_FILES.values()
                           if os.path.exists(os.path.join(fuzzing.CORPUS, p))]


def _flips(path, rng):
    """[(structure name, offset, position, bit)]: a few bits inside each checksummed
    structure of the file (its bytes and its stored checksum)."""
    from purehep.inspect import walk
    from purehep.io import open_source
    with open(path, "rb") as fh:
        data = fh.read()
    by_name = {}
    for top in walk(open_source(data)).structures:
        for _, s in top.walk():
            if s.checksum is not None:
                by_name.setdefault(s.name, []).append(s)
    out = []
    for name, found in by_name.items():
        for k, s in enumerate(rng.sample(found, min(PER_STRUCTURE, len(found)))):
            start, end, at, _ = s.checksum   # the covered bytes, or the stored checksum
            pos = at + rng.randrange(4) if k % 2 else rng.randrange(start, end)
            out.append((name, s.offset, pos, rng.randrange(8)))
    out += _structured_chunk_flips(data, rng)
    return out


def _structured_chunk_flips(data, rng):
    """Bits inside section 0 (the checksummed selection) of unfiltered sparse chunks."""
    out = []
    with purehep.File(data) as f:
        for name in f:
            ds = f[name]
            if isinstance(ds, purehep.Dataset) and ds.is_sparse and not ds.filter_ids:
                for info in list(ds.struct_chunk_iter())[:PER_STRUCTURE]:
                    addr, end = info.address, info.address + info.section_offsets[1]
                    pos = rng.randrange(addr, end)
                    out.append(("structured chunk section 0", addr, pos, rng.randrange(8)))
    return out


def test_a_flipped_bit_in_any_checksummed_structure_fails_the_read(samples):
    rng = random.Random(20)
    cases, what = [], []
    for i, path in enumerate(samples):
        for name, offset, pos, bit in _flips(path, rng):
            cases.append((i, [pos, bit]))
            what.append((os.path.basename(path), name, offset))
    results = fuzzing.run(samples, cases)
    covered = {w[1] for w in what}
    missed = [(w, r["outcome"], r["problem"]) for w, r in zip(what, results)
              if r["outcome"] not in FORMAT_ERRORS]
    assert not missed, f"{len(missed)} of {len(cases)} flips not reported: {missed[:10]}"
    assert REQUIRED <= covered, REQUIRED - covered
    if len(samples) > len(fuzzfiles.SAMPLES):
        assert CORPUS_REQUIRED <= covered
