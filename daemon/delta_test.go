package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/sim"
)

// inputTexts returns the text of each message item in a request's new input.
func inputTexts(r sim.Received) []string {
	var out []string
	for _, it := range r.Input {
		var m struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(it, &m) == nil && m.Type == "message" && len(m.Content) > 0 {
			out = append(out, m.Role+": "+m.Content[0].Text)
		}
	}
	return out
}

// An editor (or the user) changes files between two prompts: the next
// request's new input carries, before the user's message, the diff of the
// file the model had read and the path of the one it had not; nothing is
// sent when nothing changed, and hearth's own writes are not echoed.
func TestContextDeltaBetweenPrompts(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "please read a.txt")

	os.WriteFile(filepath.Join(td.root, "a.txt"), []byte("alpha\nBETA\n"), 0o644)
	os.WriteFile(filepath.Join(td.root, "src", "new.go"), []byte("package main\n"), 0o644)
	n := len(td.waitRequests(3))
	ed.prompt(id, "what changed?")
	recs := td.waitRequests(n + 1)
	texts := inputTexts(recs[n])
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "developer: ") || texts[1] != "user: what changed?" {
		t.Fatalf("new input = %q; want the delta then the user's message", texts)
	}
	delta := texts[0]
	for _, want := range []string{"a.txt", "-beta", "+BETA", "src/new.go"} {
		if !strings.Contains(delta, want) {
			t.Errorf("delta lacks %q:\n%s", want, delta)
		}
	}
	if recs[n].PreviousResponseID == "" {
		t.Error("the delta broke the incremental request")
	}

	// Nothing changed: no delta item at all.
	ed.prompt(id, "and now?")
	recs = td.waitRequests(n + 2)
	if texts := inputTexts(recs[n+1]); len(texts) != 1 {
		t.Fatalf("no change, yet the input was %q", texts)
	}

	// The model's own write is not reported back as a change.
	ed.must("session/set_mode", map[string]any{"sessionId": id, "modeId": ModeFullAuto}, nil)
	ed.prompt(id, `w sim:calls=1 sim:tool=write_file sim:args={"path":"mine.txt","content":"x\n"}`)
	m := len(td.waitRequests(n + 4))
	ed.prompt(id, "last")
	recs = td.waitRequests(m + 1)
	if texts := inputTexts(recs[m]); len(texts) != 1 {
		t.Fatalf("hearth's own write came back as a change: %q", texts)
	}
}

// A file the model read and the user changed while the daemon was down is
// diffed in the first prompt after the restart.
func TestContextDeltaAfterRestart(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "please read a.txt")
	ed.c.Close()
	td.d.Close()
	os.WriteFile(filepath.Join(td.root, "a.txt"), []byte("alpha\nGAMMA\n"), 0o644)

	td.restart()
	n := len(td.waitRequests(3))
	ed2 := td.connect()
	ed2.initialize()
	ed2.prompt(id, "anything new?")
	recs := td.waitRequests(n + 2) // the re-warm, then the prompt
	texts := inputTexts(recs[n+1])
	if len(texts) != 2 || !strings.Contains(texts[0], "-beta") || !strings.Contains(texts[0], "+GAMMA") {
		t.Fatalf("first prompt after the restart carried %q; want the diff of a.txt first", texts)
	}
}
