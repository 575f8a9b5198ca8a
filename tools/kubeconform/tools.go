//go:build tools

// Package kubeconform pins kubeconform's module so that its command builds by package path
// (tools/kubeconform/build.sh): the peer `make bench` times validate against. Nothing of it is
// compiled into mcpfleet.
package kubeconform

import _ "github.com/yannh/kubeconform/cmd/kubeconform"
