package watch

import (
	"fmt"
	"strings"
	"time"
)

// A tree with more directories than Options.MaxDirs (outside ignored
// paths) is watched in part: the first walk stops at the limit and starts
// again with the root alone, and from then on the scope grows with what the
// sessions use (Touch): each directory named, and its parents up to the
// root, are watched and listed. A watched directory reports its own entries
// (a subdirectory created or deleted in it too); what happens inside an
// unwatched subdirectory is not seen. The scope never shrinks while the
// Watcher lives, and holds at most MaxDirs directories.

// touch is one path a session's tool used, not before since.
type touch struct {
	since time.Time
	rel   string
}

// narrow is New's step for a tree past the limit: it forgets the
// first walk (its watches too) and watches the root alone. A watch limit
// the walk met is forgotten with its watches; limitErr is what was met
// before it (the marker directory's).
func (l *loop) narrow(limitErr error) {
	if l.src != nil {
		for dir := range l.tree {
			_ = l.src.Remove(l.abs(dir))
		}
	}
	l.tree = make(treeSnapshot)
	l.tooMany, l.limitErr = false, limitErr
	l.scope = map[string]bool{"": true}
	l.w.partial.Store(true)
	var b flushBatch
	l.watchDir("", &b, false)
	l.noteScope()
}

// mayWatch says whether watchDir should watch dir: not once the first walk
// met its limit (it then stops, and New narrows), and, in a partial
// tree, only a directory in scope.
func (l *loop) mayWatch(dir string) bool {
	if l.maxDirs > 0 && len(l.tree) >= l.maxDirs {
		l.tooMany = true
		return false
	}
	return l.scope == nil || l.scope[dir]
}

// Touch tells the Watcher of a partial tree that a session's tool used the
// workspace paths rels (read, wrote, listed or found them) no earlier than
// since: their directories, and the parents of those, are watched from now
// on. A file whose directory this makes watched and whose mtime is since
// or later (within a second) is journaled as modified, since a change
// between the tool's look and the new watch would otherwise be missed (for
// a file the model has seen unchanged, the delta then says nothing). It
// does not wait: the loop applies it before its next flush, so a Sync after
// Touch sees its effect. A Watcher of the whole tree ignores it.
func (w *Watcher) Touch(since time.Time, rels ...string) {
	if !w.partial.Load() || len(rels) == 0 {
		return
	}
	w.touchMu.Lock()
	for _, r := range rels {
		if r = w.cleanRel(r); r != "" && len(w.touched) < maxTouches {
			w.touched = append(w.touched, touch{since: since, rel: r})
		}
	}
	w.touchMu.Unlock()
	select {
	case w.touchWake <- struct{}{}:
	default:
	}
}

// mtimeSlack allows for the kernel stamping mtimes from a clock that
// lags the one since is read from by up to a tick.
const mtimeSlack = time.Second

// maxTouches bounds the paths waiting for the loop (a grep's matches, say).
const maxTouches = 1 << 16

// applyTouches widens the scope to the paths Touch queued. Run by the loop.
func (l *loop) applyTouches() {
	l.w.touchMu.Lock()
	ts := l.w.touched
	l.w.touched = nil
	l.w.touchMu.Unlock()
	if len(ts) == 0 || l.scope == nil {
		return
	}
	var b flushBatch
	fresh := map[string]bool{}
	for _, t := range ts {
		l.widen(t.rel, &b, fresh)
	}
	for _, t := range ts {
		dir, name := splitRel(t.rel)
		if m, ok := l.tree[dir][name]; ok && fresh[dir] && !m.dir && m.mtime >= t.since.Add(-mtimeSlack).UnixNano() {
			b.modified = append(b.modified, found{rel: t.rel, m: m})
		}
	}
	l.commit(&b)
	l.noteScope()
	if l.limitErr != nil && l.src != nil {
		l.enterPolling(limitProblem(l.root.Path(), l.limitErr, len(l.tree), l.opts.PollInterval.String()))
	}
}

// widen puts rel and its parent directories in scope and watches those
// that exist, from the root down, within the limit. fresh collects the
// directories it began to watch (and some that are still not watched).
func (l *loop) widen(rel string, b *flushBatch, fresh map[string]bool) {
	// In scope even where nothing is there yet: when it appears, the event
	// that says so gets it watched.
	for i, c := range rel + "/" {
		if c == '/' {
			l.scope[rel[:i]] = true
			if l.tree[rel[:i]] == nil {
				fresh[rel[:i]] = true // if it gets watched below
			}
		}
	}
	dir := ""
	for _, name := range strings.Split(rel, "/") {
		child := joinRel(dir, name)
		m, ok := l.tree[dir][name]
		if !ok || !m.dir {
			return // not a directory (the file itself), or not listed yet
		}
		if l.tree[child] == nil {
			if len(l.tree) >= l.opts.MaxDirs {
				return // full: the notice says the scope is partial anyway
			}
			l.watchDir(child, b, false) // what is in it is not news
		}
		dir = child
	}
}

// noteScope publishes how many directories a partial tree watches.
func (l *loop) noteScope() {
	l.w.fenceMu.Lock()
	l.w.scopeDirs = len(l.tree)
	l.w.fenceMu.Unlock()
}

// Partial reports whether the tree has more directories than MaxDirs, so
// that only part of it is watched, and how many directories are.
func (w *Watcher) Partial() (partial bool, watched int) {
	if !w.partial.Load() {
		return false, 0
	}
	w.fenceMu.Lock()
	defer w.fenceMu.Unlock()
	return true, w.scopeDirs
}

// ScopeNote is what the model must know of a partial tree: which changes
// it will hear of. "" when the whole tree is watched.
func (w *Watcher) ScopeNote() string {
	if !w.partial.Load() {
		return ""
	}
	return fmt.Sprintf("This workspace has more than %d directories, too many to watch for changes: hearth reports changes "+
		"only in the directories your tools have read, written, listed or searched, and in their parent directories. "+
		"A change anywhere else is not reported; read a file again before relying on what you read of it earlier.", w.opts.MaxDirs)
}

// State says how the workspace is watched, for status and for a notice:
// the mode ("inotify", "fsnotify" or "polling") and why it is degraded, or
// for a partial tree how much of it is watched (and why it polls, if it
// does).
func (w *Watcher) State() string {
	w.fenceMu.Lock()
	mode, problem, dirs := w.mode, w.problem, w.scopeDirs
	w.fenceMu.Unlock()
	s := mode
	if problem != "" {
		s += ": " + problem
	}
	if w.partial.Load() {
		noun := "directories"
		if dirs == 1 {
			noun = "directory"
		}
		p := fmt.Sprintf("partial: %d %s watched, of a tree of more than %d: those the sessions' tools used, "+
			"and their parents; changes elsewhere are not reported", dirs, noun, w.opts.MaxDirs)
		if problem != "" {
			p += "; " + s
		}
		s = p
	}
	return s
}
