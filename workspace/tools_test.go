package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestToolsOrderAndLookup(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	var names []string
	for _, tool := range ts.Tools() {
		names = append(names, tool.Name)
		if wantRO := tool.Kind == "read" || tool.Kind == "search"; tool.ReadOnly != wantRO {
			t.Errorf("%s: ReadOnly = %v for Kind %q", tool.Name, tool.ReadOnly, tool.Kind)
		}
		got, ok := ts.Lookup(tool.Name)
		if !ok || got.Name != tool.Name || !bytes.Equal(got.Parameters, tool.Parameters) {
			t.Errorf("Lookup(%q) = %+v, %v", tool.Name, got, ok)
		}
	}
	if want := []string{"read_file", "list_dir", "grep", "view_image", "write_file", "edit_file", "apply_patch", "shell", "exec_command", "write_stdin"}; !slices.Equal(names, want) {
		t.Errorf("Tools() names = %v, want %v", names, want)
	}
	if _, ok := ts.Lookup("rm_rf"); ok {
		t.Error("Lookup(rm_rf) found a tool that does not exist")
	}
	// Callers get copies: scribbling on one must not change the next.
	tools := ts.Tools()
	tools[0].Parameters[0] = 'X'
	if ts.Tools()[0].Parameters[0] != '{' {
		t.Error("Tools() shares Parameters bytes with its callers")
	}
}

func TestSpecIsStableAndValid(t *testing.T) {
	r, _, _ := newTree(t)
	for _, tool := range NewToolset(r).Tools() {
		first := tool.Spec()
		for range 5 {
			other, _ := NewToolset(r).Lookup(tool.Name)
			if !bytes.Equal(first, other.Spec()) || !bytes.Equal(first, tool.Spec()) {
				t.Fatalf("%s: Spec() bytes differ between calls", tool.Name)
			}
		}
		var spec struct {
			Type        string `json:"type"`
			Name        string `json:"name"`
			Description string `json:"description"`
			Strict      *bool  `json:"strict"`
			Parameters  struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			} `json:"parameters"`
		}
		if err := json.Unmarshal(first, &spec); err != nil {
			t.Fatalf("%s: Spec() is not valid JSON: %v\n%s", tool.Name, err, first)
		}
		if !strings.HasPrefix(string(first), `{"type":"function","name":"`+tool.Name+`"`) {
			t.Errorf("%s: Spec() does not start with type and name: %s", tool.Name, first)
		}
		p := spec.Parameters
		switch {
		case spec.Type != "function", spec.Name != tool.Name, spec.Description != tool.Description:
			t.Errorf("%s: Spec() header wrong: %s", tool.Name, first)
		case spec.Strict == nil || *spec.Strict:
			t.Errorf("%s: Spec() strict must be present and false", tool.Name)
		case p.Type != "object", p.AdditionalProperties == nil || *p.AdditionalProperties, len(p.Required) == 0:
			t.Errorf("%s: parameters schema must be a closed object with required fields: %s", tool.Name, first)
		}
		for _, req := range p.Required {
			if _, ok := p.Properties[req]; !ok {
				t.Errorf("%s: required %q is not a property", tool.Name, req)
			}
		}
		d := findTool(tool.Name)
		if len(d.fields) != len(p.Properties) {
			t.Errorf("%s: fields %v do not match the schema's properties", tool.Name, d.fields)
		}
		for _, f := range d.fields {
			if _, ok := p.Properties[f]; !ok {
				t.Errorf("%s: field %q missing from the schema", tool.Name, f)
			}
		}
	}
}

// TestBadArguments feeds every read-only tool the malformed calls a model
// produces and checks each becomes an error Result whose message says what
// is wrong. The writing tools have their own table in write_tools_test.go.
func TestBadArguments(t *testing.T) {
	r, root, outside := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	ts := NewToolset(r)
	required := map[string]string{"read_file": "path", "list_dir": "path", "grep": "pattern", "view_image": "path"}
	// P stands for the grep pattern argument, so a call is well formed
	// except for the one fault under test.
	tests := []struct {
		name, args string
		want       []string // substrings of Output
	}{
		{"not JSON", `{P "path": "a.txt"`, []string{"not valid JSON", "e.g. {"}},
		{"garbage", `hello`, []string{"must be a JSON object"}},
		{"array", `[]`, []string{"must be a JSON object"}},
		{"null", `null`, []string{"must be a JSON object"}},
		{"string", `"a.txt"`, []string{"must be a JSON object"}},
		{"wrong type", `{"path":1,"pattern":1}`, []string{"must be a string, not number"}},
		{"unknown field", `{P "path":"a.txt","bogus":true}`, []string{`unknown argument "bogus"`, "allowed arguments: "}},
		{"missing required", `{}`, []string{"missing required argument"}},
		{"empty arguments", ``, []string{"missing required argument"}},
		{"trailing data", `{P "path":"a.txt"} {}`, []string{"extra data"}},
		{"outside root", `{P "path":"../outside"}`, []string{"outside the workspace"}},
		{"absolute outside", `{P "path":` + mustJSON(t, outside) + `}`, []string{"outside the workspace"}},
		{"missing path", `{P "path":"nope/missing.txt"}`, []string{"does not exist"}},
	}
	for _, tool := range ts.Tools() {
		if !tool.ReadOnly {
			continue
		}
		for _, tt := range tests {
			t.Run(tool.Name+"/"+tt.name, func(t *testing.T) {
				p := ""
				if tool.Name == "grep" {
					p = `"pattern":"x",`
				}
				res := call(t, ts, tool.Name, strings.Replace(tt.args, "P", p, 1))
				if !res.IsError {
					t.Fatalf("IsError = false for %s, output %q", tt.args, res.Output)
				}
				for _, w := range tt.want {
					if !strings.Contains(res.Output, w) {
						t.Errorf("Output %q does not contain %q", res.Output, w)
					}
				}
				if tt.name == "missing required" && !strings.Contains(res.Output, `"`+required[tool.Name]+`"`) {
					t.Errorf("Output %q does not name the missing %q", res.Output, required[tool.Name])
				}
			})
		}
	}
}

func TestUnknownTool(t *testing.T) {
	r, _, _ := newTree(t)
	res := call(t, NewToolset(r), "rm_rf", `{}`)
	if !res.IsError || !strings.Contains(res.Output, `unknown tool "rm_rf"`) || !strings.Contains(res.Output, "read_file, list_dir, grep") {
		t.Errorf("Run(rm_rf) = %+v", res)
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ts := NewToolset(r)
	for _, tool := range ts.Tools() {
		res := ts.Run(ctx, tool.Name, json.RawMessage(`{"path":"a.txt","pattern":"a"}`))
		if !res.IsError || !strings.Contains(res.Output, "cancelled") {
			t.Errorf("%s with a cancelled context = %+v", tool.Name, res)
		}
	}
}

// TestConcurrentRuns runs every tool from several goroutines on one Toolset;
// under -race it checks that a Toolset shares no mutable state between calls.
func TestConcurrentRuns(t *testing.T) {
	ts, _ := grepTree(t)
	calls := [][2]string{
		{"read_file", `{"path":"README.md"}`},
		{"list_dir", `{"path":"src"}`},
		{"grep", `{"pattern":"needle","glob":"*.go"}`},
	}
	want := make([]Result, len(calls))
	for i, c := range calls {
		want[i] = call(t, ts, c[0], c[1])
	}
	errs := make(chan string, 8*len(calls))
	var wg sync.WaitGroup
	for range 8 {
		for i, c := range calls {
			wg.Go(func() {
				if got := ts.Run(context.Background(), c[0], json.RawMessage(c[1])); got.Output != want[i].Output {
					errs <- fmt.Sprintf("%s: concurrent output %q, want %q", c[0], got.Output, want[i].Output)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
