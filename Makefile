PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-nojit bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/python -m purehep.demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -x -p no:cacheprovider
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_nojit.py

bench: $(VENV)/.installed-test
	$(BIN)/python -m tools.bench

clean:
	rm -rf $(VENV) build *.egg-info
