package transcript

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hearthd/hearth/store"
)

// The commit path: every store write of the transcript, each followed by
// the in-memory change it makes, so an item is never read as committed
// before it is durable.

// Commit writes items to the store at once, then appends them to the view.
func (t *Transcript) Commit(ctx context.Context, turnID int64, items []store.NewItem) error {
	if len(items) == 0 {
		return nil
	}
	rows, err := t.db.Items().Append(ctx, t.id, turnID, items)
	if err != nil {
		return t.mark(fmt.Errorf("commit %d item(s): %w", len(items), err))
	}
	t.mu.Lock()
	for i, it := range items {
		t.l.committed, t.lay.seqs = append(t.l.committed, it.Data), append(t.lay.seqs, rows[i].Seq)
	}
	t.mu.Unlock()
	return nil
}

// Stage queues items and read-set updates for the next commit: the next
// request's (CommitRequest), or Flush's when no request takes them. done
// (may be nil) is told once the items are in the store (true) or lost
// (false): what the editor is told of a staged output waits for it.
func (t *Transcript) Stage(items []store.NewItem, seen []store.SeenWrite, done func(stored bool)) {
	t.mu.Lock()
	t.l.stage(items, seen, done)
	t.mu.Unlock()
}

// StageResponse stages a response's end and output, which must lead what
// is staged: false (nothing staged) when items or an end are staged.
func (t *Transcript) StageResponse(end *store.Completion, output []json.RawMessage) bool {
	out := make([]store.NewItem, len(output))
	for i, it := range output {
		out[i] = store.NewItem{Origin: store.OriginOutput, Data: it}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.l.stageResponse(end, out)
}

// Flush commits what is staged when no request will take it (the turn
// ended, was cancelled or failed, or a call that may change something must
// be stored at once). If that fails, the staged items are dropped, what
// waited for them is told so, the calls they answered are repaired before
// the next request (Mend), and a staged response's end that is lost moves
// the epoch on: the server holds a response the store does not.
func (t *Transcript) Flush(ctx context.Context, turnID int64) error {
	t.mu.Lock()
	t.l.stageSteered(t.pend.queued(t.steer.take()))
	b, empty := t.l.batch(), t.l.empty()
	t.mu.Unlock()
	if empty {
		return nil
	}
	rows, err := t.db.Requests().CommitStaged(ctx, t.id, turnID, b)
	if err != nil {
		t.mu.Lock()
		tell, lostEnd := t.l.dropped()
		if lostEnd {
			t.epoch++
		}
		t.mu.Unlock()
		tell()
		return t.mark(fmt.Errorf("commit %d item(s): %w", len(b.Items), err))
	}
	t.mu.Lock()
	t.lay.stored(b, rows)
	tell := t.l.stored(b)
	t.mu.Unlock()
	tell()
	return nil
}

// Next is what the next request carries: the replay forms of the view and
// of what is staged (full: the whole input), and the batch to commit with
// the request's row (CommitRequest). Items steered in wait for it.
func (t *Transcript) Next() (full []json.RawMessage, b store.Staged) {
	t.convert()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.l.stageSteered(t.pend.queued(t.steer.take()))
	full = append([]json.RawMessage(nil), t.cache.input(t.l.committed)...)
	b = t.l.batch()
	for _, it := range b.Items {
		full = ReplayForms(full, []json.RawMessage{it.Data})
	}
	return full, b
}

// CommitRequest records a request with b, what it carries that the store
// does not hold yet (Next's batch), in one transaction, before it is sent.
// tell tells what waited for the batch; the caller calls it once the
// request is on its way.
func (t *Transcript) CommitRequest(ctx context.Context, r store.Request, b store.Staged) (reqID int64, tell func(), err error) {
	r.SessionID = t.id
	reqID, rows, err := t.db.Requests().InsertAfter(ctx, r, b)
	if err != nil {
		return 0, nil, t.mark(fmt.Errorf("record request: %w", err))
	}
	t.mu.Lock()
	t.lay.stored(b, rows)
	tell = t.l.stored(b)
	t.mu.Unlock()
	return reqID, tell, nil
}

// CommitResponse stores a response's output with its request's end, in one
// transaction, then appends it to the view. output's items become their
// replay forms, made in their own bytes (an answer can be megabytes: one
// copy stays in memory). It returns the replay forms the view gained: what
// the server holds as the response's output.
func (t *Transcript) CommitResponse(ctx context.Context, turnID int64, end *store.Completion, output []json.RawMessage) ([]json.RawMessage, error) {
	out := make([]store.NewItem, len(output))
	for i, it := range output {
		out[i] = store.NewItem{Origin: store.OriginOutput, Data: it}
	}
	rows, err := t.db.Requests().CommitStaged(ctx, t.id, turnID, store.Staged{End: end, Items: out})
	if err != nil {
		return nil, t.mark(fmt.Errorf("commit the response: %w", err))
	}
	// Stored as received; what stays in memory is the replay form.
	for i, it := range output {
		if form, ok := ReplayInPlace(it); ok {
			output[i] = form
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.cache.input(t.l.committed))
	for i, it := range output {
		t.l.committed, t.lay.seqs = append(t.l.committed, it), append(t.lay.seqs, rows[i].Seq)
	}
	in := t.cache.input(t.l.committed)
	return in[n:len(in):len(in)], nil
}
