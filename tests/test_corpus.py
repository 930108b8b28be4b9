"""Every file of ../shared/corpus that h5py opens: purehep reads every object equal to h5py,
or raises a documented UnsupportedFeatureError; where h5py fails (or crashes), purehep fails
with a purehep error, never a crash."""
import collections
import os

import pytest

from corpus import is_documented, is_failure, run_all

HERE = os.path.dirname(__file__)
FILES_DIR = os.path.join(HERE, "..", "..", "shared", "corpus", "files")


def corpus_files():
    if not os.path.isdir(FILES_DIR):
        return []
    out = []
    for root, _, names in os.walk(FILES_DIR):
        for name in names:
            out.append(os.path.relpath(os.path.join(root, name), FILES_DIR))
    return sorted(out)


FILES = corpus_files()


@pytest.fixture(scope="module")
def corpus_results():
    return run_all([os.path.join(FILES_DIR, rel) for rel in FILES])


def _bad(results):
    return [(p, o) for p, o in results
            if is_failure(o) or (o.startswith("unsupported") and not is_documented(o))]


@pytest.mark.skipif(not FILES, reason="../shared/corpus is absent")
def test_corpus(corpus_results):
    tally = collections.Counter()
    failures = {}
    for rel in FILES:
        results = corpus_results[os.path.join(FILES_DIR, rel)]
        for _, outcome in results:
            tally[outcome.split(":")[0].split(" ")[0]] += 1
        bad = _bad(results)
        if bad:
            failures[rel] = bad[:3]
    print(f"\ncorpus: {len(FILES)} files; outcomes per object: {dict(tally)}")
    for rel, bad in sorted(failures.items()):
        print(f"  {rel}: {bad}")
    assert not failures, f"{len(failures)} files with failures"
