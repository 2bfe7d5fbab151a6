package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/sim"
)

// `hearth ask --cwd sub/dir` in a git repository works in the repository,
// as a new user expects: ../../README.md is the repository's; a path out of
// the repository is still refused.
func TestAskInSubdirectoryOfRepository(t *testing.T) {
	e := newAskEnv(t, sim.Options{})
	os.Mkdir(filepath.Join(e.root, ".git"), 0o755)
	os.WriteFile(filepath.Join(e.root, "README.md"), []byte("the repository's readme\n"), 0o644)
	os.MkdirAll(filepath.Join(e.root, "sub", "dir"), 0o755)
	os.WriteFile(filepath.Join(filepath.Dir(e.root), "outside.txt"), []byte("not the repository's\n"), 0o644)

	r := e.ask(t, nil, "", "--cwd", "sub/dir", "read ../../README.md")
	if r.code != 0 || !strings.Contains(r.stdout, "the repository's readme") {
		t.Errorf("read ../../README.md from sub/dir: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = e.ask(t, nil, "", "--cwd", "sub/dir", "read ../../../outside.txt")
	if strings.Contains(r.stdout, "not the repository's") || !strings.Contains(r.stdout, "outside the workspace") {
		t.Errorf("read ../../../outside.txt from sub/dir: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
