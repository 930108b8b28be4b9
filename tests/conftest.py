import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
# every stage checks that the objects it leaves out did not change (write/writer.py _scope)
os.environ.setdefault("PUREHEP_CHECK_STAGE", "1")

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus")


@pytest.fixture
def corpus_dir():
    if not os.path.isdir(CORPUS):
        pytest.skip("../shared/corpus is absent")
    return CORPUS


@pytest.fixture(scope="session")
def fuzz_samples(tmp_path_factory):
    """Paths of the fuzzing sample files (tests/fuzzfiles.py), built once per session."""
    import fuzzfiles
    tmp = tmp_path_factory.mktemp("fuzz_samples")
    return [fuzzfiles.build(name, tmp / f"{name}.h5") for name in fuzzfiles.SAMPLES]
