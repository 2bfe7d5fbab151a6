package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/store/storetest"
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

// A database damaged in its pages but still opening: serve refuses to
// start saying which file and the fix; `hearth ask` shows that, the
// daemon's own error, without suggesting --no-daemon (which would meet the
// same database); inspect without a daemon and doctor say the same; the
// file stays where it is.
func TestDamagedDatabaseSaysWhatToDo(t *testing.T) {
	dir := isolate(t)
	path := filepath.Join(dir, "data", "hearth.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(context.Background(), store.Session{ID: "s1", Root: dir, Mode: "ask", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	storetest.Damage(t, path, "sessions")
	fix := "mv " + path + " " + path + ".corrupt"

	serve := exec.Command(binary, "serve")
	serve.Env = os.Environ()
	out, err := serve.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), path+" is damaged") || !strings.Contains(string(out), fix) {
		t.Errorf("serve with a damaged database: %v\n%s", err, out)
	}

	ask := exec.Command(binary, "ask", "--cwd", dir, "hello")
	ask.Env = os.Environ()
	out, err = ask.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.HasPrefix(string(out), "hearth: the daemon could not start: check database: store: "+path+" is damaged") ||
		!strings.Contains(string(out), fix) || strings.Contains(string(out), "--no-daemon") {
		t.Errorf("ask with a damaged database: %v\n%s", err, out)
	}

	code, stdout, stderr := runCLI("inspect")
	if code != 1 || stdout != "" || !strings.Contains(stderr, path+" is damaged") || !strings.Contains(stderr, fix) || strings.Contains(stderr, "internal error") {
		t.Errorf("inspect with a damaged database: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI("doctor")
	if code != 1 || !regexp.MustCompile(`fail +database +.*`+regexp.QuoteMeta(path+" is damaged")+`.*`+regexp.QuoteMeta(fix)).MatchString(unwrapDoctor(stdout)) {
		t.Errorf("doctor with a damaged database: exit %d\n%s", code, stdout)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the damaged database was moved or deleted: %v", err)
	}
}
