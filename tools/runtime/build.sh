#!/usr/bin/env bash
# Builds the programs that read what `mcpfleet synth` renders, from the Go modules pinned in
# go.mod, into $1/<toolhive version>-<go.sum digest>/bin, and points $1/current at it:
#   thv-proxyrunner  the proxy runner (reads runconfig.json)
#   vmcp             the virtual MCP server (reads the vmcp config.yaml; has `validate`)
#   runconfig-check  ours: the runner's own run-config decoder, refusing keys it would ignore
#   resource-check   ours: decodes custom resources into the v1beta1 Go types the programs read
# A complete directory is reused, so only a machine's first build pays for the compile.
set -euo pipefail
cd "$(dirname "$0")"

root=${1:?usage: build.sh TOOLS_DIR [--optional]}
if ! command -v go >/dev/null; then
  # Optional (a prerequisite of `make test`): the runtime tests then skip and say why.
  if [ "${2:-}" = --optional ] && [ "${REQUIRE_RUNTIME:-}" != 1 ]; then
    echo "runtime-tools: no Go toolchain, not built; the runtime tests will skip"
    exit 0
  fi
  echo "runtime-tools: go is not installed (Go >= 1.26 needed)" >&2
  exit 2
fi
export GOTOOLCHAIN=local

toolhive=$(go list -m -f '{{.Version}}' github.com/stacklok/toolhive)
digest=$(cat go.mod go.sum runconfig-check/*.go resource-check/*.go | sha256sum | cut -c1-12)
key="toolhive-$toolhive-$digest"
dest="$root/$key"
link_current() { ln -sfn "$key" "$root/current"; }

if [ -f "$dest/complete" ]; then
  echo "runtime-tools: reusing $dest (ToolHive $toolhive)"
  link_current
  exit 0
fi

echo "runtime-tools: building ToolHive $toolhive's proxy runner and vmcp into $dest"
echo "runtime-tools: a machine's first build downloads the pinned modules and compiles for several minutes"
mkdir -p "$dest/bin"
ldflags="-s -w"
build() {
  local name=$1 pkg=$2 start=$SECONDS
  echo "runtime-tools: $name ..."
  nice go build -trimpath -ldflags "$ldflags" -o "$dest/bin/$name.partial" "$pkg" &
  local pid=$!
  # A heartbeat, so that a cold build is not mistaken for a hang.
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if kill -0 "$pid" 2>/dev/null && (((SECONDS - start) % 30 < 5)); then
      echo "runtime-tools:       still compiling $name ($((SECONDS - start))s)"
    fi
  done
  wait "$pid"
  mv "$dest/bin/$name.partial" "$dest/bin/$name"
  echo "runtime-tools: $name done in $((SECONDS - start))s"
}
build thv-proxyrunner github.com/stacklok/toolhive/cmd/thv-proxyrunner
build vmcp github.com/stacklok/toolhive/cmd/vmcp
build runconfig-check ./runconfig-check
build resource-check ./resource-check

{
  echo "toolhive=$toolhive"
  echo "go=$(go env GOVERSION)"
} >"$dest/complete"
link_current
echo "runtime-tools: ready in $dest"
