"""Mutation fuzzing (tests/fuzzing.py): files of every kind purehep reads — written by purehep
(every chunk index, sparse, virtual, dense groups and attributes, references, compound and
vlen) and by libhdf5, plus corpus files — damaged by bit flips, address and length fields and
truncations, each read fully in a worker process under memory and time limits. Only purehep
errors may come out (every FormatError naming structure and offset); no crash, hang or
allocation beyond the limit.

``PUREHEP_FUZZ_CASES`` sets the number of cases of the slow run (default 10,000) and
``PUREHEP_FUZZ_SEED`` its seed.
"""
import os

import pytest

import fuzzing

QUICK_CASES = 600
QUICK_CORPUS = 12            # small corpus files in the quick run (when the corpus is present)


def _fuzz(samples, n, seed):
    results = fuzzing.run(samples, fuzzing.make_cases(len(samples), n, seed))
    counts, bad = fuzzing.summary(results)
    report = "\n".join(f"{os.path.basename(r['sample'])} seed={r['seed']} {r['outcome']}: "
                       f"{r['problem']} ({r['desc']})" for r in bad[:20])
    assert not bad, f"{len(bad)} bad cases of {n} {counts}:\n{report}"
    return counts


def test_fuzz_quick(fuzz_samples):
    samples = fuzz_samples + fuzzing.corpus_files(64 << 10, QUICK_CORPUS, seed=1)
    counts = _fuzz(samples, QUICK_CASES, seed=20)
    assert sum(counts.values()) == QUICK_CASES
    assert counts.get("ok", 0) and sum(counts.values()) - counts.get("ok", 0) > QUICK_CASES // 3


@pytest.mark.slow
def test_fuzz_long(fuzz_samples):
    n = int(os.environ.get("PUREHEP_FUZZ_CASES", 10000))
    seed = int(os.environ.get("PUREHEP_FUZZ_SEED", 2026))
    counts = _fuzz(fuzz_samples + fuzzing.corpus_files(2 << 20), n, seed)
    print(f"\n{n} mutated files: {counts}")


# damaged files the long run found, replayed: (corpus file, case seed) and what they raise
FOUND = [
    ("hdf5-repo/tools/test/h5dump/testfiles/vds/5_vds.h5", 96446675979368, "FormatError"),
]


@pytest.mark.parametrize("name, seed, outcome", FOUND)
def test_cases_found_by_the_long_run(name, seed, outcome):
    """A virtual dataset whose mapping's selection has another rank than the dataset (seed
    4125: an IndexError from the extent computation) raises a FormatError."""
    path = os.path.join(fuzzing.CORPUS, name)
    if not os.path.exists(path):
        pytest.skip("corpus absent")
    (result,) = fuzzing.run([path], [(0, seed)])
    assert result["outcome"] == outcome, result
