package daemon

import (
	"context"
	"fmt"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/internal/apischema"
	"github.com/hearthd/hearth/rpc"
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
// schema. So with the API's own compaction (HEARTH_COMPACTION=server),
// whose requests are valid bodies of a create too; and a session/load
// after it shows each prompt once.
func TestTenPromptsOutgrowAKnownWindow(t *testing.T) {
	for _, mode := range []string{"local", "server"} {
		t.Run(mode, func(t *testing.T) { tenPrompts(t, mode) })
	}
}

func tenPrompts(t *testing.T, mode string) {
	const window = 12_000
	td := startDaemonWith(t, sim.Options{Windows: map[string]int{"sim-model": window}}, "", func(c *Config) {
		c.ContextWindow = window
		c.Compaction = mode
	})
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
	refused, biggest, compacts := 0, 0, 0
	for _, r := range recs {
		if r.Outcome == "context_length_exceeded" {
			refused++
		}
		if r.Endpoint == sim.EndpointCompact {
			compacts++
		}
		biggest = max(biggest, r.InputTokens)
	}
	if refused > 0 {
		t.Errorf("%d of %d requests were refused for their length", refused, len(recs))
	}
	if biggest > window || biggest < window/2 {
		t.Errorf("the largest request held %d tokens; want the session to have grown past half of the %d window, never past it", biggest, window)
	}
	comps, err := td.d.db.Branches().Compactions(context.Background(), string(id))
	if err != nil || len(comps) < 2 {
		t.Fatalf("compactions %d (%v); want the session compacted more than once", len(comps), err)
	}
	if server := mode == "server"; (compacts >= len(comps)) != server || (comps[0].Summary == "") != server {
		t.Errorf("%s: %d requests to the API's compaction for %d compactions, the first's summary %.40q", mode, compacts, len(comps), comps[0].Summary)
	}
	checkSchema(t, recs)

	other := td.connect()
	other.initialize()
	other.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	shown := map[string]int{}
	for _, u := range other.updates() {
		if m := u.UserMessageChunk; m != nil && m.Content.Text != nil {
			shown[m.Content.Text.Text]++
		}
	}
	for i := range 10 {
		if p := fmt.Sprintf("question %d sim:tokens=1500", i); shown[p] != 1 {
			t.Errorf("session/load showed %q %d times", p, shown[p])
		}
	}
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
