package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// simSteps is a prompt whose simulated model makes the calls steps (pairs
// of a tool name and its arguments) one after the other in one turn.
func simSteps(t testing.TB, steps ...any) string {
	t.Helper()
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	return "go sim:steps=" + strings.ReplaceAll(string(b), " ", `\u0020`)
}

// fileIs checks rel's content in td's workspace ("" with gone: absent).
func fileIs(t *testing.T, td *testDaemon, rel, want string, gone bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(td.root, rel))
	switch {
	case gone && !os.IsNotExist(err):
		t.Errorf("%s: want it gone, have %q, %v", rel, b, err)
	case !gone && (err != nil || string(b) != want):
		t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
	}
}

// /undo puts back what the session's last turn that changed files changed
// with the file tools — a write, a patch's update and deletion — and tells
// the model; a file the user changed since keeps the user's text and is
// named; a turn that changed nothing is passed over; another session's
// changes stay; a new daemon on the same data undoes the turn before, and
// then says nothing is left.
func TestUndo(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	os.Chmod(filepath.Join(td.root, "src", "main.go"), 0o751)

	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+gamma\n*** Delete File: src/main.go\n*** End Patch\n"
	ed.prompt(id, simSteps(t,
		[]any{"write_file", map[string]string{"path": "new.txt", "content": "made\n"}},
		[]any{"apply_patch", map[string]string{"input": patch}}))
	fileIs(t, td, "a.txt", "alpha\ngamma\n", false)
	fileIs(t, td, "src/main.go", "", true)

	ed.prompt(id, simSteps(t,
		[]any{"edit_file", map[string]string{"path": "a.txt", "old_string": "gamma", "new_string": "delta"}},
		[]any{"write_file", map[string]string{"path": "a.txt", "content": "epsilon\n"}},
		[]any{"write_file", map[string]string{"path": "new.txt", "content": "made again\n"}}))
	fileIs(t, td, "a.txt", "epsilon\n", false)
	ed.prompt(id, "hello") // changes nothing

	other := td.connect()
	other.initialize()
	id2 := other.newSession(td.root)
	other.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id2, ModeId: ModeFullAuto}, nil)
	other.prompt(id2, simSteps(t, []any{"write_file", map[string]string{"path": "other.txt", "content": "theirs\n"}}))

	os.WriteFile(filepath.Join(td.root, "new.txt"), []byte("the user's\n"), 0o644)
	ed.forget()
	if stop := ed.prompt(id, "/undo"); stop != acp.StopReasonEndTurn {
		t.Fatalf("/undo: stop %q", stop)
	}
	got := agentText(ed.updates())
	if !strings.Contains(got, "Restored: a.txt.") || !strings.Contains(got, "(conflicts): new.txt") {
		t.Errorf("/undo answered %q", got)
	}
	fileIs(t, td, "a.txt", "alpha\ngamma\n", false) // as before the second turn: its first change's pre-image
	fileIs(t, td, "new.txt", "the user's\n", false)
	fileIs(t, td, "other.txt", "theirs\n", false)

	n := len(td.sim.Received())
	ed.prompt(id, "what now")
	recs := td.waitRequests(n + 1)
	input, _ := json.Marshal(recs[n].Input)
	if !strings.Contains(string(input), "The user undid (/undo)") || !strings.Contains(string(input), "Put back as they were before that turn: a.txt") {
		t.Errorf("the model was not told of the undo: %s", input)
	}

	td.d.Close()
	td.restart()
	cli := td.connect()
	cli.initialize()
	var res rpc.UndoResult
	cli.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id)[:12]}, &res)
	if !res.Undone || strings.Join(res.Restored, ",") != "src/main.go,a.txt" || len(res.Removed) != 0 ||
		strings.Join(res.Conflicts, ",") != "new.txt" {
		t.Errorf("_hearth/undo after a restart: %+v", res)
	}
	fileIs(t, td, "a.txt", "alpha\nbeta\n", false)
	fileIs(t, td, "src/main.go", "package main\n", false)
	if fi, err := os.Stat(filepath.Join(td.root, "src", "main.go")); err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("src/main.go restored with mode %v, %v; want 0751", fi.Mode(), err)
	}
	fileIs(t, td, "new.txt", "the user's\n", false) // the first turn created it; the user's text now: a conflict

	cli.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id)}, &res)
	if res.Undone || !strings.Contains(res.Message, "Nothing to undo") {
		t.Errorf("a third undo: %+v", res)
	}
	cli.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id2)}, &res)
	if !res.Undone || strings.Join(res.Removed, ",") != "other.txt" {
		t.Errorf("the other session's undo: %+v", res)
	}
	fileIs(t, td, "other.txt", "", true)
}

// An editor that holds the files (fs/read_text_file, fs/write_text_file)
// gets the restored text: its buffer goes back to what the user had,
// unsaved, and the disk is left alone, as the file tools' writes leave it.
func TestUndoThroughEditorBuffers(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	a := filepath.Join(td.root, "a.txt")
	ed.setBuffer(a, "alpha\nunsaved beta\n")
	ed.prompt(id, `e sim:calls=1 sim:tool=edit_file sim:args={"path":"a.txt","old_string":"unsaved","new_string":"edited"}`)
	if got, _ := ed.buffer(a); got != "alpha\nedited beta\n" {
		t.Fatalf("buffer after the edit = %q", got)
	}
	ed.forget()
	ed.prompt(id, "/undo")
	if got, _ := ed.buffer(a); got != "alpha\nunsaved beta\n" {
		t.Errorf("buffer after /undo = %q; want the user's unsaved text back", got)
	}
	if got := readA(t, td); got != "alpha\nbeta\n" {
		t.Errorf("the disk changed to %q", got)
	}
	if got := agentText(ed.updates()); !strings.Contains(got, "Restored: a.txt.") {
		t.Errorf("/undo answered %q", got)
	}
}

// A conflict held in an editor's unsaved buffer is a conflict: the user's
// text after the turn is in the buffer while the disk still holds what was
// there before the turn (the agent's edit went to the buffer, unsaved), so
// the disk alone would make it look put back already. The conflict's diff
// is of the buffer's text, and nothing is written.
func TestUndoConflictInAnEditorBuffer(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connectBuffers(true, true)
	id := ed.newSession(td.root)
	a := filepath.Join(td.root, "a.txt")
	ed.setBuffer(a, "alpha\nbeta\n")
	ed.prompt(id, `e sim:calls=1 sim:tool=edit_file sim:args={"path":"a.txt","old_string":"beta","new_string":"edited"}`)
	if got, _ := ed.buffer(a); got != "alpha\nedited\n" {
		t.Fatalf("buffer after the edit = %q", got)
	}
	ed.setBuffer(a, "alpha\nedited by the user\n")
	ed.forget()
	var res rpc.UndoResult
	ed.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id)}, &res)
	if len(res.Conflicts) != 1 || res.Conflicts[0] != "a.txt" || len(res.Restored) != 0 {
		t.Fatalf("undo with the user's text in the buffer: %+v; want a.txt as a conflict", res)
	}
	if got, _ := ed.buffer(a); got != "alpha\nedited by the user\n" {
		t.Errorf("the buffer became %q; want the user's text kept", got)
	}
	if len(res.ConflictDiffs) != 1 || !strings.Contains(res.ConflictDiffs[0].Diff, "+edited by the user") {
		t.Errorf("the conflict's diff: %+v; want the buffer's text", res.ConflictDiffs)
	}
}

// _hearth/undo with dryRun says what an undo would do — the files it would
// restore and remove — and changes nothing: the files stay, and the undo
// that follows does it.
func TestUndoDryRun(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, simSteps(t,
		[]any{"write_file", map[string]string{"path": "new.txt", "content": "made\n"}},
		[]any{"edit_file", map[string]string{"path": "a.txt", "old_string": "beta", "new_string": "gamma"}}))

	var res rpc.UndoResult
	for range 2 { // asking twice changes nothing either
		ed.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id), DryRun: true}, &res)
		if res.Undone || strings.Join(res.Restored, ",") != "a.txt" || strings.Join(res.Removed, ",") != "new.txt" ||
			!strings.Contains(res.Message, "Nothing was changed") {
			t.Errorf("the dry run: %+v", res)
		}
		fileIs(t, td, "new.txt", "made\n", false)
		fileIs(t, td, "a.txt", "alpha\ngamma\n", false)
	}

	res = rpc.UndoResult{}
	ed.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id)}, &res)
	if !res.Undone || strings.Join(res.Restored, ",") != "a.txt" || strings.Join(res.Removed, ",") != "new.txt" {
		t.Errorf("the undo after the dry run: %+v", res)
	}
	fileIs(t, td, "new.txt", "", true)
	fileIs(t, td, "a.txt", "alpha\nbeta\n", false)

	res = rpc.UndoResult{}
	ed.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id), DryRun: true}, &res)
	if res.Undone || len(res.Restored)+len(res.Removed) != 0 || !strings.Contains(res.Message, "Nothing to undo") {
		t.Errorf("a dry run with nothing left: %+v", res)
	}
}
