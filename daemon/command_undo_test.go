package daemon

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// sandboxedSession starts a daemon whose shell tool runs commands in the
// sandbox (this test binary is its helper), with one full-auto session.
func sandboxedSession(t *testing.T) (*testDaemon, *editor, acp.SessionId) {
	t.Helper()
	td := startDaemon(t, sim.Options{}, "")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sandbox.Set(sandbox.Config{Helper: []string{exe, sandboxSubcommand}, Socket: td.cfg.Socket})
	t.Cleanup(func() { sandbox.Set(sandbox.Config{}) })
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	return td, ed, id
}

// checkpointRows counts the checkpoint rows of session id.
func checkpointRows(t *testing.T, td *testDaemon, id acp.SessionId) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(td.cfg.DataDir, "hearth.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM checkpoint_files WHERE session_id = ?`, string(id)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// undo runs /undo through _hearth/undo and returns its result.
func undoVia(t *testing.T, td *testDaemon, id acp.SessionId) rpc.UndoResult {
	t.Helper()
	cli := td.connect()
	cli.initialize()
	var res rpc.UndoResult
	cli.must(rpc.MethodHearthUndo, rpc.UndoParams{SessionID: string(id)}, &res)
	return res
}

// The turn: it writes one file (write_file), patches another
// (apply_patch) and runs a command that creates a third and deletes a
// fourth; /undo puts all four back — the created file gone, the deleted
// one back with its content and mode — and the model is told.
func TestUndoCoversCommands(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	d := filepath.Join(td.root, "d.sh")
	os.WriteFile(d, []byte("#!/bin/sh\necho dee\n"), 0o751)
	os.Chmod(d, 0o751)
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n"
	ed.prompt(id, simSteps(t,
		[]any{"write_file", map[string]string{"path": "new.txt", "content": "made\n"}},
		[]any{"apply_patch", map[string]string{"input": patch}},
		[]any{"shell", map[string]string{"command": "touch c && rm d.sh"}}))
	fileIs(t, td, "c", "", false)
	fileIs(t, td, "d.sh", "", true)
	fileIs(t, td, "a.txt", "alpha\ngamma\n", false)

	ed.forget()
	ed.prompt(id, "/undo")
	got := agentText(ed.updates())
	for _, want := range []string{"Restored: d.sh, a.txt.", "Removed (created by that turn): c, new.txt."} {
		if !strings.Contains(got, want) {
			t.Errorf("/undo answered %q, want %q in it", got, want)
		}
	}
	fileIs(t, td, "c", "", true)
	fileIs(t, td, "new.txt", "", true)
	fileIs(t, td, "a.txt", "alpha\nbeta\n", false)
	fileIs(t, td, "d.sh", "#!/bin/sh\necho dee\n", false)
	if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("d.sh restored: %v, %v; want mode 0751", fi, err)
	}

	n := len(td.sim.Received())
	ed.prompt(id, "what now")
	input, _ := json.Marshal(td.waitRequests(n + 1)[n].Input)
	if !strings.Contains(string(input), "Removed (that turn created them): c, new.txt") || !strings.Contains(string(input), "d.sh") {
		t.Errorf("the model was not told of the command's files: %s", input)
	}
}

// A file a command changed and the user edited after the turn is named as
// a conflict and keeps the user's text; a command's rename is undone (the
// old name back, the new one gone); a command that changes nothing costs
// no checkpoint row.
func TestUndoCommandConflictAndRename(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	ed.prompt(id, shellPrompt(t, "cat a.txt src/main.go; ls -R; echo x > /tmp/scratch"))
	if n := checkpointRows(t, td, id); n != 0 {
		t.Errorf("a command that changed nothing in the workspace left %d checkpoint rows", n)
	}

	ed.prompt(id, shellPrompt(t, "echo command > a.txt && mv src/main.go src/moved.go"))
	fileIs(t, td, "src/moved.go", "package main\n", false)
	os.WriteFile(filepath.Join(td.root, "a.txt"), []byte("the user's\n"), 0o644)
	res := undoVia(t, td, id)
	if !res.Undone || !slices.Equal(res.Conflicts, []string{"a.txt"}) || !slices.Equal(res.Restored, []string{"src/main.go"}) ||
		!slices.Equal(res.Removed, []string{"src/moved.go"}) || len(res.NotRestorable) != 0 {
		t.Errorf("undo: %+v", res)
	}
	fileIs(t, td, "a.txt", "the user's\n", false)
	fileIs(t, td, "src/main.go", "package main\n", false)
	fileIs(t, td, "src/moved.go", "", true)
}

// A process exec_command left running keeps writing after its call: what
// it writes during a later turn (fed by write_stdin) is that turn's, and
// undoing it removes the file; the turn that started it changed nothing.
func TestUndoCoversALaterTurnsProcessWrites(t *testing.T) {
	useSandboxHelper(t)
	td := startDaemonWith(t, sim.Options{}, "", func(c *Config) { c.Model = "gpt-5.3-codex" })
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, simSteps(t, []any{"exec_command", map[string]any{"cmd": `read x; echo "$x" > late.txt; read y`, "yield_time_ms": 250}}))
	fileIs(t, td, "late.txt", "", true)
	ed.prompt(id, simSteps(t, []any{"write_stdin", map[string]any{"session_id": 1001, "chars": "hi\n", "yield_time_ms": 500}}))
	fileIs(t, td, "late.txt", "hi\n", false)
	res := undoVia(t, td, id)
	if !res.Undone || !slices.Equal(res.Removed, []string{"late.txt"}) {
		t.Errorf("undo: %+v", res)
	}
	fileIs(t, td, "late.txt", "", true)
	if res := undoVia(t, td, id); res.Undone {
		t.Errorf("a second undo: %+v", res)
	}
}

// Where the sandbox does not trap commands (no helper: /bin/sh runs
// them), the watcher names what a command changed: a file it created is
// removed by /undo, one it modified is named as not restorable and left
// as it is — never passed over in silence.
func TestUndoUntrappedCommand(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.must(rpc.MethodSessionSetMode, acp.SetSessionModeRequest{SessionId: id, ModeId: ModeFullAuto}, nil)
	ed.prompt(id, shellPrompt(t, "touch c && echo more >> a.txt"))
	res := undoVia(t, td, id)
	if !res.Undone || !slices.Equal(res.Removed, []string{"c"}) || !slices.Equal(res.NotRestorable, []string{"a.txt"}) ||
		!strings.Contains(res.Message, "Not restorable (their content before that turn was not kept): a.txt.") {
		t.Errorf("undo: %+v", res)
	}
	fileIs(t, td, "c", "", true)
	fileIs(t, td, "a.txt", "alpha\nbeta\nmore\n", false)
}

// A turn whose file tools and commands change the same files keeps each
// file's state before the turn, whichever changed it first: a file
// written then overwritten by a command comes back as it was, and one a
// command created then write_file rewrote is removed.
func TestUndoFileToolsAndCommandsOnOneFile(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	ed.prompt(id, simSteps(t,
		[]any{"write_file", map[string]string{"path": "a.txt", "content": "one\n"}},
		[]any{"shell", map[string]string{"command": "echo two > a.txt; echo made > n.txt"}},
		[]any{"write_file", map[string]string{"path": "n.txt", "content": "rewritten\n"}}))
	fileIs(t, td, "a.txt", "two\n", false)
	fileIs(t, td, "n.txt", "rewritten\n", false)
	res := undoVia(t, td, id)
	if !res.Undone || !slices.Equal(res.Restored, []string{"a.txt"}) || !slices.Equal(res.Removed, []string{"n.txt"}) {
		t.Errorf("undo: %+v", res)
	}
	fileIs(t, td, "a.txt", "alpha\nbeta\n", false)
	fileIs(t, td, "n.txt", "", true)
}

// A file over the pre-image limit that a command changes is named as not
// restorable by /undo and left as the command left it; the rest of the
// turn is undone.
func TestUndoNamesABigFileACommandChanged(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	big := filepath.Join(td.root, "big.bin")
	if err := os.WriteFile(big, make([]byte, maxCommandPreImage+1), 0o644); err != nil {
		t.Fatal(err)
	}
	ed.prompt(id, shellPrompt(t, "echo x >> big.bin && touch small"))
	res := undoVia(t, td, id)
	if !res.Undone || !slices.Equal(res.NotRestorable, []string{"big.bin"}) || !slices.Equal(res.Removed, []string{"small"}) {
		t.Errorf("undo: %+v", res)
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() != maxCommandPreImage+3 {
		t.Errorf("big.bin after the undo: %v, %v", fi, err)
	}
	fileIs(t, td, "small", "", true)
}
