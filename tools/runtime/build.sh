#!/usr/bin/env bash
# Builds the programs that read what `mcpfleet synth` renders, from the Go modules pinned in
# go.mod, into $1/<toolhive version>-<go.sum digest>/bin, and points $1/current at it:
#   thv-proxyrunner  the proxy runner (reads runconfig.json)
#   vmcp             the virtual MCP server (reads the vmcp config.yaml; has `validate`)
#   runconfig-check  ours: the runner's own run-config decoder, refusing keys it would ignore
#   resource-check   ours: decodes custom resources into the v1beta1 Go types the programs read
# A complete directory is reused, so only a machine's first build pays for the compile.
# Optional (a prerequisite of `make test`): without Go the runtime tests skip and say why.
set -euo pipefail
TOOL=runtime-tools
source "$(dirname "$0")/../lib.sh"
tools=$(tools_root "${1:?usage: build.sh TOOLS_DIR [--optional]}")
cd "$(dirname "$0")"
require_go "${2:-}" REQUIRE_RUNTIME "the runtime tests will skip"

toolhive=$(go list -m -f '{{.Version}}' github.com/stacklok/toolhive)
digest=$(cat go.mod go.sum runconfig-check/*.go resource-check/*.go | sha256sum | cut -c1-12)
reuse_or_begin "$tools" "toolhive-$toolhive-$digest" "ToolHive $toolhive's proxy runner and vmcp"
go_program thv-proxyrunner github.com/stacklok/toolhive/cmd/thv-proxyrunner
go_program vmcp github.com/stacklok/toolhive/cmd/vmcp
go_program runconfig-check ./runconfig-check
go_program resource-check ./resource-check
finish "toolhive=$toolhive"
