package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// A tool whose schema does not encode fails the request with an error that
// names it; the request never goes out without the other tools.
func TestToolSchemaThatDoesNotEncodeNamesTheTool(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	bad := json.RawMessage(`{"type":"function","name":"broken_tool","parameters":{"type":"object",}`)
	tools := &wsTools{ts: e.tools.ts, runs: map[string]int{}, specs: append(append([]json.RawMessage(nil), e.tools.specs...), bad)}
	c := e.openWith("s1", tools)
	_, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage("hello")}, newRecorder())
	if err == nil || !strings.Contains(err.Error(), "broken_tool") {
		t.Fatalf("Prompt = %v, want an error naming broken_tool", err)
	}
	t.Logf("Prompt: %v", err)
	for _, r := range e.sim.Received() {
		t.Errorf("a request went out (tools %d bytes): %s", len(r.Tools), r.Raw)
	}
}
