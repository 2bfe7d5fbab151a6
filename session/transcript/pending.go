package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hearthd/hearth/store"
)

// Steering input is durable from the moment hearth accepts it: it is
// stored at once as a pending record (an item kept out of the model's view
// and of the editor's replay, view ShownSteering), and later once more
// where the server committed it (the successor's input, the continuation's,
// the turn's next request), with a view naming its pending record's seq.
// A pending record no item names was never committed: the daemon died
// first, or the commit failed. Open finds those and Steering.Settle commits
// them at the end of the transcript, so the session's next request carries
// them once; a record named is done with, so nothing is carried twice.

// ShownSteering is the kind of a pending record of steering input.
const ShownSteering = "steering"

var pendingView = json.RawMessage(`{"shown":"` + ShownSteering + `"}`)

// steeredPrefix opens the view of a committed steering item.
const steeredPrefix = `{"steered":`

// steeredView is the view of a committed steering item whose pending
// record is at seq.
func steeredView(seq int64) json.RawMessage {
	return json.RawMessage(steeredPrefix + strconv.FormatInt(seq, 10) + "}")
}

// steeredRef is the seq a committed steering item's view names.
func steeredRef(view json.RawMessage) (int64, bool) {
	rest, ok := bytes.CutPrefix(view, []byte(steeredPrefix))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return 0, false
	}
	seq, err := strconv.ParseInt(string(rest[:len(rest)-1]), 10, 64)
	return seq, err == nil
}

// pendingSteers maps the bytes of steering items recorded as pending to
// their records' seqs, oldest first: the commit of an item names the
// oldest record of the same bytes (identical items are interchangeable).
// Guarded by its Transcript's mu (its methods are called with it held);
// it lives as long as the Transcript.
type pendingSteers struct {
	seqs      map[string][]int64
	unsettled []store.Item // records no item named when the transcript was opened
}

// take is the view naming the oldest pending record of item, nil when
// none waits.
func (p *pendingSteers) take(item json.RawMessage) json.RawMessage {
	q := p.seqs[string(item)]
	if len(q) == 0 {
		return nil
	}
	if len(q) == 1 {
		delete(p.seqs, string(item))
	} else {
		p.seqs[string(item)] = q[1:]
	}
	return steeredView(q[0])
}

// Pend records items, steering input of turn turnID hearth has accepted,
// as pending: stored now, outside the model's view, until their commit
// names them. A kill of the daemon before that commit leaves them to
// Settle.
func (s *Steering) Pend(ctx context.Context, turnID int64, items []json.RawMessage) error {
	t := s.t
	news := make([]store.NewItem, len(items))
	for i, it := range items {
		news[i] = store.NewItem{Origin: store.OriginInput, Data: it, View: pendingView}
	}
	rows, err := t.db.Items().Append(ctx, t.id, turnID, news)
	if err != nil {
		return t.mark(fmt.Errorf("record steering input: %w", err))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pend.seqs == nil {
		t.pend.seqs = map[string][]int64{}
	}
	for i, it := range items {
		t.pend.seqs[string(it)] = append(t.pend.seqs[string(it)], rows[i].Seq)
	}
	return nil
}

// items are steering items to commit, each naming its pending record.
func (p *pendingSteers) items(items []json.RawMessage) []store.NewItem {
	out := make([]store.NewItem, len(items))
	for i, it := range items {
		out[i] = store.NewItem{Origin: store.OriginInput, Data: it, View: p.take(it)}
	}
	return out
}

// queued makes the queued steering items q name their pending records.
func (p *pendingSteers) queued(q []steered) []steered {
	for i := range q {
		if q[i].item.View == nil {
			q[i].item.View = p.take(q[i].item.Data)
		}
	}
	return q
}

// unsettledSteering lists the pending records of items (in seq order) no
// item names.
func unsettledSteering(items []store.Item) []store.Item {
	var named map[int64]bool
	var out []store.Item
	for _, it := range items {
		switch {
		case bytes.Equal(it.View, pendingView):
			out = append(out, it)
		case bytes.HasPrefix(it.View, []byte(steeredPrefix)):
			if seq, ok := steeredRef(it.View); ok {
				if named == nil {
					named = map[int64]bool{}
				}
				named[seq] = true
			}
		}
	}
	kept := out[:0]
	for _, it := range out {
		if !named[it.Seq] {
			kept = append(kept, it)
		}
	}
	return kept
}

// Settle commits the steering input a previous daemon accepted and never
// committed (Open found it), at the end of the transcript, in the turns it
// was steered into: the next request carries it, once. It returns how
// many items it committed.
func (s *Steering) Settle(ctx context.Context) (int, error) {
	t := s.t
	t.mu.Lock()
	todo := t.pend.unsettled
	t.pend.unsettled = nil
	t.mu.Unlock()
	count := len(todo)
	for len(todo) > 0 {
		n := 1
		for n < len(todo) && todo[n].TurnID == todo[0].TurnID {
			n++
		}
		items := make([]store.NewItem, n)
		for i, it := range todo[:n] {
			items[i] = store.NewItem{Origin: store.OriginInput, Data: it.Data, View: steeredView(it.Seq)}
		}
		if err := t.Commit(ctx, todo[0].TurnID, items); err != nil {
			return 0, err
		}
		todo = todo[n:]
	}
	return count, nil
}
