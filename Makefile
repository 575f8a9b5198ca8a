# mcpfleet build entry point. `make` on a fresh machine installs what the project needs:
# Node >= NODE_FLOOR (Node 24 LTS from the npm registry into .tools/ when the machine's is
# older), then the npm dependencies, and writes .tools/bin/mcpfleet, the CLI run by that Node.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all

# The lowest Node on which every command works: engines.node of package.json, which the guard in
# bin/mcpfleet.js repeats. 22.19 fails the registry's embedded store (node:sqlite binds `?1`
# parameters only from 22.20), 22.13 the cluster commands. The test suite runs the CLI on exactly
# this release, and checks that the guard stops the one before it (test/cli/floor.test.ts).
NODE_FLOOR := $(shell sed -n 's/^ *"node": ">=\([0-9.]*\)".*/\1/p' package.json)
NODE_BELOW_FLOOR := 22.19.0
NODE_MIN := $(NODE_FLOOR)
NODE_LTS := 24
TOOLS := $(CURDIR)/.tools
NODE_ARCH := $(shell uname -m | sed -e 's/x86_64/x64/' -e 's/aarch64/arm64/')
LOCAL_NODE_BIN := $(TOOLS)/node_modules/node-linux-$(NODE_ARCH)/bin
SYSTEM_NODE := $(shell node -p 'process.versions.node' 2>/dev/null || echo 0)

ifeq ($(shell printf '%s\n%s\n' $(NODE_MIN) $(SYSTEM_NODE) | sort -V -C && echo ok),ok)
NODE_STAMP :=
else
export PATH := $(LOCAL_NODE_BIN):$(PATH)
NODE_STAMP := $(LOCAL_NODE_BIN)/node
endif

NPM := npm --no-fund --no-audit --loglevel=error
RUN := node --enable-source-maps

.PHONY: all install build generate check lint typecheck format fresh test test-unit test-e2e cluster-tools runtime-tools peer-tools floor-node release synth bench serve clean

all: install build $(TOOLS)/bin/mcpfleet

# The CLI with the Node this Makefile chose (the machine's when new enough, else .tools/'s), so
# that nobody has to find which node runs bin/mcpfleet.js.
$(TOOLS)/bin/mcpfleet: Makefile $(NODE_STAMP)
	@mkdir -p $(@D)
	@printf '#!/bin/sh\nexec "%s" "%s/bin/mcpfleet.js" "$$@"\n' "$$(command -v node)" "$(CURDIR)" >$@
	@chmod +x $@

$(LOCAL_NODE_BIN)/node:
	@echo "make: machine Node is $(SYSTEM_NODE) (< $(NODE_MIN)); installing Node $(NODE_LTS) LTS into .tools/"
	@mkdir -p $(TOOLS)
	@$(NPM) install --prefix $(TOOLS) --no-save --no-package-lock node-linux-$(NODE_ARCH)@$(NODE_LTS)
	@$@ --version

node_modules/.installed: package.json package-lock.json $(NODE_STAMP)
	$(NPM) ci
	@touch $@

install: node_modules/.installed

# Compiled only when a source, a generated file or the compiler settings changed: `make synth`
# with nothing changed starts rendering at once.
BUILD_INPUTS := $(shell find src generated -type f -name '*.ts' 2>/dev/null) tsconfig.json tsconfig.build.json package.json
BUILD_STAMP := build/.stamp

$(BUILD_STAMP): $(BUILD_INPUTS) scripts/bundle.ts node_modules/.installed
	npx tsc -p tsconfig.build.json
	$(RUN) --import tsx scripts/bundle.ts
	@touch $@

build: install $(BUILD_STAMP)

# Regenerate everything derived from schemas/: generated/ types, crds/, docs/api/.
generate: install
	$(RUN) --import tsx scripts/generate.ts

# Fails when generated files differ from what `make generate` produces.
fresh: install
	$(RUN) --import tsx scripts/generate.ts --check

lint: install
	npx eslint --max-warnings 0 .
	npx prettier --check .

typecheck: install
	npx tsc -p tsconfig.json --noEmit

format: install
	npx prettier --write .

check: lint typecheck fresh

# etcd, kube-apiserver, kube-controller-manager and kubectl built from the Go modules pinned in
# tools/cluster/go.mod into .tools/cluster/, once per machine and pinned version (docs/e2e.md).
# As a prerequisite of `test` it is optional: without Go the cluster tests skip, saying why
# (REQUIRE_CLUSTER=1, as in CI, fails them instead).
cluster-tools:
	@tools/cluster/build.sh $(TOOLS)/cluster $(if $(filter cluster-tools,$(MAKECMDGOALS)),,--optional)

# The ToolHive proxy runner and vmcp, built from the Go modules pinned in tools/runtime/go.mod
# into .tools/runtime/, once per machine and pinned version (docs/synth.md): the tests run them
# on every rendered config. Optional as a prerequisite of `test` (REQUIRE_RUNTIME=1 fails instead).
runtime-tools:
	@tools/runtime/build.sh $(TOOLS)/runtime $(if $(filter runtime-tools,$(MAKECMDGOALS)),,--optional)

# The ToolHive registry server, built from its sources in ../shared/peers into .tools/peers/ once
# per machine and source tree, and the official MCP registry, built from the Go module pinned in
# tools/official/go.mod into .tools/official/: the differential registry tests run them beside
# ours. Skipped with one line where ../shared/peers or Go is absent (REQUIRE_PEERS=1 fails instead).
peer-tools:
	@tools/peers/build.sh $(TOOLS)/peers $(if $(filter peer-tools,$(MAKECMDGOALS)),,--optional)
	@tools/official/build.sh $(TOOLS)/official $(if $(filter peer-tools,$(MAKECMDGOALS)),,--optional)

# Node NODE_FLOOR and the release before it, from the npm registry into .tools/node-VERSION/, for
# test/cli/floor.test.ts (once per machine; absent, those tests skip unless REQUIRE_FLOOR_NODE=1).
FLOOR_NODES := $(foreach v,$(NODE_FLOOR) $(NODE_BELOW_FLOOR),$(TOOLS)/node-$(v)/node_modules/node-linux-$(NODE_ARCH)/bin/node)
$(TOOLS)/node-%/node_modules/node-linux-$(NODE_ARCH)/bin/node:
	@$(NPM) install --prefix $(TOOLS)/node-$* --no-save --no-package-lock node-linux-$(NODE_ARCH)@$*
	@$@ --version >/dev/null
floor-node: $(FLOOR_NODES)

# schemathesis, at the versions pinned in tools/schemathesis/requirements.txt, from PyPI into a
# virtual environment in .tools/schemathesis/ (once per machine and pin): the OpenAPI test runs it
# against the registry server. Optional as a prerequisite of `test` (REQUIRE_SCHEMATHESIS=1 fails
# instead of skipping where python3 with venv is missing).
.PHONY: schemathesis-tool
schemathesis-tool:
	@tools/schemathesis/install.sh $(TOOLS)/schemathesis $(if $(filter schemathesis-tool,$(MAKECMDGOALS)),,--optional)

# release/mcpfleet-linux-<arch>: one file that runs every command with no Node installed
# (scripts/release.ts, docs/install.md). Linux x64 and arm64, each built on its own architecture.
release: build
	$(RUN) --import tsx scripts/release.ts

test: install cluster-tools runtime-tools peer-tools floor-node schemathesis-tool
	npx vitest run

# The controller's end-to-end tests against a real cluster (docs/e2e.md):
#   make test-e2e KUBECONFIG=$$HOME/.kube/config
test-e2e: install
	@test -n "$(KUBECONFIG)" || { echo "make test-e2e: give KUBECONFIG=FILE (see docs/e2e.md)" >&2; exit 2; }
	MCPFLEET_E2E_KUBECONFIG="$(KUBECONFIG)" npx vitest run test/cluster/

synth: build
	$(RUN) bin/mcpfleet.js synth examples --output-dir dist

# kubeconform, the peer `make bench` times validate against, built from the Go module pinned in
# tools/kubeconform/go.mod into .tools/kubeconform/ (once per machine; skipped without Go).
.PHONY: kubeconform-tool
kubeconform-tool:
	@tools/kubeconform/build.sh $(TOOLS)/kubeconform --optional

bench: build kubeconform-tool
	$(RUN) --import tsx bench/run.ts

serve: build
	$(RUN) bin/mcpfleet.js registry serve --config examples/registry/config-anonymous.yaml

clean:
	rm -rf build dist coverage
