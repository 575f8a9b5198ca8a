#!/usr/bin/env bash
# The runtime tree of the container image, in OUT: what `npm pack` ships (compiled CLI, schemas,
# CRDs, the schema snapshot and validators) plus the production dependencies from the lockfile.
# The Dockerfile runs this script; the image test runs it too, so both build the same tree.
# Needs a checkout with its development dependencies installed (npm ci), and Node >= 22.
set -euo pipefail
out="${1:?usage: scripts/image-tree.sh OUT}"
cd "$(dirname "$0")/.."
mkdir -p "$out"
pack_dir="$(mktemp -d)"
trap 'rm -rf "$pack_dir"' EXIT
# prepack compiles the TypeScript; --json names the tarball.
tarball="$(npm pack --pack-destination "$pack_dir" --loglevel=error --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=s.slice(s.indexOf("["));console.log(JSON.parse(t)[0].filename)})')"
tar -xzf "$pack_dir/$tarball" -C "$out" --strip-components=1
cp package-lock.json "$out/"
(cd "$out" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error)
