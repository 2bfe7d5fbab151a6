package watch

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ErrClosed is returned by a Watcher's methods after Close.
var ErrClosed = errors.New("workspace: watcher closed")

// Options configure a Watcher; the zero value is the defaults.
type Options struct {
	Ignore       []string      // patterns (.gitignore syntax) below every .gitignore; nil means DefaultIgnore
	Quiet        time.Duration // flush once no event came for this long; default 100ms
	MaxWait      time.Duration // flush at most this long after the first event; default 1s
	MaxPending   int           // paths held between flushes before collapsing to directories; default 4096
	JournalSize  int           // changes kept; default 10,000
	PollInterval time.Duration // polling mode: least time between scans (at most 5% of the time is spent scanning); default 5s
	RetryInotify time.Duration // polling mode: first retry of the watcher, doubling up to an hour; default 1m
	FenceDir     string        // where Sync creates its marker files; default os.TempDir()
	MaxDirs      int           // directories (outside ignored paths) watched whole; past it only the directories Touch names and their parents are; default 20,000, <0 = no limit
	Hub          *Hub          // the process's shared inotify instance; nil = an fsnotify watcher of the Watcher's own
	Logger       *slog.Logger  // default slog.Default()

	// Tests only.
	newSource func() (eventSource, error) // default Hub.subscribe, or newFsnotifySource without a Hub
	onMode    func(mode string)           // called by the loop after each switch of mode
}

func (o Options) withDefaults() Options {
	if o.Ignore == nil {
		o.Ignore = DefaultIgnore
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Quiet, 100*time.Millisecond)
	def(&o.MaxWait, time.Second)
	def(&o.PollInterval, 5*time.Second)
	def(&o.RetryInotify, time.Minute)
	if o.MaxPending <= 0 {
		o.MaxPending = 4096
	}
	if o.MaxDirs == 0 {
		o.MaxDirs = DefaultMaxDirs
	}
	if o.JournalSize <= 0 {
		o.JournalSize = 10_000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.newSource == nil && o.Hub != nil {
		o.newSource = o.Hub.subscribe
	}
	if o.newSource == nil {
		o.newSource = newFsnotifySource
	}
	return o
}

// DefaultMaxDirs is Options.MaxDirs by default: far more directories
// than a project has outside its ignored ones, far fewer than a home
// directory or a disk.
const DefaultMaxDirs = 20_000

// watchMode is what Mode says while events come from the OS.
var watchMode = func() string {
	if runtime.GOOS == "linux" {
		return "inotify"
	}
	return "fsnotify"
}()

// Watcher keeps the change journal of one workspace. Created by New
// when the workspace is opened, it lives until Close, which stops its loop
// goroutine and waits for it. The loop owns the watch, the snapshot, the
// ignore rules and the pending events; the Watcher holds what other
// goroutines share with it: the journal, Sync's markers, the mode, the
// paths hearth writes and the paths sessions touch. Safe for concurrent use.
type Watcher struct {
	root Dir
	opts Options
	log  *slog.Logger

	journal  *journal
	events   *eventLog // the raw event paths, for the plant guard (eventlog.go)
	loop     *loop     // the loop goroutine's: nothing else touches it once New returns
	fenceDir string    // Sync's markers; "" if it could not be made or watched. Set by New

	partial   atomic.Bool   // the tree is watched in part (set before the loop starts)
	touchMu   sync.Mutex    // guards touched
	touched   []touch       // Touch's paths, for the loop
	touchWake chan struct{} // Touch → the loop; capacity 1

	selfMu sync.Mutex          // guards self
	self   map[string]selfNote // path → what hearth is writing there

	fenceMu   sync.Mutex               // guards the fields below it, and mode transitions as Sync sees them
	fenceSeq  uint64                   // last marker number handed out
	fences    map[uint64]chan struct{} // marker number → closed once the events before it are journaled
	polling   bool                     // Sync asks the loop to scan instead of using a marker
	mode      string                   // "inotify" (or "fsnotify") or "polling"
	problem   string                   // why polling, for Problem
	scopeDirs int                      // a partial tree's directories watched

	syncReq   chan syncRequest
	stop      chan struct{} // closed by Close
	done      chan struct{} // closed when the loop has exited
	closeOnce sync.Once
}

// loop is the state of a Watcher's goroutine (run): the watch, the
// snapshot of the tree, the ignore rules, the pending events and the
// timers. Made by New, which walks the tree with it before starting the
// goroutine; after that only the goroutine touches it, and it ends with it
// (shutdown). It reaches the shared state through w.
type loop struct {
	w       *Watcher
	root    Dir
	opts    Options
	log     *slog.Logger
	journal *journal

	src        eventSource // nil in polling mode
	tree       treeSnapshot
	ign        *Ignorer
	pend       pendingEvents
	limitErr   error       // a watch limit met while adding watches; handled after the flush
	timer      *time.Timer // debounce
	pollTimer  *time.Timer // polling mode: next scan
	retryTimer *time.Timer // polling mode: next attempt to watch again
	retryIn    time.Duration

	maxDirs int             // the first walk's limit (0 afterwards: directories created later are always watched)
	tooMany bool            // the first walk met maxDirs
	scope   map[string]bool // a partial tree's directories to watch (scope.go); nil: all of them
}

// New watches the workspace at root: it walks the tree (skipping
// ignored paths), watches every directory and starts the loop. A tree of
// more than MaxDirs directories is watched in part (see Touch). When the OS
// refuses the watches (the inotify limits) it scans periodically instead
// and Problem says why and how to fix it; it fails only if the root cannot
// be read at all.
func New(root Dir, opts Options) (*Watcher, error) {
	if _, err := os.ReadDir(root.Path()); err != nil {
		return nil, fmt.Errorf("workspace: watch %s: %w", root.Path(), err)
	}
	o := opts.withDefaults()
	w := &Watcher{
		root:      root,
		opts:      o,
		log:       o.Logger,
		journal:   newJournal(o.JournalSize),
		events:    newEventLog(),
		touchWake: make(chan struct{}, 1),
		self:      make(map[string]selfNote),
		fences:    make(map[uint64]chan struct{}),
		mode:      watchMode,
		syncReq:   make(chan syncRequest),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	l := &loop{
		w:          w,
		root:       root,
		opts:       o,
		log:        o.Logger,
		journal:    w.journal,
		tree:       make(treeSnapshot),
		ign:        NewIgnorer(root, o.Ignore),
		pend:       newPendingEvents(o.MaxPending),
		timer:      stoppedTimer(),
		pollTimer:  stoppedTimer(),
		retryTimer: stoppedTimer(),
	}
	w.loop = l
	if dir, err := makeFenceDir(o.FenceDir); err != nil {
		w.log.Warn("workspace: no marker directory; Sync will rescan", "err", err)
	} else {
		w.fenceDir = dir
		if rel := root.Rel(dir); !filepath.IsAbs(rel) {
			l.ign.skip = rel
		}
	}
	src, srcErr := o.newSource()
	if srcErr == nil {
		l.src = src
		if w.fenceDir != "" {
			if err := src.Add(w.fenceDir); isWatchLimit(err) {
				l.limitErr = err
			} else if err != nil {
				// A marker nobody watches would make Sync wait forever.
				w.log.Warn("workspace: cannot watch the marker directory; Sync will rescan", "dir", w.fenceDir, "err", err)
				os.RemoveAll(w.fenceDir)
				w.fenceDir = ""
			}
		}
	}
	var b flushBatch
	l.maxDirs = max(o.MaxDirs, 0)
	fenceErr := l.limitErr
	l.watchDir("", &b, false)
	l.maxDirs = 0
	if l.tooMany {
		// A home or a disk rather than a project, or a monorepo: watch
		// what the sessions use of it.
		l.narrow(fenceErr)
	}
	switch {
	case srcErr != nil && isWatchLimit(srcErr):
		l.startPolling(limitProblem(root.Path(), srcErr, len(l.tree), o.PollInterval.String()))
	case srcErr != nil:
		l.startPolling(fmt.Sprintf("cannot watch %s for changes (%v); scanning for changes every %s instead", root.Path(), srcErr, o.PollInterval))
	case l.limitErr != nil:
		l.startPolling(limitProblem(root.Path(), l.limitErr, len(l.tree), o.PollInterval.String()))
	}
	go l.run()
	return w, nil
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// Close stops the watcher and waits for its goroutine (and fsnotify's) to
// end. Pending Syncs return ErrClosed. Safe to call more than once.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() { close(w.stop) })
	<-w.done
	return nil
}

// Mode says how changes are found: "inotify" ("fsnotify" off Linux) or
// "polling" (see Problem).
func (w *Watcher) Mode() string {
	w.fenceMu.Lock()
	defer w.fenceMu.Unlock()
	return w.mode
}

// Problem says, in words a user can act on, why the watcher is degraded;
// "" when it is not.
func (w *Watcher) Problem() string {
	w.fenceMu.Lock()
	defer w.fenceMu.Unlock()
	return w.problem
}

// Cursor returns the position after the newest change: Changes(Cursor())
// returns only what happens from now on.
func (w *Watcher) Cursor() uint64 { return w.journal.cursor() }

// Changes returns the changes journaled at or after since, collapsed to one
// per path and sorted by path, and the cursor to pass next time. overflow
// says changes after since were compacted away: anything may have changed,
// and changes lists only what is left. since 0 means from the beginning.
func (w *Watcher) Changes(since uint64) (changes []Change, next uint64, overflow bool) {
	raw, next, overflow := w.journal.since(since)
	return collapse(raw), next, overflow
}

// run is the loop: it drains events and errors without blocking on
// anything slow, flushes after the debounce, serves Sync, and in polling
// mode scans.
func (l *loop) run() {
	defer close(l.w.done)
	defer l.shutdown()
	for {
		var events <-chan fsnotify.Event
		var errs <-chan error
		if l.src != nil {
			events, errs = l.src.Events(), l.src.Errors()
		}
		select {
		case <-l.w.stop:
			return
		case ev, ok := <-events:
			if !ok {
				l.enterPolling(fmt.Sprintf("the file watcher of %s stopped; scanning for changes every %s instead", l.root.Path(), l.opts.PollInterval))
				continue
			}
			l.onEvent(ev)
		case err, ok := <-errs:
			if !ok {
				continue // the events channel closes too
			}
			l.onError(err)
		case <-l.timer.C:
			if l.pend.empty() {
				continue
			}
			if due := l.pend.due(l.opts.Quiet, l.opts.MaxWait); time.Now().Before(due) {
				l.timer.Reset(time.Until(due))
				continue
			}
			if l.rootRemoved() {
				continue
			}
			l.flush()
		case req := <-l.w.syncReq:
			if req.rescan {
				l.pend.rescanAll()
			}
			l.flush()
			close(req.done)
		case <-l.w.touchWake:
			l.applyTouches()
		case <-l.pollTimer.C:
			l.poll()
		case <-l.retryTimer.C:
			l.retryWatch()
		}
	}
}

func (l *loop) onEvent(ev fsnotify.Event) {
	if l.w.fenceDir != "" && strings.HasPrefix(ev.Name, l.w.fenceDir+string(filepath.Separator)) {
		if ev.Has(fsnotify.Create) {
			if n, err := strconv.ParseUint(filepath.Base(ev.Name), 10, 64); err == nil {
				if l.rootRemoved() {
					return // enterPolling released the Syncs
				}
				l.flush()
				l.w.completeFences(n)
			}
		}
		return
	}
	root := l.root.Path()
	if ev.Name == root {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			// The root itself is gone, and its watch with it.
			l.enterPolling(rootGoneProblem(l.root.Path(), l.opts.PollInterval))
		}
		return
	}
	rest, ok := strings.CutPrefix(ev.Name, root+string(filepath.Separator))
	if !ok || rest == "" {
		return
	}
	l.pend.add(filepath.ToSlash(rest), ev.Op)
	l.w.events.add(filepath.ToSlash(rest), ev.Op)
	l.armTimer()
}

// rootRemoved checks, before a flush while watching, whether the root
// directory is gone from its path, and if so switches to polling for it.
// inotify reports a removed directory only once nothing holds it open, and
// the Root's handle does; a moved one is reported at once.
func (l *loop) rootRemoved() bool {
	if l.src == nil {
		return false // polling already
	}
	if _, err := os.Lstat(l.root.Path()); !vanished(err) {
		return false
	}
	l.enterPolling(rootGoneProblem(l.root.Path(), l.opts.PollInterval))
	return true
}

// rootGoneProblem is Problem while the workspace directory at root is
// gone, polled for every interval.
func rootGoneProblem(root string, every time.Duration) string {
	return fmt.Sprintf("the workspace directory %s was removed or moved; scanning for it every %s", root, every)
}

// onError rescans at once: events were lost, Sync markers' among them
// perhaps, so the Syncs waiting when the rescan starts are released by it.
func (l *loop) onError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		l.log.Info("workspace: event queue overflowed; rescanning", "root", l.root.Path())
	} else {
		l.log.Warn("workspace: watch error; rescanning", "root", l.root.Path(), "err", err)
	}
	l.w.events.lose()
	l.w.fenceMu.Lock()
	waiting := l.w.fenceSeq
	l.w.fenceMu.Unlock()
	l.pend.rescanAll()
	l.flush()
	l.w.completeFences(waiting)
}

// armTimer stamps an event and starts the debounce timer for the first one
// since the last flush (the timer re-arms itself until the batch is due).
func (l *loop) armTimer() {
	if l.pend.note(time.Now()) {
		l.timer.Reset(l.opts.Quiet)
	}
}

// shutdown releases what the loop owns, on its way out.
func (l *loop) shutdown() {
	l.timer.Stop()
	l.pollTimer.Stop()
	l.retryTimer.Stop()
	if l.src != nil {
		l.src.Close()
		l.src = nil
	}
	if l.w.fenceDir != "" {
		os.RemoveAll(l.w.fenceDir)
	}
}
