package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/hearthd/hearth/store"
)

// meter is what the last response's usage says of the view, and when the
// view was last compacted: what decides the next compaction. Its
// invariants: input and output are the last response's tokens and counted
// the items of the view (committed, then staged) they cover; when the view
// was opened, the last response the store can place (restoreMeter); all 0
// when no response with usage came since the view was compacted or
// rewound, or opened without one; compactedAt is the view's length after
// the last compaction (or less after a rewind below it). It does no I/O
// and has no lock of its own: it is guarded by its Transcript's mu. It
// lives as long as its Transcript; a compaction or rewind replaces it.
type meter struct {
	input, output, counted int
	compactedAt            int
}

// estimate is NextInput's: the input tokens of a request that sends
// committed, staged and settings (their encoding's length).
func (m *meter) estimate(committed []json.RawMessage, staged []store.NewItem, settings int) int {
	from, n := 0, settings
	if m.input > 0 && m.counted <= len(committed)+len(staged) {
		from, n = m.counted, 4*(m.input+m.output)
	}
	for i := from; i < len(committed)+len(staged); i++ {
		if i < len(committed) {
			n += len(committed[i])
		} else {
			n += len(staged[i-len(committed)].Data)
		}
	}
	return (n + 3) / 4
}

// restoreMeter sets the meter of a transcript just opened from the store:
// the last response's usage (the last request that reported any), when the
// items it counted are known: it was a turn's, sent after the last
// compaction (compacted: its time; zero when none), and the view's last
// output item is its turn's, so the view up to that item is what it
// counted. Otherwise the meter stays empty, as after a compaction: the
// next request's estimate counts the whole view by its bytes. items are
// the session's items Open read, without the rewound ones.
func (t *Transcript) restoreMeter(ctx context.Context, items []store.Item, compacted time.Time) error {
	r, err := t.db.Requests().LastCounted(ctx, t.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case r.TurnID == 0 || !compacted.IsZero() && !compacted.Before(r.Sent):
		return nil
	}
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].Origin != store.OriginOutput {
			continue
		}
		if items[i].TurnID != r.TurnID {
			return nil
		}
		at := slices.Index(t.lay.seqs, items[i].Seq)
		if at < 0 {
			return nil
		}
		t.use.input, t.use.output, t.use.counted = int(r.Usage.Input), int(r.Usage.Output), at+1
		return nil
	}
	return nil
}
