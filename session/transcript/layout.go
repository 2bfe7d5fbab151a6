package transcript

import (
	"encoding/json"

	"github.com/hearthd/hearth/store"
)

// layout is where the view's items stand in the store: the compaction
// view. Its invariants:
//
//   - seqs[i] is the store's seq of committed[i] (0 for a summary), so
//     len(seqs) == len(committed);
//   - committed[:initialN] are the session's initial items (outside any
//     turn), kept by every compaction;
//   - committed[prefix:] are the stored items after through, in seq order,
//     with none of a rewound range; through is 0 before any compaction;
//   - turnStart is the view index of the running turn's first item.
//
// A layout does no I/O and has no lock of its own: it is guarded by its
// Transcript's mu, and changes with committed, in the same critical
// section. It lives as long as its Transcript; a compaction replaces it, a
// rewind cuts it, a fork copies it.
type layout struct {
	seqs      []int64
	prefix    int
	through   int64
	initialN  int
	turnStart int
}

// index is the index of the view's first stored item at or after seq (len
// when none).
func (p *layout) index(seq int64) int {
	for i := p.prefix; i < len(p.seqs); i++ {
		if p.seqs[i] >= seq {
			return i
		}
	}
	return len(p.seqs)
}

// throughAt is the last stored seq before view item keep: what a
// compaction keeping committed[keep:] replaces.
func (p *layout) throughAt(keep int) int64 {
	switch {
	case keep < len(p.seqs):
		return p.seqs[keep] - 1 // the view's items from prefix on are stored
	case len(p.seqs) > p.prefix:
		return p.seqs[len(p.seqs)-1]
	}
	return p.through
}

// stored appends the seqs of rows, the items batch b stored (the ledger
// appends the items).
func (p *layout) stored(b store.Staged, rows []store.Item) {
	for i := range b.Items {
		var seq int64
		if i < len(rows) {
			seq = rows[i].Seq
		}
		p.seqs = append(p.seqs, seq)
	}
}

// viewAfter makes the view of items (in seq order, none rewound) after
// the compaction last, whose first initialN items are initial.
func viewAfter(items []store.Item, initialN int, last store.Compaction) ([]json.RawMessage, layout) {
	var view []json.RawMessage
	p := layout{initialN: initialN}
	for _, it := range items[:initialN] {
		view, p.seqs = append(view, it.Data), append(p.seqs, it.Seq)
	}
	if last.Summary != "" { // else the API compacted: its output is stored after ThroughSeq
		view, p.seqs = append(view, SummaryItem(last.Summary)), append(p.seqs, 0)
	}
	p.prefix, p.through = len(view), last.ThroughSeq
	for _, it := range items {
		if it.Seq > last.ThroughSeq {
			view, p.seqs = append(view, it.Data), append(p.seqs, it.Seq)
		}
	}
	return view, p
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

// replayCache holds the replay forms of the view's first items: what a
// full request sends of them. Its invariant: forms are the replay forms of
// committed[:converted], in order; it is converted lazily (by the first
// request, or the background warm-up), so that opening a long transcript
// stays fast. Guarded by its Transcript's mu, except that the conversion
// itself may run unlocked (Transcript.convert); emptied whenever the view
// stops extending it (a compaction, a rewind). It lives as long as its
// Transcript.
type replayCache struct {
	forms     []json.RawMessage
	converted int
}

// input returns the replay forms of the whole of committed, converting
// the items committed since the last call.
func (c *replayCache) input(committed []json.RawMessage) []json.RawMessage {
	c.forms = ReplayForms(c.forms, committed[c.converted:])
	c.converted = len(committed)
	return c.forms
}
