package workspace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/workspace/patch"
)

// responsesSchema returns the official Responses API schema's def,
// resolved (internal/apischema holds the schema).
func responsesSchema(t *testing.T, def string) *jsonschema.Resolved {
	t.Helper()
	rs, err := apischema.Responses(def)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func validate(t *testing.T, rs *jsonschema.Resolved, doc []byte) error {
	t.Helper()
	return apischema.Validate(rs, doc)
}

// A request carrying every workspace tool as a function, and apply_patch as
// a custom tool with its grammar, is valid under the official schema; the
// custom spec's bytes are stable; a custom spec missing its definition is
// not valid (the check can fail).
func TestToolSpecsValidateAgainstResponsesSchema(t *testing.T) {
	rs := responsesSchema(t, "CreateResponse")
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	var tools []json.RawMessage
	for _, tool := range ts.Tools() {
		tools = append(tools, tool.Spec())
		if tool.Name != "apply_patch" && tool.CustomSpec() != nil {
			t.Errorf("%s has a custom spec", tool.Name)
		}
	}
	patchTool, _ := ts.Lookup("apply_patch")
	custom := patchTool.CustomSpec()
	if !bytes.Equal(custom, patchTool.CustomSpec()) {
		t.Fatal("CustomSpec bytes differ between calls")
	}
	var spec struct {
		Type, Name, Description string
		Format                  struct{ Type, Syntax, Definition string }
	}
	if err := json.Unmarshal(custom, &spec); err != nil || spec.Type != "custom" || spec.Name != "apply_patch" ||
		spec.Format.Type != "grammar" || spec.Format.Syntax != "lark" || spec.Format.Definition != patch.Grammar || !strings.Contains(spec.Description, "*** Begin Patch") {
		t.Fatalf("custom spec %s (%v)", custom, err)
	}
	request := func(tools []json.RawMessage) []byte {
		b, err := json.Marshal(map[string]any{"model": "gpt-5.3-codex", "input": "hi", "store": false, "tools": tools})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := validate(t, rs, request(append(tools, custom))); err != nil {
		t.Fatalf("the tools are not valid: %v", err)
	}
	broken := json.RawMessage(`{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark"}}`)
	if err := validate(t, rs, request([]json.RawMessage{broken})); err == nil {
		t.Fatal("a grammar without its definition validated")
	}
}
