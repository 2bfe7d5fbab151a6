package watch

import (
	"path"
	"sort"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// The journal says what changed as the model should hear it: ignored
// paths and .git left out, debounced, collapsed. The plant guard
// (workspace/sandbox) needs the opposite: every entry a command created,
// removed or renamed, ignored ones and .git included, so it can look at
// those directories instead of stat'ing the whole tree. The event log
// keeps the paths the OS's events named, as they came, for that.

// maxEventLog bounds the event log; past it the oldest quarter is
// dropped and a reader from before is told its window is incomplete.
const maxEventLog = 1 << 16

// lostEvent marks the place in the event log where events were lost.
const lostEvent = "\x00"

// eventLog is the raw event paths of one Watcher, and the directories it
// found ignored. Created with its Watcher and lives as long; the loop
// writes, any goroutine reads.
type eventLog struct {
	mu      sync.Mutex
	base    uint64          // position of paths[0]; positions start at 1
	paths   []string        // root-relative, slash-separated; lostEvent where events were lost
	ignored map[string]bool // ignored directories found (never watched, so no event comes from inside)
}

func newEventLog() *eventLog { return &eventLog{base: 1, ignored: map[string]bool{}} }

// add logs rel, an entry an event named, when the event can change what
// a directory lists (created, removed, renamed) or names an entry .git
// (a gitdir file rewritten in place).
func (e *eventLog) add(rel string, op fsnotify.Op) {
	if !op.Has(fsnotify.Create) && !op.Has(fsnotify.Remove) && !op.Has(fsnotify.Rename) && path.Base(rel) != ".git" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.paths); n > 0 && e.paths[n-1] == rel {
		return
	}
	e.push(rel)
}

// lose records that events were lost here: a window across it is
// incomplete.
func (e *eventLog) lose() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.push(lostEvent)
}

// push appends p, compacting when full; e.mu is held.
func (e *eventLog) push(p string) {
	e.paths = append(e.paths, p)
	if len(e.paths) > maxEventLog {
		drop := len(e.paths) / 4
		n := copy(e.paths, e.paths[drop:])
		clear(e.paths[n:])
		e.paths = e.paths[:n]
		e.base += uint64(drop)
	}
}

// noteIgnored records rel, a directory the walk found ignored.
func (e *eventLog) noteIgnored(rel string) {
	e.mu.Lock()
	e.ignored[rel] = true
	e.mu.Unlock()
}

// EventMark is the position after the newest logged event: EventPaths
// from it names only what happens from now on.
func (w *Watcher) EventMark() uint64 {
	w.events.mu.Lock()
	defer w.events.mu.Unlock()
	return w.events.base + uint64(len(w.events.paths))
}

// EventPaths returns the paths (root-relative, slash-separated, sorted,
// each once) the OS's events named since mark, ignored ones and .git
// included: every entry created, removed or renamed in a watched
// directory, and any change to an entry named .git. Call Sync first for
// the events of what happened before the call. next is the mark to pass
// next time. complete is false when the list may miss a change: the
// watcher polls, watches the tree in part or has no Sync marker, events
// were lost since mark (a queue overflow, a watch error), or the log
// dropped them.
func (w *Watcher) EventPaths(mark uint64) (paths []string, next uint64, complete bool) {
	w.fenceMu.Lock()
	complete = !w.polling && w.fenceDir != "" && w.mode != "polling"
	w.fenceMu.Unlock()
	complete = complete && !w.partial.Load()
	e := w.events
	e.mu.Lock()
	defer e.mu.Unlock()
	next = e.base + uint64(len(e.paths))
	if mark < e.base {
		return nil, next, false
	}
	seen := map[string]bool{}
	for _, p := range e.paths[min(mark-e.base, uint64(len(e.paths))):] {
		if p == lostEvent {
			complete = false
		} else if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths, next, complete
}

// IgnoredDirs returns the directories the watcher found ignored, sorted:
// it does not watch them, so no event comes from inside them. A
// directory removed or no longer ignored since may be listed.
func (w *Watcher) IgnoredDirs() []string {
	e := w.events
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.ignored))
	for d := range e.ignored {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
