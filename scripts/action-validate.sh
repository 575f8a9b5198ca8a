#!/usr/bin/env bash
# Runs `mcpfleet validate` for action.yml: MCPFLEET_PATHS and MCPFLEET_ARGS are split on white
# space (no shell evaluation of their content), and the exit code is validate's.
set -euo pipefail
read -r -a paths <<<"${MCPFLEET_PATHS:-.}"
read -r -a args <<<"${MCPFLEET_ARGS:-}"
exec node "${GITHUB_ACTION_PATH:?}/build/src/cli/main.js" validate "${args[@]}" "${paths[@]}"
