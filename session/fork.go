package session

import (
	"context"

	"github.com/hearthd/hearth/session/transcript"
)

// Fork's refusals: the fork point is in what a compaction replaced by its
// summary (ErrForkCompacted), or in the turn that runs (ErrForkBusy).
var (
	ErrForkCompacted = transcript.ErrCompacted
	ErrForkBusy      = transcript.ErrBusy
)

// Fork opens session o.ID (its store row must exist, without items) as a
// fork of c: a new conversation with c's history through the last turn
// that ended before turn before (a store turn id; 0: every turn that
// ended — the committed history, never a running turn), its own lane, and
// c's model, effort and prompt_cache_key (o.Choice is ignored).
//
// When the fork has all of c's history and c is idle, the fork starts from
// c's baseline: its first request continues c's latest response with
// previous_response_id on the fork's own lane of the same connection, and
// sends only the new input. When that response is no longer on the
// connection the fork does what any conversation does after a loss: after
// a drop or a restart it re-warms once, in full; when c's next response
// replaced it on c's lane, its request goes out in full. Otherwise (a fork from an
// earlier turn, or while c's turn runs) the fork has nothing on the server
// and warms up like a session that opens.
func (c *Conversation) Fork(ctx context.Context, o Options, before int64) (*Conversation, error) {
	idle := c.hold()
	if idle {
		defer func() { <-c.turn }()
	}
	through, err := c.tr.Turns().LastEnded(ctx, before)
	if err != nil {
		return nil, err
	}
	tr, err := c.tr.Fork(ctx, o.ID, through)
	if err != nil {
		return nil, err
	}
	o.Choice, o.cacheKey = *c.line.choice.Load(), c.line.cacheKey
	f, err := open(ctx, o, tr)
	if err != nil {
		return nil, err
	}
	// The parent's response is on its workspace's shared connection: a fork
	// in another workspace, or without lanes (a connection per
	// conversation), cannot reach it.
	if idle && o.Client == c.client && c.client.api.Lanes() && tr.View().Len() == c.tr.View().Len() {
		f.line.continueFrom(c.line, tr.View().Epoch(), c.tr.View().Epoch())
	}
	return f, nil
}

// hold takes the turn token when no turn runs (false when one does): a
// fork of an idle conversation sees its history and baseline as one.
func (c *Conversation) hold() bool {
	select {
	case c.turn <- struct{}{}:
		return true
	default:
		return false
	}
}

// continueFrom makes parent's baseline this line's: its next request
// continues parent's latest response from this line's own lane. epoch is
// this line's transcript's; parentEpoch is the parent's, whose baseline
// must still extend it.
func (l *line) continueFrom(parent *line, epoch, parentEpoch uint64) {
	parent.mu.Lock()
	b := parent.base
	parent.mu.Unlock()
	if b == nil || b.epoch != parentEpoch || !b.conn.Alive() {
		return
	}
	fork := *b // input and output are never written once a baseline is made
	fork.epoch = epoch
	l.mu.Lock()
	l.base = &fork
	l.mu.Unlock()
}

// holds reports whether the server still holds the line's baseline, so
// the next request can continue it: a warm-up would only replace it.
func (l *line) holds() bool {
	epoch := l.tr.View().Epoch()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.base
	return b != nil && b.epoch == epoch && b.conn.Alive() && b.conn.Cached(b.lane) == b.responseID
}
