# zarrkit: set-up, demo, tests and benchmarks.  `make demo` and `make test` work on a fresh clone.

VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
# Python 3.12 (the interop test oracle, zarr-python 3.4, needs it): python3.12 on PATH, else pyenv's
PYTHON  ?= $(shell for p in python3.12 "$$(pyenv root 2>/dev/null)/versions/3.12.1/bin/python3.12"; do \
             "$$p" -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1 && { echo "$$p"; break; }; \
           done)
JOBS    ?= 2
# the demo: its own venv with the package alone (numpy, numcodecs, tqdm...; no test extra, no
# apt package), on any Python 3.11-3.13 found on PATH or in pyenv
DEMO_VENV   := .venv-demo
DEMO_PY     := $(DEMO_VENV)/bin/python
DEMO_STAMP  := $(DEMO_VENV)/.installed
DEMO_PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3 \
                 $$(ls -d "$$(pyenv root 2>/dev/null)"/versions/3.1[123].*/bin/python3 2>/dev/null | sort -r); do \
                 "$$p" -c 'import sys; assert (3, 11) <= sys.version_info[:2] <= (3, 13)' >/dev/null 2>&1 \
                   && { echo "$$p"; break; }; \
               done)

.PHONY: demo test test-quick bench bench-as-is bench-quick bench-chunk-cost lint clean compat-zarr2 compat-zarr3 compat-zarr3-tests compat-xarray docs docs-check

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.12 not found (install it or pass PYTHON=...)" >&2; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	command -v redis-server >/dev/null || apt-get install -y -qq redis-server >/dev/null 2>&1 \
	  || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq redis-server >/dev/null 2>&1; } \
	  || sudo -n apt-get install -y -qq redis-server \
	  || echo "warning: could not install redis-server (needed by the RedisStore tests, which will fail)" >&2
	touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	@test -x $(DEMO_PY) || test -n "$(DEMO_PYTHON)" || { echo "error: Python 3.11-3.13 not found (install one or pass DEMO_PYTHON=...)" >&2; exit 1; }
	test -x $(DEMO_PY) || $(DEMO_PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_PY) -m pip install -q --upgrade pip
	$(DEMO_PY) -m pip install -q -e .
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(DEMO_PY) examples/demo.py

# the tests start hundreds of Python processes (command lines, killed writers): with bytecode
# written once, as an installed package has it, each starts without compiling the package again
PYTEST  := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest

test: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(PYTEST) -q -n $(JOBS) --durations=10

test-quick: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(PYTEST) -q -n $(JOBS) -m "not slow"

bench: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/run.py --out benchmarks/RESULTS.md

# the same run with the machine as users have it (no memory touched, nothing held or dropped)
bench-as-is: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benchmarks/run.py --as-is --out benchmarks/RESULTS-as-is.md

bench-quick: $(STAMP)
	$(PY) benchmarks/run.py --quick

# per-chunk cost of small-chunk reads (resolve, locate, read, decode, scatter) beside tensorstore's
bench-chunk-cost: $(STAMP)
	$(PY) benchmarks/profile_chunk_cost.py --out benchmarks/PROFILE-chunk-cost.md

# zarr-python 2.18.7's public-API tests run against zarrkit (downloads the zarr 2 wheel to a temp dir)
compat-zarr2: $(STAMP)
	$(PY) tools/zarr2_suite.py --format 2
	$(PY) tools/zarr2_suite.py --format 3

# zarr-python 3.4.2's user guide, each page's code run with zarr-python and with zarrkit and the
# outputs compared block by block (downloads the zarr 3 sdist to a temp dir; VERBOSE=1 shows diffs)
compat-zarr3: $(STAMP)
	$(PY) tools/zarr3_guide.py $(if $(VERBOSE),--verbose)

# zarr-python 3.4.2's public-API tests, run with zarr-python and with zarrkit as `zarr` (sdist in a temp dir)
compat-zarr3-tests: $(STAMP)
	$(PY) tools/zarr3_suite.py

# xarray's own Zarr backend tests, run with zarr-python and with zarrkit as `zarr` (sdist in a temp dir)
compat-xarray: $(STAMP)
	$(PY) tools/xarray_suite.py

# the documentation site: mkdocs-material + mkdocstrings, built with --strict into site/
DOCS_STAMP := $(VENV)/.installed-docs

# (mkdocstrings reads src/ without importing it, so the docs need only the docs extra)
$(DOCS_STAMP): pyproject.toml
	@test -x $(PY) || test -n "$(PYTHON)" || { echo "error: Python 3.12 not found (install it or pass PYTHON=...)" >&2; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# builds the site, serves it on 127.0.0.1 and screenshots it with headless chromium
docs-check: docs
	$(PY) tools/docs_check.py --site site --out docs/screenshots

# ruff and mypy at the versions the dev extra pins; mypy's settings are in pyproject.toml
lint: $(STAMP)
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m ruff check src tests
	$(PY) -m mypy

clean:
	rm -rf $(VENV) $(DEMO_VENV) build dist site src/*.egg-info .pytest_cache .hypothesis .ruff_cache .mypy_cache
