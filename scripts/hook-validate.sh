#!/usr/bin/env bash
# The pre-commit hook (.pre-commit-hooks.yaml, language: script): runs `mcpfleet validate` with
# the hook's arguments and the staged files, using the single executable of the hook's release
# (its rev), fetched once into ~/.cache/mcpfleet/ and checked against its SHA-256. The release
# URL is MCPFLEET_RELEASE_URL, else the releases of the repository the hook was cloned from.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
version="$(sed -n 's/^ *"version": "\([^"]*\)".*/\1/p' "$here/package.json" | head -n 1)"
url="${MCPFLEET_RELEASE_URL:-}"
if [ -z "$url" ]; then
  origin="$(git -C "$here" config --get remote.origin.url || true)"
  [ -n "$origin" ] || { echo "mcpfleet: set MCPFLEET_RELEASE_URL to the release's download URL" >&2; exit 1; }
  url="${origin%.git}/releases/download/v$version"
fi
exe="$(bash "$here/scripts/fetch-executable.sh" "$url" "${XDG_CACHE_HOME:-$HOME/.cache}/mcpfleet/$version")"
exec "$exe" validate "$@"
