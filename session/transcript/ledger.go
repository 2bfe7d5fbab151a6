package transcript

import (
	"encoding/json"

	"github.com/hearthd/hearth/store"
)

// ledger is the commit path of one transcript: the items it has committed
// (in the store, in order), what it has staged for the next commit (tool
// outputs, read-set updates, and a response's end when the response only
// calls reads), and what waits to hear that staged items are stored (what
// the editor is told of a tool call).
//
// The invariant it keeps is that what the editor was told is in the store:
//
//   - every committed item is in the store; a request carries only
//     committed items and the batch committed with its row (batch, stored);
//   - a waiter runs once: after every item staged up to its own is stored
//     (true), or when they are dropped (false), never before;
//   - a staged response's end and output lead what is staged
//     (stageResponse refuses when items or an end are staged already), so
//     the store never holds an output before the call it answers;
//   - a failed commit drops everything staged, and the calls its outputs
//     answered are repaired before the next request (unanswered).
//
// A ledger does no I/O and has no lock of its own: it is guarded by its
// Transcript's mu, and the Transcript commits a batch to the store between
// batch and stored (or dropped). It lives as long as its Transcript; a
// compaction or a rewind replaces committed with the new view.
type ledger struct {
	committed  []json.RawMessage // the model's view (after a compaction, see layout)
	staged     []store.NewItem
	seen       []store.SeenWrite
	end        *store.Completion // a staged response's end: its output leads staged
	lead       int               // how many staged items are that response's output
	waiting    []waiter
	unanswered bool // a commit failed: calls without an output to repair before the next request
}

// waiter is a function told once the first upTo staged items are stored.
type waiter struct {
	upTo int
	done func(stored bool)
}

// stage queues items and read-set updates for the next commit; done (may be
// nil) is told when the items are stored or dropped.
func (l *ledger) stage(items []store.NewItem, seen []store.SeenWrite, done func(stored bool)) {
	l.staged = append(l.staged, items...)
	l.seen = append(l.seen, seen...)
	if done != nil {
		l.waiting = append(l.waiting, waiter{upTo: len(l.staged), done: done})
	}
}

// stageSteered stages the items steered in (Steering.take), after what is
// staged.
func (l *ledger) stageSteered(q []steered) {
	for _, s := range q {
		l.stage([]store.NewItem{s.item}, nil, s.done)
	}
}

// stageResponse stages a response's end and output items, which must lead:
// it stages nothing and reports false when items or an end are staged.
func (l *ledger) stageResponse(end *store.Completion, out []store.NewItem) bool {
	if len(l.staged) > 0 || l.end != nil {
		return false
	}
	l.staged, l.end, l.lead = out, end, len(out)
	return true
}

// stageHeld stages items the server holds for the next request's input,
// ahead of the tool outputs staged already (behind a staged response's
// output): where the server prepends them.
func (l *ledger) stageHeld(items []store.NewItem) {
	at := l.lead
	staged := make([]store.NewItem, 0, len(l.staged)+len(items))
	l.staged = append(append(append(staged, l.staged[:at]...), items...), l.staged[at:]...)
	for i := range l.waiting {
		if l.waiting[i].upTo > at {
			l.waiting[i].upTo += len(items)
		}
	}
}

// batch is what the next commit takes: everything staged.
func (l *ledger) batch() store.Staged {
	return store.Staged{End: l.end, Items: l.staged, Seen: l.seen}
}

// stored records that b, a batch, is in the store: its items are committed
// and its read-set updates and end done. It returns what waited for them,
// to be called once, outside the lock.
func (l *ledger) stored(b store.Staged) (tell func()) {
	for _, it := range b.Items {
		l.committed = append(l.committed, it.Data)
	}
	n := len(b.Items)
	l.staged = l.staged[n:]
	l.lead = max(0, l.lead-n)
	l.seen = l.seen[len(b.Seen):]
	if b.End == l.end {
		l.end = nil
	}
	var ready []waiter
	rest := l.waiting[:0]
	for _, w := range l.waiting {
		if w.upTo <= n {
			ready = append(ready, w)
		} else {
			rest = append(rest, waiter{upTo: w.upTo - n, done: w.done})
		}
	}
	l.waiting = rest
	return func() {
		for _, w := range ready {
			w.done(true)
		}
	}
}

// dropped records that committing what is staged failed: nothing staged
// survives, the calls its outputs answered are repaired before the next
// request, and what waited is told the items were lost (tell, to be called
// outside the lock). lostEnd: a response's end was staged, so the server
// holds a response the store does not.
func (l *ledger) dropped() (tell func(), lostEnd bool) {
	waiting, lostEnd := l.waiting, l.end != nil
	l.staged, l.seen, l.end, l.waiting, l.lead = nil, nil, nil, nil, 0
	l.unanswered = true
	return func() {
		for _, w := range waiting {
			w.done(false)
		}
	}, lostEnd
}

// empty reports whether nothing is staged.
func (l *ledger) empty() bool { return len(l.staged) == 0 && len(l.seen) == 0 && l.end == nil }

// next is the transcript index the next staged item will have.
func (l *ledger) next() int { return len(l.committed) + len(l.staged) }
