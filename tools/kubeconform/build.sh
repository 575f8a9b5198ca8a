#!/usr/bin/env bash
# Builds kubeconform (github.com/yannh/kubeconform) from the Go module pinned in go.mod into
# $1/<version>-<go.sum digest>/bin, and points $1/current at it: `make bench` times
# `mcpfleet validate` against it (bench/validate-vs-kubeconform.bench.ts).
# A complete directory is reused, so only a machine's first build pays for the compile.
# Without Go it skips with one line when --optional; the bench lines then say so.
set -euo pipefail
root=${1:?usage: build.sh TOOLS_DIR [--optional]}
mkdir -p "$root"
root=$(cd "$root" && pwd)
cd "$(dirname "$0")"

if ! command -v go >/dev/null; then
  if [ "${2:-}" = --optional ]; then
    echo "kubeconform: no Go toolchain, not built; the bench's kubeconform lines will skip"
    exit 0
  fi
  echo "kubeconform: go is not installed (Go >= 1.26 needed)" >&2
  exit 2
fi
export GOTOOLCHAIN=local

pkg=github.com/yannh/kubeconform
version=$(go list -m -f '{{.Version}}' "$pkg")
digest=$(cat go.mod go.sum tools.go | sha256sum | cut -c1-12)
key="kubeconform-$version-$digest"
dest="$root/$key"
link_current() { ln -sfn "$key" "$root/current"; }

if [ -f "$dest/complete" ]; then
  echo "kubeconform: reusing $dest (kubeconform $version)"
  link_current
  exit 0
fi

echo "kubeconform: building kubeconform $version into $dest"
mkdir -p "$dest/bin"
start=$SECONDS
nice go build -trimpath -ldflags "-s -w" -o "$dest/bin/kubeconform.partial" "$pkg/cmd/kubeconform"
mv "$dest/bin/kubeconform.partial" "$dest/bin/kubeconform"
echo "kubeconform: done in $((SECONDS - start))s"

{
  echo "kubeconform=$version"
  echo "go=$(go env GOVERSION)"
} >"$dest/complete"
link_current
echo "kubeconform: ready in $dest"
