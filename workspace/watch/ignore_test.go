package watch

import (
	"path/filepath"
	"testing"
)

func TestIgnorer(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, ".gitignore"), "*.log\r\n/only-top.txt\nbuild-out/\n!dist/\n")
	writeFile(t, filepath.Join(root, "a", ".gitignore"), "!keep.log\nlocal/\n")
	writeFile(t, filepath.Join(root, "a", "b", ".gitignore"), "*.tmp\n")
	ig := NewIgnorer(r, SearchIgnore)
	for _, d := range []string{"", "a", "a/b"} {
		ig.Load(d)
	}
	for _, tc := range []struct {
		path  string
		dir   bool
		want  bool
		cause string
	}{
		{"x.log", false, true, "root *.log (CRLF line)"},
		{"a/x.log", false, true, "root *.log applies below"},
		{"a/keep.log", false, false, "a's !keep.log"},
		{"a/b/keep.log", false, false, "a's !keep.log applies below a"},
		{"keep.log", false, true, "a's rule does not apply at the root"},
		{"only-top.txt", false, true, "anchored"},
		{"a/only-top.txt", false, false, "anchored to the root"},
		{"build-out", true, true, "directory rule"},
		{"build-out", false, false, "directory rule, but a file"},
		{"a/local", true, true, "a's directory rule"},
		{"a/b/x.tmp", false, true, "deepest rule"},
		{"a/x.tmp", false, false, "deepest rule, not above"},
		{"node_modules", true, true, "grep's default"},
		{"a/b/__pycache__", true, true, "grep's default, nested"},
		{"dist", true, false, "grep's default re-included by the project"},
		{"target", true, true, "grep's default"},
		{"src/main.go", false, false, "ordinary"},
		{".git", true, true, "always"},
		{"a/.git", false, true, "always, even a worktree's .git file"},
		{".hearth-0123.tmp", false, true, "hearth's own temporary files"},
	} {
		if got := ig.Ignored(tc.path, tc.dir); got != tc.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v (%s)", tc.path, tc.dir, got, tc.want, tc.cause)
		}
	}
	// Removing a .gitignore drops its rules.
	remove(t, filepath.Join(root, "a", "b", ".gitignore"))
	if !ig.Load("a/b") || ig.Ignored("a/b/x.tmp", false) {
		t.Error("rules of a removed .gitignore still apply")
	}
	if ig.Load("a/b") {
		t.Error("load reported a change when nothing changed")
	}
}
