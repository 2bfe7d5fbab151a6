package transcript

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hearthd/hearth/store"
)

// Compaction: the model's view becomes the session's initial items, a
// summary (the model's, or the API's sealed compaction items) and the
// running turn's items when they are small. The stored items stay; the
// compaction point is stored, so Open rebuilds the same view.

// Counted records what a response's usage says of the view: its input and
// output tokens, and how many items of the view they cover (the view, and
// pending more: a staged output, first in line). A server that reports no
// usage leaves the estimate to the items' bytes.
func (t *Transcript) Counted(u store.Usage, pending int) {
	if u.Input <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.use.input, t.use.output = int(u.Input), int(u.Output)
	t.use.counted = len(t.l.committed) + pending
}

// Usage is the last response's input and output tokens (0 before the
// first, and after a compaction or rewind).
func (t *Transcript) Usage() (input, output int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.use.input, t.use.output
}

// NextInput estimates the input tokens of the next request: the last
// response's input and output tokens (the server's own count of all but
// what came since) plus the items since, by their bytes. Without usage (a
// view just opened or compacted) it counts the whole view and the
// settings (settings: their encoding's length) by their bytes.
func (t *Transcript) NextInput(settings int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.use.estimate(t.l.committed, t.l.staged, settings)
}

// Grown reports whether the view has grown since the last compaction: a
// view still past the threshold right after one is not compacted again
// until something new is added to it.
func (t *Transcript) Grown() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.l.next() > t.use.compactedAt
}

// Compacted records a compaction by a summary the model wrote (summary,
// in the response respID) and makes the view [initial items, summary, the
// running turn's items when they are small: a quarter of window tokens, a
// window of 0 being unknown]. The summary covers them too.
func (t *Transcript) Compacted(ctx context.Context, summary, respID, why string, window int) error {
	t.mu.Lock()
	n := len(t.l.committed)
	keep := max(t.lay.turnStart, t.lay.prefix, t.lay.initialN)
	size := 0
	for _, it := range t.l.committed[min(keep, n):] {
		size += len(it) / 4
	}
	if window > 0 && size > window/4 || keep > n {
		keep = n
	}
	through := t.lay.throughAt(keep)
	initial := t.lay.initialN
	view := append([]json.RawMessage(nil), t.l.committed[:initial]...)
	seqs := append([]int64(nil), t.lay.seqs[:initial]...)
	view, seqs = append(view, SummaryItem(summary)), append(seqs, 0)
	view, seqs = append(view, t.l.committed[keep:]...), append(seqs, t.lay.seqs[keep:]...)
	t.mu.Unlock()

	if _, err := t.db.Branches().AddCompaction(context.WithoutCancel(ctx), store.Compaction{SessionID: t.id, ThroughSeq: through,
		Summary: summary, ResponseID: respID, Reason: why}); err != nil {
		return t.mark(fmt.Errorf("compact: %w", err))
	}
	t.adopt(view, layout{seqs: seqs, prefix: initial + 1, through: through, initialN: initial, turnStart: initial + 1})
	return nil
}

// CompactedByServer records a compaction by the API: output, what it
// returned (less the initial items it repeats), is stored as the session's
// items, marked CompactionView, and becomes the view after the initial
// items. It returns how many items the view now has.
func (t *Transcript) CompactedByServer(ctx context.Context, turnID int64, respID, why string, output []json.RawMessage) (int, error) {
	out := make([]store.NewItem, len(output))
	for i, it := range output {
		out[i] = store.NewItem{Origin: store.OriginOutput, Data: it, View: CompactionView}
	}
	comp, rows, err := t.db.Branches().AddCompactionItems(context.WithoutCancel(ctx), store.Compaction{SessionID: t.id,
		ResponseID: respID, Reason: why}, turnID, out)
	if err != nil {
		return 0, t.mark(fmt.Errorf("compact: %w", err))
	}
	t.mu.Lock()
	initial := t.lay.initialN
	view := append([]json.RawMessage(nil), t.l.committed[:initial]...)
	seqs := append([]int64(nil), t.lay.seqs[:initial]...)
	t.mu.Unlock()
	for _, it := range rows {
		view, seqs = append(view, it.Data), append(seqs, it.Seq)
	}
	t.adopt(view, layout{seqs: seqs, prefix: initial, through: comp.ThroughSeq, initialN: initial, turnStart: len(view)})
	return len(view), nil
}

// adopt makes view the model's view, placed in the store as lay says.
// Nothing of the old view's counts holds for it, nor what the server held
// (epoch).
func (t *Transcript) adopt(view []json.RawMessage, lay layout) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.l.committed, t.lay = view, lay
	t.cache = replayCache{}
	t.use = meter{compactedAt: len(view)}
	t.epoch++
}
