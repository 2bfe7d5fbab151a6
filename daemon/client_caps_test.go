package daemon

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// capsEditor is a fake ACP client that advertises ACP 1.34's session
// capabilities and keeps each session/update as it came (the Go SDK of
// the tests has no types for notices and compactions).
type capsEditor struct {
	t      *testing.T
	c      *rpc.Client
	mu     sync.Mutex
	ups    []map[string]any
	signal chan struct{}
}

// connectWith connects a client whose initialize advertises session (the
// clientCapabilities.session object).
func (td *testDaemon) connectWith(session map[string]any) *capsEditor {
	td.t.Helper()
	conn, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		td.t.Fatal(err)
	}
	e := &capsEditor{t: td.t, signal: make(chan struct{}, 1)}
	e.c = rpc.NewClient(conn, rpc.ClientOptions{OnNotify: func(method string, params json.RawMessage) {
		var n struct {
			Update map[string]any `json:"update"`
		}
		if method != rpc.MethodSessionUpdate || json.Unmarshal(params, &n) != nil {
			return
		}
		e.mu.Lock()
		e.ups = append(e.ups, n.Update)
		e.mu.Unlock()
		select {
		case e.signal <- struct{}{}:
		default:
		}
	}})
	td.t.Cleanup(func() { e.c.Close() })
	caps := map[string]any{}
	if session != nil {
		caps["session"] = session
	}
	e.must(rpc.MethodInitialize, map[string]any{"protocolVersion": acp.ProtocolVersionNumber, "clientCapabilities": caps}, nil)
	return e
}

func (e *capsEditor) must(method string, params, result any) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.c.Call(ctx, method, params, result); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}

func (e *capsEditor) prompt(id acp.SessionId, text string) acp.StopReason {
	e.t.Helper()
	var r acp.PromptResponse
	e.must(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r)
	return r.StopReason
}

// updates returns the updates of kind (all when "") received so far.
func (e *capsEditor) updates(kind string) []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []map[string]any
	for _, u := range e.ups {
		if kind == "" || u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

func (e *capsEditor) forget() {
	e.mu.Lock()
	e.ups = nil
	e.mu.Unlock()
}

// waitFor waits until an update of kind has arrived.
func (e *capsEditor) waitFor(kind string) {
	e.t.Helper()
	e.waitUntil(kind, func() bool { return len(e.updates(kind)) > 0 })
}

// waitUntil waits until pred holds on the updates received so far.
func (e *capsEditor) waitUntil(what string, pred func() bool) {
	e.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for !pred() {
		select {
		case <-e.signal:
		case <-deadline.C:
			e.t.Fatalf("timed out waiting for %s; have %v", what, e.updates(""))
		}
	}
}

// notices are the agent message chunks marked rpc.MetaNotice.
func (e *capsEditor) notices() []string {
	var out []string
	for _, u := range e.updates("agent_message_chunk") {
		meta, _ := u["_meta"].(map[string]any)
		content, _ := u["content"].(map[string]any)
		if meta[rpc.MetaNotice] == true {
			out = append(out, content["text"].(string))
		}
	}
	return out
}

var (
	noticesCap    = map[string]any{"notices": map[string]any{}}
	compactionCap = map[string]any{"compaction": map[string]any{}}
)

// initialize reads session.compaction and session.notices: an object
// advertises one; omitted, null or anything else does not.
func TestClientCapsRead(t *testing.T) {
	for _, tc := range []struct {
		params              string
		compaction, notices bool
	}{
		{`{"protocolVersion":1,"clientCapabilities":{}}`, false, false},
		{`{"protocolVersion":1,"clientCapabilities":{"session":null}}`, false, false},
		{`{"protocolVersion":1,"clientCapabilities":{"session":{"compaction":{}}}}`, true, false},
		{`{"protocolVersion":1,"clientCapabilities":{"session":{"notices":{},"compaction":null}}}`, false, true},
		{`{"protocolVersion":1,"clientCapabilities":{"session":{"notices":{"_meta":{"x":1}},"compaction":{}}}}`, true, true},
		{`{"protocolVersion":1,"clientCapabilities":{"session":{"notices":true,"compaction":"yes"}}}`, false, false},
	} {
		var c clientCaps
		c.notices.Store(true) // a second initialize replaces what the first said
		c.read(json.RawMessage(tc.params))
		if c.compaction.Load() != tc.compaction || c.notices.Load() != tc.notices {
			t.Errorf("%s: compaction %v, notices %v", tc.params, c.compaction.Load(), c.notices.Load())
		}
	}
}

// A notice (here: the WebSocket refused, HTTP from now on) goes as ACP's
// notice, a warning, to the client that advertised session.notices, and
// in the answer to the one that did not; a session/load shows no notice
// again.
func TestNoticesPerClientCapability(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	td.sim.InjectFault(sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426})
	rich := td.connectWith(noticesCap)
	var created acp.NewSessionResponse
	rich.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &created)
	id := created.SessionId
	plain := td.connectWith(nil)
	plain.must(rpc.MethodSessionResume, acp.ResumeSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)

	if stop := rich.prompt(id, "hello"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %q", stop)
	}
	got := rich.updates("notice")
	if len(got) != 1 {
		t.Fatalf("the client with session.notices got notices %v; all: %v", got, rich.updates(""))
	}
	if n := got[0]; n["severity"] != "warning" || !strings.Contains(n["title"].(string), "HTTP") {
		t.Errorf("notice %v: want a warning about HTTP", n)
	}
	if n := rich.notices(); len(n) != 0 {
		t.Errorf("the client with session.notices also got them in the answer: %q", n)
	}
	plain.waitUntil("the notice in the answer", func() bool { return len(plain.notices()) > 0 })
	if n := plain.notices(); len(n) != 1 || !strings.Contains(n[0], "HTTP") {
		t.Errorf("the client without session.notices got %q in the answer", n)
	}
	if n := plain.updates("notice"); len(n) != 0 {
		t.Errorf("the client without session.notices got notices %v", n)
	}

	late := td.connectWith(noticesCap)
	late.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if n := late.updates("notice"); len(n) != 0 {
		t.Errorf("session/load replayed notices %v", n)
	}
}

// A compaction shows to the client that advertised session.compaction as
// compaction_update (in_progress, then completed, one id) with the
// model's summary as a compaction_summary_chunk, and to the one that did
// not as the notice in the answer; session/load shows it each the same
// way again.
func TestCompactionPerClientCapability(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	rich := td.connectWith(compactionCap)
	var created acp.NewSessionResponse
	rich.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &created)
	id := created.SessionId
	plain := td.connectWith(nil)
	plain.must(rpc.MethodSessionResume, acp.ResumeSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	rich.prompt(id, "remember the word walrus")
	rich.forget()
	plain.forget()

	if stop := rich.prompt(id, "/compact"); stop != acp.StopReasonEndTurn {
		t.Fatalf("/compact: stop %q", stop)
	}
	live := compactionSeq(rich.updates(""))
	if len(live) != 3 || live[0] != "in_progress" || !strings.HasPrefix(live[1], "summary:") || live[2] != "completed" {
		t.Fatalf("the client with session.compaction was shown %q", live)
	}
	if n := rich.notices(); len(n) != 0 {
		t.Errorf("the client with session.compaction also got the notice: %q", n)
	}
	ids := map[any]bool{}
	for _, u := range rich.updates("") {
		if id, ok := u["compactionId"]; ok {
			ids[id] = true
		}
	}
	if len(ids) != 1 {
		t.Errorf("compaction ids %v: want one", ids)
	}
	plain.waitUntil("the notice in the answer", func() bool { return len(plain.notices()) > 0 })
	if n := plain.notices(); !strings.Contains(n[0], "compacted this session") {
		t.Errorf("the client without session.compaction got %q", n)
	}
	if c := compactionSeq(plain.updates("")); len(c) != 0 {
		t.Errorf("the client without session.compaction got %q", c)
	}

	rich.prompt(id, "still there?")
	again := td.connectWith(compactionCap)
	again.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	replayed := compactionSeq(again.updates(""))
	if want := live[1:]; strings.Join(replayed, "|") != strings.Join(want, "|") {
		t.Errorf("session/load replayed %q; want %q", replayed, want)
	}
	for _, u := range again.updates("compaction_update") {
		if !ids[u["compactionId"]] {
			t.Errorf("replayed compaction %v: not the live one's id", u)
		}
	}
	if n := again.notices(); len(n) != 0 {
		t.Errorf("session/load also replayed the notice: %q", n)
	}
}

// compactionSeq is what ups show of compactions: each update's status, or
// "summary:" and the chunk's text.
func compactionSeq(ups []map[string]any) []string {
	var out []string
	for _, u := range ups {
		switch u["sessionUpdate"] {
		case "compaction_update":
			out = append(out, u["status"].(string))
		case "compaction_summary_chunk":
			content, _ := u["content"].(map[string]any)
			text, _ := content["text"].(string)
			out = append(out, "summary:"+text)
		}
	}
	return out
}

// Every tool_call names its tool (ACP 1.34's name), live and replayed.
func TestToolCallCarriesName(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectWith(nil)
	var created acp.NewSessionResponse
	ed.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &created)
	id := created.SessionId
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, `look sim:calls=1 sim:tool=read_file sim:args={"path":"a.txt"}`)
	names := func(ups []map[string]any) []any {
		var out []any
		for _, u := range ups {
			out = append(out, u["name"])
		}
		return out
	}
	if got := names(ed.updates("tool_call")); len(got) != 1 || got[0] != "read_file" {
		t.Errorf("live tool_call names %v", got)
	}
	b := td.connectWith(nil)
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if got := names(b.updates("tool_call")); len(got) != 1 || got[0] != "read_file" {
		t.Errorf("replayed tool_call names %v", got)
	}
}

// A compaction past the context window shows as one too; one that fails
// ends failed, with why.
func TestCompactionUpdateAutomaticAndFailed(t *testing.T) {
	const window = 12_000
	td := startDaemonWith(t, sim.Options{Windows: map[string]int{"sim-model": window}}, "", func(c *Config) {
		c.ContextWindow = window
	})
	ed := td.connectWith(compactionCap)
	var created acp.NewSessionResponse
	ed.must(rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: td.root, McpServers: []acp.McpServer{}}, &created)
	id := created.SessionId
	for i := 0; len(ed.updates("compaction_update")) == 0; i++ {
		if i == 8 {
			t.Fatalf("no compaction in %d prompts of 3,000 tokens in a window of %d", i, window)
		}
		ed.prompt(id, "question sim:tokens=1500")
	}
	if seq := compactionSeq(ed.updates("")); len(seq) != 3 || seq[0] != "in_progress" || seq[2] != "completed" {
		t.Errorf("automatic compaction shown as %q", seq)
	}

	ed.forget()
	td.sim.InjectFault(sim.Fault{Kind: sim.FaultInvalidAPIKey, Match: isSummaryRequest})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r acp.PromptResponse
	err := ed.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("/compact")}}, &r)
	if err == nil {
		t.Fatalf("/compact with the summary refused answered %+v", r)
	}
	ups := ed.updates("compaction_update")
	if len(ups) != 2 || ups[0]["status"] != "in_progress" || ups[1]["status"] != "failed" || ups[1]["error"] == "" ||
		ups[0]["compactionId"] != ups[1]["compactionId"] {
		t.Errorf("the failed compaction shown as %v", ups)
	}

	// Cancelled while the model writes the summary: cancelled.
	ed.forget()
	td.sim.InjectFault(sim.Fault{Kind: sim.FaultSilence, Delay: time.Minute, Match: isSummaryRequest})
	done := make(chan acp.StopReason, 1)
	go func() {
		var r acp.PromptResponse
		ed.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("/compact")}}, &r)
		done <- r.StopReason
	}()
	ed.waitFor("compaction_update")
	if err := ed.c.Notify(ctx, rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if stop := <-done; stop != acp.StopReasonCancelled {
		t.Errorf("the cancelled /compact stopped %q", stop)
	}
	if seq := compactionSeq(ed.updates("")); len(seq) != 2 || seq[0] != "in_progress" || seq[1] != "cancelled" {
		t.Errorf("the cancelled compaction shown as %q", seq)
	}
}

// isSummaryRequest matches the request that asks the model for a
// compaction's summary.
func isSummaryRequest(r sim.Received) bool {
	for _, in := range r.Input {
		if strings.Contains(string(in), "hand-off summary") {
			return true
		}
	}
	return false
}
