package watch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// lossyTree is the workspace of the lost-events tests: files to modify,
// delete and rename while the watcher is blind, and the expected journal.
func lossyTree(t *testing.T, root string) {
	writeFile(t, filepath.Join(root, "mod.txt"), "before\n")
	writeFile(t, filepath.Join(root, "del.txt"), "doomed\n")
	writeFile(t, filepath.Join(root, "ren.txt"), "moving\n")
	writeFile(t, filepath.Join(root, "d1", "x.txt"), "x\n")
	writeFile(t, filepath.Join(root, "d2", "y.txt"), "y\n")
}

func lossyChanges(t *testing.T, root string) string {
	writeFile(t, filepath.Join(root, "mod.txt"), "after, and longer\n")
	remove(t, filepath.Join(root, "del.txt"))
	rename(t, filepath.Join(root, "ren.txt"), filepath.Join(root, "d1", "renamed.txt"))
	writeFile(t, filepath.Join(root, "d2", "y.txt"), "y changed\n")
	writeFile(t, filepath.Join(root, "d3", "deep", "z.txt"), "z\n")
	remove(t, filepath.Join(root, "d1", "x.txt"))
	return `
renamed ren.txt → d1/renamed.txt
created d3/
created d3/deep/
created d3/deep/z.txt
deleted d1/x.txt
deleted del.txt
modified d2/y.txt
modified mod.txt`
}

// sortedLines makes the expected and the journal's order agree: the journal
// sorts by path, the expectation above is grouped by kind.
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		for k := i + 1; k < len(lines); k++ {
			if pathOf(lines[k]) < pathOf(lines[i]) {
				lines[i], lines[k] = lines[k], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n")
}

func pathOf(line string) string {
	f := strings.Fields(line)
	return strings.TrimSuffix(f[len(f)-1], "/")
}

func TestWatchOverflowRescans(t *testing.T) {
	r, root, _ := newTree(t)
	lossyTree(t, root)
	var src *faultSource
	w := watchRoot(t, r, Options{newSource: func() (eventSource, error) {
		s, err := newFaultSource(root, dropWorkspace, nil)
		src = s
		return s, err
	}})
	cur := w.Cursor()
	want := lossyChanges(t, root)
	// Nothing reached the watcher but the kernel's word that events were
	// lost; the rescan must find everything.
	select {
	case src.errs <- fsnotify.ErrEventOverflow:
	case <-time.After(testTimeout):
		t.Fatal("the loop did not take the error")
	}
	got, _ := changesSince(t, w, cur)
	wantChanges(t, got, sortedLines(want))
}

func TestWatchOverflowReleasesSync(t *testing.T) {
	r, root, _ := newTree(t)
	var src *faultSource
	w := watchRoot(t, r, Options{newSource: func() (eventSource, error) {
		s, err := newFaultSource(root, dropAll, nil) // Sync's marker is lost too
		src = s
		return s, err
	}})
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "a.txt"), "a")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	synced := make(chan error, 1)
	go func() { synced <- w.Sync(ctx) }()
	for lost := ""; !strings.HasPrefix(lost, w.fenceDir); {
		select {
		case lost = <-src.dropped:
		case <-ctx.Done():
			t.Fatal("the marker's event never came")
		}
	}
	select {
	case src.errs <- fsnotify.ErrEventOverflow:
	case <-ctx.Done():
		t.Fatal("the loop did not take the error")
	}
	if err := <-synced; err != nil {
		t.Fatalf("Sync: %v", err)
	}
	cs, _, _ := w.Changes(cur)
	wantChanges(t, formatChanges(cs), "created a.txt")
}

func TestWatchPendingCollapses(t *testing.T) {
	for _, max := range []int{1, 3} { // 1: down to a full rescan; 3: to directories
		t.Run(fmt.Sprint("max", max), func(t *testing.T) {
			r, root, _ := newTree(t)
			lossyTree(t, root)
			w := watchRoot(t, r, Options{MaxPending: max})
			cur := w.Cursor()
			want := lossyChanges(t, root)
			got, _ := changesSince(t, w, cur)
			wantChanges(t, got, sortedLines(want))
		})
	}
}

func TestWatchLimitFallsBackToPolling(t *testing.T) {
	r, root, _ := newTree(t)
	lossyTree(t, root)
	w := watchRoot(t, r, Options{newSource: func() (eventSource, error) {
		// The marker directory, the root and d1 get watches; d2 is refused.
		return newFaultSource(root, dropNone, failAfter(3, syscall.ENOSPC))
	}})
	if w.Mode() != "polling" {
		t.Fatalf("Mode = %q, want polling", w.Mode())
	}
	p := w.Problem()
	for _, want := range []string{"watch limit", "sysctl fs.inotify.max_user_watches=524288", root, "scanning"} {
		if !strings.Contains(p, want) {
			t.Errorf("Problem() = %q; want it to say %q", p, want)
		}
	}
	cur := w.Cursor()
	want := lossyChanges(t, root)
	got, _ := changesSince(t, w, cur)
	wantChanges(t, got, sortedLines(want))
}

func TestWatchLimitMidwayFallsBackToPolling(t *testing.T) {
	r, root, _ := newTree(t)
	w := watchRoot(t, r, Options{newSource: func() (eventSource, error) {
		// Enough for the marker directory and the root; the first new
		// directory meets the limit.
		return newFaultSource(root, dropNone, failAfter(2, syscall.ENOSPC))
	}})
	if w.Mode() != "inotify" {
		t.Fatalf("Mode = %q, want inotify", w.Mode())
	}
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "new", "a.txt"), "a")
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, "created new/\ncreated new/a.txt")
	if w.Mode() != "polling" || !strings.Contains(w.Problem(), "max_user_watches") {
		t.Fatalf("Mode %q Problem %q, want polling and the sysctl", w.Mode(), w.Problem())
	}
	// Polling goes on finding changes, in the old directories and the new.
	writeFile(t, filepath.Join(root, "new", "a.txt"), "changed")
	writeFile(t, filepath.Join(root, "b.txt"), "b")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, "created b.txt\nmodified new/a.txt")
}

func TestWatchInstanceLimitFallsBackToPolling(t *testing.T) {
	r, root, _ := newTree(t)
	w := watchRoot(t, r, Options{newSource: func() (eventSource, error) {
		return nil, fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE)
	}})
	if w.Mode() != "polling" || !strings.Contains(w.Problem(), "sysctl fs.inotify.max_user_instances=") {
		t.Fatalf("Mode %q Problem %q, want polling and the sysctl", w.Mode(), w.Problem())
	}
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "a.txt"), "a")
	got, _ := changesSince(t, w, cur)
	wantChanges(t, got, "created a.txt")
}

func TestWatchRetriesAfterLimit(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "d", "f.txt"), "f")
	modes := make(chan string, 4)
	calls := 0
	w := watchRoot(t, r, Options{
		RetryInotify: time.Millisecond,
		onMode:       func(m string) { modes <- m },
		newSource: func() (eventSource, error) {
			calls++ // only ever called by New, then by the loop
			if calls == 1 {
				return newFaultSource(root, dropNone, failAfter(1, syscall.ENOSPC))
			}
			return newFsnotifySource() // the user raised the limit
		},
	})
	select {
	case m := <-modes:
		if m != "inotify" {
			t.Fatalf("mode changed to %q, want inotify", m)
		}
	case <-time.After(testTimeout):
		t.Fatalf("still %s: %s", w.Mode(), w.Problem())
	}
	if w.Mode() != "inotify" || w.Problem() != "" {
		t.Fatalf("Mode %q Problem %q after the retry", w.Mode(), w.Problem())
	}
	cur := w.Cursor()
	writeFile(t, filepath.Join(root, "d", "g.txt"), "g")
	got, _ := changesSince(t, w, cur)
	wantChanges(t, got, "created d/g.txt")
}

func TestWatchSyncCancelled(t *testing.T) {
	w, _ := startWatcher(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Sync(ctx); err != context.Canceled && err != nil {
		t.Errorf("Sync with a cancelled context: %v", err)
	}
	syncWatcher(t, w) // still works afterwards
}

func TestWatchRootRemovedKeepsScanning(t *testing.T) {
	r, root, _ := newTree(t)
	writeFile(t, filepath.Join(root, "a.txt"), "a")
	writeFile(t, filepath.Join(root, "d", "b.txt"), "b")
	w := watchRoot(t, r, Options{})
	cur := w.Cursor()
	remove(t, root)
	got, cur := changesSince(t, w, cur)
	wantChanges(t, got, "deleted a.txt\ndeleted d/\ndeleted d/b.txt")
	if w.Mode() != "polling" || !strings.Contains(w.Problem(), "removed or moved") {
		t.Fatalf("Mode %q Problem %q, want polling and why", w.Mode(), w.Problem())
	}
	writeFile(t, filepath.Join(root, "c.txt"), "c")
	got, _ = changesSince(t, w, cur)
	wantChanges(t, got, "created c.txt")
}
