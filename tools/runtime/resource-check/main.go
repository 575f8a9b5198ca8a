// resource-check decodes custom resources into the reference operator's v1beta1 Go types, the
// types through which the runtime programs (vmcp's status reporter and backend watcher) and the
// reference operator read them from the API server. The API server serves every version of our
// CRDs from one stored form without conversion, so a field whose JSON type differs from the Go
// type (a string where the program expects an object) breaks the program's read of the whole
// object. Input: a file holding a JSON array of objects. Output: a JSON array with, per object,
// the decode error ("" when it decodes) and the first field the types do not know ("" if none).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/stacklok/toolhive/cmd/thv-operator/api/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type result struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Error   string `json:"error"`
	Unknown string `json:"unknown"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: resource-check FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var objects []json.RawMessage
	if err := json.Unmarshal(data, &objects); err != nil {
		fail(err)
	}
	scheme := runtime.NewScheme()
	if err := v1beta1.AddToScheme(scheme); err != nil {
		fail(err)
	}
	results := make([]result, 0, len(objects))
	for _, raw := range objects {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &head)
		r := result{Kind: head.Kind, Name: head.Metadata.Name}
		gvk := schema.GroupVersionKind{Group: v1beta1.GroupVersion.Group, Version: "v1beta1", Kind: head.Kind}
		obj, err := scheme.New(gvk)
		if err != nil {
			r.Error = err.Error()
		} else if err := json.Unmarshal(raw, obj); err != nil {
			// What client-go does with a response body: unknown fields dropped, types enforced.
			r.Error = err.Error()
		} else {
			strict := json.NewDecoder(bytes.NewReader(raw))
			strict.DisallowUnknownFields()
			fresh, _ := scheme.New(gvk)
			if err := strict.Decode(fresh); err != nil {
				r.Unknown = err.Error()
			}
		}
		results = append(results, r)
	}
	out, err := json.Marshal(results)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
