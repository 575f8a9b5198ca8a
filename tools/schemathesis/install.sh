#!/usr/bin/env bash
# Installs schemathesis from PyPI, at the versions pinned in requirements.txt, into a virtual
# environment $1/schemathesis-<digest> and points $1/current at it: the OpenAPI test
# (test/registry/openapi-schemathesis.test.ts) runs it against our registry server.
# A complete environment is reused, so only a machine's first install downloads anything.
# Without python3 and its venv module it skips with one line when --optional; the test then
# skips too (REQUIRE_SCHEMATHESIS=1, as in CI, fails it instead).
set -euo pipefail
root=${1:?usage: install.sh TOOLS_DIR [--optional]}
mkdir -p "$root"
root=$(cd "$root" && pwd)
cd "$(dirname "$0")"

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  if [ "${2:-}" = --optional ]; then
    echo "schemathesis: no python3 with venv, not installed; the schemathesis test will skip"
    exit 0
  fi
  echo "schemathesis: python3 (>= 3.10) with its venv module is needed" >&2
  exit 2
fi

version=$(sed -n 's/^schemathesis==//p' requirements.txt)
digest=$( (cat requirements.txt; python3 -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
key="schemathesis-$version-$digest"
dest="$root/$key"
link_current() { ln -sfn "$key" "$root/current"; }

if [ -f "$dest/complete" ]; then
  echo "schemathesis: reusing $dest (schemathesis $version)"
  link_current
  exit 0
fi

# A virtual environment holds its own path: build it in place, and mark it complete last.
echo "schemathesis: installing schemathesis $version into $dest"
rm -rf "$dest"
python3 -m venv "$dest"
"$dest/bin/pip" install --quiet --disable-pip-version-check --no-input -r requirements.txt
"$dest/bin/schemathesis" --version >/dev/null
{
  echo "schemathesis=$version"
  echo "python=$(python3 -c 'import platform; print(platform.python_version())')"
} >"$dest/complete"
link_current
echo "schemathesis: ready in $dest"
