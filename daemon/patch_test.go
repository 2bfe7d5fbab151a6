package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace/watch"
)

// simCall is a prompt whose simulated model calls tool once with args,
// written as the sim's directive wants it: compact JSON, spaces escaped.
func simCall(t *testing.T, tool string, args any) string {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return "go sim:calls=1 sim:tool=" + tool + " sim:args=" + strings.ReplaceAll(string(b), " ", `\u0020`)
}

const testPatch = "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+gamma\n*** Add File: new/b.txt\n+b\n*** End Patch\n"

// toolOutputFor is the tool output (function_call_output or
// custom_tool_call_output) the model got for callID.
func toolOutputFor(t *testing.T, td *testDaemon, callID string) string {
	t.Helper()
	_, out := sentOutput(t, td, callID)
	return out
}

// sentOutput is the type and text of the first output sent for callID.
func sentOutput(t *testing.T, td *testDaemon, callID string) (typ, output string) {
	t.Helper()
	for _, rec := range td.sim.Received() {
		for _, it := range rec.Input {
			var o struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Output string `json:"output"`
			}
			if json.Unmarshal(it, &o) == nil && strings.HasSuffix(o.Type, "_output") && o.CallID == callID {
				return o.Type, o.Output
			}
		}
	}
	t.Fatalf("no output for %s was sent", callID)
	return "", ""
}

// toolCallID is the id of the one tool call the editor was told of.
func toolCallID(t *testing.T, ed *editor) string {
	t.Helper()
	var ids []string
	for _, u := range ed.updates() {
		if u.ToolCall != nil {
			ids = append(ids, string(u.ToolCall.ToolCallId))
		}
	}
	if len(ids) != 1 {
		t.Fatalf("tool calls %q, want one", ids)
	}
	return ids[0]
}

// checkPatchApplied checks the workspace, the model's output, the read set
// and the permission request after testPatch ran in a session, whatever
// tool carried it.
func checkPatchApplied(t *testing.T, td *testDaemon, ed *editor, a *asker, id acp.SessionId) {
	t.Helper()
	if got := readA(t, td); got != "alpha\ngamma\n" {
		t.Errorf("a.txt = %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(td.root, "new", "b.txt")); err != nil || string(b) != "b\n" {
		t.Errorf("new/b.txt = %q, %v", b, err)
	}
	if out := toolOutputFor(t, td, toolCallID(t, ed)); out != "Success. Updated the following files:\nA new/b.txt\nM a.txt\n" {
		t.Errorf("the model got %q", out)
	}
	if a.asked() != 1 {
		t.Fatalf("asked %d times", a.asked())
	}
	tc := a.seen[0].ToolCall
	if tc.Kind == nil || *tc.Kind != acp.ToolKindEdit || tc.Title == nil || *tc.Title != "Patch 2 files" {
		t.Errorf("permission request %+v", tc)
	}
	var diffs []string
	for _, c := range tc.Content {
		if d := c.Diff; d != nil {
			old := "<none>"
			if d.OldText != nil {
				old = *d.OldText
			}
			diffs = append(diffs, strings.TrimPrefix(d.Path, td.root+"/")+": "+old+" -> "+d.NewText)
		}
	}
	if want := []string{"a.txt: alpha\nbeta\n -> alpha\ngamma\n", "new/b.txt: <none> -> b\n"}; !slices.Equal(diffs, want) {
		t.Errorf("the prompt's diffs %q, want %q", diffs, want)
	}
	seen, err := td.d.db.Memory().SeenFiles(context.Background(), string(id))
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range map[string]string{"a.txt": "alpha\ngamma\n", "new/b.txt": "b\n"} {
		sum := sha256.Sum256([]byte(content))
		if s := seen[rel]; s.Hash != hex.EncodeToString(sum[:]) || string(s.Content) != content {
			t.Errorf("read set for %s: %+v", rel, s)
		}
	}
}

// apply_patch through the real daemon in ask mode: the permission request
// carries every file's diff, approval changes the files, the output reaches
// the model under its call id, the read set learns the new contents. A
// second patch deletes one file and moves the other: the read set marks
// both old paths gone and learns the new one, and the next prompt tells
// the model nothing of what it did itself.
func TestApplyPatchAsked(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_once", "allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	if stop := ed.prompt(id, simCall(t, "apply_patch", map[string]string{"input": testPatch})); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	checkPatchApplied(t, td, ed, a, id)

	second := "*** Begin Patch\n*** Delete File: new/b.txt\n*** Update File: a.txt\n*** Move to: c.txt\n*** End Patch\n"
	ed.prompt(id, simCall(t, "apply_patch", map[string]string{"input": second}))
	if out := lastToolOutput(t, td); out != "Success. Updated the following files:\nM c.txt\nD new/b.txt\n" {
		t.Fatalf("the model got %q", out)
	}
	seen, err := td.d.db.Memory().SeenFiles(context.Background(), string(id))
	if err != nil {
		t.Fatal(err)
	}
	if seen["a.txt"].Hash != watch.GoneHash || seen["new/b.txt"].Hash != watch.GoneHash || len(seen) != 3 ||
		string(seen["c.txt"].Content) != "alpha\ngamma\n" {
		t.Errorf("read set after delete and move: %v", seen)
	}
	ed.prompt(id, "hello")
	recs := td.sim.Received()
	for _, it := range recs[len(recs)-1].Input {
		if strings.Contains(string(it), "changed on disk") {
			t.Errorf("the model was told of its own patch: %s", it)
		}
	}
	if seen, err = td.d.db.Memory().SeenFiles(context.Background(), string(id)); err != nil || len(seen) != 1 {
		t.Errorf("read set after the next prompt: %v, %v; want c.txt alone", seen, err)
	}
}

// The model's habit: apply_patch with a heredoc through shell. The call is
// asked about and applied as an apply_patch (the prompt shows the diffs, not
// a command), and nothing runs in the shell. In auto-edit mode it runs
// without asking, as edits do, while a real command still asks.
func TestApplyPatchThroughShell(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_once"}}
	ed := td.connectAnswering(a.onCall)
	ed.initialize()
	id := ed.newSession(td.root)
	command := "apply_patch <<'EOF'\n" + testPatch + "EOF\n"
	ed.prompt(id, simCall(t, "shell", map[string]string{"command": command}))
	checkPatchApplied(t, td, ed, a, id)
	for _, c := range a.seen[0].ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil && strings.HasPrefix(c.Content.Content.Text.Text, "$ ") {
			t.Errorf("the prompt shows a command: %q", c.Content.Content.Text.Text)
		}
	}

	ed2 := td.connectAnswering(a.onCall)
	ed2.initialize()
	id2 := ed2.newSession(td.root)
	ed2.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id2, ModeId: acp.SessionModeId(ModeAutoEdit)}, nil)
	again := "apply_patch '*** Begin Patch\n*** Update File: a.txt\n-gamma\n+delta\n*** End Patch'"
	ed2.prompt(id2, simCall(t, "shell", map[string]string{"command": again}))
	if got := readA(t, td); got != "alpha\ndelta\n" || a.asked() != 1 {
		t.Errorf("auto-edit: a.txt = %q, asked %d times (want no new question)", got, a.asked())
	}
	var done *acp.SessionToolCallUpdate // a patch of one file ends showing its diff, as edit_file does
	for _, u := range ed2.updates() {
		if tu := u.ToolCallUpdate; tu != nil && tu.Status != nil && *tu.Status == acp.ToolCallStatusCompleted {
			done = tu
		}
	}
	if done == nil || len(done.Content) != 2 || done.Content[1].Diff == nil || done.Content[1].Diff.NewText != "alpha\ndelta\n" {
		t.Errorf("the completed call shows %+v", done)
	}
	ed2.prompt(id2, simCall(t, "shell", map[string]string{"command": "touch shelled"}))
	if a.asked() != 2 {
		t.Errorf("auto-edit: a real command asked %d times in all, want it asked", a.asked())
	}
}

// Through an editor that offers fs, a patched file that exists changes in
// its buffer, computed from the buffer, and an added file goes to the editor
// too (it creates it); hearth leaves the disk alone.
func TestApplyPatchViaEditorBuffers(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	a := filepath.Join(td.root, "a.txt")
	ed.setBuffer(a, "alpha\nbeta\nunsaved\n")
	ed.prompt(id, simCall(t, "apply_patch", map[string]string{"input": testPatch}))
	if got, _ := ed.buffer(a); got != "alpha\ngamma\nunsaved\n" {
		t.Errorf("buffer = %q", got)
	}
	if got := readA(t, td); got != "alpha\nbeta\n" {
		t.Errorf("the disk changed to %q", got)
	}
	added := filepath.Join(td.root, "new", "b.txt")
	if got, _ := ed.buffer(added); got != "b\n" {
		t.Errorf("the added file's text in the editor = %q", got)
	}
	if _, err := os.Stat(filepath.Dir(added)); err == nil {
		t.Error("hearth created new/ on disk")
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, "unsaved") || !strings.Contains(out, "editor, which creates them") {
		t.Errorf("the model was not told where the changes are: %q", out)
	}
	if got := ed.asked(); !slices.Contains(got, "fs/write_text_file "+a) {
		t.Errorf("editor asked %q", got)
	}
}
