PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-nojit h5dump ncdump bench clean

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

# h5dump (Debian's hdf5-tools) checks the files purehep writes; its tests skip without it
h5dump:
	@command -v h5dump >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && apt-get install -y -qq hdf5-tools) >/dev/null 2>&1; } \
	  || echo "h5dump unavailable: the tests that use it will skip"

# ncdump (Debian's netcdf-bin) checks the netCDF files purehep writes; its tests skip without it
ncdump:
	@command -v ncdump >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && apt-get install -y -qq netcdf-bin) >/dev/null 2>&1; } \
	  || echo "ncdump unavailable: the tests that use it will skip"

test: $(VENV)/.installed-test h5dump ncdump
	$(BIN)/python -m pytest -q -p no:cacheprovider
	$(MAKE) --no-print-directory test-nojit

# the kernels' loop forms as plain Python against their numpy forms (tests/test_numpy_only.py,
# part of the suite, runs purehep with numpy as the only third-party package)
test-nojit: $(VENV)/.installed-test
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_kernels.py

bench: $(VENV)/.installed-test
	$(BIN)/python -m tools.bench

clean:
	rm -rf $(VENV) build *.egg-info
