package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// A file changed since the turn is left as it is, and the undo says what
// differs: a unified diff of what the turn left against what is there now,
// in conflictDiffs and in the message; a file the turn created and the user
// removed since shows as gone.
func TestUndoConflictDiff(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, simSteps(t,
		[]any{"edit_file", map[string]string{"path": "a.txt", "old_string": "beta", "new_string": "gamma"}},
		[]any{"write_file", map[string]string{"path": "new.txt", "content": "made\n"}}))
	os.WriteFile(filepath.Join(td.root, "a.txt"), []byte("alpha\ngamma\nthe user's line\n"), 0o644)
	os.Remove(filepath.Join(td.root, "new.txt"))

	var res rpc.UndoResult
	ed.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id)}, &res)
	if strings.Join(res.Conflicts, ",") != "a.txt" || len(res.ConflictDiffs) != 1 || res.ConflictDiffs[0].Path != "a.txt" {
		t.Fatalf("_hearth/undo: conflicts %v, diffs %+v, removed %v", res.Conflicts, res.ConflictDiffs, res.Removed)
	}
	d := res.ConflictDiffs[0].Diff
	if !strings.Contains(d, "--- a/a.txt\n+++ b/a.txt\n") || !strings.Contains(d, " gamma\n+the user's line\n") {
		t.Errorf("the conflict's diff: %q", d)
	}
	if !strings.Contains(res.Message, "```diff\n"+d) {
		t.Errorf("the message does not show the diff: %q", res.Message)
	}
	if strings.Join(res.Removed, ",") != "new.txt" {
		t.Errorf("new.txt, gone already, is not named removed: %+v", res)
	}
}
