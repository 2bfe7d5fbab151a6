package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// The capabilities advertise what is served.
func TestSessionCapabilitiesAdvertised(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	var r acp.InitializeResponse
	ed.must(rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}, &r)
	sc := r.AgentCapabilities.SessionCapabilities
	if sc.List == nil || sc.Resume == nil || sc.Close == nil || sc.Delete == nil {
		t.Errorf("sessionCapabilities %+v: want list, resume, close and delete", sc)
	}
}

func (e *editor) resume(id acp.SessionId, cwd string) acp.ResumeSessionResponse {
	e.t.Helper()
	var r acp.ResumeSessionResponse
	e.must(rpc.MethodSessionResume, acp.ResumeSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acp.McpServer{}}, &r)
	return r
}

// session/resume attaches an editor without replaying anything, and offers
// the commands; session/close detaches it, and the session closes once no
// editor is left — the store keeps it, session/list shows it, resume opens
// it again with its history.
func TestSessionResumeAndClose(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.prompt(id, "remember the word heliotrope")

	b := td.connect()
	b.initialize()
	r := b.resume(id, td.root)
	if r.Modes == nil || r.Modes.CurrentModeId != ModeAsk {
		t.Errorf("resume answered modes %+v", r.Modes)
	}
	b.waitFor("the commands after resume", func(ups []acp.SessionUpdate) bool { return offered(ups, "compact") })
	for _, u := range b.updates() {
		if u.UserMessageChunk != nil || u.AgentMessageChunk != nil || u.ToolCall != nil {
			t.Fatalf("resume replayed history: %+v", u)
		}
	}
	// Both are attached: B's prompt streams to A too.
	a.forget()
	b.prompt(id, "hello again")
	a.waitFor("B's turn at A", func(ups []acp.SessionUpdate) bool { return strings.Contains(agentText(ups), "hello again") })

	a.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	if st := td.d.Status(); st.Sessions.Open != 1 || st.Sessions.Closed != 0 {
		t.Fatalf("after A's close, with B attached: %+v", st.Sessions)
	}
	a.forget()
	b.prompt(id, "only for B")
	if got := agentText(a.updates()); got != "" {
		t.Errorf("a closed editor still hears the session: %q", got)
	}

	b.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	if st := td.d.Status(); st.Sessions.Open != 0 || st.Sessions.Closed != 1 {
		t.Fatalf("after the last editor's close: %+v", st.Sessions)
	}
	var list acp.ListSessionsResponse
	b.must(rpc.MethodSessionList, acp.ListSessionsRequest{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != id {
		t.Fatalf("session/list after close: %+v", list)
	}
	// Closing again, or a session that is not open, is fine; an unknown one is not.
	b.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	if err := b.call(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: "ses_nope"}, nil); rpc.WireError(err).Code != -32002 {
		t.Errorf("close of an unknown session: %v, want -32002", err)
	}

	before := len(td.sim.Received())
	b.resume(id, td.root)
	if st := td.d.Status(); st.Sessions.Open != 1 {
		t.Fatalf("resume did not open the session again: %+v", st.Sessions)
	}
	b.prompt(id, "which word?")
	// The reopened conversation's first request (its re-warm) is full.
	recs := td.waitRequests(before + 2)
	var sent string
	for _, r := range recs[before:] {
		for _, in := range r.Input {
			sent += string(in)
		}
	}
	if !strings.Contains(sent, "heliotrope") || !strings.Contains(sent, "which word?") {
		t.Error("the resumed session's requests do not carry its history")
	}
}

// session/close cancels the editor's running turn (its prompt answers
// cancelled), then frees the session.
func TestSessionCloseCancelsTheTurn(t *testing.T) {
	// An answer paced to last minutes, not one of millions of words: the
	// simulator would spend seconds building it before the first delta.
	td := startDaemon(t, sim.Options{Cost: sim.Cost{TokensPerSecond: 100}}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var r acp.PromptResponse
	go func() {
		done <- ed.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id,
			Prompt: []acp.ContentBlock{acp.TextBlock("endless sim:tokens=20000")}}, &r)
	}()
	ed.waitFor("the answer to start", func(ups []acp.SessionUpdate) bool { return agentText(ups) != "" })
	ed.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	select {
	case err := <-done:
		if err != nil || r.StopReason != acp.StopReasonCancelled {
			t.Fatalf("the prompt answered %+v, %v; want cancelled", r, err)
		}
	case <-ctx.Done():
		t.Fatal("the prompt did not end after session/close")
	}
	if st := td.d.Status(); st.Sessions.Open != 0 || st.Sessions.Closed != 1 {
		t.Fatalf("after close: %+v", st.Sessions)
	}
}

// session/delete removes the session and what is stored of it; it is
// refused while another editor is attached.
func TestSessionDelete(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := td.connect()
	a.initialize()
	id := a.newSession(td.root)
	a.prompt(id, "write notes/x.txt hi")
	keep := a.newSession(td.root)
	a.prompt(keep, "hello") // listed: a session never prompted is not

	b := td.connect()
	b.initialize()
	err := b.call(rpc.MethodSessionDelete, acp.UnstableDeleteSessionRequest{SessionId: id}, nil)
	if rpc.WireError(err).Code != -32602 || !strings.Contains(err.Error(), "other editor") {
		t.Fatalf("delete of a session open in another editor: %v", err)
	}
	a.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	b.must(rpc.MethodSessionDelete, acp.UnstableDeleteSessionRequest{SessionId: id}, nil)

	var list acp.ListSessionsResponse
	b.must(rpc.MethodSessionList, acp.ListSessionsRequest{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != keep {
		t.Errorf("session/list after delete: %+v", list)
	}
	if _, err := td.d.DB().Session(t.Context(), string(id)); err == nil {
		t.Error("the session's row is still stored")
	}
	items, err := td.d.DB().Items().Page(t.Context(), string(id), 0, 10)
	if err != nil || len(items) != 0 {
		t.Errorf("items left: %d (%v)", len(items), err)
	}
	if err := td.d.DB().IntegrityCheck(t.Context()); err != nil {
		t.Error(err)
	}
	err = b.call(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	if rpc.WireError(err).Code != -32002 {
		t.Errorf("load of a deleted session: %v, want -32002", err)
	}
	if err := b.call(rpc.MethodSessionDelete, acp.UnstableDeleteSessionRequest{SessionId: id}, nil); rpc.WireError(err).Code != -32002 {
		t.Errorf("second delete: %v, want -32002", err)
	}
	// Its own editor may delete an open session: it is closed first.
	a.must(rpc.MethodSessionDelete, acp.UnstableDeleteSessionRequest{SessionId: keep}, nil)
	if st := td.d.Status(); st.Sessions.Open != 0 {
		t.Errorf("deleted sessions still open: %+v", st.Sessions)
	}
}
