package transcript

import (
	"context"
	"fmt"
	"time"

	"github.com/hearthd/hearth/store"
)

// Turns records the transcript's other rows: its turns, which hold its
// items, and the outcome of each request it was sent in. It keeps no
// state of its own and touches no item of the view, so it needs no lock:
// the session writes nothing to the store itself, and these are the rows
// it writes besides the items, and the items a turn showed the editor that
// are no part of the view (KeepShown). Made with its Transcript
// (Transcript.Turns), it lives as long as it.
type Turns struct {
	db    *store.DB
	id    string
	mark  func(error) error                             // the Transcript's
	flush func(ctx context.Context, turnID int64) error // the Transcript's Flush
}

// BeginTurn records the start of the conversation's next turn and returns
// its id.
func (t *Turns) BeginTurn(ctx context.Context) (int64, error) {
	turn, err := t.db.Items().BeginTurn(ctx, t.id)
	if err != nil {
		return 0, t.mark(fmt.Errorf("begin turn: %w", err))
	}
	return turn.ID, nil
}

// EndTurn records how a turn ended.
func (t *Turns) EndTurn(ctx context.Context, turnID int64, status store.TurnStatus, stop, msg string) error {
	if err := t.db.Items().EndTurn(ctx, turnID, status, stop, msg); err != nil {
		return t.mark(fmt.Errorf("end turn: %w", err))
	}
	return nil
}

// FinishRequest records how a request that ended without a response to
// commit went: failed or cancelled.
func (t *Turns) FinishRequest(ctx context.Context, reqID int64, respID, status, msg string, first time.Time) error {
	return t.db.Requests().Finish(ctx, reqID, respID, status, msg, first, time.Now())
}

// CommitEnd stores a request's end alone: the answer to a question aside
// (a compaction's summary) is the caller's, not the view's.
func (t *Turns) CommitEnd(ctx context.Context, turnID int64, end *store.Completion) error {
	if _, err := t.db.Requests().CommitStaged(ctx, t.id, turnID, store.Staged{End: end}); err != nil {
		return t.mark(fmt.Errorf("commit the response: %w", err))
	}
	return nil
}
