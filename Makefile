PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# the newest Python 3.12+ here (pyenv's included): the integrations' newest releases (pandas 3,
# anndata, zarr, VirtualiZarr) need it, and the tests of NEWEST_TESTS run there too
PY_NEWEST ?= $(shell for p in python3.14 python3.13 python3.12 \
  $$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python 2>/dev/null | sort -rV); do \
  $$p -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && { echo $$p; break; }; done)
NEWEST := .venv-newest
NEWEST_TESTS := tests/test_pandas_hdf.py tests/test_table.py tests/test_table_data.py \
  tests/test_table_anndata.py tests/test_table_planner.py tests/test_query.py \
  tests/test_virtualizarr.py tests/test_xarray.py tests/test_dask.py tests/test_sparse_csr.py \
  tests/test_sparse_api.py tests/test_codecs.py tests/test_numpy_only.py \
  tests/test_pandas_store.py tests/test_h5py_lowlevel_h5t.py

.PHONY: demo test test-nojit test-newest h5dump ncdump bench clean

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
	$(MAKE) --no-print-directory test-newest

# the kernels' loop forms as plain Python against their numpy forms (tests/test_numpy_only.py,
# part of the suite, runs purehep with numpy as the only third-party package)
test-nojit: $(VENV)/.installed-test
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_kernels.py

# the tests whose peers' newest releases differ from .venv's (Python 3.11 resolves pandas 2,
# anndata 0.12, zarr 3.1, VirtualiZarr 2.5), on the newest Python here with its newest releases
test-newest: $(VENV)/.installed-test
	@if [ -z "$(PY_NEWEST)" ]; then echo "no Python 3.12+ here: $(NEWEST_TESTS) ran on .venv's releases only"; \
	else $(MAKE) --no-print-directory $(NEWEST)/.installed-test && \
	  $(NEWEST)/bin/python -m pytest -q -p no:cacheprovider $(NEWEST_TESTS); fi

$(NEWEST)/.installed-test: pyproject.toml
	$(PY_NEWEST) -m venv $(NEWEST)
	$(NEWEST)/bin/pip install -q --upgrade pip
	$(NEWEST)/bin/pip install -q -e '.[test]'
	touch $@

bench: $(VENV)/.installed-test
	$(BIN)/python -m tools.bench

clean:
	rm -rf $(VENV) $(NEWEST) build *.egg-info
