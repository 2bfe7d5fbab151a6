package watch

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// testTimeout bounds every wait in the watcher tests; nothing sleeps.
const testTimeout = 20 * time.Second

// startWatcher opens a fresh workspace and watches it. Unless the test says
// otherwise, the debounce never fires on its own: changes reach the journal
// when the test calls Sync, so batches are exactly what the test made.
func startWatcher(t testing.TB, opts Options) (w *Watcher, root string) {
	t.Helper()
	r, root, _ := newTree(t)
	return watchRoot(t, r, opts), root
}

func watchRoot(t testing.TB, r Dir, opts Options) *Watcher {
	t.Helper()
	if opts.Quiet == 0 {
		opts.Quiet, opts.MaxWait = time.Hour, time.Hour
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Hour
	}
	if opts.FenceDir == "" {
		opts.FenceDir = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testLogWriter{t}, nil))
	}
	if opts.newSource == nil && opts.Hub == nil {
		// What the daemon does: a hub of the test's own, closed after the
		// Watcher (cleanups run last-registered first).
		opts.Hub = NewHub(opts.Logger)
		t.Cleanup(func() { opts.Hub.Close() })
	}
	w, err := New(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// testLogWriter sends a logger's lines to the test's log.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func syncWatcher(t testing.TB, w *Watcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := w.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

// changesSince syncs and returns the collapsed changes since cursor, one
// per line ("created a.txt", "deleted d/", "renamed a → b"), and the next
// cursor.
func changesSince(t testing.TB, w *Watcher, cursor uint64) (string, uint64) {
	t.Helper()
	syncWatcher(t, w)
	cs, next, overflow := w.Changes(cursor)
	if overflow {
		t.Errorf("Changes(%d) overflowed", cursor)
	}
	return formatChanges(cs), next
}

func formatChanges(cs []Change) string {
	lines := make([]string, len(cs))
	for i, c := range cs {
		p := c.Path
		if c.Dir {
			p += "/"
		}
		if c.Op == Renamed {
			p = c.Old + " → " + p
		}
		lines[i] = c.Op.String() + " " + p
	}
	return strings.Join(lines, "\n")
}

func wantChanges(t testing.TB, got, want string) {
	t.Helper()
	want = strings.TrimSpace(want)
	if got != want {
		t.Errorf("changes:\n%s\nwant:\n%s", got, want)
	}
}

func rename(t testing.TB, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func remove(t testing.TB, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

// dropMode says which events a faultSource loses.
type dropMode int

const (
	dropNone      dropMode = iota
	dropWorkspace          // every event under the root, as an overflowing queue would
	dropAll                // Sync's markers' too
)

// faultSource wraps the real fsnotify source to inject what the kernel
// rarely does on demand: lost events, errors on the Errors channel, and
// watch limits on Add. Its forwarding goroutine is owned by the source and
// awaited by Close.
type faultSource struct {
	real    eventSource
	root    string
	drop    dropMode
	dropped chan string       // the names of lost events, while there is room
	failAdd func(n int) error // called with the number of the Add (1-based); nil never fails

	mu   sync.Mutex // guards adds
	adds int

	events  chan fsnotify.Event
	errs    chan error // the test sends errors here
	closing chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

func newFaultSource(root string, drop dropMode, failAdd func(n int) error) (*faultSource, error) {
	real, err := newFsnotifySource()
	if err != nil {
		return nil, err
	}
	s := &faultSource{real: real, root: root, drop: drop, dropped: make(chan string, 64), failAdd: failAdd,
		events: make(chan fsnotify.Event), errs: make(chan error), closing: make(chan struct{})}
	s.wg.Add(1)
	go s.forward()
	return s, nil
}

func (s *faultSource) forward() {
	defer s.wg.Done()
	for {
		select {
		case ev, ok := <-s.real.Events():
			if !ok {
				return
			}
			if s.drop == dropAll || s.drop == dropWorkspace && strings.HasPrefix(ev.Name, s.root+string(filepath.Separator)) {
				select {
				case s.dropped <- ev.Name:
				default:
				}
				continue
			}
			select {
			case s.events <- ev:
			case <-s.closing:
				return
			}
		case <-s.real.Errors():
		case <-s.closing:
			return
		}
	}
}

func (s *faultSource) Add(path string) error {
	s.mu.Lock()
	s.adds++
	n := s.adds
	s.mu.Unlock()
	if s.failAdd != nil {
		if err := s.failAdd(n); err != nil {
			return err
		}
	}
	return s.real.Add(path)
}

func (s *faultSource) Remove(path string) error      { return s.real.Remove(path) }
func (s *faultSource) Events() <-chan fsnotify.Event { return s.events }
func (s *faultSource) Errors() <-chan error          { return s.errs }

func (s *faultSource) Close() error {
	s.once.Do(func() { close(s.closing) })
	err := s.real.Close()
	s.wg.Wait()
	return err
}

// failAfter makes Add fail with errno once n watches exist, as the kernel
// does at fs.inotify.max_user_watches.
func failAfter(n int, errno syscall.Errno) func(int) error {
	return func(k int) error {
		if k > n {
			return errno
		}
		return nil
	}
}
