package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scopeTree makes nine directories d0…d8, each holding sub/f.txt, and an
// ignored tree that does not count; it returns the directories the first
// walk would watch.
func scopeTree(t *testing.T, root string) int {
	writeFile(t, filepath.Join(root, ".gitignore"), "node_modules/\n")
	for i := range 9 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("d%d", i), "sub", "f.txt"), "f\n")
	}
	for i := range 30 {
		writeFile(t, filepath.Join(root, "node_modules", fmt.Sprintf("m%d", i), "f.txt"), "f")
	}
	return 1 + 9*2
}

// A tree with more directories than MaxDirs (ignored ones not counted) is
// watched in part: the root, then what Touch names and its parents. A
// change in a touched directory is journaled, one elsewhere is not, and a
// file changed between a tool's look and its directory's watch is
// journaled too.
func TestWatchPartialTree(t *testing.T) {
	r, root, _ := newTree(t)
	dirs := scopeTree(t, root)
	w := watchRoot(t, r, Options{MaxDirs: dirs - 1})
	if partial, n := w.Partial(); !partial || n != 1 || w.Mode() != "inotify" {
		t.Fatalf("Partial() = %v, %d in mode %s; want the root alone, on inotify", partial, n, w.Mode())
	}
	for _, s := range []string{w.ScopeNote(), w.State()} {
		if !strings.Contains(s, fmt.Sprint(dirs-1)) || !strings.Contains(s, "not reported") {
			t.Errorf("%q does not say the tree is too big and what is not reported", s)
		}
	}
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "top.txt"), "top\n")
	writeFile(t, filepath.Join(root, "d3", "sub", "f.txt"), "changed unseen\n")
	remove(t, filepath.Join(root, "d8"))
	// Long before any tool looked at it (see below).
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, "d3", "sub", "f.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, "deleted d8/\ncreated top.txt") // the root's own entries only

	// A session reads d3/sub/f.txt: d3 and d3/sub are watched from now on,
	// quietly (what they hold is not news).
	w.Touch(time.Now(), "d3/sub/f.txt")
	got, cur = changesSince(t, w, cur)
	wantChanges(t, got, "")
	if _, n := w.Partial(); n != 3 {
		t.Errorf("%d directories watched after one touch, want 3", n)
	}
	writeFile(t, filepath.Join(root, "d3", "sub", "f.txt"), "changed again, longer\n")
	writeFile(t, filepath.Join(root, "d3", "sub", "new.txt"), "new\n")
	writeFile(t, filepath.Join(root, "d5", "sub", "f.txt"), "not watched\n")
	got, cur = changesSince(t, w, cur)
	wantChanges(t, got, "modified d3/sub/f.txt\ncreated d3/sub/new.txt")

	// A file written after the tool looked and before the watch: journaled.
	since := time.Now()
	writeFile(t, filepath.Join(root, "d6", "sub", "f.txt"), "written meanwhile\n")
	w.Touch(since, "d6/sub/f.txt", "d7/sub") // a file, and a directory a listing named
	got, cur = changesSince(t, w, cur)
	wantChanges(t, got, "modified d6/sub/f.txt")
	writeFile(t, filepath.Join(root, "d7", "sub", "g.txt"), "g\n")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, "created d7/sub/g.txt")
}

// A path touched before it exists is watched once it appears; paths
// outside the root, and a Watcher of a whole tree, ignore Touch.
func TestWatchTouchAhead(t *testing.T) {
	r, root, outside := newTree(t)
	dirs := scopeTree(t, root)
	w := watchRoot(t, r, Options{MaxDirs: dirs - 1})
	cur := w.Cursor()
	w.Touch(time.Now(), "gen/out/a.go", "../outside/secret.txt", filepath.Join(outside, "secret.txt"))
	syncWatcher(t, w)
	if _, n := w.Partial(); n != 1 {
		t.Errorf("%d directories watched, want the root alone", n)
	}
	writeFile(t, filepath.Join(root, "gen", "out", "a.go"), "package out\n")
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, "created gen/\ncreated gen/out/\ncreated gen/out/a.go")
	writeFile(t, filepath.Join(root, "gen", "out", "a.go"), "package out // changed\n")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, "modified gen/out/a.go")

	whole := watchRoot(t, r, Options{MaxDirs: dirs + 2}) // gen and gen/out are new
	if partial, _ := whole.Partial(); partial || whole.ScopeNote() != "" || whole.State() != "inotify" {
		t.Fatalf("a tree at the limit: ScopeNote %q, State %q; want it watched whole", whole.ScopeNote(), whole.State())
	}
	whole.Touch(time.Now(), "d1/sub/f.txt") // a no-op
	cur = whole.Cursor()
	writeFile(t, filepath.Join(root, "late", "deeper", "g.txt"), "g")
	writeFile(t, filepath.Join(root, "d2", "sub", "f.txt"), "changed\n")
	got, _ = changesSince(t, whole, cur)
	// Directories made after the first walk are watched whatever the count.
	wantChanges(t, got, "modified d2/sub/f.txt\ncreated late/\ncreated late/deeper/\ncreated late/deeper/g.txt")
}

// The first walk of a tree past the limit may meet the kernel's watch
// limit before it stops; its watches go with it, so the part the sessions
// use is still watched by inotify rather than scanned.
func TestWatchPartialAfterWatchLimit(t *testing.T) {
	r, root, _ := newTree(t)
	dirs := scopeTree(t, root)
	w := watchRoot(t, r, Options{MaxDirs: dirs - 1, newSource: func() (eventSource, error) {
		// The marker directory, the root and one more; the fourth is refused.
		return newFaultSource(root, dropNone, func(k int) error {
			if k == 4 {
				return syscall.ENOSPC
			}
			return nil
		})
	}})
	if partial, _ := w.Partial(); !partial || w.Mode() != "inotify" {
		t.Fatalf("partial %v, mode %q (%s); want the part watched by inotify", partial, w.Mode(), w.Problem())
	}
	w.Touch(time.Now(), "d4/sub/f.txt")
	syncWatcher(t, w)
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "d4", "sub", "g.txt"), "g\n")
	got, _ := changesSince(t, w, cur)
	wantChanges(t, got, "created d4/sub/g.txt")
}
