package daemon

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// forkSession sends session/fork and returns the fork's id.
func (e *editor) forkSession(id acp.SessionId, cwd string, meta map[string]any) (acp.SessionId, error) {
	params := map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	var r struct {
		SessionID acp.SessionId   `json:"sessionId"`
		Modes     json.RawMessage `json:"modes"`
	}
	err := e.call(rpc.MethodSessionFork, params, &r)
	if err == nil && (r.SessionID == "" || r.SessionID == id || len(r.Modes) == 0) {
		e.t.Fatalf("session/fork answered %+v", r)
	}
	return r.SessionID, err
}

// loadUserTexts loads id on a new editor and returns the user messages
// replayed.
func (td *testDaemon) loadUserTexts(id acp.SessionId) string {
	l := td.connect()
	l.initialize()
	l.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	return strings.Join(userTexts(l.updates()), "|")
}

func inputText(r sim.Received) string {
	var b strings.Builder
	for _, it := range r.Input {
		b.Write(it)
	}
	return b.String()
}

// session/fork (advertised in initialize) makes a session whose first
// prompt continues the parent's latest response on a lane of its own: one
// response.create carrying only the new user input, chained on it. The
// parent goes on chaining on its own response; session/load of the fork
// replays the parent's history then its own; after a restart the fork
// re-warms once.
func TestForkContinuesTheParentOnItsOwnLane(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	var init struct {
		AgentCapabilities struct {
			SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	e.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &init)
	caps := init.AgentCapabilities.SessionCapabilities
	if string(caps["fork"]) != `{"_meta":{"hearth/fromTurn":true}}` || string(caps["status"]) != `{}` || caps["list"] == nil {
		t.Fatalf("sessionCapabilities %s", caps)
	}
	id := e.newSession(td.root)
	e.prompt(id, "remember heliotrope")
	e.prompt(id, "and more")
	n := len(creates(td.waitRequests(3)))
	parent := creates(td.sim.Received())[n-1]
	if parent.StreamID == "" || parent.ResponseID == "" {
		t.Fatalf("the parent's last request %+v", parent)
	}

	fork, err := e.forkSession(id, td.root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stop := e.prompt(fork, "in the fork"); stop != acp.StopReasonEndTurn {
		t.Fatalf("fork's prompt stop %q", stop)
	}
	cs := creates(td.sim.Received())
	if len(cs) != n+1 {
		t.Fatalf("the fork's prompt made %d requests, want one (no warm-up, no full create)", len(cs)-n)
	}
	first := cs[n]
	if first.PreviousResponseID != parent.ResponseID || first.StreamID == "" || first.StreamID == parent.StreamID ||
		first.Generate != nil && !*first.Generate {
		t.Fatalf("the fork's first request: previous %q (want %q), lane %q (parent's %q)", first.PreviousResponseID, parent.ResponseID, first.StreamID, parent.StreamID)
	}
	if len(first.Input) != 1 || !strings.Contains(inputText(first), "in the fork") || strings.Contains(inputText(first), "heliotrope") {
		t.Fatalf("the fork's first request sent %d items: %s", len(first.Input), inputText(first))
	}

	// The parent goes on from its own response, on its own lane.
	e.prompt(id, "parent goes on")
	cs = creates(td.sim.Received())
	if next := cs[len(cs)-1]; next.PreviousResponseID != parent.ResponseID || next.StreamID != parent.StreamID || len(next.Input) != 1 {
		t.Fatalf("the parent's next request: previous %q lane %q, %d items", next.PreviousResponseID, next.StreamID, len(next.Input))
	}
	if got := td.loadUserTexts(fork); got != "remember heliotrope|and more|in the fork" {
		t.Fatalf("the fork replays %q", got)
	}
	if got := td.loadUserTexts(id); got != "remember heliotrope|and more|parent goes on" {
		t.Fatalf("the parent replays %q", got)
	}
	row, err := td.d.db.Session(t.Context(), string(fork))
	if err != nil || row.Title != "Fork of remember heliotrope" {
		t.Fatalf("the fork's title %q (%v)", row.Title, err)
	}

	// After a restart the fork's response is gone from every connection:
	// the fork re-warms once, and its prompt chains on that.
	n = len(creates(td.sim.Received()))
	e.c.Close()
	td.d.Close()
	td.restart()
	e2 := td.connect()
	e2.initialize()
	if stop := e2.prompt(fork, "after restart"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop after restart %q", stop)
	}
	tail := creates(td.sim.Received())[n:]
	if len(tail) != 2 || tail[0].Generate == nil || *tail[0].Generate || tail[0].PreviousResponseID != "" ||
		tail[1].PreviousResponseID != tail[0].ResponseID || len(tail[1].Input) != 1 {
		t.Fatalf("after restart %d requests; want one re-warm and a prompt chained on it", len(tail))
	}
	if !strings.Contains(inputText(tail[0]), "heliotrope") || !strings.Contains(inputText(tail[0]), "in the fork") || strings.Contains(inputText(tail[0]), "parent goes on") {
		t.Fatalf("the fork's re-warm carried %s", inputText(tail[0]))
	}
}

// When the connection drops before the fork's first prompt, the parent's
// response is gone with it: the fork re-warms once, in full, on its own
// lane, and its prompt chains on that.
func TestForkAfterADropRewarmsOnce(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	e.prompt(id, "remember heliotrope")
	fork, err := e.forkSession(id, td.root, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(td.waitRequests(2))
	if td.sim.DropConnections() != 1 {
		t.Fatal("no connection to drop")
	}
	recs := td.waitRequests(n + 2) // the parent's re-warm and the fork's
	if stop := e.prompt(fork, "in the fork"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %q", stop)
	}
	tail := creates(td.sim.Received())[n:]
	if len(tail) != 3 {
		t.Fatalf("%d requests after the drop; want two re-warms and the fork's prompt", len(tail))
	}
	prompt := tail[2]
	var rewarm *sim.Received
	for i := range tail[:2] {
		if g := tail[i].Generate; g == nil || *g || tail[i].PreviousResponseID != "" {
			t.Fatalf("request %d after the drop is not a full re-warm: %s", i, tail[i].Raw)
		}
		if tail[i].StreamID == prompt.StreamID {
			rewarm = &tail[i]
		}
	}
	if rewarm == nil || prompt.PreviousResponseID != rewarm.ResponseID || len(prompt.Input) != 1 || recs[n].Conn == recs[0].Conn {
		t.Fatalf("the fork's prompt chains on %q on lane %q; re-warms %+v", prompt.PreviousResponseID, prompt.StreamID, tail[:2])
	}
}

// The server holds only the latest response of a lane: once the parent's
// next response replaced the one the fork was made from, the fork's first
// request goes out in full (never a refused continuation).
func TestForkAfterTheParentMovedOn(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	e.prompt(id, "remember heliotrope")
	fork, err := e.forkSession(id, td.root, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.prompt(id, "the parent goes first")
	n := len(creates(td.sim.Received()))
	if stop := e.prompt(fork, "in the fork"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %q", stop)
	}
	tail := creates(td.sim.Received())[n:]
	if len(tail) != 1 || tail[0].PreviousResponseID != "" || tail[0].Generate != nil && !*tail[0].Generate {
		t.Fatalf("the fork's prompt made %d requests, the first chained on %q", len(tail), tail[0].PreviousResponseID)
	}
	if in := inputText(tail[0]); !strings.Contains(in, "heliotrope") || !strings.Contains(in, "in the fork") || strings.Contains(in, "the parent goes first") {
		t.Fatalf("the fork's full request carried %s", in)
	}
}

// A fork while the parent's turn runs has the turns that ended, not the
// running one; a fork "before prompt N" stops before the parent's Nth
// prompt and warms up in full; an unknown parent is -32002.
func TestForkWhileRunningAndFromATurn(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	e.prompt(id, "uno")
	e.prompt(id, "dos")
	n := len(creates(td.sim.Received()))
	early, err := e.forkSession(id, td.root, map[string]any{"hearth/turn": 2})
	if err != nil {
		t.Fatal(err)
	}
	e.prompt(early, "instead")
	tail := creates(td.sim.Received())[n:]
	if len(tail) != 2 || tail[0].Generate == nil || *tail[0].Generate || tail[0].PreviousResponseID != "" ||
		tail[1].PreviousResponseID != tail[0].ResponseID {
		t.Fatalf("a fork from a turn made %d requests; want a full warm-up and a prompt chained on it", len(tail))
	}
	// The user's texts as input items: "dos" alone may turn up in an
	// encrypted reasoning item's base64.
	if in := inputText(tail[0]); !strings.Contains(in, `"text":"uno"`) || strings.Contains(in, `"text":"dos"`) {
		t.Fatalf("the fork from turn 2 warmed up with %s", in)
	}
	if got := td.loadUserTexts(early); got != "uno|instead" {
		t.Fatalf("the fork from turn 2 replays %q", got)
	}

	said := len(agentText(e.updates()))
	done := e.promptAsync(id, "slow")
	e.waitFor("the answer streaming", func(ups []acp.SessionUpdate) bool { return len(agentText(ups)) > said })
	running, err := e.forkSession(id, td.root, nil)
	if err != nil {
		t.Fatalf("fork while a turn runs: %v", err)
	}
	if err := e.c.Notify(t.Context(), rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopReasonCancelled {
		t.Fatalf("the parent's turn ended %q", stop)
	}
	if got := td.loadUserTexts(running); got != "uno|dos" {
		t.Fatalf("the fork of a running session replays %q", got)
	}

	for _, bad := range []map[string]any{{"hearth/turn": 9}, {"hearth/turn": 0}, {"hearth/turn": "x"}} {
		if _, err := e.forkSession(id, td.root, bad); !isCode(err, jsonrpc2.InvalidParams) {
			t.Errorf("fork with _meta %v: %v, want invalid params", bad, err)
		}
	}
	if _, err := e.forkSession("ses_nope", td.root, nil); !isCode(err, rpc.CodeResourceNotFound) {
		t.Errorf("fork of an unknown session: %v, want -32002", err)
	}
}

// session/status says open or saved, without side effects; an unknown
// session is -32002 naming it in data.
func TestSessionStatus(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	e := td.connect()
	e.initialize()
	id := e.newSession(td.root)
	e.prompt(id, "hi")
	status := func(ed *editor, id acp.SessionId) (string, error) {
		var r struct {
			Status string `json:"status"`
		}
		err := ed.call(rpc.MethodSessionStatus, map[string]any{"sessionId": id}, &r)
		return r.Status, err
	}
	if s, err := status(e, id); err != nil || s != "open" {
		t.Fatalf("status %q %v, want open", s, err)
	}
	e.c.Close()
	td.d.Close()
	td.restart()
	e2 := td.connect()
	e2.initialize()
	for range 2 { // asking opens nothing
		if s, err := status(e2, id); err != nil || s != "saved" {
			t.Fatalf("status after restart %q %v, want saved", s, err)
		}
	}
	_, err := status(e2, "ses_nope")
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || we.Code != rpc.CodeResourceNotFound || string(we.Data) != `{"sessionId":"ses_nope"}` {
		t.Fatalf("status of an unknown session: %v", err)
	}
}

func isCode(err error, code jsonrpc2.Code) bool {
	var we *jsonrpc2.Error
	return errors.As(err, &we) && we.Code == code
}
