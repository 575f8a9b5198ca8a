#!/usr/bin/env bash
# Builds the control plane's programs (etcd, kube-apiserver, kube-controller-manager, kubectl)
# from the Go modules pinned in go.mod into $1/<kubernetes>-<etcd>-<go.sum digest>/bin, and
# points $1/current at that directory. A directory that is already complete is reused, so the
# first run on a machine pays for the build and later runs (and other clones) take a second.
set -euo pipefail
cd "$(dirname "$0")"

root=${1:?usage: build.sh TOOLS_DIR [--optional]}
if ! command -v go >/dev/null; then
  # Optional (a prerequisite of `make test`): the cluster tests then skip and say why.
  if [ "${2:-}" = --optional ] && [ "${REQUIRE_CLUSTER:-}" != 1 ]; then
    echo "cluster-tools: no Go toolchain, not built; the cluster tests will skip"
    exit 0
  fi
  echo "cluster-tools: go is not installed (Go >= 1.26 needed)" >&2
  exit 2
fi

k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
digest=$(cat go.mod go.sum | sha256sum | cut -c1-12)
key="kubernetes-$k8s-etcd-$etcd-$digest"
dest="$root/$key"
programs=(etcd kube-apiserver kube-controller-manager kubectl)

link_current() { ln -sfn "$key" "$root/current"; }

if [ -f "$dest/complete" ]; then
  echo "cluster-tools: reusing $dest (Kubernetes $k8s, etcd $etcd)"
  link_current
  exit 0
fi

echo "cluster-tools: building Kubernetes $k8s and etcd $etcd into $dest"
echo "cluster-tools: a machine's first build downloads the pinned modules from the Go module proxy and compiles for several minutes"
mkdir -p "$dest/bin"

# The version the servers report (/version, kubectl's skew check); `go build` outside the
# Kubernetes repository would otherwise say v0.0.0-master.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s -X $pkg.gitTreeState=clean"
  ldflags+=" -X $pkg.gitMajor=$(echo "$k8s" | cut -d. -f1 | tr -d v) -X $pkg.gitMinor=$(echo "$k8s" | cut -d. -f2)"
done

package_of() {
  case "$1" in
    etcd) echo go.etcd.io/etcd/server/v3 ;;
    *) echo "k8s.io/kubernetes/cmd/$1" ;;
  esac
}

total=${#programs[@]}
n=0
for program in "${programs[@]}"; do
  n=$((n + 1))
  start=$SECONDS
  echo "cluster-tools: [$n/$total] $program ..."
  go build -trimpath -ldflags "$ldflags" -o "$dest/bin/$program.partial" "$(package_of "$program")" &
  build=$!
  # A heartbeat, so that a cold build of several minutes is not mistaken for a hang.
  while kill -0 "$build" 2>/dev/null; do
    sleep 5
    if kill -0 "$build" 2>/dev/null && (((SECONDS - start) % 30 < 5)); then
      echo "cluster-tools:       still compiling $program ($((SECONDS - start))s)"
    fi
  done
  wait "$build"
  mv "$dest/bin/$program.partial" "$dest/bin/$program"
  echo "cluster-tools: [$n/$total] $program done in $((SECONDS - start))s"
done

{
  echo "kubernetes=$k8s"
  echo "etcd=$etcd"
  echo "go=$(go env GOVERSION)"
} >"$dest/complete"
link_current
echo "cluster-tools: ready in $dest"
