package session_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/store"
)

// A session's own model and effort (SetChoice): the next request names
// them and is full, since its settings changed; the request log says why;
// the one after chains again.
func TestChoiceChangesTheNextRequest(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("s1")
	prompt(t, c, "hello", newRecorder())
	c.SetChoice(session.Choice{Model: "gpt-5.2", Effort: "high"})
	prompt(t, c, "again", newRecorder())
	prompt(t, c, "and again", newRecorder())
	recs := e.wait(3)
	if recs[0].Model != "sim-model" || recs[1].Model != "gpt-5.2" || recs[2].Model != "gpt-5.2" {
		t.Fatalf("models sent: %s, %s, %s", recs[0].Model, recs[1].Model, recs[2].Model)
	}
	var effort struct{ Effort string }
	if err := json.Unmarshal(recs[1].Reasoning, &effort); err != nil || effort.Effort != "high" {
		t.Fatalf("reasoning after the choice: %s", recs[1].Reasoning)
	}
	if recs[1].PreviousResponseID != "" || recs[2].PreviousResponseID != recs[1].ResponseID {
		t.Fatalf("after the choice: prev %q, then %q (want full, then chained on %s)", recs[1].PreviousResponseID, recs[2].PreviousResponseID, recs[1].ResponseID)
	}
	reqs, err := e.db.Requests().List(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if reqs[1].Kind != store.KindFull || reqs[1].FullReason != "instructions, tools or model changed" {
		t.Fatalf("request after the choice logged as %s (%q)", reqs[1].Kind, reqs[1].FullReason)
	}
	// A model that does not reason: no reasoning object, whatever the
	// effort was.
	c.SetChoice(session.Choice{Model: "gpt-4o"})
	if cfg := c.Config(); cfg.ReasoningEffort != "none" || cfg.ContextWindow != 128_000 || cfg.Profile.Family != "gpt-4o" {
		t.Fatalf("gpt-4o chosen: effort %q, window %d, family %s", cfg.ReasoningEffort, cfg.ContextWindow, cfg.Profile.Family)
	}
	prompt(t, c, "plain", newRecorder())
	if r := e.wait(4)[3]; r.Model != "gpt-4o" || r.Reasoning != nil {
		t.Fatalf("gpt-4o request: model %s, reasoning %s", r.Model, r.Reasoning)
	}
}

// A choice given to Open is in place for the warm-up: the first request
// after a restart chains on it.
func TestChoiceAtOpenWarmsWithIt(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	if err := e.db.CreateSession(context.Background(), store.Session{ID: "s1", Root: e.root}); err != nil {
		t.Fatal(err)
	}
	c, err := session.Open(context.Background(), session.Options{ID: "s1", Client: e.client, DB: e.db, Tools: e.tools,
		Choice: session.Choice{Model: "o3", Effort: "low"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	warm(t, c)
	prompt(t, c, "hello", newRecorder())
	recs := e.wait(2)
	if recs[0].Model != "o3" || recs[1].PreviousResponseID != recs[0].ResponseID {
		t.Fatalf("warm-up named %s; the prompt chained on %q (want %s)", recs[0].Model, recs[1].PreviousResponseID, recs[0].ResponseID)
	}
}

// usageRecorder is a recorder that is also told how full the context is.
type usageRecorder struct {
	*recorder
	mu    sync.Mutex
	usage [][2]int
}

func (u *usageRecorder) Usage(used, size int) {
	u.mu.Lock()
	u.usage = append(u.usage, [2]int{used, size})
	u.mu.Unlock()
}

// Each response of a turn tells a UsageSink the context's tokens (the
// response's input and output) and the window; a turn of three requests
// tells it three times, growing.
func TestUsageAfterEachResponse(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ContextWindow: 50_000})
	c := e.open("s1")
	rec := &usageRecorder{recorder: newRecorder()}
	prompt(t, c, `look sim:calls=2 sim:tool=read_file sim:args={"path":"a.txt"}`, rec)
	reqs, err := e.db.Requests().List(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.usage) != len(reqs) || len(reqs) != 3 {
		t.Fatalf("%d usage updates for %d requests: %v", len(rec.usage), len(reqs), rec.usage)
	}
	for i, u := range rec.usage {
		want := int(reqs[i].Usage.Input + reqs[i].Usage.Output)
		if u != [2]int{want, 50_000} {
			t.Errorf("usage %d = %v, want [%d 50000]", i, u, want)
		}
		if i > 0 && u[0] <= rec.usage[i-1][0] {
			t.Errorf("the context did not grow: %v", rec.usage)
		}
	}
	if used, size := c.ContextUsage(); used != rec.usage[2][0] || size != 50_000 {
		t.Errorf("ContextUsage = %d, %d", used, size)
	}
	// An unknown window (sim-model, no HEARTH_CONTEXT_WINDOW): the usage
	// is told against FallbackWindow, and the config keeps no window (the
	// session compacts only on the server's refusal).
	e2 := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	rec2 := &usageRecorder{recorder: newRecorder()}
	c2 := e2.open("s2")
	prompt(t, c2, "hello", rec2)
	reqs2, err := e2.db.Requests().List(context.Background(), "s2")
	if err != nil || len(reqs2) != 1 {
		t.Fatalf("requests %+v, %v", reqs2, err)
	}
	want := [2]int{int(reqs2[0].Usage.Input + reqs2[0].Usage.Output), session.FallbackWindow}
	if len(rec2.usage) != 1 || rec2.usage[0] != want || c2.Config().ContextWindow != 0 {
		t.Errorf("usage told without a window: %v, want %v; config window %d", rec2.usage, want, c2.Config().ContextWindow)
	}
}

// A reopened conversation (after a daemon restart) knows how full its
// context is from the stored requests: its usage, and the estimate of its
// next request, are what they were when it closed. Items added since the
// last response are counted by their bytes, as before.
func TestUsageSurvivesReopen(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ContextWindow: 50_000})
	c := e.open("s1")
	prompt(t, c, `look sim:calls=2 sim:tool=read_file sim:args={"path":"a.txt"}`, newRecorder())
	used, size := c.ContextUsage()
	next := session.NextInputOf(c)
	if used == 0 || next < used {
		t.Fatalf("before: usage %d, next input %d", used, next)
	}
	c.Close()
	r := e.reopen("s1")
	if u, s := r.ContextUsage(); u != used || s != size {
		t.Errorf("reopened: usage %d of %d, want %d of %d", u, s, used, size)
	}
	if n := session.NextInputOf(r); n != next {
		t.Errorf("reopened: next input %d, want %d", n, next)
	}
}
