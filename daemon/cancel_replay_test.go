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

// A turn cancelled while the model streams its answer: session/load, in
// another editor, replays what the user was shown of the answer once,
// after the user's message and before the next turn, and the model is not
// sent it again.
func TestCancelledAnswerIsReplayed(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "hello")
	before := len(ed.updates())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var r acp.PromptResponse
	go func() {
		done <- ed.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id,
			Prompt: []acp.ContentBlock{acp.TextBlock("endless sim:tokens=5000000")}}, &r)
	}()
	ed.waitFor("the answer to stream", func(ups []acp.SessionUpdate) bool { return len(agentText(ups[before:])) > 200 })
	if err := ed.c.Notify(ctx, rpc.MethodSessionCancel, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || r.StopReason != acp.StopReasonCancelled {
		t.Fatalf("the prompt answered %+v, %v; want cancelled", r, err)
	}
	shown := agentText(ed.updates()[before:])
	if shown == "" {
		t.Fatal("nothing of the answer was shown")
	}
	if got := ed.prompt(id, "which word?"); got != acp.StopReasonEndTurn {
		t.Fatalf("the next turn: %s", got)
	}
	// Loaded again from the store in another editor.
	ed.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)
	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	var seq []string
	marked := 0
	for _, u := range b.updates() {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Meta[rpc.MetaCancelled] == true {
			marked++
		}
		switch {
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			seq = append(seq, "user:"+u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			seq = append(seq, "agent:"+u.AgentMessageChunk.Content.Text.Text)
		}
	}
	if len(seq) != 6 || seq[0] != "user:hello" || seq[2] != "user:endless sim:tokens=5000000" ||
		seq[3] != "agent:"+shown || seq[4] != "user:which word?" {
		t.Errorf("session/load replayed %d messages:\n%.300q\nwant the cancelled answer %.100q after its prompt", len(seq), seq, shown)
	}
	if marked != 1 {
		t.Errorf("%d replayed chunks marked %s, want 1", marked, rpc.MetaCancelled)
	}
	if got := b.prompt(id, "and now?"); got != acp.StopReasonEndTurn {
		t.Fatalf("the turn after the load: %s", got)
	}
	for _, req := range td.sim.Received() {
		for _, in := range req.Input {
			if strings.Contains(string(in), shown[:200]) {
				t.Fatalf("the cancelled answer was sent to the model: %.200s", in)
			}
		}
	}
}
