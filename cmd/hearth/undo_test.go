package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/sim"
)

// hearth undo, in the directory of a session, puts back the files of its
// last turn that changed any (through the daemon ask started), then the
// turn's before, then says nothing is left.
func TestUndoCommand(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	if r := e.ask(t, nil, "", "--mode", "full-auto", "write a.txt changed"); r.code != 0 || e.readA(t) != "changed\n" {
		t.Fatalf("ask write a.txt: exit %d, a.txt %q\n%s", r.code, e.readA(t), r.stderr)
	}
	if r := e.ask(t, nil, "", "--mode", "full-auto", "--continue", "write b.txt new"); r.code != 0 {
		t.Fatalf("ask write b.txt: exit %d\n%s", r.code, r.stderr)
	}
	r := e.hearth(t, nil, "", "undo")
	if _, err := os.Stat(filepath.Join(e.root, "b.txt")); r.code != 0 || !strings.Contains(r.stdout, "b.txt") || !os.IsNotExist(err) {
		t.Fatalf("first undo: exit %d, b.txt %v\nstdout %s\nstderr %s", r.code, err, r.stdout, r.stderr)
	}
	if r := e.hearth(t, nil, "", "undo"); r.code != 0 || e.readA(t) != "alpha\n" {
		t.Fatalf("second undo: exit %d, a.txt %q\nstdout %s\nstderr %s", r.code, e.readA(t), r.stdout, r.stderr)
	}
	if r := e.hearth(t, nil, "", "undo"); r.code != 0 || !strings.Contains(r.stdout, "Nothing to undo") {
		t.Fatalf("third undo: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
