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

setup: $(STAMP)

demo: setup
	$(PY) manage.py run_demo

test: setup lint
	$(PY) -m pytest

test-fast: setup
	$(PY) -m pytest -m "not slow and not browser and not services"

lint: setup
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) var .pytest_cache
