package transcript

import (
	"context"
	"errors"
	"fmt"

	"github.com/hearthd/hearth/store"
)

// The transitions the next features need: steering a running response
// (Steering), a fork at a turn (Fork) and a rewind to a turn (Rewind).

// ErrCompacted: a fork or rewind at a turn the last compaction replaced
// by its summary; the model's view of that point is gone.
var ErrCompacted = errors.New("transcript: that turn was compacted")

// ErrBusy: a fork or rewind while items are staged (a turn is running).
var ErrBusy = errors.New("transcript: a turn is running")

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
	busy := !t.l.empty() || t.steer.Steered()
	through := t.lay.through
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
	i := t.lay.index(first)
	t.l.committed, t.lay.seqs = t.l.committed[:i:i], t.lay.seqs[:i:i]
	t.cache = replayCache{}
	t.use = meter{compactedAt: min(t.use.compactedAt, i)}
	t.lay.turnStart = i
	t.epoch++
	return nil
}

// Fork copies the transcript up to the end of turn turnID (0: only the
// session's initial items) into session to (its row must exist, without
// items) and returns the new session's Transcript, whose view is this
// view's prefix up to that turn: the items are shared, not copied, in
// memory. The fork holds nothing the server has (its conversation goes out
// on another lane), and no read set: its model is told of every file
// again. A turn that ended may be forked while a later one runs (the
// committed history, not the running turn); the running turn may not.
func (t *Transcript) Fork(ctx context.Context, to string, turnID int64) (*Transcript, error) {
	last, err := forkSeq(ctx, t, turnID)
	if err != nil {
		return nil, t.mark(fmt.Errorf("fork: %w", err))
	}
	t.mu.Lock()
	busy, through := !t.l.empty() || t.steer.Steered(), t.lay.through
	k := t.lay.index(last + 1)
	running := busy && k > t.lay.turnStart
	t.mu.Unlock()
	switch {
	case running:
		return nil, ErrBusy
	case through > 0 && last <= through:
		return nil, ErrCompacted
	}
	if err := t.db.Branches().Fork(ctx, t.id, to, last); err != nil {
		return nil, t.mark(fmt.Errorf("fork: %w", err))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f := newTranscript(t.db, to, t.mark)
	f.l = ledger{committed: t.l.committed[:k:k]}
	f.lay = layout{seqs: append([]int64(nil), t.lay.seqs[:k]...),
		prefix: t.lay.prefix, through: t.lay.through, initialN: t.lay.initialN, turnStart: k}
	f.use = meter{compactedAt: min(t.use.compactedAt, k)}
	return f, nil
}

// forkSeq is the seq of the last item a fork of t through turnID copies:
// the turn's last, or for turn 0 the last initial item's (0 when none).
func forkSeq(ctx context.Context, t *Transcript, turnID int64) (int64, error) {
	if turnID != 0 {
		_, last, err := t.db.Branches().TurnSpan(ctx, t.id, turnID)
		return last, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.lay.initialN; n > 0 && n <= len(t.lay.seqs) {
		return t.lay.seqs[n-1], nil
	}
	return 0, nil
}

// LastEnded is the store id of the last turn that ended, has items in the
// transcript and comes before turn before (0: no bound): where a fork of
// the committed history ends. 0 when there is none.
func (t *Turns) LastEnded(ctx context.Context, before int64) (int64, error) {
	turns, err := t.db.Items().Turns(ctx, t.id)
	if err != nil {
		return 0, t.mark(fmt.Errorf("fork: %w", err))
	}
	for i := len(turns) - 1; i >= 0; i-- {
		turn := turns[i]
		if turn.Status == store.TurnRunning || before != 0 && turn.ID >= before {
			continue
		}
		if _, _, err := t.db.Branches().TurnSpan(ctx, t.id, turn.ID); errors.Is(err, store.ErrNotFound) {
			continue // a turn that left nothing in the transcript
		} else if err != nil {
			return 0, t.mark(fmt.Errorf("fork: %w", err))
		}
		return turn.ID, nil
	}
	return 0, nil
}
