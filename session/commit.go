package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hearthd/hearth/store"
)

// ledger is the commit path of one conversation: the items it has
// committed (its transcript: in the store, in order), what it has staged
// for the next commit (tool outputs, read-set updates, and a response's end
// when the response only calls reads), and what waits to hear that staged
// items are stored (what the editor is told of a tool call).
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
// Conversation's mu, and the Conversation commits a batch to the store
// between batch and stored (or dropped). It lives as long as its
// Conversation; a compaction replaces committed with the compacted view.
type ledger struct {
	committed  []json.RawMessage // the model's view (after a compaction, see Conversation.prefix)
	staged     []store.NewItem
	seen       []store.SeenWrite
	end        *store.Completion // a staged response's end: its output leads staged
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

// stageResponse stages a response's end and output items, which must lead:
// it stages nothing and reports false when items or an end are staged.
func (l *ledger) stageResponse(end *store.Completion, out []store.NewItem) bool {
	if len(l.staged) > 0 || l.end != nil {
		return false
	}
	l.staged, l.end = out, end
	return true
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
	l.staged, l.seen, l.end, l.waiting = nil, nil, nil, nil
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

// commit writes items to the store, then appends them to the transcript:
// an item is never sent before it is durable.
func (c *Conversation) commit(ctx context.Context, turnID int64, items []store.NewItem) error {
	if len(items) == 0 {
		return nil
	}
	if _, err := c.db.AppendItems(ctx, c.id, turnID, items); err != nil {
		return storeErr(fmt.Errorf("commit %d item(s): %w", len(items), err))
	}
	c.mu.Lock()
	for _, it := range items {
		c.ledger.committed = append(c.ledger.committed, it.Data)
	}
	c.mu.Unlock()
	return nil
}

// mend answers the calls whose outputs a failed commit dropped
// (ledger.unanswered): such a call would make every request invalid.
func (c *Conversation) mend(ctx context.Context, turnID int64) error {
	c.mu.Lock()
	broken := c.ledger.unanswered
	c.mu.Unlock()
	if !broken {
		return nil
	}
	if err := c.repair(ctx, turnID); err != nil {
		return err
	}
	c.mu.Lock()
	c.ledger.unanswered = false
	c.mu.Unlock()
	return nil
}

// stage queues items, and read-set updates, for the next commit: the next
// request's (commitRequest), or flush's when no request takes them.
func (c *Conversation) stage(items []store.NewItem, seen ...store.SeenWrite) {
	c.stageThen(items, seen, nil)
}

// stageThen is stage, with done called once the items are in the store
// (true) or lost (false): what the editor is told of a staged output waits
// for it, so it never hears of an output a crash could lose.
func (c *Conversation) stageThen(items []store.NewItem, seen []store.SeenWrite, done func(stored bool)) {
	c.mu.Lock()
	c.ledger.stage(items, seen, done)
	c.mu.Unlock()
}

// flush commits what is staged when no request will take it (the turn
// ended, was cancelled or failed, or a call that may change something must
// be stored at once). If that fails the staged outputs are dropped, and the
// calls they answered are repaired before the next request.
func (c *Conversation) flush(ctx context.Context, turnID int64) error {
	c.mu.Lock()
	b, empty := c.ledger.batch(), c.ledger.empty()
	c.mu.Unlock()
	if empty {
		return nil
	}
	if _, err := c.db.CommitStaged(ctx, c.id, turnID, b); err != nil {
		c.mu.Lock()
		tell, lostEnd := c.ledger.dropped()
		if lostEnd {
			c.base = nil // the server holds a response the store lost
		}
		c.mu.Unlock()
		tell()
		return storeErr(fmt.Errorf("commit %d item(s): %w", len(b.Items), err))
	}
	c.mu.Lock()
	tell := c.ledger.stored(b)
	c.mu.Unlock()
	tell()
	return nil
}
