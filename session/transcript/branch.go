package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hearthd/hearth/store"
)

// The transitions the next features need: steering a running response
// (Steer), a fork at a turn (Fork) and a rewind to a turn (Rewind).

// ErrCompacted: a fork or rewind at a turn the last compaction replaced
// by its summary; the model's view of that point is gone.
var ErrCompacted = errors.New("transcript: that turn was compacted")

// ErrBusy: a fork or rewind while items are staged (a turn is running).
var ErrBusy = errors.New("transcript: a turn is running")

// steered is an item sent while a response ran, with what waits for it.
type steered struct {
	item store.NewItem
	done func(stored bool)
}

// Steer queues item, a user's message sent while a response runs, for the
// request after that response: it joins what is staged when the next
// request takes its batch (Next; or Flush at the turn's end), behind the
// response's output and the outputs of the calls it made, and is
// committed with that request's row, where the server commits it (the
// successor's input). done (may be nil) is told as Stage's.
func (t *Transcript) Steer(item json.RawMessage, done func(stored bool)) {
	t.mu.Lock()
	t.steer = append(t.steer, steered{item: store.NewItem{Origin: store.OriginInput, Data: item}, done: done})
	t.mu.Unlock()
}

// Steered reports whether steered items wait for the next request: a turn
// whose model has ended must answer them with another request.
func (t *Transcript) Steered() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.steer) > 0
}

// steerLocked stages the steered items, after what is staged. Called with
// mu held.
func (t *Transcript) steerLocked() {
	for _, s := range t.steer {
		t.l.stage([]store.NewItem{s.item}, nil, s.done)
	}
	t.steer = nil
}

// Rewind moves the model's view back to before turn turnID: that turn's
// items and every later one leave the view and stay in the store, marked
// as a rewound range (Open leaves them out). The usage counts and what the
// server held (epoch) go with them.
func (t *Transcript) Rewind(ctx context.Context, turnID int64) error {
	first, _, err := t.db.Branches().TurnSpan(ctx, t.id, turnID)
	if err != nil {
		return t.mark(fmt.Errorf("rewind: %w", err))
	}
	t.mu.Lock()
	busy := !t.l.empty() || len(t.steer) > 0
	through := t.through
	t.mu.Unlock()
	switch {
	case busy:
		return ErrBusy
	case first <= through:
		return ErrCompacted
	}
	if _, err := t.db.Branches().AddRewind(ctx, t.id, first); err != nil {
		return t.mark(fmt.Errorf("rewind: %w", err))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.indexLocked(first)
	t.l.committed, t.seqs = t.l.committed[:i:i], t.seqs[:i:i]
	t.forms, t.converted = nil, 0
	t.lastInput, t.lastOutput, t.counted = 0, 0, 0
	t.turnStart, t.compactedAt = i, min(t.compactedAt, i)
	t.epoch++
	return nil
}

// indexLocked is the index of the view's first stored item at or after
// seq (len when none). Called with mu held.
func (t *Transcript) indexLocked(seq int64) int {
	for i := t.prefix; i < len(t.seqs); i++ {
		if t.seqs[i] >= seq {
			return i
		}
	}
	return len(t.seqs)
}

// Fork copies the transcript up to the end of turn turnID into session to
// (its row must exist, without items) and returns the new session's
// Transcript, whose view is this view's prefix up to that turn: the items
// are shared, not copied, in memory. The fork holds nothing the server
// has (its conversation goes out on another lane), and no read set: its
// model is told of every file again.
func (t *Transcript) Fork(ctx context.Context, to string, turnID int64) (*Transcript, error) {
	_, last, err := t.db.Branches().TurnSpan(ctx, t.id, turnID)
	if err != nil {
		return nil, t.mark(fmt.Errorf("fork: %w", err))
	}
	t.mu.Lock()
	busy, through := !t.l.empty() || len(t.steer) > 0, t.through
	t.mu.Unlock()
	switch {
	case busy:
		return nil, ErrBusy
	case last <= through:
		return nil, ErrCompacted
	}
	if err := t.db.Branches().Fork(ctx, t.id, to, last); err != nil {
		return nil, t.mark(fmt.Errorf("fork: %w", err))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.indexLocked(last + 1)
	f := &Transcript{db: t.db, id: to, mark: t.mark,
		l:      ledger{committed: t.l.committed[:k:k]},
		seqs:   append([]int64(nil), t.seqs[:k]...),
		prefix: t.prefix, through: t.through, initialN: t.initialN,
		turnStart: k, compactedAt: min(t.compactedAt, k)}
	return f, nil
}
