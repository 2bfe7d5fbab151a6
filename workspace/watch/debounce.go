package watch

import (
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pendingEvents is what the events since the last flush named, in bounded
// memory: up to max paths; past that the paths collapse to their
// directories (each to be listed again), and past max directories to one
// full rescan. It gets coarser under load, never loses a change. Owned by
// the loop goroutine; emptied by every flush.
type pendingEvents struct {
	files map[string]fsnotify.Op // path → the events' ops, or'ed
	dirs  map[string]struct{}    // directories to list again
	full  bool                   // rescan everything
	max   int                    // bound on len(files) and on len(dirs)

	first, last time.Time // the first and the last event since the flush
}

func newPendingEvents(max int) pendingEvents {
	return pendingEvents{files: make(map[string]fsnotify.Op), dirs: make(map[string]struct{}), max: max}
}

func (p *pendingEvents) empty() bool { return !p.full && len(p.files) == 0 && len(p.dirs) == 0 }

// add records that an event named rel (not the root).
func (p *pendingEvents) add(rel string, op fsnotify.Op) {
	if p.full {
		return
	}
	dir, _ := splitRel(rel)
	if _, ok := p.dirs[dir]; ok {
		return // its directory is listed again anyway
	}
	p.files[rel] |= op
	if len(p.files) <= p.max {
		return
	}
	for f := range p.files {
		d, _ := splitRel(f)
		p.dirs[d] = struct{}{}
	}
	clear(p.files)
	if len(p.dirs) > p.max {
		p.rescanAll()
	}
}

// rescanAll replaces whatever is pending with a full rescan.
func (p *pendingEvents) rescanAll() {
	p.full = true
	clear(p.files)
	clear(p.dirs)
}

func (p *pendingEvents) reset() {
	p.full = false
	clear(p.files)
	clear(p.dirs)
}

// note stamps an event's arrival; it reports whether it is the first since
// the last flush (the debounce timer then needs arming).
func (p *pendingEvents) note(now time.Time) (first bool) {
	first = p.first.IsZero()
	if first {
		p.first = now
	}
	p.last = now
	return first
}

// due returns when the pending paths should be flushed: after quiet
// without events, and at most maxWait after the first one.
func (p *pendingEvents) due(quiet, maxWait time.Duration) time.Time {
	d := p.last.Add(quiet)
	if limit := p.first.Add(maxWait); limit.Before(d) {
		d = limit
	}
	return d
}

// flush compares what the pending events named with the disk, in two
// phases (see snapshot.go), journals the differences and empties pending.
// A watch limit met on the way turns the Watcher to polling.
func (l *loop) flush() {
	l.applyTouches() // a Sync after Touch sees the paths watched
	p := &l.pend
	p.first, p.last = time.Time{}, time.Time{}
	if p.empty() {
		return
	}
	var b flushBatch
	if p.full {
		l.checkDir("", &b, true, false)
	} else {
		// Parents before children, so a directory replaced or removed is
		// dealt with once, as a whole.
		paths := make([]string, 0, len(p.files)+len(p.dirs))
		for f := range p.files {
			paths = append(paths, f)
		}
		for d := range p.dirs {
			paths = append(paths, d+"/")
		}
		slices.Sort(paths)
		// A .gitignore changes how its siblings are judged: load it first,
		// then make its directory's subtree agree quietly.
		var ignoreChanged []string
		for _, f := range paths {
			if dir, name := splitRel(f); name == ".gitignore" && l.tree[dir] != nil && l.ign.Load(dir) {
				ignoreChanged = append(ignoreChanged, dir)
			}
		}
		for _, f := range paths {
			if d, ok := strings.CutSuffix(f, "/"); ok {
				l.checkDir(d, &b, false, false)
			} else {
				l.checkPath(f, p.files[f], &b)
			}
		}
		for _, dir := range ignoreChanged {
			l.checkDir(dir, &b, true, true)
		}
	}
	p.reset()
	l.watchNewDirs(&b)
	l.commit(&b)
	if l.limitErr != nil {
		l.enterPolling(limitProblem(l.root.Path(), l.limitErr, len(l.tree), l.opts.PollInterval.String()))
	}
}
