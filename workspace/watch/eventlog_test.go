package watch

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// TestEventPaths: the event log names what a command created, .git
// included, and not a file only written; it lists the ignored
// directories, from which no event comes.
func TestEventPaths(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, ".gitignore"), "node_modules/\n")
	writeFile(t, filepath.Join(root, "node_modules", "pkg", "index.js"), "x\n")
	writeFile(t, filepath.Join(root, "sub", "a.txt"), "a\n")
	w := watchRoot(t, r, Options{})
	if got := w.IgnoredDirs(); !slices.Equal(got, []string{"node_modules"}) {
		t.Errorf("IgnoredDirs = %q, want [node_modules]", got)
	}
	mark := w.EventMark()
	mkdir(t, filepath.Join(root, "sub", ".git"))
	writeFile(t, filepath.Join(root, "sub", "a.txt"), "b\n")
	syncWatcher(t, w)
	paths, next, complete := w.EventPaths(mark)
	if !complete || !slices.Equal(paths, []string{"sub/.git"}) {
		t.Errorf("EventPaths = %q, %v; want [sub/.git], complete", paths, complete)
	}
	if paths, _, _ := w.EventPaths(next); len(paths) != 0 {
		t.Errorf("EventPaths(next) = %q, want none", paths)
	}
}

// TestEventPathsLost: a window across lost events is incomplete; the
// next one is whole again.
func TestEventPathsLost(t *testing.T) {
	r, root, _ := newTree(t)
	var src *faultSource
	w := watchRoot(t, r, Options{newSource: func() (eventSource, error) {
		s, err := newFaultSource(root, dropNone, nil)
		src = s
		return s, err
	}})
	mark := w.EventMark()
	select {
	case src.errs <- fsnotify.ErrEventOverflow:
	case <-time.After(testTimeout):
		t.Fatal("the loop did not take the error")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	_, next, complete := w.EventPaths(mark)
	if complete {
		t.Error("a window across an overflow is complete")
	}
	if _, _, complete := w.EventPaths(next); !complete {
		t.Error("the window after the overflow is incomplete")
	}
}
