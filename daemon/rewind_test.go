package daemon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// promptTurnNo sends a prompt and returns the "hearth/turn" of its answer
// (0 when it has none).
func promptTurnNo(t *testing.T, ed *editor, id acp.SessionId, text string) int {
	t.Helper()
	var r acp.PromptResponse
	ed.must(rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}, &r)
	n, _ := r.Meta[metaTurn].(float64)
	return int(n)
}

// /rewind 1 after three turns: the files are as before turn 1, the model's
// view is back there (the next request is one full create without the
// later turns, and the one after it chains on it), the history keeps the
// three turns, replayed with their numbers and marked rewound; /rewind
// alone and _hearth/rewind list the turns by the same numbers.
func TestRewind(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)

	turns := []string{
		simSteps(t, []any{"write_file", map[string]string{"path": "new.txt", "content": "made\n"}},
			[]any{"edit_file", map[string]string{"path": "a.txt", "old_string": "beta", "new_string": "gamma"}}),
		simSteps(t, []any{"edit_file", map[string]string{"path": "a.txt", "old_string": "gamma", "new_string": "delta"}}),
		simSteps(t, []any{"write_file", map[string]string{"path": "b.txt", "content": "bee\n"}},
			[]any{"write_file", map[string]string{"path": "new.txt", "content": "made again\n"}}),
	}
	for i, p := range turns {
		if n := promptTurnNo(t, ed, id, p); n != i+1 {
			t.Errorf("turn %d answered with hearth/turn %d", i+1, n)
		}
	}
	if n := promptTurnNo(t, ed, id, "/undo"); n != 0 {
		t.Errorf("/undo answered with hearth/turn %d; a command hearth runs is no turn", n)
	}
	fileIs(t, td, "new.txt", "made\n", false) // the undo took turn 3 back
	fileIs(t, td, "b.txt", "", true)
	fileIs(t, td, "a.txt", "alpha\ndelta\n", false)

	var list rpc.RewindResult
	ed.must(rpc.MethodHearthRewind, rpc.RewindParams{SessionID: string(id)}, &list)
	if len(list.Turns) != 3 || list.Turns[0].Files != 2 || list.Turns[1].Files != 1 || list.Turns[2].Files != 2 ||
		!strings.HasPrefix(list.Turns[0].Prompt, "go sim:steps=") || !strings.HasPrefix(list.Turns[1].Prompt, "go sim:steps=") || list.Rewound {
		t.Errorf("_hearth/rewind's list: %+v", list)
	}
	if len(list.Turns) == 3 && (strings.Join(list.Turns[0].Paths, ",") != "new.txt,a.txt" ||
		strings.Join(list.Turns[1].Paths, ",") != "a.txt" || strings.Join(list.Turns[2].Paths, ",") != "b.txt,new.txt") {
		t.Errorf("_hearth/rewind's list names the files %q, %q, %q", list.Turns[0].Paths, list.Turns[1].Paths, list.Turns[2].Paths)
	}
	ed.forget()
	ed.prompt(id, "/rewind")
	if got := agentText(ed.updates()); !strings.Contains(got, "\n2. go sim:steps=") || !strings.Contains(got, "(1 files changed)") {
		t.Errorf("/rewind listed %q", got)
	}

	ed.forget()
	n := len(td.sim.Received())
	if stop := ed.prompt(id, "/rewind 1"); stop != acp.StopReasonEndTurn {
		t.Fatalf("/rewind 1: stop %q", stop)
	}
	if got := agentText(ed.updates()); !strings.Contains(got, "Rewound this session to before turn 1") ||
		!strings.Contains(got, "Restored: a.txt.") || !strings.Contains(got, "Removed (created by those turns): new.txt.") {
		t.Errorf("/rewind 1 answered %q", got)
	}
	fileIs(t, td, "a.txt", "alpha\nbeta\n", false)
	fileIs(t, td, "new.txt", "", true)
	fileIs(t, td, "b.txt", "", true)

	if n4 := promptTurnNo(t, ed, id, "after the rewind"); n4 != 4 {
		t.Errorf("the prompt after the rewind answered with hearth/turn %d, want 4", n4)
	}
	recs := td.waitRequests(n + 2)
	full, next := recs[n], recs[n+1]
	sent, _ := json.Marshal(full.Input)
	if full.PreviousResponseID != "" || strings.Contains(string(sent), "sim:steps") || strings.Contains(string(sent), "new.txt") {
		t.Errorf("the re-warm after the rewind: previous %q, input %s", full.PreviousResponseID, sent)
	}
	sent, _ = json.Marshal(next.Input)
	if next.PreviousResponseID == "" || next.PreviousResponseID != full.ResponseID || strings.Contains(string(sent), "sim:steps") ||
		!strings.Contains(string(sent), "after the rewind") {
		t.Errorf("the prompt after the re-warm: previous %q (the re-warm's %q), input %s", next.PreviousResponseID, full.ResponseID, sent)
	}
	if len(td.sim.Received()) != n+2 {
		t.Errorf("%d requests after the rewind, want 2", len(td.sim.Received())-n)
	}

	b := td.connect()
	b.initialize()
	b.must(rpc.MethodSessionLoad, acp.LoadSessionRequest{SessionId: id, Cwd: td.root, McpServers: []acp.McpServer{}}, nil)
	var got []string
	for _, u := range b.updates() {
		if c := u.UserMessageChunk; c != nil && c.Content.Text != nil {
			turn, rewound := c.Meta[metaTurn], c.Meta[metaRewound] == true
			got = append(got, strings.Fields(c.Content.Text.Text)[0]+" "+jsonText(turn)+" "+map[bool]string{true: "rewound", false: "kept"}[rewound])
		}
	}
	want := "go 1 rewound|go 2 rewound|go 3 rewound|after 4 kept"
	if strings.Join(got, "|") != want {
		t.Errorf("session/load replayed the user's messages as %q, want %q", strings.Join(got, "|"), want)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A rewind to a turn past the session's, or to one the last compaction
// replaced by its summary, changes nothing and says why.
func TestRewindRefused(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, simSteps(t, []any{"write_file", map[string]string{"path": "new.txt", "content": "made\n"}}))
	ed.prompt(id, "hello")

	var res rpc.RewindResult
	ed.must(rpc.MethodHearthRewind, rpc.RewindParams{SessionID: string(id), Turn: 3}, &res)
	if res.Rewound || !strings.Contains(res.Message, "no turn 3") {
		t.Errorf("_hearth/rewind to turn 3 of 2: %+v", res)
	}
	ed.prompt(id, "/compact")
	ed.must(rpc.MethodHearthRewind, rpc.RewindParams{SessionID: string(id), Turn: 1}, &res)
	if res.Rewound || !strings.Contains(res.Message, "Turn 1 was compacted") {
		t.Errorf("_hearth/rewind to a compacted turn: %+v", res)
	}
	fileIs(t, td, "new.txt", "made\n", false)
	if n := promptTurnNo(t, ed, id, "still here"); n != 3 {
		t.Errorf("the prompt after /compact answered with hearth/turn %d, want 3 (/compact is no turn)", n)
	}
}
