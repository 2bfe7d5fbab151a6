package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// A program's PATH lookup is remembered, and must find what the shell
// would find now, whatever changed in PATH's directories since: a program
// made in an earlier directory, a mode changed, a program removed, a
// missing PATH directory made, a linked PATH directory pointed elsewhere.
func TestProgramLookupFollowsPathChanges(t *testing.T) {
	root := t.TempDir()
	a, b, empty := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "empty")
	missing := filepath.Join(root, "later", "bin")
	link := filepath.Join(root, "link")
	for _, d := range []string{a, b, empty} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(empty, link); err != nil {
		t.Fatal(err)
	}
	prog := func(dir string) string {
		t.Helper()
		p := filepath.Join(dir, "hearth-prog")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := []string{"PATH=" + link + ":" + missing + ":" + a + ":" + b}
	want := func(step, path string) {
		t.Helper()
		got, ok := lookProgram("hearth-prog", root, env)
		if path == "" && ok {
			t.Fatalf("%s: found %s, want nothing", step, got)
		}
		if path != "" && (!ok || got != path) {
			t.Fatalf("%s: found %q (%v), want %s", step, got, ok, path)
		}
	}
	want("none anywhere", "")
	want("none anywhere, again", "")
	inB := prog(b)
	want("made in b", inB)
	want("made in b, again", inB)
	inA := prog(a)
	want("made in a, earlier in PATH", inA)
	if err := os.Chmod(inA, 0o644); err != nil {
		t.Fatal(err)
	}
	want("a's no longer executable", inB)
	if err := os.Remove(inB); err != nil {
		t.Fatal(err)
	}
	want("b's removed", "")
	if err := os.MkdirAll(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	inMissing := prog(missing)
	want("made in a PATH directory that did not exist", inMissing)
	if err := os.Chmod(inA, 0o755); err != nil {
		t.Fatal(err)
	}
	prog(a)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	want("the first PATH directory's link now leads to a", filepath.Join(link, "hearth-prog"))
	if err := os.WriteFile(inA, []byte("not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want("what the link leads to no longer runs", "")
}
