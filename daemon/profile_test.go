package daemon

import (
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/sim"
)

// A model that does not reason is not asked to: the API (and the
// simulator, which follows it) refuses reasoning.effort for gpt-4o, so a
// daemon that sent hearth's old default effort to every model failed every
// prompt. The profile in use is in status, overrides applied.
func TestModelThatDoesNotReason(t *testing.T) {
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-4o"; c.ContextWindow = 50_000 })
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	if stop := e.prompt(id, "hello"); stop != "end_turn" {
		t.Fatalf("stop reason %q; updates %+v", stop, e.updates())
	}
	if got := agentText(e.updates()); !strings.Contains(got, "hello") {
		t.Fatalf("answer %q", got)
	}
	for _, r := range td.sim.Received() {
		if r.Reasoning != nil || len(r.Include) > 0 {
			t.Fatalf("request %s sent reasoning %s, include %v", r.Type, r.Reasoning, r.Include)
		}
	}
	st := td.d.Status()
	p := st.Profile
	if p.Family != "gpt-4o" || p.ContextWindow != 50_000 || p.Reasoning != "none" || len(p.ReasoningLevels) != 0 || !p.Images {
		t.Fatalf("status profile %+v", p)
	}
}
