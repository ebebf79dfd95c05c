# Everything runs from a virtual environment in .venv, created on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO := build/demo.jsonl

.PHONY: demo test lint bench clean clients

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## demo: set up, then condense a copy of a sample session and show the view
demo: $(STAMP)
	@mkdir -p build
	cp sample_sessions/pending_request.jsonl $(DEMO)
	$(BIN)/condense run $(DEMO) --type conversation_window
	$(BIN)/condense view $(DEMO)
	$(BIN)/condense check $(DEMO)

## test: set up, then lint, type-check and run the whole test suite on every core
## (`$(BIN)/python -m pytest -m 'not slow'` is the quick loop)
test: lint $(STAMP)
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto

## clients: install the pinned Claude Code and Codex CLIs from npm into .clients/ (tests do this too)
clients: $(STAMP)
	$(BIN)/python tests/clients/install.py

## bench: set up, then run the benchmark (generates 10k/100k/1M-event logs in bench/data)
bench: $(STAMP)
	$(BIN)/python bench/bench.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache .hypothesis
