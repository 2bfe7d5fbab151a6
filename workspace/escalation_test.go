package workspace

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestShellEscalation: the shell call's sandbox_permissions and
// justification reach the Preview the permission prompt is built from;
// an unknown value is the model's error, before anyone is asked.
func TestShellEscalation(t *testing.T) {
	r, _, _ := newTree(t)
	ts := NewToolset(r)
	p := preview(t, ts, "shell", `{"command":"npm install","sandbox_permissions":"require_escalated","justification":"Allow npm to download the dependencies?"}`)
	if !p.Escalation.Escalate || p.Escalation.Justification != "Allow npm to download the dependencies?" || p.Command != "npm install" {
		t.Errorf("escalated preview = %+v", p)
	}
	if p := preview(t, ts, "shell", `{"command":"ls","sandbox_permissions":"use_default"}`); p.Escalation.Escalate {
		t.Errorf("use_default escalated: %+v", p)
	}
	_, err := ts.Preview(context.Background(), "shell", json.RawMessage(`{"command":"ls","sandbox_permissions":"root"}`))
	if err == nil || !strings.Contains(err.Error(), `sandbox_permissions must be "use_default" or "require_escalated"`) {
		t.Errorf("a bad sandbox_permissions: %v", err)
	}
	tool, _ := ts.Lookup("shell")
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(tool.Parameters, &schema); err != nil || schema.Properties["sandbox_permissions"] == nil || schema.Properties["justification"] == nil {
		t.Errorf("shell's schema lacks the escalation parameters (%v): %s", err, tool.Parameters)
	}
}
