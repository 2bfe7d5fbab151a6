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
// Its state is in parts, each a type with its own invariants: the ledger
// (committed and staged items, and who waits for them), the layout (where
// the view stands in the store: the compaction view), the replay cache,
// the meter (what the last response's usage counted), the Steering queue
// and the Turns rows; readers take a View.
//
// The invariants it keeps across them:
//
//   - every committed item is in the store before anything reads it as
//     committed, and nothing is written to the store for the conversation's
//     transcript except through it (a session test checks);
//   - committed and the layout's seqs change together, under mu;
//   - epoch changes whenever the view stops extending what the server may
//     hold for it (a compaction, a rewind, a response's end the store lost):
//     a baseline taken at another epoch is gone.
type Transcript struct {
	db    *store.DB
	id    string
	mark  func(error) error // marks a store failure for the owner's error handling
	turns *Turns
	steer *Steering // its own lock, taken after mu

	mu    sync.Mutex // guards every field below
	l     ledger
	lay   layout
	cache replayCache
	use   meter
	epoch uint64
	pend  pendingSteers // steering input stored as pending, not committed yet
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

// newTranscript is an empty transcript of session id.
func newTranscript(db *store.DB, id string, mark func(error) error) *Transcript {
	t := &Transcript{db: db, id: id, mark: mark}
	t.steer = &Steering{t: t}
	t.turns = &Turns{db: db, id: id, mark: mark, flush: t.Flush}
	return t
}

// Open loads a session's transcript: its view after the last compaction,
// without the rewound items. It converts no replay form (the first request
// does, in the background warm-up), so that a session/load of a long
// transcript stays fast.
func Open(ctx context.Context, o Options) (*Transcript, error) {
	mark := o.Mark
	if mark == nil {
		mark = func(err error) error { return err }
	}
	t := newTranscript(o.DB, o.ID, mark)
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
	t.pend.unsettled = unsettledSteering(items)
	items = withoutShown(items)
	initialN := 0
	for _, it := range items {
		if it.TurnID != 0 {
			break
		}
		initialN++
	}
	last, err := o.DB.Branches().LastCompaction(ctx, o.ID)
	switch {
	case err == nil:
		t.l.committed, t.lay = viewAfter(items, initialN, last)
	case errors.Is(err, store.ErrNotFound):
		t.l.committed = make([]json.RawMessage, 0, len(items))
		t.lay = layout{seqs: make([]int64, 0, len(items)), initialN: initialN}
		for _, it := range items {
			t.l.committed, t.lay.seqs = append(t.l.committed, it.Data), append(t.lay.seqs, it.Seq)
		}
	default:
		return nil, t.mark(fmt.Errorf("load transcript of %s: %w", o.ID, err))
	}
	if err := t.restoreMeter(ctx, items, last.Created); err != nil {
		return nil, t.mark(fmt.Errorf("load transcript of %s: %w", o.ID, err))
	}
	return t, nil
}

// Turns records the transcript's turns and the outcomes of its requests.
func (t *Transcript) Turns() *Turns { return t.turns }

// Steering is the queue of messages sent while a response runs.
func (t *Transcript) Steering() *Steering { return t.steer }

// View takes a snapshot of the model's view.
func (t *Transcript) View() View {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.l.committed)
	return View{items: t.l.committed[:n:n], initial: t.lay.initialN, epoch: t.epoch}
}

// Initialize commits initial, the session's leading items outside any turn
// (AGENTS.md), when the transcript is empty: they are kept by every
// compaction.
func (t *Transcript) Initialize(ctx context.Context, initial []json.RawMessage) error {
	if t.View().Len() > 0 || len(initial) == 0 {
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
	t.lay.initialN = len(items)
	t.mu.Unlock()
	return nil
}

// StartTurn records that the running turn's items begin with the next
// staged one: a compaction keeps them when they are small.
func (t *Transcript) StartTurn() {
	t.mu.Lock()
	t.lay.turnStart = t.l.next()
	t.mu.Unlock()
}

// convert brings the replay forms up to date outside the lock, so that a
// long transcript's first conversion never holds up the transcript's other
// readers (a session/load replay).
func (t *Transcript) convert() {
	t.mu.Lock()
	from, todo, epoch := t.cache.converted, t.l.committed[t.cache.converted:], t.epoch
	t.mu.Unlock()
	if len(todo) < 64 {
		return // cheap enough under the lock
	}
	forms := ReplayForms(nil, todo) // committed items never change: safe to read unlocked
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache.converted == from && t.epoch == epoch { // else a compaction or rewind replaced the view meanwhile
		t.cache.forms = append(t.cache.forms, forms...)
		t.cache.converted = from + len(todo)
	}
}

// Input returns the replay forms of the view: what a full request sends of
// it.
func (t *Transcript) Input() []json.RawMessage {
	t.convert()
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]json.RawMessage(nil), t.cache.input(t.l.committed)...)
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
