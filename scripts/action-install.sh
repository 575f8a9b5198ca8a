#!/usr/bin/env bash
# The Action's install step (action.yml): the single executable of the action's own release,
# from the repository's release downloads (or MCPFLEET_RELEASE_URL), checked and kept in the
# runner's tool cache; its directory goes on PATH for the validate step.
set -euo pipefail
here="${GITHUB_ACTION_PATH:?}"
version="$(sed -n 's/^ *"version": "\([^"]*\)".*/\1/p' "$here/package.json" | head -n 1)"
repository="${MCPFLEET_ACTION_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-}}"
url="${MCPFLEET_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/v$version}"
exe="$(bash "$here/scripts/fetch-executable.sh" "$url" "${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/mcpfleet/$version")"
echo "$(dirname "$exe")" >>"${GITHUB_PATH:-/dev/null}"
echo "MCPFLEET_EXECUTABLE=$exe" >>"${GITHUB_ENV:-/dev/null}"
"$exe" --version
