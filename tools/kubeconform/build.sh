#!/usr/bin/env bash
# Builds kubeconform (github.com/yannh/kubeconform) from the Go module pinned in go.mod into
# $1/<version>-<go.sum digest>/bin, and points $1/current at it: `make bench` times
# `mcpfleet validate` against it (bench/validate-vs-kubeconform.bench.ts).
# A complete directory is reused, so only a machine's first build pays for the compile.
# Without Go it skips with one line when --optional; the bench lines then say so.
set -euo pipefail
TOOL=kubeconform
source "$(dirname "$0")/../lib.sh"
tools=$(tools_root "${1:?usage: build.sh TOOLS_DIR [--optional]}")
cd "$(dirname "$0")"
require_go "${2:-}" "" "the bench's kubeconform lines will skip"

pkg=github.com/yannh/kubeconform
version=$(go list -m -f '{{.Version}}' "$pkg")
digest=$(cat go.mod go.sum tools.go | sha256sum | cut -c1-12)
reuse_or_begin "$tools" "kubeconform-$version-$digest" "kubeconform $version"
go_program kubeconform "$pkg/cmd/kubeconform"
finish "kubeconform=$version"
