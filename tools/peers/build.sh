#!/usr/bin/env bash
# Builds the peer programs kept as source in ../shared/peers (public material beside the
# repository, never copied into it) into $1/<program>-<version>-<tree digest>/bin, and points
# $1/current at it:
#   thv-registry-api  the ToolHive registry server, which the differential registry test runs
#                     beside ours (test/registry/reference-differential.test.ts)
# A complete directory is reused, so only a machine's first build pays for the compile.
# Without ../shared/peers (a clone alone) it skips with one line; REQUIRE_PEERS=1 (CI) fails.
set -euo pipefail
root=${1:?usage: build.sh TOOLS_DIR [--optional]}
# Absolute before any cd: the build runs in the source directory, which is not ours to write.
mkdir -p "$root"
root=$(cd "$root" && pwd)
cd "$(dirname "$0")"
src=$(cd ../../.. && pwd)/shared/peers/toolhive-registry-server

skip_or_fail() {
  if [ "${REQUIRE_PEERS:-}" = 1 ]; then
    echo "peer-tools: REQUIRE_PEERS=1: $1" >&2
    exit 2
  fi
  echo "peer-tools: $1; not built, the reference registry tests will skip"
  exit 0
}

[ -f "$src/go.mod" ] || skip_or_fail "$src is absent (public peer sources kept beside the repository)"
if ! command -v go >/dev/null; then
  [ "${2:-}" = --optional ] && skip_or_fail "no Go toolchain"
  echo "peer-tools: go is not installed (Go >= 1.26 needed)" >&2
  exit 2
fi
export GOTOOLCHAIN=local

version=$(tr -d '[:space:]' <"$src/VERSION")
# Every file of the tree, by path and content: any change to the peer's sources is a new build.
digest=$(cd "$src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
key="thv-registry-api-$version-$digest"
dest="$root/$key"
link_current() { ln -sfn "$key" "$root/current"; }

if [ -f "$dest/complete" ]; then
  echo "peer-tools: reusing $dest (ToolHive registry server $version)"
  link_current
  exit 0
fi

echo "peer-tools: building the ToolHive registry server $version into $dest"
echo "peer-tools: a machine's first build downloads its modules from the Go module proxy and compiles for several minutes"
mkdir -p "$dest/bin"
start=$SECONDS
# The source directory is not ours: go must never rewrite its go.mod or go.sum. When they do not
# list every module the build needs, build a copy that go may complete.
compile() {
  local dir=$src flags=-mod=readonly
  if ! (cd "$src" && GOFLAGS=$flags go list -deps ./cmd/thv-registry-api >/dev/null 2>&1); then
    dir=$(mktemp -d)
    trap "rm -rf '$dir'" EXIT
    cp -R "$src/." "$dir"
    chmod -R u+w "$dir"
    flags=-mod=mod
    echo "peer-tools: its go.sum is incomplete; building a copy in $dir with $flags"
  fi
  cd "$dir"
  GOFLAGS=$flags nice go build -trimpath -ldflags "-s -w" \
    -o "$dest/bin/thv-registry-api.partial" ./cmd/thv-registry-api
}
(compile) &
pid=$!
# A heartbeat, so that a cold build is not mistaken for a hang.
while kill -0 "$pid" 2>/dev/null; do
  sleep 5
  if kill -0 "$pid" 2>/dev/null && (((SECONDS - start) % 30 < 5)); then
    echo "peer-tools:       still compiling thv-registry-api ($((SECONDS - start))s)"
  fi
done
wait "$pid"
mv "$dest/bin/thv-registry-api.partial" "$dest/bin/thv-registry-api"
echo "peer-tools: thv-registry-api done in $((SECONDS - start))s"

{
  echo "thv-registry-api=$version"
  echo "source=$src"
  echo "go=$(go env GOVERSION)"
} >"$dest/complete"
link_current
echo "peer-tools: ready in $dest"
