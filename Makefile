# Every target creates .venv at the repo root and installs the project into it when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TOOLS := .venv-tools
TOOLS_STAMP := $(TOOLS)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
export SAM_CLI_TELEMETRY := 0
export POWERTOOLS_SERVICE_NAME ?= agent-workspace
export POWERTOOLS_METRICS_NAMESPACE ?= AgentWorkspace

PY_TREES := layers functions tests scripts channel
# The Claude Code channel (channel/): its own package, installed beside the project; its unit tests run in a pytest
# session of their own, outside tests/ and its fixtures (the bridge end to end is tests/integration/test_channel_bridge.py).
CHANNEL_TESTS := channel/tests
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM

.PHONY: serve test check unit lint docs soak bench bench-ci build admin clean browser extension

$(STAMP): pyproject.toml layers/workspace/requirements.txt channel/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e ./channel
	touch $@

# aws-sam-cli pins an older pydantic, so it lives in its own venv, never beside the runtime deps.
$(TOOLS_STAMP):
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --upgrade pip
	$(TOOLS)/bin/python -m pip install --quiet 'aws-sam-cli>=1.130,<2'
	touch $@

# No CloudWatch locally: Powertools would print metric blobs into the server's log.
serve: $(STAMP)
	HOST=$(HOST) PORT=$(PORT) POWERTOOLS_METRICS_DISABLED=true $(BIN)/python -m agent_workspace.local

# `build` first: tests/artifact loads what `sam build` made in a clean interpreter of the runtime's version.
# In parallel (pytest-xdist): every test makes its own tables, buckets and queues, so tests share nothing.
# --dist loadfile keeps a module's tests on one worker, so a module's fixtures are set up once.
PYTEST_WORKERS ?= 4
test: $(STAMP) lint browser build
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)
	$(BIN)/python -m pytest -q $(CHANNEL_TESTS)

# The fast gate to run before every commit (under 20 s warm): lint, format, types and the unit tests.
check: $(STAMP)
	$(BIN)/ruff check $(PY_TREES)
	$(BIN)/ruff format --check $(PY_TREES)
	$(BIN)/mypy
	$(BIN)/mypy channel/agent_workspace_channel
	$(BIN)/python -m pytest -q tests/unit $(PYTEST_ARGS)
	$(BIN)/python -m pytest -q $(CHANNEL_TESTS)

unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)
	$(BIN)/python -m pytest -q $(CHANNEL_TESTS)

# Rewrites the generated docs (tools, OpenAPI, configuration) from the code; tests/contract fails when they are stale.
docs: $(STAMP)
	$(BIN)/python scripts/gen_docs.py

# The console's end-to-end tests drive Debian's headless Chromium; install it once if it is missing.
browser:
	@test -x $(CHROMIUM) || { command -v apt-get >/dev/null && \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }; } \
		|| { echo "Chromium is needed at $(CHROMIUM) for the console tests: apt-get install chromium"; exit 1; }

lint: $(STAMP) $(TOOLS_STAMP)
	$(BIN)/ruff check $(PY_TREES)
	$(BIN)/ruff format --check $(PY_TREES)
	$(BIN)/mypy
	$(BIN)/mypy channel/agent_workspace_channel
	$(BIN)/cfn-lint template.yaml
	$(TOOLS)/bin/sam validate --lint --template template.yaml --region us-east-1

# The load and fuzz suites at full size: 32 agents on 1,000 tasks, 100 duplicated deliveries of each kind,
# 100 fuzz examples per action and REST operation. Bounded: each load test fails past SOAK_SECONDS, and
# the whole run is stopped after SOAK_LIMIT seconds.
SOAK_AGENTS ?= 32
SOAK_TASKS ?= 1000
SOAK_DUPLICATES ?= 100
SOAK_SECONDS ?= 900
SOAK_LIMIT ?= 3600
FUZZ_EXAMPLES ?= 100
soak: $(STAMP)
	SOAK_AGENTS=$(SOAK_AGENTS) SOAK_TASKS=$(SOAK_TASKS) SOAK_DUPLICATES=$(SOAK_DUPLICATES) \
		SOAK_SECONDS=$(SOAK_SECONDS) FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
		timeout --signal=INT --kill-after=60 $(SOAK_LIMIT) $(BIN)/python -m pytest tests/load tests/fuzz $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python scripts/bench.py

# The cheap part of the benchmark (the ratios from source, the functions without SnapStart, the idle cost): ~45 s.
bench-ci: $(STAMP)
	$(BIN)/python scripts/bench.py --ci

# The Lambda runtime and architecture come from template.yaml (scripts/lambda_target.py), which also finds
# that Python version on this host: the layer's .pyc are compiled by it.
BUILD_VARS := .aws-sam/lambda-target.env
build: $(TOOLS_STAMP)
	mkdir -p .aws-sam
	$(TOOLS)/bin/python scripts/lambda_target.py make-vars > $(BUILD_VARS)
	set -a && . ./$(BUILD_VARS) && set +a && $(TOOLS)/bin/sam build --template template.yaml

# Bootstrap a deployed stack from this shell, without serving or testing anything (see README, Deploy):
#   make admin ARGS='create-account --title "Acme" --table <TableName> --region <region>'
admin: $(STAMP)
	$(BIN)/python -m agent_workspace.admin $(ARGS)

# The Chrome extension (extension/, no build step) as the zip Chrome Web Store takes, or to share: manifest.json at the
# root, the version from it. Everything but dotfiles and the README goes in, in a stable order.
extension:
	mkdir -p dist
	cd extension && $(PYTHON) -c 'import json, pathlib, zipfile; \
		version = json.loads(pathlib.Path("manifest.json").read_text())["version"]; \
		out = pathlib.Path("../dist") / f"agent-workspace-extension-{version}.zip"; \
		files = sorted(p for p in pathlib.Path(".").rglob("*") if p.is_file() and p.name != "README.md" \
			and not any(part.startswith(".") for part in p.parts)); \
		archive = zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED); [archive.write(p, p.as_posix()) for p in files]; \
		archive.close(); print(f"{out.resolve()}: {len(files)} files")'

clean:
	rm -rf $(VENV) $(TOOLS) .node .aws-sam .pytest_cache test-artifacts dist
