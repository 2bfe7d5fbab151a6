package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A corrupt database: serve, and inspect without a daemon, fail at once
// saying which file and the command that moves it aside.
func TestCorruptDatabaseSaysMoveItAside(t *testing.T) {
	dir := isolate(t)
	db := filepath.Join(dir, "data", "hearth.db")
	os.MkdirAll(filepath.Dir(db), 0o700)
	if err := os.WriteFile(db, bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	advice := "move it aside: mv " + db + " " + db + ".corrupt"

	serve := exec.Command(binary, "serve")
	serve.Env = os.Environ() // isolate's HEARTH_DATA_DIR and HEARTH_SOCKET
	out, err := serve.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), advice) {
		t.Errorf("serve with a corrupt database: %v\n%s", err, out)
	}

	code, stdout, stderr := runCLI("inspect")
	if code != 1 || stdout != "" || !strings.Contains(stderr, advice) {
		t.Errorf("inspect with a corrupt database: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// `ask --cwd` naming a directory that does not exist, or a file: the error
// names it and says what to pass instead.
func TestAskMissingCwdSaysWhatToDo(t *testing.T) {
	dir := isolate(t)
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for cwd, want := range map[string]string{
		filepath.Join(dir, "nosuch"): filepath.Join(dir, "nosuch") + " does not exist: create it, or give an existing project directory",
		file:                         file + " is a file, not a directory: give the project directory that holds it",
	} {
		ask := exec.Command(binary, "ask", "--cwd", cwd, "hi")
		ask.Env = os.Environ()
		out, err := ask.CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("ask --cwd %s: %v\n%s", cwd, err, out)
		}
	}
	// Refused before a daemon was started for it: none is left running.
	if _, err := os.Stat(os.Getenv("HEARTH_SOCKET")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a daemon was started for an ask that could not succeed (socket: %v)", err)
	}
}
