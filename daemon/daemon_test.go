package daemon

import (
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// An editor opens a session (the daemon warms the workspace's socket in the
// background), prompts, the model calls read_file, and every request after
// the warm-up is incremental, on one handshake.
func TestPromptToolLoopOverSocket(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	td.waitRequests(1) // the warm-up, sent before any prompt
	stop := ed.prompt(id, "please read a.txt")
	if stop != acp.StopReasonEndTurn {
		t.Fatalf("stopReason = %s", stop)
	}
	// The reply came after every update of the turn.
	ups := ed.updates()
	if !strings.Contains(agentText(ups), "alpha") {
		t.Errorf("streamed answer %q does not show the file", agentText(ups))
	}
	var started, completed bool
	for _, u := range ups {
		if u.ToolCall != nil && u.ToolCall.Title == "read_file" && u.ToolCall.Kind == acp.ToolKindRead {
			started = true
		}
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acp.ToolCallStatusCompleted {
			completed = true
			if len(u.ToolCallUpdate.Locations) != 1 || !strings.HasSuffix(u.ToolCallUpdate.Locations[0].Path, "/a.txt") {
				t.Errorf("tool call locations = %+v", u.ToolCallUpdate.Locations)
			}
		}
	}
	if !started || !completed {
		t.Errorf("tool_call seen=%v, completed tool_call_update seen=%v", started, completed)
	}

	recs := td.waitRequests(3)
	if g := recs[0].Generate; g == nil || *g {
		t.Fatalf("first request is not a generate:false warm-up")
	}
	for i, r := range recs[1:] {
		if r.PreviousResponseID != recs[i].ResponseID {
			t.Errorf("request %d is not chained on the previous response", i+1)
		}
	}
	if td.sim.Handshakes() != 1 {
		t.Errorf("handshakes = %d", td.sim.Handshakes())
	}
	var st rpc.Status
	ed.must(rpc.MethodHearthStatus, nil, &st)
	if len(st.Workspaces) != 1 || st.Workspaces[0].Warmups != 1 || st.Workspaces[0].IncrementalRequests != 2 || st.Workspaces[0].FullRequests != 0 {
		t.Errorf("status = %+v", st.Workspaces)
	}
}

// session/load replays the stored conversation before it answers, and a
// second editor attached to a session sees the first editor's turn.
func TestLoadReplaysAndSecondClientSeesUpdates(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.prompt(id, "please read a.txt")

	b := td.connect()
	b.initialize()
	var lr acp.LoadSessionResponse
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, &lr)
	ups := b.updates() // everything here arrived before the answer
	if len(ups) < 4 || ups[0].UserMessageChunk == nil || ups[0].UserMessageChunk.Content.Text.Text != "please read a.txt" {
		t.Fatalf("replay = %d updates, first %+v", len(ups), ups)
	}
	if !strings.Contains(agentText(ups), "alpha") {
		t.Errorf("replayed answer %q", agentText(ups))
	}
	var tool bool
	for _, u := range ups {
		tool = tool || (u.ToolCall != nil && u.ToolCall.Title == "read_file")
	}
	if !tool {
		t.Error("replay lacks the tool call")
	}

	before := len(b.updates())
	a.prompt(id, "hello there")
	b.waitFor("the second turn's answer", func(ups []acp.SessionUpdate) bool {
		return strings.Contains(agentText(ups[before:]), "hello there")
	})
	var sawUser bool
	for _, u := range b.updates()[before:] {
		sawUser = sawUser || (u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text.Text == "hello there")
	}
	if !sawUser {
		t.Error("the attached editor did not see the other editor's message")
	}

	var list acp.ListSessionsResponse
	b.must(rpc.MethodSessionList, acp.ListSessionsRequest{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Cwd != td.root {
		t.Errorf("session/list = %+v", list.Sessions)
	}
}

// Sessions of one workspace share its socket; other workspaces get their own.
func TestOneSocketPerWorkspace(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	s1 := ed.newSession(td.root)
	s2 := ed.newSession(td.root)
	ed.prompt(s1, "hi")
	ed.prompt(s2, "hi")
	if n := td.sim.Handshakes(); n != 1 {
		t.Errorf("two sessions of one workspace made %d handshakes", n)
	}
	other := t.TempDir()
	s3 := ed.newSession(other)
	ed.prompt(s3, "hi")
	if n := td.sim.Handshakes(); n != 2 {
		t.Errorf("a second workspace made %d handshakes in all, want 2", n)
	}
}

// A prompt for a session stored by an earlier daemon reopens it: the
// session re-warms from the store on a new connection (generate:false with
// the whole transcript), and the prompt chains on that.
func TestPromptAfterRestart(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hi")
	n := len(td.waitRequests(2))
	ed.c.Close()
	td.d.Close()

	td.restart()
	ed2 := td.connect()
	ed2.initialize()
	if stop := ed2.prompt(id, "please read a.txt"); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop = %s", stop)
	}
	recs := td.waitRequests(n + 2)
	tail := recs[n:]
	// The reopened session warms up again from the stored transcript, so
	// the prompt itself can chain.
	if g := tail[0].Generate; g == nil || *g || len(tail[0].Input) != 6 { // guidance, permissions, environment, user, reasoning, answer
		t.Fatalf("after restart: first request %s", tail[0].Raw)
	}
	if tail[1].PreviousResponseID != tail[0].ResponseID {
		t.Errorf("prompt after restart did not chain on the re-warm")
	}
}
