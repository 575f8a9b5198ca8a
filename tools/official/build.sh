#!/usr/bin/env bash
# Builds the official MCP registry server (`registry`, github.com/modelcontextprotocol/registry)
# from the Go module pinned in go.mod into $1/<version>-<go.sum digest>/bin, and points
# $1/current at it. The differential test (test/registry/official-differential.test.ts) and the
# registry-vs-official bench lines run it beside ours on a throwaway PostgreSQL.
# A complete directory is reused, so only a machine's first build pays for the compile.
# Without Go it skips with one line when --optional; REQUIRE_PEERS=1 (CI) fails instead.
set -euo pipefail
TOOL=official-registry
source "$(dirname "$0")/../lib.sh"
tools=$(tools_root "${1:?usage: build.sh TOOLS_DIR [--optional]}")
cd "$(dirname "$0")"
require_go "${2:-}" REQUIRE_PEERS "the official registry tests will skip"

pkg=github.com/modelcontextprotocol/registry
version=$(go list -m -f '{{.Version}}' "$pkg")
digest=$(cat go.mod go.sum tools.go | sha256sum | cut -c1-12)
reuse_or_begin "$tools" "registry-$version-$digest" "the official MCP registry $version"
# Its version is stamped as the official release stamps it, so /v0.1/version says which it is.
go_program registry "$pkg/cmd/registry" "-s -w -X main.Version=$version"
finish "registry=$version"
