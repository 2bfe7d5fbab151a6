package watch

import (
	"context"
	"sort"
	"sync"
)

// ChangeOp is what happened to a path.
type ChangeOp uint8

const (
	Created  ChangeOp = iota + 1 // the path did not exist and now does
	Modified                     // a file's content (or size, or mtime) changed
	Deleted                      // the path existed and now does not
	Renamed                      // the path is Change.Old moved to Change.Path
)

func (op ChangeOp) String() string {
	switch op {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	case Renamed:
		return "renamed"
	}
	return "unknown"
}

// Change is one entry of a Watcher's journal: a plain value.
type Change struct {
	Seq  uint64   // position in the journal; collapsed changes carry their last
	Op   ChangeOp // what happened
	Path string   // relative to the workspace root, slash-separated
	Old  string   // Renamed: the path it had before
	Dir  bool     // the path is a directory
}

// journal is the sequence-numbered list of changes a Watcher has seen.
// Created with its Watcher and lives as long; the loop appends, any
// goroutine reads. It keeps at most max entries: older ones are compacted
// away, and a reader whose cursor fell off the end is told so.
type journal struct {
	mu      sync.Mutex    // guards every field below
	entries []Change      // oldest first; Seq consecutive
	next    uint64        // Seq of the next change appended; starts at 1
	floor   uint64        // the lowest cursor that still sees every later change
	max     int           // entries kept at most (set once)
	grew    chan struct{} // closed, and replaced, whenever entries are appended
}

func newJournal(max int) *journal {
	return &journal{next: 1, floor: 1, max: max, grew: make(chan struct{})}
}

// append records cs in order, numbering them.
func (j *journal) append(cs []Change) {
	if len(cs) == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range cs {
		c.Seq = j.next
		j.next++
		j.entries = append(j.entries, c)
	}
	if len(j.entries) > j.max {
		// Compact a quarter at a time, so appends stay amortised O(1).
		keep := max(1, j.max*3/4)
		drop := len(j.entries) - keep
		j.floor = j.entries[drop].Seq
		n := copy(j.entries, j.entries[drop:])
		clear(j.entries[n:])
		j.entries = j.entries[:n]
	}
	close(j.grew)
	j.grew = make(chan struct{})
}

// cursor returns the Seq the next change will get.
func (j *journal) cursor() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next
}

// since returns the raw changes numbered since or later, the cursor after
// them, and whether changes after since were compacted away.
func (j *journal) since(since uint64) (raw []Change, next uint64, overflow bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	since = max(since, 1)
	if since < j.floor {
		since, overflow = j.floor, true
	}
	if since >= j.next {
		return nil, j.next, overflow
	}
	first := j.entries[0].Seq
	return append([]Change(nil), j.entries[since-first:]...), j.next, overflow
}

// wait blocks until the journal holds a change numbered since or later:
// how tests see the debounce flush on its own (the daemon Syncs instead).
func (j *journal) wait(ctx context.Context, since uint64, stopped <-chan struct{}) (uint64, error) {
	for {
		j.mu.Lock()
		next, grew := j.next, j.grew
		j.mu.Unlock()
		if next > since {
			return next, nil
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return next, ctx.Err()
		case <-stopped:
			return next, ErrClosed
		}
	}
}

// collapse folds raw changes, oldest first, into at most one per path,
// saying what differs between the start and the end of the run: created
// then modified is created, created then deleted is nothing, deleted then
// created is modified, a → b then b → c is a → c. The result is sorted by
// path.
func collapse(raw []Change) []Change {
	// vacated marks a path a rename moved away from: implied by the rename,
	// not listed.
	const vacated ChangeOp = 0
	state := make(map[string]*Change, len(raw))
	set := func(c Change) { cc := c; state[c.Path] = &cc }
	for _, c := range raw {
		s := state[c.Path]
		switch c.Op {
		case Created:
			switch {
			case s == nil:
				set(c)
			case s.Op == Deleted && !s.Dir && !c.Dir:
				s.Op, s.Seq = Modified, c.Seq
			case s.Op == Deleted || s.Op == vacated:
				// Gone, then back (as a file where a directory was, or after a rename away).
				set(c)
			default:
				s.Seq = c.Seq
			}
		case Modified:
			switch {
			case s == nil || s.Op == Deleted || s.Op == vacated:
				set(c)
			default: // Created, Modified and Renamed stay what they are
				s.Seq = c.Seq
			}
		case Deleted:
			switch {
			case s == nil || s.Op == Modified:
				set(c)
			case s.Op == Created:
				delete(state, c.Path)
			case s.Op == Renamed:
				delete(state, c.Path)
				if o := state[s.Old]; o != nil && o.Op == vacated {
					set(Change{Seq: c.Seq, Op: Deleted, Path: s.Old, Dir: s.Dir})
				}
			}
		case Renamed:
			from := state[c.Old]
			next := Change{Seq: c.Seq, Op: Renamed, Path: c.Path, Old: c.Old, Dir: c.Dir}
			switch {
			case from == nil || from.Op == Modified:
				set(Change{Seq: c.Seq, Op: vacated, Path: c.Old, Dir: c.Dir})
			case from.Op == Created:
				delete(state, c.Old)
				next.Op, next.Old = Created, ""
			case from.Op == Renamed:
				delete(state, c.Old)
				next.Old = from.Old
			default: // renaming what is gone: the journal missed something
				next.Op, next.Old = Created, ""
			}
			if next.Op == Renamed && next.Old == next.Path {
				// Moved back where it started: at most its content changed.
				next.Op, next.Old = Modified, ""
			}
			set(next)
		}
	}
	out := make([]Change, 0, len(state))
	for _, s := range state {
		if s.Op != vacated {
			out = append(out, *s)
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Path < out[k].Path })
	return out
}
