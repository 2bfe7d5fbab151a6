//go:build linux

package watch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// inotifyFDs counts this process's inotify descriptors.
func inotifyFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

func testHub(t *testing.T) *Hub {
	h := NewHub(slog.New(slog.NewTextHandler(testLogWriter{t}, nil)))
	t.Cleanup(func() { h.Close() })
	return h
}

// Two hundred Watchers on one hub hold one inotify instance between them,
// and each hears its own workspace's changes.
func TestWatchHubOneInstance(t *testing.T) {
	before := inotifyFDs(t)
	hub := testHub(t)
	base := t.TempDir()
	var ws []*Watcher
	for i := range 200 {
		dir := filepath.Join(base, fmt.Sprintf("w%d", i))
		writeFile(t, filepath.Join(dir, "src", "a.go"), "package a\n")
		r, err := openDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		ws = append(ws, watchRoot(t, r, Options{Hub: hub}))
	}
	if got := inotifyFDs(t) - before; got != 1 || hub.Instances() != 1 {
		t.Fatalf("%d new inotify descriptors (hub: %d) for 200 Watchers, want 1", got, hub.Instances())
	}
	curs := make([]uint64, len(ws))
	for i, w := range ws {
		curs[i] = w.Cursor()
	}
	writeFile(t, filepath.Join(base, "w7", "src", "b.go"), "package a\n")
	for i, w := range ws {
		got, _ := changesSince(t, w, curs[i])
		want := ""
		if i == 7 {
			want = "created src/b.go"
		}
		if got != want {
			t.Errorf("w%d: changes %q, want %q", i, got, want)
		}
	}
}

// A workspace inside another: a directory both watch is watched once, and
// its events reach both, each under its own paths; a directory moved while
// both watch it is followed by both; closing the inner Watcher leaves the
// outer one's watches.
func TestWatchHubNestedRoots(t *testing.T) {
	hub := testHub(t)
	outerR, outer, _ := newTree(t)
	inner := filepath.Join(outer, "inner")
	writeFile(t, filepath.Join(inner, "pkg", "a.go"), "package pkg\n")
	writeFile(t, filepath.Join(outer, "top.go"), "package top\n")
	innerR, err := openDir(inner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { innerR.Close() })
	wo := watchRoot(t, outerR, Options{Hub: hub})
	wi := watchRoot(t, innerR, Options{Hub: hub})
	co, ci := wo.Cursor(), wi.Cursor()

	writeFile(t, filepath.Join(inner, "pkg", "a.go"), "package pkg // changed\n")
	writeFile(t, filepath.Join(outer, "top.go"), "package top // changed\n")
	got, co := changesSince(t, wo, co)
	wantChanges(t, got, "modified inner/pkg/a.go\nmodified top.go")
	got, ci = changesSince(t, wi, ci)
	wantChanges(t, got, "modified pkg/a.go")

	// Moved under both: each follows it under its new name.
	rename(t, filepath.Join(inner, "pkg"), filepath.Join(inner, "moved"))
	got, ci = changesSince(t, wi, ci)
	wantChanges(t, got, "renamed pkg → moved/\nrenamed pkg/a.go → moved/a.go")
	writeFile(t, filepath.Join(inner, "moved", "b.go"), "package pkg\n")
	got, co = changesSince(t, wo, co)
	wantChanges(t, got, "renamed inner/pkg → inner/moved/\nrenamed inner/pkg/a.go → inner/moved/a.go\ncreated inner/moved/b.go")
	got, ci = changesSince(t, wi, ci)
	wantChanges(t, got, "created moved/b.go")

	// The inner workspace closes; the outer one still hears its directories.
	wi.Close()
	writeFile(t, filepath.Join(inner, "moved", "c.go"), "package pkg\n")
	got, _ = changesSince(t, wo, co)
	wantChanges(t, got, "created inner/moved/c.go")
}

// A queue overflow of the shared instance makes every Watcher rescan: none
// misses what the lost events said.
func TestWatchHubOverflowRescansAll(t *testing.T) {
	hub := testHub(t)
	var ws []*Watcher
	var roots []string
	for range 3 {
		r, root, _ := newTree(t)
		lossyTree(t, root)
		ws = append(ws, watchRoot(t, r, Options{Hub: hub}))
		roots = append(roots, root)
	}
	curs := make([]uint64, len(ws))
	for i, w := range ws {
		curs[i] = w.Cursor()
	}
	// Drop every event under the roots, as a full kernel queue would...
	hub.mu.Lock()
	inst := hub.inst
	for _, w := range inst.watches {
		w.regs = nil
	}
	hub.mu.Unlock()
	var want string
	for _, root := range roots {
		want = lossyChanges(t, root)
	}
	// ...then the kernel says so.
	ev := make([]byte, unix.SizeofInotifyEvent)
	binary.NativeEndian.PutUint32(ev[0:4], uint32(0xffffffff))
	binary.NativeEndian.PutUint32(ev[4:8], unix.IN_Q_OVERFLOW)
	hub.route(inst, ev)
	for i, w := range ws {
		// The markers' events were lost too: waiting on the journal, not Sync.
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		if _, err := w.journal.wait(ctx, curs[i], w.done); err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
		cancel()
		cs, _, _ := w.Changes(curs[i])
		wantChanges(t, formatChanges(cs), sortedLines(want))
	}
}

// A subscription whose Watcher does not keep up holds a bounded queue; past
// it the events are dropped and the Watcher is told to rescan, after the
// events queued before.
func TestWatchHubQueueBounded(t *testing.T) {
	hub := testHub(t)
	src, err := hub.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	s := src.(*hubSub)
	hub.mu.Lock()
	for i := range hubQueueMax + 100 {
		s.push(hubItem{ev: fsnotify.Event{Name: fmt.Sprint(i), Op: fsnotify.Create}})
	}
	hub.mu.Unlock()
	// The forwarder holds one item on its way out besides the queue.
	deadline := time.After(testTimeout)
	for n := 0; ; n++ {
		select {
		case ev := <-src.Events():
			if ev.Name != fmt.Sprint(n) {
				t.Fatalf("event %d is %q", n, ev.Name)
			}
			if n > hubQueueMax {
				t.Fatalf("event %d delivered past the bound", n)
			}
			continue
		case err := <-src.Errors():
			if !errors.Is(err, fsnotify.ErrEventOverflow) || n < hubQueueMax {
				t.Fatalf("error %v after %d events, want the overflow after %d", err, n, hubQueueMax)
			}
		case <-deadline:
			t.Fatal("no overflow error")
		}
		break
	}
}
