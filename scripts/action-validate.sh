#!/usr/bin/env bash
# Runs `mcpfleet validate` for action.yml: MCPFLEET_PATHS and MCPFLEET_ARGS are split on white
# space (no shell evaluation of their content), and the exit code is validate's. The executable
# is the one the install step fetched (MCPFLEET_EXECUTABLE).
set -euo pipefail
read -r -a paths <<<"${MCPFLEET_PATHS:-.}"
read -r -a args <<<"${MCPFLEET_ARGS:-}"
exec "${MCPFLEET_EXECUTABLE:?run scripts/action-install.sh first}" validate "${args[@]}" "${paths[@]}"
