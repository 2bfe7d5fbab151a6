package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/sim"
)

// A session driven past its context window compacts before the request
// that would cross the threshold and keeps answering: no request is
// refused, the summary is stored, the request after the compaction's
// warm-up is incremental, and a reopened session re-warms the compacted
// view, not the whole history.
func TestCompactionPastTheWindow(t *testing.T) {
	const window = 8000 // tokens of 4 bytes, as the simulator counts
	e := newEnv(t, sim.Options{ContextWindow: window}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ContextWindow: window})
	c := e.open("long")
	warm(t, c)
	rec := newRecorder()
	for i := range 14 { // each turn reads big.txt (2 KiB) twice
		prompt(t, c, "turn "+string(rune('a'+i))+` sim:calls=2 sim:tool=read_file sim:args={"path":"big.txt"}`, rec)
	}
	comps, err := e.db.Branches().Compactions(context.Background(), "long")
	if err != nil || len(comps) == 0 {
		t.Fatalf("no compaction after 14 turns past the window: %v", err)
	}
	if !strings.Contains(strings.Join(rec.notices, "\n"), "compacted this session") {
		t.Errorf("the user was not told: notices %q", rec.notices)
	}
	recs := e.wait(len(e.sim.Received()))
	for i, r := range recs {
		if strings.Contains(r.Outcome, "context_length_exceeded") {
			t.Fatalf("request %d was refused for its length", i)
		}
	}
	// The request after the first compaction's warm-up chains on it.
	var summaryAt = -1
	for i, r := range recs {
		if r.ResponseID == comps[0].ResponseID {
			summaryAt = i
		}
	}
	if summaryAt < 0 || summaryAt+2 >= len(recs) {
		t.Fatalf("the summary request %s is not among the %d requests", comps[0].ResponseID, len(recs))
	}
	wu, next := recs[summaryAt+1], recs[summaryAt+2]
	if wu.Generate == nil || *wu.Generate || next.PreviousResponseID != wu.ResponseID {
		t.Errorf("after the summary: %+v then %+v; want a warm-up of the compacted view and a request chained on it", wu.Generate, next.PreviousResponseID)
	}
	if !strings.Contains(string(wu.Raw), "Summary of the conversation so far") || strings.Contains(string(wu.Raw), "turn a sim:") {
		t.Errorf("the compacted view holds the first turn or lacks the summary")
	}
	// Everything is still stored.
	items, _ := e.db.Items().List(context.Background(), "long")
	if !strings.Contains(string(items[0].Data), "turn a") {
		t.Errorf("the first item is no longer stored: %s", items[0].Data)
	}
	// Reopened: the re-warm sends the compacted view.
	c.Close()
	c2 := e.reopen("long")
	warm(t, c2)
	all := e.wait(len(e.sim.Received()))
	rw := all[len(all)-1]
	if rw.Generate == nil || *rw.Generate || !strings.Contains(string(rw.Raw), "Summary of the conversation so far") || strings.Contains(string(rw.Raw), "turn a sim:") {
		t.Fatalf("the re-warm after reopening is not the compacted view")
	}
	prompt(t, c2, "after the restart", nil)
}

// A server that refuses a request for its length (hearth did not know the
// window) gets a compaction and one retry instead of a failed turn.
func TestContextLengthRefusalCompacts(t *testing.T) {
	e := newEnv(t, sim.Options{ContextWindow: 6000}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("refused")
	warm(t, c)
	for i := range 12 {
		stop, err := c.Prompt(context.Background(), []json.RawMessage{session.UserMessage("turn " + string(rune('a'+i)) + ` sim:calls=2 sim:tool=read_file sim:args={"path":"big.txt"}`)}, nil)
		if err != nil || stop != session.StopEndTurn {
			t.Fatalf("turn %d: %s %v", i, stop, err)
		}
	}
	comps, err := e.db.Branches().Compactions(context.Background(), "refused")
	if err != nil || len(comps) == 0 || comps[0].Reason != session.CompactRefused {
		t.Fatalf("compactions %+v %v; want one after the refusal", comps, err)
	}
}

// /compact, asked by the user, compacts at once as a turn of its own.
func TestCompactNow(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("manual")
	warm(t, c)
	prompt(t, c, "remember the word walrus", nil)
	rec := newRecorder()
	stop, err := c.Compact(context.Background(), rec)
	if err != nil || stop != session.StopEndTurn {
		t.Fatalf("Compact: %s %v", stop, err)
	}
	comps, _ := e.db.Branches().Compactions(context.Background(), "manual")
	if len(comps) != 1 || comps[0].Reason != session.CompactUser || comps[0].Summary == "" {
		t.Fatalf("compactions %+v", comps)
	}
	tr := session.TranscriptOf(c)
	if len(tr) != 1 || !strings.Contains(string(tr[0]), "Summary of the conversation so far") {
		t.Fatalf("the view after /compact: %d items, first %s", len(tr), tr[0])
	}
	prompt(t, c, "and now?", nil)
}

// A threshold that trips late: one answer takes the view from below the
// threshold to past the window, so the summary request chained on it would
// be refused for its length. The oldest part that fits is summarized first,
// in a request of its own (in full, not chained), then the rest with that
// part's summary: no request is refused, none holds more than the window,
// and the session goes on.
func TestCompactionPastTheWindowInParts(t *testing.T) {
	const window = 12_000
	e := newEnv(t, sim.Options{Windows: map[string]int{"sim-model": window}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ContextWindow: window})
	c := e.open("late")
	warm(t, c)
	for _, p := range []string{"one sim:tokens=1500", "two sim:tokens=1500", "three sim:tokens=3000", "four", "five"} {
		prompt(t, c, p, nil)
	}
	recs := e.wait(len(e.sim.Received()))
	var asks []sim.Received
	for i, r := range recs {
		if r.Outcome == "context_length_exceeded" || r.InputTokens > window {
			t.Fatalf("request %d holds %d tokens: %s", i, r.InputTokens, r.Outcome)
		}
		if n := len(r.Input); n > 0 && strings.Contains(string(r.Input[n-1]), "Your context window is nearly full") {
			asks = append(asks, r)
		}
	}
	if len(asks) != 2 {
		t.Fatalf("%d summary requests; want two: the oldest part, then the rest", len(asks))
	}
	first, last := string(asks[0].Raw), string(asks[1].Raw)
	if asks[0].PreviousResponseID != "" || asks[1].PreviousResponseID != "" {
		t.Errorf("a summary request of a view past the window was chained on it")
	}
	if !strings.Contains(first, "one sim:") || strings.Contains(first, "three sim:") || strings.Contains(first, "Summary of the conversation") {
		t.Errorf("the first part is not the oldest turns alone")
	}
	if strings.Contains(last, "one sim:") || !strings.Contains(last, "three sim:") || !strings.Contains(last, "Summary of the conversation so far") {
		t.Errorf("the last part does not carry the first part's summary and the newer turns")
	}
	comps, err := e.db.Branches().Compactions(context.Background(), "late")
	if err != nil || len(comps) != 1 || comps[0].ResponseID != asks[1].ResponseID {
		t.Fatalf("compactions %+v (%v); want one, from the last summary request", comps, err)
	}
	validRequests(t, recs)
}

// validRequests checks every request against the official Responses API
// schema: a WebSocket response.create as ResponsesClientEventResponseCreate,
// an HTTP body (a compaction's too) as CreateResponse.
func validRequests(t *testing.T, recs []sim.Received) {
	t.Helper()
	for i, r := range recs {
		def := "CreateResponse"
		if r.Transport == "ws" {
			def = "ResponsesClientEventResponseCreate"
		}
		rs, err := apischema.Responses(def)
		if err != nil {
			t.Fatal(err)
		}
		if err := apischema.Validate(rs, r.Raw); err != nil {
			t.Errorf("request %d (%s) is not valid under the official schema: %v", i, def, err)
		}
	}
}

// With HEARTH_COMPACTION=server the session compacts with the API's
// compaction: the view goes up whole, the answer (the user's messages and
// an encrypted compaction item) becomes the view after the initial items,
// is stored, and survives a restart; no request is refused for its length,
// the compaction's own included (a view past the window goes up in parts).
// When the endpoint fails, the local summary compacts instead.
func TestServerCompaction(t *testing.T) {
	const window = 12_000
	e := newEnv(t, sim.Options{Windows: map[string]int{"sim-model": window}},
		session.Config{Config: responses.Config{Lanes: responses.LanesOn}, ContextWindow: window, Compaction: session.CompactServer})
	c := e.open("server")
	warm(t, c)
	for _, p := range []string{"one sim:tokens=1500", "two sim:tokens=1500", "three sim:tokens=3000", "four"} {
		prompt(t, c, p, nil)
	}
	recs := e.wait(len(e.sim.Received()))
	var compact *sim.Received
	parts := 0
	for i, r := range recs {
		if r.Outcome == "context_length_exceeded" || r.InputTokens > window {
			t.Fatalf("request %d holds %d tokens: %s", i, r.InputTokens, r.Outcome)
		}
		if r.Endpoint == sim.EndpointCompact {
			compact = &recs[i]
			parts++
		}
		if n := len(r.Input); n > 0 && strings.Contains(string(r.Input[n-1]), "Your context window is nearly full") {
			t.Fatalf("request %d asked the model for a summary", i)
		}
	}
	// The view was past the window when the threshold tripped: its oldest
	// part went first, then the rest with that part's compaction.
	if parts != 2 || compact.Model != "sim-model" || !strings.Contains(string(compact.Raw), `"instructions":"test instructions"`) ||
		!strings.Contains(string(compact.Raw), `"type":"compaction"`) {
		t.Fatalf("%d compaction requests; want two, the last with the session's settings and the first's compaction item", parts)
	}
	comps, err := e.db.Branches().Compactions(context.Background(), "server")
	if err != nil || len(comps) != 1 || comps[0].Summary != "" || comps[0].ResponseID != compact.ResponseID {
		t.Fatalf("compactions %+v (%v)", comps, err)
	}
	tr := session.TranscriptOf(c)
	if itemType(tr[len(tr)-1]) == "compaction" || !strings.Contains(string(tr[0]), "one sim:") {
		t.Fatalf("the view after the turn: %d items, first %.80s", len(tr), tr[0])
	}
	compacted := false
	for _, it := range tr {
		compacted = compacted || itemType(it) == "compaction"
		if strings.Contains(string(it), "tok1499") {
			t.Fatalf("the view still holds an answer the compaction replaced")
		}
	}
	if !compacted {
		t.Fatal("the view holds no compaction item")
	}
	validRequests(t, recs)
	// Reopened: the view is rebuilt from the stored compaction items.
	c.Close()
	c2 := e.reopen("server")
	warm(t, c2)
	all := e.wait(len(e.sim.Received()))
	rw := string(all[len(all)-1].Raw)
	if !strings.Contains(rw, `"type":"compaction"`) || strings.Contains(rw, "tok1499") || strings.Count(rw, "one sim:tokens=1500") != 1 {
		t.Fatalf("the re-warm after reopening is not the compacted view")
	}
	prompt(t, c2, "after the restart", nil)
}

// An API compaction that fails leaves the view as it was, and the local
// summary compacts instead.
func TestServerCompactionFallsBack(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}, Compaction: session.CompactServer})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultServerError, Match: func(r sim.Received) bool { return r.Endpoint == sim.EndpointCompact }})
	c := e.open("fallback")
	warm(t, c)
	prompt(t, c, "remember the word walrus", nil)
	if stop, err := c.Compact(context.Background(), nil); err != nil || stop != session.StopEndTurn {
		t.Fatalf("Compact: %s %v", stop, err)
	}
	comps, _ := e.db.Branches().Compactions(context.Background(), "fallback")
	if len(comps) != 1 || comps[0].Summary == "" {
		t.Fatalf("compactions %+v; want the local summary", comps)
	}
	recs := e.wait(len(e.sim.Received()))
	tried := false
	for _, r := range recs {
		tried = tried || (r.Endpoint == sim.EndpointCompact && r.Outcome == "server_error")
	}
	if !tried {
		t.Fatal("the API's compaction was not tried")
	}
	prompt(t, c, "and now?", nil)
}

// A session reopened with a window its view no longer fits (a smaller
// model) is not warmed — the warm-up would be refused for its length — and
// its first prompt compacts, in parts, before its request: nothing is
// refused.
func TestReopenedPastTheWindow(t *testing.T) {
	e := newEnv(t, sim.Options{Windows: map[string]int{"small": 8000}}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	c := e.open("shrunk")
	warm(t, c)
	for _, p := range []string{"one sim:tokens=1500", "two sim:tokens=1500", "three sim:tokens=1500"} {
		prompt(t, c, p, nil)
	}
	c.Close()
	cfg := e.client.Config()
	small := session.NewClient(session.Config{Config: responses.Config{BaseURL: cfg.BaseURL, Lanes: responses.LanesOn},
		Instructions: cfg.Instructions, Model: "small", ContextWindow: 8000}, nil)
	t.Cleanup(func() { small.Close() })
	from := len(e.sim.Received())
	c2, err := session.Open(context.Background(), session.Options{ID: "shrunk", Client: small, DB: e.db, Tools: e.tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Close() })
	c2.Warm()
	if done, _ := c2.WarmupDone(); done != nil {
		t.Fatal("a view past the window was warmed")
	}
	prompt(t, c2, "four", nil)
	for i, r := range e.wait(len(e.sim.Received()))[from:] {
		if r.Outcome == "context_length_exceeded" || r.InputTokens > 8000 {
			t.Fatalf("request %d after reopening holds %d tokens: %s", i, r.InputTokens, r.Outcome)
		}
	}
	if comps, _ := e.db.Branches().Compactions(context.Background(), "shrunk"); len(comps) != 1 {
		t.Fatalf("%d compactions; want the first prompt's", len(comps))
	}
}

// A summary request that fails on its way (a lost connection, a server
// error) is retried as any model request is, by Judge's verdict: the
// compaction goes on instead of failing the turn.
func TestSummaryRequestRetried(t *testing.T) {
	e := newEnv(t, sim.Options{}, session.Config{Config: responses.Config{Lanes: responses.LanesOn}})
	summary := func(r sim.Received) bool { return strings.Contains(string(r.Raw), "hand-off summary") }
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultCloseMidResponse, AfterEvents: 1, CloseCode: sim.CloseAbrupt, Match: summary})
	e.sim.InjectFault(sim.Fault{Kind: sim.FaultServerError, Match: summary})
	c := e.open("retried")
	warm(t, c)
	prompt(t, c, "remember the word walrus", nil)
	if stop, err := c.Compact(context.Background(), nil); err != nil || stop != session.StopEndTurn {
		t.Fatalf("Compact: %s %v", stop, err)
	}
	if n := e.sim.PendingFaults(); n != 0 {
		t.Errorf("%d faults not met", n)
	}
	comps, _ := e.db.Branches().Compactions(context.Background(), "retried")
	if len(comps) != 1 || comps[0].Summary == "" {
		t.Fatalf("compactions %+v", comps)
	}
	prompt(t, c, "and now?", nil)
}
