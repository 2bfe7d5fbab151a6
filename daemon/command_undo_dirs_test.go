package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// modeOf is the permission bits of rel in the test's workspace.
func modeOf(t *testing.T, td *testDaemon, rel string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(filepath.Join(td.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// A command that changes only a file's mode is undone: the mode comes
// back and the answer names the file restored.
func TestUndoCommandModeAlone(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	run := filepath.Join(td.root, "run.sh")
	os.WriteFile(run, []byte("#!/bin/sh\n"), 0o644)
	os.Chmod(run, 0o644)
	ed.prompt(id, shellPrompt(t, "chmod 755 run.sh"))
	if m := modeOf(t, td, "run.sh"); m != 0o755 {
		t.Fatalf("the command left mode %o", m)
	}
	ed.forget()
	ed.prompt(id, "/undo")
	if got := agentText(ed.updates()); !strings.Contains(got, "Restored: run.sh.") {
		t.Errorf("/undo answered %q, want run.sh named restored", got)
	}
	if m := modeOf(t, td, "run.sh"); m != 0o644 {
		t.Errorf("run.sh has mode %o after the undo, want 644", m)
	}
	fileIs(t, td, "run.sh", "#!/bin/sh\n", false)
}

// A file whose mode the user changed after the turn, its content as the
// turn left it, is no conflict: its content and mode come back.
func TestUndoModeChangedSinceIsNoConflict(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	ed.prompt(id, shellPrompt(t, "echo new > a.txt"))
	os.Chmod(filepath.Join(td.root, "a.txt"), 0o600)
	res := undoVia(t, td, id)
	if !slices.Equal(res.Restored, []string{"a.txt"}) || len(res.Conflicts) != 0 {
		t.Errorf("undo: %+v; want a.txt restored, no conflict", res)
	}
	fileIs(t, td, "a.txt", "alpha\nbeta\n", false)
	if m := modeOf(t, td, "a.txt"); m != 0o644 {
		t.Errorf("a.txt has mode %o after the undo, want 644", m)
	}
}

// Directories a command created are removed by the undo once the files
// in them are; one it removed comes back with its mode; one created that
// holds someone else's file since is left and named.
func TestUndoCommandDirectories(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	empty := filepath.Join(td.root, "empty")
	os.Mkdir(empty, 0o750)
	os.Chmod(empty, 0o750)
	ed.prompt(id, shellPrompt(t, "mkdir -p build/out && touch build/out/x && rmdir empty && mkdir keep"))
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("the command left empty: %v", err)
	}
	os.WriteFile(filepath.Join(td.root, "keep", "mine"), []byte("mine\n"), 0o644)
	res := undoVia(t, td, id)
	if _, err := os.Stat(filepath.Join(td.root, "build")); !os.IsNotExist(err) {
		t.Errorf("build is still there after the undo: %v", err)
	}
	if fi, err := os.Stat(empty); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
		t.Errorf("empty after the undo: %v, %v; want a directory of mode 750", fi, err)
	}
	fileIs(t, td, "keep/mine", "mine\n", false)
	for _, want := range []string{"build/out/x", "build/out/", "build/"} {
		if !slices.Contains(res.Removed, want) {
			t.Errorf("undo removed %q, want %q among them", res.Removed, want)
		}
	}
	if !slices.Equal(res.Restored, []string{"empty/"}) || !slices.Equal(res.Conflicts, []string{"keep/"}) {
		t.Errorf("undo: restored %q, conflicts %q; want [empty/], [keep/]", res.Restored, res.Conflicts)
	}
}

// A directory a command renamed whole, files and all, is named as not
// restorable (its files were not kept one by one), and its new name, not
// empty, is left as it is: nothing of the tree is lost.
func TestUndoCommandRenamedTree(t *testing.T) {
	td, ed, id := sandboxedSession(t)
	ed.prompt(id, shellPrompt(t, "mv src moved"))
	fileIs(t, td, "moved/main.go", "package main\n", false)
	res := undoVia(t, td, id)
	if !slices.Equal(res.NotRestorable, []string{"src"}) || !slices.Equal(res.Conflicts, []string{"moved/"}) {
		t.Errorf("undo: %+v; want src not restorable, moved/ a conflict", res)
	}
	fileIs(t, td, "moved/main.go", "package main\n", false)
}
