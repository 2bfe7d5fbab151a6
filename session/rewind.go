package session

import (
	"context"

	"github.com/hearthd/hearth/session/transcript"
)

// ErrCompacted: a rewind to a turn the last compaction replaced by its
// summary; the model's view of that point is gone.
var ErrCompacted = transcript.ErrCompacted

// Rewind moves the conversation's model view back to before its turn
// turnID (a store turn's id): that turn and every later one leave the view
// and stay in the store, shown as rewound. It waits for a running turn.
// The server's baseline goes with them, so the view is warmed again once,
// in the background, and the next prompt chains on it.
func (c *Conversation) Rewind(ctx context.Context, turnID int64) error {
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	err := c.tr.Rewind(ctx, turnID)
	<-c.turn
	if err == nil {
		c.warmUp(true)
	}
	return err
}
