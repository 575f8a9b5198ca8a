//go:build tools

// Package official pins the official MCP registry's module so that its command builds by
// package path (tools/official/build.sh); nothing of it is compiled into mcpfleet.
package official

import _ "github.com/modelcontextprotocol/registry/cmd/registry"
