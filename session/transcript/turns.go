package transcript

import (
	"context"
	"fmt"
	"time"

	"github.com/hearthd/hearth/store"
)

// The transcript's other records: its turns, which hold its items, and the
// outcome of each request it was sent in. The session writes nothing to
// the store itself.

// BeginTurn records the start of the conversation's next turn and returns
// its id.
func (t *Transcript) BeginTurn(ctx context.Context) (int64, error) {
	turn, err := t.db.Items().BeginTurn(ctx, t.id)
	if err != nil {
		return 0, t.mark(fmt.Errorf("begin turn: %w", err))
	}
	return turn.ID, nil
}

// EndTurn records how a turn ended.
func (t *Transcript) EndTurn(ctx context.Context, turnID int64, status store.TurnStatus, stop, msg string) error {
	if err := t.db.Items().EndTurn(ctx, turnID, status, stop, msg); err != nil {
		return t.mark(fmt.Errorf("end turn: %w", err))
	}
	return nil
}

// FinishRequest records how a request that ended without a response to
// commit went: failed or cancelled.
func (t *Transcript) FinishRequest(ctx context.Context, reqID int64, respID, status, msg string, first time.Time) error {
	return t.db.Requests().Finish(ctx, reqID, respID, status, msg, first, time.Now())
}
