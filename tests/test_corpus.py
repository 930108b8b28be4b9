"""Every file of ../shared/corpus that h5py opens: purehep reads every object equal to h5py,
or raises a documented UnsupportedFeatureError; where h5py fails, purehep fails cleanly."""
import collections
import os

import pytest

from corpus import compare_file, is_documented, is_failure

HERE = os.path.dirname(__file__)
FILES_DIR = os.path.join(HERE, "..", "..", "shared", "corpus", "files")


def corpus_files():
    if not os.path.isdir(FILES_DIR):
        return []
    out = []
    for root, _, names in os.walk(FILES_DIR):
        for name in sorted(names):
            out.append(os.path.relpath(os.path.join(root, name), FILES_DIR))
    return sorted(out)


FILES = corpus_files()
TALLY = collections.Counter()


@pytest.mark.skipif(not FILES, reason="../shared/corpus is absent")
@pytest.mark.parametrize("rel", FILES)
def test_corpus_file(rel):
    results = compare_file(os.path.join(FILES_DIR, rel))
    bad = [(p, o) for p, o in results if is_failure(o) or
           (o.startswith("unsupported") and not is_documented(o))]
    for _, outcome in results:
        TALLY[outcome.split(":")[0].split(" ")[0]] += 1
    assert not bad, bad[:5]
