# Two commands set up a fresh machine from nothing: `make run` and `make test`.
# Both create .venv with the pinned installs first (once; again when pyproject.toml changes).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	# torch first, pinned: the CPU build on local disk, never the multi-GB CUDA one.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# Until the Telegram bot lands, `run` checks the installation and the configuration.
run: $(STAMP)
	HF_HUB_OFFLINE=1 $(VENV)/bin/hearth doctor

lint: $(STAMP)
	$(VENV)/bin/ruff check bot soul memory tests bench
	$(VENV)/bin/mypy

test: $(STAMP) lint
	HF_HUB_OFFLINE=1 $(PY) -m pytest

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m bench.recall
	HF_HUB_OFFLINE=1 $(PY) -m bench.assemble
	HF_HUB_OFFLINE=1 $(PY) -m bench.memory_quality

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
