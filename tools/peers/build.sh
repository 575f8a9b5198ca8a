#!/usr/bin/env bash
# Builds the peer programs kept as source in ../shared/peers (public material beside the
# repository, never copied into it) into $1/<program>-<version>-<tree digest>/bin, and points
# $1/current at it:
#   thv-registry-api  the ToolHive registry server, which the differential registry test runs
#                     beside ours (test/registry/reference-differential.test.ts)
# A complete directory is reused, so only a machine's first build pays for the compile.
# Without ../shared/peers (a clone alone) it skips with one line; REQUIRE_PEERS=1 (CI) fails.
set -euo pipefail
TOOL=peer-tools
source "$(dirname "$0")/../lib.sh"
# Absolute before any cd: the build runs in the source directory, which is not ours to write.
tools=$(tools_root "${1:?usage: build.sh TOOLS_DIR [--optional]}")
cd "$(dirname "$0")"
src=$(cd ../../.. && pwd)/shared/peers/toolhive-registry-server

if [ ! -f "$src/go.mod" ]; then
  why="$src is absent (public peer sources kept beside the repository)"
  if [ "${REQUIRE_PEERS:-}" = 1 ]; then
    echo "$TOOL: REQUIRE_PEERS=1: $why" >&2
    exit 2
  fi
  echo "$TOOL: $why; not built, the reference registry tests will skip"
  exit 0
fi
require_go "${2:-}" REQUIRE_PEERS "the reference registry tests will skip"

version=$(tr -d '[:space:]' <"$src/VERSION")
# Every file of the tree, by path and content: any change to the peer's sources is a new build.
digest=$(cd "$src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
reuse_or_begin "$tools" "thv-registry-api-$version-$digest" "the ToolHive registry server $version"

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
    echo "$TOOL: its go.sum is incomplete; building a copy in $dir with $flags"
  fi
  cd "$dir"
  GOFLAGS=$flags nice go build -trimpath -ldflags "-s -w" \
    -o "$dest/bin/thv-registry-api.partial" ./cmd/thv-registry-api
}
build_program thv-registry-api compile
finish "thv-registry-api=$version" "source=$src"
