# Steps the tool builds of tools/*/ share. A build puts pinned programs into $root/<key>/bin once
# per machine and points $root/current at the directory once it is complete; a directory without
# its `complete` file is an interrupted build, and is built again. Sourced by a build after it
# sets TOOL, the name its lines start with.

# The tools directory $1, created, as an absolute path (builds cd elsewhere).
tools_root() {
  mkdir -p "$1"
  (cd "$1" && pwd)
}

# Makes sure Go is there, and that it builds with itself rather than a toolchain it would
# download. Without it: with --optional ($1), unless the REQUIRE_ variable named $2 is 1, one
# line saying what skips ($3) and exit 0; otherwise exit 2.
require_go() {
  if command -v go >/dev/null; then
    export GOTOOLCHAIN=local
    return
  fi
  if [ "$1" = --optional ] && { [ -z "$2" ] || [ "${!2:-}" != 1 ]; }; then
    echo "$TOOL: no Go toolchain, not built; $3"
    exit 0
  fi
  echo "$TOOL: go is not installed (Go >= 1.26 needed)" >&2
  exit 2
}

# Sets root, key and dest=$root/$key. A complete dest is made current and the build ends there
# (exit 0); otherwise it says what it builds ($3) and creates dest/bin.
reuse_or_begin() {
  root=$1
  key=$2
  dest=$root/$key
  if [ -f "$dest/complete" ]; then
    echo "$TOOL: reusing $dest ($3)"
    ln -sfn "$key" "$root/current"
    exit 0
  fi
  echo "$TOOL: building $3 into $dest"
  echo "$TOOL: a machine's first build downloads its modules from the Go module proxy and compiles for several minutes"
  mkdir -p "$dest/bin"
}

# Runs a command that writes $dest/bin/$1.partial (the rest of the arguments) in the background,
# with a line every 30 s so that a cold build is not mistaken for a hang, then puts the program
# in place.
build_program() {
  local name=$1 start=$SECONDS pid
  shift
  echo "$TOOL: $name ..."
  "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if kill -0 "$pid" 2>/dev/null && (((SECONDS - start) % 30 < 5)); then
      echo "$TOOL:       still compiling $name ($((SECONDS - start))s)"
    fi
  done
  wait "$pid"
  mv "$dest/bin/$name.partial" "$dest/bin/$name"
  echo "$TOOL: $name done in $((SECONDS - start))s"
}

# `go build` of package $2 into the program $1, with the link flags $3 (default: stripped).
go_program() {
  build_program "$1" nice go build -trimpath -ldflags "${3:--s -w}" -o "$dest/bin/$1.partial" "$2"
}

# Records what dest holds (the `name=version` lines given, then Go's version) and makes it
# current.
finish() {
  {
    printf '%s\n' "$@"
    echo "go=$(go env GOVERSION)"
  } >"$dest/complete"
  ln -sfn "$key" "$root/current"
  echo "$TOOL: ready in $dest"
}
