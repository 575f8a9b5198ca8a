#!/usr/bin/env bash
# Builds the official MCP registry server (`registry`, github.com/modelcontextprotocol/registry)
# from the Go module pinned in go.mod into $1/<version>-<go.sum digest>/bin, and points
# $1/current at it. The differential test (test/registry/official-differential.test.ts) and the
# registry-vs-official bench lines run it beside ours on a throwaway PostgreSQL.
# A complete directory is reused, so only a machine's first build pays for the compile.
# Without Go it skips with one line when --optional; REQUIRE_PEERS=1 (CI) fails instead.
set -euo pipefail
root=${1:?usage: build.sh TOOLS_DIR [--optional]}
mkdir -p "$root"
root=$(cd "$root" && pwd)
cd "$(dirname "$0")"

if ! command -v go >/dev/null; then
  if [ "${2:-}" = --optional ] && [ "${REQUIRE_PEERS:-}" != 1 ]; then
    echo "official-registry: no Go toolchain, not built; the official registry tests will skip"
    exit 0
  fi
  echo "official-registry: go is not installed (Go >= 1.26 needed)" >&2
  exit 2
fi
export GOTOOLCHAIN=local

pkg=github.com/modelcontextprotocol/registry
version=$(go list -m -f '{{.Version}}' "$pkg")
digest=$(cat go.mod go.sum tools.go | sha256sum | cut -c1-12)
key="registry-$version-$digest"
dest="$root/$key"
link_current() { ln -sfn "$key" "$root/current"; }

if [ -f "$dest/complete" ]; then
  echo "official-registry: reusing $dest (official MCP registry $version)"
  link_current
  exit 0
fi

echo "official-registry: building the official MCP registry $version into $dest"
echo "official-registry: a machine's first build downloads its modules from the Go module proxy and compiles for several minutes"
mkdir -p "$dest/bin"
start=$SECONDS
# Its version is stamped as the official release stamps it, so /v0.1/version says which it is.
nice go build -trimpath -ldflags "-s -w -X main.Version=$version" \
  -o "$dest/bin/registry.partial" "$pkg/cmd/registry" &
pid=$!
# A heartbeat, so that a cold build is not mistaken for a hang.
while kill -0 "$pid" 2>/dev/null; do
  sleep 5
  if kill -0 "$pid" 2>/dev/null && (((SECONDS - start) % 30 < 5)); then
    echo "official-registry:       still compiling registry ($((SECONDS - start))s)"
  fi
done
wait "$pid"
mv "$dest/bin/registry.partial" "$dest/bin/registry"
echo "official-registry: registry done in $((SECONDS - start))s"

{
  echo "registry=$version"
  echo "go=$(go env GOVERSION)"
} >"$dest/complete"
link_current
echo "official-registry: ready in $dest"
