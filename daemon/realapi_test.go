package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

func thoughtText(ups []acp.SessionUpdate) string {
	var s string
	for _, u := range ups {
		if u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil {
			s += u.AgentThoughtChunk.Content.Text.Text
		}
	}
	return s
}

// The model's reasoning summary reaches every attached editor as
// agent_thought_chunk, before the answer, and again in session/load's
// replay; status and inspect show the tokens.
func TestThoughtsLiveAndReplayed(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.prompt(id, "hello thinker")
	live := thoughtText(a.updates())
	if !strings.Contains(live, "hello thinker") {
		t.Fatalf("live thoughts %q", live)
	}
	first := -1
	for i, u := range a.updates() {
		if first < 0 && u.AgentThoughtChunk != nil {
			first = i
		}
		if u.AgentMessageChunk != nil && first < 0 {
			t.Fatalf("the answer came before the thoughts")
		}
	}
	if strings.Contains(agentText(a.updates()), live) {
		t.Errorf("thoughts leaked into the answer")
	}

	b := td.connect()
	b.initialize()
	var lr acp.LoadSessionResponse
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, &lr)
	if got := thoughtText(b.updates()); got != live {
		t.Errorf("replayed thoughts %q, live %q", got, live)
	}

	var st rpc.Status
	b.must(rpc.MethodHearthStatus, nil, &st)
	if len(st.Workspaces) != 1 || st.Workspaces[0].Tokens.Input == 0 || st.Workspaces[0].Tokens.Reasoning == 0 ||
		st.Workspaces[0].LaneMode != "on" || st.Workspaces[0].WireBytesSent == 0 {
		t.Errorf("status %+v", st.Workspaces)
	}
	var ins rpc.InspectResult
	b.must(rpc.MethodHearthInspect, rpc.InspectParams{SessionID: string(id)}, &ins)
	if ins.Session == nil || ins.Session.Tokens.Output == 0 || len(ins.Session.Requests) == 0 {
		t.Fatalf("inspect %+v", ins.Session)
	}
	if last := ins.Session.Requests[len(ins.Session.Requests)-1]; last.Tokens.Input == 0 {
		t.Errorf("inspect request tokens %+v", last.Tokens)
	}
}

// The real API's refusals reach the editor as what they are, with the fix,
// and never as an internal error: a bad key or quota after exactly one
// request (neither is retried); a context window exceeded after the
// compaction it calls for failed too (its summary requests refused: the
// chained one, then the view in parts, the room halved three times).
func TestModelAPIRefusalsMapped(t *testing.T) {
	cases := []struct {
		fault    sim.FaultKind
		code     jsonrpc2.Code
		says     string
		requests int // refused in a row
	}{
		{sim.FaultInvalidAPIKey, rpc.CodeAuthRequired, "OPENAI_API_KEY", 1},
		{sim.FaultInsufficientQuota, rpc.CodeModelAPI, "quota", 1},
		{sim.FaultContextLength, rpc.CodeModelAPI, "the session holds", 6},
	}
	for _, tc := range cases {
		t.Run(tc.fault.String(), func(t *testing.T) {
			td := startDaemon(t, sim.Options{}, "")
			ed := td.connect()
			ed.initialize()
			id := ed.newSession(td.root)
			td.waitRequests(1) // the warm-up
			td.sim.InjectFault(sim.Fault{Kind: tc.fault, Count: tc.requests})
			err := ed.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}, &acp.PromptResponse{})
			var we *jsonrpc2.Error
			if !errors.As(err, &we) || we.Code != tc.code || !strings.Contains(we.Message, tc.says) || strings.Contains(we.Message, "internal error") {
				t.Fatalf("prompt answered %v; want code %d saying %q", err, tc.code, tc.says)
			}
			prompts := 0
			for _, r := range td.sim.Received() {
				if r.Generate == nil {
					prompts++
				}
			}
			if prompts != tc.requests {
				t.Errorf("%d prompt requests, want %d refused and none retried", prompts, tc.requests)
			}
		})
	}
	// A model the API does not know: a clear error, not retried.
	td := startDaemon(t, sim.Options{Models: []string{"gpt-5.3-codex"}}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	err := ed.call(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}, &acp.PromptResponse{})
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || we.Code != rpc.CodeModelAPI || !strings.Contains(we.Message, "HEARTH_MODEL") || !strings.Contains(we.Message, "sim-model") {
		t.Fatalf("unknown model: %v", err)
	}

	// A server error is retried and the turn completes.
	td = startDaemon(t, sim.Options{}, "")
	ed = td.connect()
	ed.initialize()
	id = ed.newSession(td.root)
	td.waitRequests(1)
	td.sim.InjectFault(sim.Fault{Kind: sim.FaultServerError})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var r acp.PromptResponse
	if err := ed.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}, &r); err != nil || r.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("after a server error: %v %v", r.StopReason, err)
	}
}
