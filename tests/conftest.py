import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus")


@pytest.fixture
def corpus_dir():
    if not os.path.isdir(CORPUS):
        pytest.skip("../shared/corpus is absent")
    return CORPUS
