#!/usr/bin/env bash
# Builds the control plane's programs (etcd, kube-apiserver, kube-controller-manager, kubectl)
# from the Go modules pinned in go.mod into $1/<kubernetes>-<etcd>-<go.sum digest>/bin, and
# points $1/current at that directory. A directory that is already complete is reused, so the
# first run on a machine pays for the build and later runs (and other clones) take a second.
# Optional (a prerequisite of `make test`): without Go the cluster tests skip and say why.
set -euo pipefail
TOOL=cluster-tools
source "$(dirname "$0")/../lib.sh"
tools=$(tools_root "${1:?usage: build.sh TOOLS_DIR [--optional]}")
cd "$(dirname "$0")"
require_go "${2:-}" REQUIRE_CLUSTER "the cluster tests will skip"

k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
digest=$(cat go.mod go.sum | sha256sum | cut -c1-12)
reuse_or_begin "$tools" "kubernetes-$k8s-etcd-$etcd-$digest" "Kubernetes $k8s and etcd $etcd"

# The version the servers report (/version, kubectl's skew check); `go build` outside the
# Kubernetes repository would otherwise say v0.0.0-master.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s -X $pkg.gitTreeState=clean"
  ldflags+=" -X $pkg.gitMajor=$(echo "$k8s" | cut -d. -f1 | tr -d v) -X $pkg.gitMinor=$(echo "$k8s" | cut -d. -f2)"
done
go_program etcd go.etcd.io/etcd/server/v3 "$ldflags"
for program in kube-apiserver kube-controller-manager kubectl; do
  go_program "$program" "k8s.io/kubernetes/cmd/$program" "$ldflags"
done
finish "kubernetes=$k8s" "etcd=$etcd"
