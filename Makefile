# Two commands for a fresh machine: `make demo` and `make test` (see README).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup demo test test-fast lint clean

$(STAMP): requirements.txt requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch==2.13.0 is pinned: its CPU build installs without the CUDA packages.
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $(STAMP)

# Browser libraries (charts) from npm, pinned by package-lock.json, copied where the pages load them.
VENDOR := frontend/static/vendor
$(VENDOR)/.installed: package.json package-lock.json
	@command -v npm >/dev/null || { echo "npm not found: dashboard charts disabled (install Node.js to get them)"; exit 0; }; \
	npm ci --no-audit --no-fund --loglevel=error
	@if [ -d node_modules/chart.js ]; then \
	  mkdir -p $(VENDOR) && \
	  cp node_modules/chart.js/dist/chart.umd.min.js $(VENDOR)/chart.umd.min.js && \
	  cp node_modules/@sgratzl/chartjs-chart-boxplot/build/index.umd.min.js $(VENDOR)/chartjs-chart-boxplot.umd.min.js && \
	  touch $@; fi

setup: $(STAMP) $(VENDOR)/.installed

demo: setup
	$(PY) manage.py run_demo

# PYTEST_ARGS: e.g. "-n 2" (both cores, pytest-xdist; .ci/run uses it) or "-x -k queue"
PYTEST_ARGS ?=

test: setup lint
	$(PY) -m pytest $(PYTEST_ARGS)

test-fast: setup
	$(PY) -m pytest -m "not slow and not browser and not services"

lint: setup
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) var .pytest_cache
