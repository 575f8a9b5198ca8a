#!/usr/bin/env bash
# Builds the CLI in the action's own checkout (action.yml): dependencies, then the compiler.
set -euo pipefail
cd "${GITHUB_ACTION_PATH:?}"
npm ci --no-audit --no-fund --loglevel=error
npx tsc -p tsconfig.build.json
