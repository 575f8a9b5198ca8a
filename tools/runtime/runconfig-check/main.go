// runconfig-check reads a runconfig.json the way thv-proxyrunner does (runner.ReadJSON, the
// function its `run` command calls on /etc/runconfig/runconfig.json) and prints what it decoded
// as JSON, after validating the embedded authorization server section as the runner does when it
// starts one. The runner itself ignores keys it does not know; this program refuses them, so a
// section the runner would silently drop fails the caller's test instead.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/stacklok/toolhive/pkg/runner"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: runconfig-check FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("read", err)
	}
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	var probe runner.RunConfig
	if err := strict.Decode(&probe); err != nil {
		fail("not read by the runner", err)
	}
	config, err := runner.ReadJSON(bytes.NewReader(data))
	if err != nil {
		fail("rejected by the runner", err)
	}
	// The runner validates the embedded authorization server's section first thing when it
	// starts one, before storage or any network use.
	if auth := config.EmbeddedAuthServerConfig; auth != nil {
		if err := auth.Validate(); err != nil {
			fail("embedded authorization server refused", err)
		}
	}
	out, err := json.Marshal(config)
	if err != nil {
		fail("encode", err)
	}
	fmt.Println(string(out))
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
	os.Exit(1)
}
