package daemon

import (
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// A /compact turn is replayed by session/load as it happened: the user's
// "/compact", then the notice the editor was shown, between the turns
// before and after it.
func TestSlashCompactIsReplayed(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "remember the word walrus")
	ed.forget()
	if stop := ed.prompt(id, "/compact"); stop != acp.StopReasonEndTurn {
		t.Fatalf("/compact: stop %q", stop)
	}
	notice := agentText(ed.updates())
	if !strings.Contains(notice, "compacted this session") {
		t.Fatalf("/compact answered %q", notice)
	}
	ed.prompt(id, "still there?")
	ed.must(rpc.MethodSessionClose, acp.CloseSessionRequest{SessionId: id}, nil)

	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	var seq []string
	for _, u := range b.updates() {
		switch {
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			seq = append(seq, "user:"+u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			text := u.AgentMessageChunk.Content.Text.Text
			if u.AgentMessageChunk.Meta[rpc.MetaNotice] == true {
				text = "notice:" + text
			}
			seq = append(seq, "agent:"+text)
		}
	}
	want := []string{"user:remember the word walrus", "", "user:/compact", "agent:notice:" + notice, "user:still there?", ""}
	ok := len(seq) == len(want)
	for i := range want {
		if ok && want[i] != "" && seq[i] != want[i] {
			ok = false
		}
	}
	if !ok {
		t.Errorf("session/load replayed\n%q\nwant\n%q", seq, want)
	}
	if got := b.prompt(id, "and now?"); got != acp.StopReasonEndTurn {
		t.Fatalf("the turn after the load: %s", got)
	}
	for _, req := range td.sim.Received() {
		for _, in := range req.Input {
			if strings.Contains(string(in), "compacted this session") || strings.Contains(string(in), `"/compact"`) {
				t.Fatalf("the /compact turn was sent to the model: %.200s", in)
			}
		}
	}
}
