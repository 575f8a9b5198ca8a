#!/usr/bin/env bash
# Fetches mcpfleet's single executable for this machine (make release, docs/install.md) from a
# release's download URL into a cache directory, checks it against the release's SHA-256 file,
# and prints its path. Kept in the cache: the next run with the same release downloads nothing.
# Used by action.yml and the pre-commit hook, so that neither needs Node, npm ci or a compiler.
#   scripts/fetch-executable.sh RELEASE_URL CACHE_DIR
set -euo pipefail
url="${1:?usage: fetch-executable.sh RELEASE_URL CACHE_DIR}"
cache="${2:?usage: fetch-executable.sh RELEASE_URL CACHE_DIR}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) name=mcpfleet-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) name=mcpfleet-linux-arm64 ;;
  *)
    echo "mcpfleet: no single executable for $(uname -s) $(uname -m); install the npm package or use the image (docs/install.md)" >&2
    exit 1
    ;;
esac
exe="$cache/$name"
if [ -x "$exe" ]; then
  echo "$exe"
  exit 0
fi
mkdir -p "$cache"
part="$(mktemp "$cache/.$name.XXXXXX")"
trap 'rm -f "$part" "$part.sha256"' EXIT
get() {
  if command -v curl >/dev/null; then curl -fsSL --retry 3 -o "$2" "$1"; else wget -q -O "$2" "$1"; fi
}
get "$url/$name" "$part" || { echo "mcpfleet: cannot download $url/$name" >&2; exit 1; }
get "$url/$name.sha256" "$part.sha256" || { echo "mcpfleet: cannot download $url/$name.sha256" >&2; exit 1; }
want="$(cut -d' ' -f1 <"$part.sha256")"
have="$(sha256sum "$part" | cut -d' ' -f1)"
if [ "$want" != "$have" ]; then
  echo "mcpfleet: $url/$name does not match its SHA-256 ($have, the release says $want); not used" >&2
  exit 1
fi
chmod 755 "$part"
mv -f "$part" "$exe"
echo "$exe"
