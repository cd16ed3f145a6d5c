# make setup | make book [PROFILE=smoke|cpu|paper] | make unit | make test | make bench | make clean
# See README.md. Every target creates .venv (and installs the project) when needed.

PROFILE   ?= cpu
PYTHON    ?= python3.11
VENV      := .venv
BIN       := $(VENV)/bin
REFERENCE ?= $(abspath ../shared/reference)
export RSUTILS_REFERENCE ?= $(REFERENCE)

SOURCES := pyproject.toml constraints.txt $(shell find rsutils -type f -not -path '*/__pycache__/*')

.PHONY: setup data notebooks html book test lint unit alltests smoke-notebooks nbval browser lab bench gpu-check clean
.PHONY: test-lanes tests-lane book-lane book-checks nbval-beside-html html-then-browser

# Recipes that pipe a lane's output through its prefix must fail when the lane fails.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

setup: $(VENV)/.installed

# The project is installed (not in editable mode), so tests and notebooks run against
# the installed package; any change under rsutils/ reinstalls it, after removing the old
# install and setuptools' build folder, so that a module moved or deleted in the tree
# cannot linger in site-packages and hide a broken import. The bytecode is compiled
# once here, after pip (20 s on two cores): where PYTHONDONTWRITEBYTECODE is set, as on
# the development machines, Python never writes what it compiles, so without it every
# process (each page's kernel, each CLI run) compiled torch and the rest again, about
# 4 s of its 7 s of imports. A few files in torch's test helpers are Python 3.12 syntax
# and do not compile; nothing imports them.
$(VENV)/.installed: $(SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile --upgrade pip
	$(BIN)/python -m pip uninstall --quiet --yes rsutils 2>/dev/null || true
	rm -rf build
	$(BIN)/python -m pip install --quiet --no-compile -c constraints.txt '.[test]'
	$(BIN)/python -m compileall -q -j 0 -x 'py312' \
	  "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" > /dev/null
	touch $@

data: setup
	$(BIN)/python -c "from rsutils.data import fashion_mnist_folder as f; print('Fashion-MNIST:', f())"

notebooks: data
	$(BIN)/python book/run_notebooks.py --profile $(PROFILE) --reference $(RSUTILS_REFERENCE)

html: setup
	rm -rf _build/html
	$(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going

book: notebooks html
	@echo "The book is in _build/html/index.html (profile $(PROFILE))."

lint: setup
	$(BIN)/ruff check rsutils tests notebooks book
	$(BIN)/ruff format --check rsutils tests notebooks book

# The fast tier (the edit-test loop): every test not marked slow.
unit: setup
	$(BIN)/pytest -m "not slow" --ignore=tests/browser tests

# Every test; the 15 slowest are listed at the end, where CI's time goes.
alltests: setup
	$(BIN)/pytest --ignore=tests/browser --durations=15 tests

# Every page of the built book (make html) in headless Chromium (tests/browser).
browser: setup
	RSUTILS_BOOK_HTML=$(CURDIR)/_build/html $(BIN)/pytest -m browser tests/browser

smoke-notebooks:
	$(MAKE) --no-print-directory notebooks PROFILE=smoke

# nbval re-executes the executed notebooks that have cells tagged nbval-check-output
# and compares those cells. Only cells that compute afresh are tagged, each a check of
# determinism that matters (the exact oracles of chapter 01, Cohen et al.'s tables
# recomputed from their released logs, the memory's answers in both orders, the
# offset's certificates, Monte Carlo volumes, the coverage of the fewer-draws
# procedures); a table of cached logs would only be compared with itself, so the
# chapters with nothing else (02, 06, 07, the manual pages) are not run twice.
NBVAL_NOTEBOOKS = $(patsubst notebooks/%.py,book/_executed/%.ipynb,$(shell grep -l nbval-check-output notebooks/[0-9][0-9]*_*.py))
nbval: setup
	$(BIN)/pytest --nbval-lax -o filterwarnings= -o addopts= $(NBVAL_NOTEBOOKS)

# make test: lint (seconds), then two lanes at once, one per core of a two-core machine:
# every test (pytest, about half the work) beside the book's checks (the smoke notebooks,
# then nbval beside the strict build and the browser test, which only read the executed
# notebooks, once the tests free the other core). The same checks as one after the
# other (LANES=1), in less time; each line of a lane's output starts with its name.
# With lanes side by side, torch runs one thread per process (OMP_NUM_THREADS=1): its
# default, a thread per core, put four busy threads on two cores, and the smoke
# chapters ran 2.8 times as long as alone. Certificates do not depend on the thread
# count (tested) and training sets its own (TRAINING_THREADS).
LANES ?= 2
LANE_THREADS := $(if $(filter 1,$(LANES)),,OMP_NUM_THREADS=1)
test: lint data
	$(LANE_THREADS) $(MAKE) --no-print-directory -j$(LANES) test-lanes

test-lanes: tests-lane book-lane

# Each line of a lane's output, as soon as it is written, after the lane's name.
prefix = while IFS= read -r line || [ -n "$$line" ]; do printf '[%s] %s\n' $(1) "$$line"; done

tests-lane:
	$(MAKE) --no-print-directory alltests 2>&1 | $(call prefix,tests)

book-lane:
	$(MAKE) --no-print-directory book-checks 2>&1 | $(call prefix,book)

book-checks: smoke-notebooks
	$(MAKE) --no-print-directory nbval-beside-html

nbval-beside-html: nbval html-then-browser

html-then-browser: html
	$(MAKE) --no-print-directory browser

# JupyterLab at the repository root: a chapter (notebooks/NN_slug.py) opens as a notebook
# on double-click (Jupytext), runs with its default parameters and the shared cache.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
lab: setup
	mkdir -p $(LAB_SETTINGS)
	printf '%s\n' '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}}}' > $(LAB_SETTINGS)/overrides.json
	$(BIN)/jupyter lab --notebook-dir=$(CURDIR)

bench: setup
	$(BIN)/python -m rsutils bench --batch 1000

# The device check (a few minutes): every inference mode on the CPU and on each CUDA GPU,
# seconds per certificate, GPU against CPU; without CUDA it says what it skipped.
gpu-check: setup
	$(BIN)/python -m rsutils device-check

clean:
	rm -rf _build book/_executed
