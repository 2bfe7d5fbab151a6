package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/hearthd/hearth/store"
)

// Transcript is the one owner of a conversation's transcript: the model's
// view (the committed items: in the store, in order; after a compaction the
// session's initial items, the summary, then the items after the compaction
// point), what is staged for the next commit, the replay forms of the view,
// and what the last response's usage counted of it. Created by Open (or
// Fork) when its conversation opens; it lives as long as the conversation
// and holds nothing to close. Its methods are safe for concurrent use; the
// conversation's serial loop is the only one that stages and commits.
//
// The invariants it keeps:
//
//   - every committed item is in the store before anything reads it as
//     committed, and nothing is written to the store for the conversation's
//     transcript except through it (a session test checks);
//   - what the editor was told of a staged item is in the store (ledger);
//   - forms[:] are the replay forms of committed[:converted], in order
//     (converted lazily: opening a long transcript stays fast);
//   - seqs[i] is the store's seq of committed[i] (0 for the summary), and
//     committed[prefix:] are stored items after through, in seq order, with
//     none of a rewound range;
//   - epoch changes whenever the view stops extending what the server may
//     hold for it (a compaction, a rewind, a response's end the store lost):
//     a baseline taken at another epoch is gone.
type Transcript struct {
	db   *store.DB
	id   string
	mark func(error) error // marks a store failure for the owner's error handling

	mu        sync.Mutex // guards every field below
	l         ledger
	seqs      []int64
	steer     []steered         // sent while a response ran: staged for the request after it (Steer)
	forms     []json.RawMessage // the replay forms of l.committed[:converted]: what a full request sends
	converted int

	prefix    int   // view items before the first stored item after through
	through   int64 // the last stored item the compaction replaced; 0 = none
	initialN  int   // leading items outside any turn (AGENTS.md), kept by a compaction
	turnStart int   // view index of the running turn's first item
	// What the last response's usage covers: its input and output tokens,
	// and how many items of the view (committed, then staged) it counted.
	lastInput, lastOutput, counted int
	compactedAt                    int // the view's length after the last compaction: compact again only once it grew
	epoch                          uint64
}

// Options configure Open.
type Options struct {
	DB *store.DB
	ID string // the session; its row must exist
	// Items is the stored transcript when the caller has read it already;
	// nil: Open reads it.
	Items []store.Item
	// Mark wraps every error of a store write (nil: as it is).
	Mark func(error) error
}

// Open loads a session's transcript: its view after the last compaction,
// without the rewound items. It converts no replay form (the first request
// does, in the background warm-up), so that a session/load of a long
// transcript stays fast.
func Open(ctx context.Context, o Options) (*Transcript, error) {
	t := &Transcript{db: o.DB, id: o.ID, mark: o.Mark}
	if t.mark == nil {
		t.mark = func(err error) error { return err }
	}
	items := o.Items
	if items == nil {
		var err error
		if items, err = o.DB.Items().List(ctx, o.ID); err != nil {
			return nil, t.mark(fmt.Errorf("load transcript of %s: %w", o.ID, err))
		}
	}
	rewinds, err := o.DB.Branches().Rewinds(ctx, o.ID)
	if err != nil {
		return nil, t.mark(fmt.Errorf("load transcript of %s: %w", o.ID, err))
	}
	items = withoutRewound(items, rewinds)
	for _, it := range items {
		if it.TurnID != 0 {
			break
		}
		t.initialN++
	}
	last, err := o.DB.Branches().LastCompaction(ctx, o.ID)
	switch {
	case err == nil:
		t.viewAfter(items, last)
	case errors.Is(err, store.ErrNotFound):
		t.l.committed = make([]json.RawMessage, 0, len(items))
		t.seqs = make([]int64, 0, len(items))
		for _, it := range items {
			t.l.committed, t.seqs = append(t.l.committed, it.Data), append(t.seqs, it.Seq)
		}
	default:
		return nil, t.mark(fmt.Errorf("load transcript of %s: %w", o.ID, err))
	}
	return t, nil
}

// withoutRewound drops the items of rewound ranges; items is in seq order.
func withoutRewound(items []store.Item, rewinds []store.Rewind) []store.Item {
	if len(rewinds) == 0 {
		return items
	}
	out := items[:0:0]
	for _, it := range items {
		if !rewound(it.Seq, rewinds) {
			out = append(out, it)
		}
	}
	return out
}

func rewound(seq int64, rewinds []store.Rewind) bool {
	for _, r := range rewinds {
		if seq >= r.FromSeq && seq <= r.ThroughSeq {
			return true
		}
	}
	return false
}

// viewAfter makes the view the compaction last's of items. Called by Open
// before the transcript is shared.
func (t *Transcript) viewAfter(items []store.Item, last store.Compaction) {
	for _, it := range items[:t.initialN] {
		t.l.committed, t.seqs = append(t.l.committed, it.Data), append(t.seqs, it.Seq)
	}
	if last.Summary != "" { // else the API compacted: its output is stored after ThroughSeq
		t.l.committed, t.seqs = append(t.l.committed, SummaryItem(last.Summary)), append(t.seqs, 0)
	}
	t.prefix, t.through = len(t.l.committed), last.ThroughSeq
	for _, it := range items {
		if it.Seq > last.ThroughSeq {
			t.l.committed, t.seqs = append(t.l.committed, it.Data), append(t.seqs, it.Seq)
		}
	}
}

// Initialize commits initial, the session's leading items outside any turn
// (AGENTS.md), when the transcript is empty: they are kept by every
// compaction.
func (t *Transcript) Initialize(ctx context.Context, initial []json.RawMessage) error {
	if t.Len() > 0 || len(initial) == 0 {
		return nil
	}
	items := make([]store.NewItem, len(initial))
	for i, it := range initial {
		items[i] = store.NewItem{Origin: store.OriginInput, Data: it}
	}
	if err := t.Commit(ctx, 0, items); err != nil {
		return err
	}
	t.mu.Lock()
	t.initialN = len(items)
	t.mu.Unlock()
	return nil
}

// Len is the number of items in the model's view.
func (t *Transcript) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.l.committed)
}

// Items returns a copy of the model's view.
func (t *Transcript) Items() []json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]json.RawMessage(nil), t.l.committed...)
}

// Latest returns the last item of the view that match accepts.
func (t *Transcript) Latest(match func(json.RawMessage) bool) (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.l.committed) - 1; i >= 0; i-- {
		if match(t.l.committed[i]) {
			return t.l.committed[i], true
		}
	}
	return nil, false
}

// Bytes is the size of the view as stored.
func (t *Transcript) Bytes() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, it := range t.l.committed {
		n += len(it)
	}
	return n
}

// Epoch changes whenever the view stops extending what the server may
// hold of it: a baseline taken at another epoch is gone.
func (t *Transcript) Epoch() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.epoch
}

// StartTurn records that the running turn's items begin with the next
// staged one: a compaction keeps them when they are small.
func (t *Transcript) StartTurn() {
	t.mu.Lock()
	t.turnStart = t.l.next()
	t.mu.Unlock()
}

// convert brings the replay forms up to date outside the lock, so that a
// long transcript's first conversion never holds up the transcript's other
// readers (a session/load replay).
func (t *Transcript) convert() {
	t.mu.Lock()
	from, todo, epoch := t.converted, t.l.committed[t.converted:], t.epoch
	t.mu.Unlock()
	if len(todo) < 64 {
		return // cheap enough under the lock
	}
	forms := ReplayForms(nil, todo) // committed items never change: safe to read unlocked
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.converted == from && t.epoch == epoch { // else a compaction or rewind replaced the view meanwhile
		t.forms = append(t.forms, forms...)
		t.converted = from + len(todo)
	}
}

// inputLocked returns the replay forms of the whole view, converting the
// items committed since the last call. Called with mu held.
func (t *Transcript) inputLocked() []json.RawMessage {
	t.forms = ReplayForms(t.forms, t.l.committed[t.converted:])
	t.converted = len(t.l.committed)
	return t.forms
}

// Input returns the replay forms of the view: what a full request sends of
// it.
func (t *Transcript) Input() []json.RawMessage {
	t.convert()
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]json.RawMessage(nil), t.inputLocked()...)
}

// Initial returns the session's initial items (outside any turn) in the
// view.
func (t *Transcript) Initial() []json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]json.RawMessage(nil), t.l.committed[:t.initialN]...)
}

// InitialCount is how many of the view's first items are initial.
func (t *Transcript) InitialCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.initialN
}

// summaryPrefix opens the summary item in a compacted view.
const summaryPrefix = "Summary of the conversation so far (earlier messages were compacted; the user can see them all):\n\n"

// SummaryItem is the user message that stands for a compacted view's past:
// summaryPrefix and the model's summary.
func SummaryItem(summary string) json.RawMessage {
	type part struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []part `json:"content"`
	}{"message", "user", []part{{"input_text", summaryPrefix + summary}}}) // strings always encode
	return b
}

// CompactionView is the stored view of the items an API compaction
// returned: they are the model's view, not something that happened, and
// an editor's replay leaves them out.
var CompactionView = json.RawMessage(`{"compaction":true}`)
