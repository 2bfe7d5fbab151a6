package daemon

import (
	"context"
	"fmt"
	"testing"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/session/sim"
)

// The scenario: a daemon told the model's window is 12,000 tokens
// (HEARTH_CONTEXT_WINDOW), against a server that refuses any request over
// 12,000 tokens as the API does, and ten prompts whose answers are about
// 3,000 tokens each: the session outgrows the window three times over.
// Every prompt is answered, no request is refused for its length (the
// threshold counts the last response's output and what is about to be
// sent, and a summary request never carries more than the window holds),
// and every request the server received is valid under the official
// schema.
func TestTenPromptsOutgrowAKnownWindow(t *testing.T) {
	const window = 12_000
	td := startDaemonWith(t, sim.Options{Windows: map[string]int{"sim-model": window}}, "", func(c *Config) { c.ContextWindow = window })
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	for i := range 10 {
		// About 1,500 words of about 8 bytes: some 3,000 tokens an answer.
		if stop := e.prompt(id, fmt.Sprintf("question %d sim:tokens=1500", i)); stop != "end_turn" {
			t.Fatalf("prompt %d: stop reason %q", i, stop)
		}
	}
	recs := td.waitRequests(len(td.sim.Received()))
	refused, biggest := 0, 0
	for _, r := range recs {
		if r.Outcome == "context_length_exceeded" {
			refused++
		}
		biggest = max(biggest, r.InputTokens)
	}
	if refused > 0 {
		t.Errorf("%d of %d requests were refused for their length", refused, len(recs))
	}
	if biggest > window || biggest < window/2 {
		t.Errorf("the largest request held %d tokens; want the session to have grown past half of the %d window, never past it", biggest, window)
	}
	comps, err := td.d.db.Compactions(context.Background(), string(id))
	if err != nil || len(comps) < 2 {
		t.Fatalf("compactions %d (%v); want the session compacted more than once", len(comps), err)
	}
	checkSchema(t, recs)
}

// checkSchema validates every request the simulator received against the
// official Responses API schema: a WebSocket response.create as
// ResponsesClientEventResponseCreate, an HTTP body as CreateResponse.
func checkSchema(t *testing.T, recs []sim.Received) {
	t.Helper()
	ws, err := apischema.Responses("ResponsesClientEventResponseCreate")
	if err != nil {
		t.Fatal(err)
	}
	body, err := apischema.Responses("CreateResponse")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		rs := body
		if r.Transport == "ws" {
			rs = ws
		}
		if err := apischema.Validate(rs, r.Raw); err != nil {
			raw := string(r.Raw)
			if len(raw) > 600 {
				raw = raw[:600] + "…"
			}
			t.Errorf("request %d (%s %s) is not valid under the official schema: %v\n%s", i, r.Transport, r.Type, err, raw)
		}
	}
}
