package transcript

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/hearthd/hearth/store"
)

// Steering is a transcript's queue of the user's messages sent while a
// response runs: each waits for the request after that response, where it
// joins what is staged (Transcript.Next; or Flush at the turn's end),
// behind the response's output and the outputs of the calls it made.
//
// Made with its Transcript (Transcript.Steering), it lives as long as it.
// Safe for concurrent use: its lock guards only the queue, and is taken
// after the Transcript's, never the other way round (take is called with
// the Transcript's lock held). An item is taken once, in the order it was
// steered; a fork starts with an empty queue (a fork while items wait is
// refused). Through it, too, steering input accepted and not committed yet
// is kept durable (Pend, Settle: pending.go).
type Steering struct {
	t     *Transcript // its transcript: Pend and Settle write through it
	mu    sync.Mutex
	queue []steered
}

// steered is an item sent while a response ran, with what waits for it.
type steered struct {
	item store.NewItem
	done func(stored bool)
}

// Steer queues item for the request after the running response; it is
// committed with that request's row, where the server commits it (the
// successor's input). done (may be nil) is told as Transcript.Stage's.
func (s *Steering) Steer(item json.RawMessage, done func(stored bool)) {
	s.mu.Lock()
	s.queue = append(s.queue, steered{item: store.NewItem{Origin: store.OriginInput, Data: item}, done: done})
	s.mu.Unlock()
}

// Steered reports whether steered items wait for the next request: a turn
// whose model has ended must answer them with another request.
func (s *Steering) Steered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0
}

// take empties the queue and returns what was in it, to be staged.
func (s *Steering) take() []steered {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// StageSteered stages items the server holds for the next request's input
// (response.steer.pending): they lead that request's new items, before
// the tool outputs staged already or later, as the server prepends them.
func (t *Transcript) StageSteered(items []json.RawMessage) {
	t.mu.Lock()
	t.l.stageHeld(t.pend.items(items))
	t.mu.Unlock()
}

// CommitSteered records an automatic successor of a steered response: the
// steering items, after that response's output where the server committed
// them, with the successor's request row r, in one transaction. It
// returns the request's id.
func (t *Transcript) CommitSteered(ctx context.Context, r store.Request, items []json.RawMessage) (int64, error) {
	t.mu.Lock()
	t.l.stage(t.pend.items(items), nil, nil)
	b := t.l.batch()
	t.mu.Unlock()
	reqID, tell, err := t.CommitRequest(ctx, r, b)
	if err != nil {
		return 0, err
	}
	tell()
	return reqID, nil
}

// CommitSteeredNow stores items of turn turnID at once, where they land
// in the view, when nothing is staged that must come before them; false
// (nothing done) otherwise: they are then staged or queued later.
func (t *Transcript) CommitSteeredNow(ctx context.Context, turnID int64, items []json.RawMessage) (bool, error) {
	t.mu.Lock()
	empty := t.l.empty()
	t.mu.Unlock()
	if !empty {
		return false, nil
	}
	return true, t.Commit(ctx, turnID, steeredItems(items))
}

// StoreSteered stores the queued steering items (Steering) of turn turnID
// at once, when nothing is staged that must come before them: input that
// waits for the turn's next request while its tools run survives a kill.
func (t *Transcript) StoreSteered(ctx context.Context, turnID int64) error {
	t.mu.Lock()
	if !t.l.empty() {
		t.mu.Unlock()
		return nil
	}
	q := t.pend.queued(t.steer.take())
	t.mu.Unlock()
	if len(q) == 0 {
		return nil
	}
	items := make([]store.NewItem, len(q))
	for i, s := range q {
		items[i] = s.item
	}
	err := t.Commit(ctx, turnID, items)
	for _, s := range q {
		if s.done != nil {
			s.done(err == nil)
		}
	}
	return err
}

func steeredItems(items []json.RawMessage) []store.NewItem {
	out := make([]store.NewItem, len(items))
	for i, it := range items {
		out[i] = store.NewItem{Origin: store.OriginInput, Data: it}
	}
	return out
}
