package daemon

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/hearthd/hearth/store"
	"github.com/hearthd/hearth/workspace/watch"
)

// contextDelta is what changed on disk since the turn's session's last prompt,
// as the text of an input item that goes before the user's message (""
// when nothing did): diffs for files the model has seen, lists for the
// rest. The read set is updated with what the delta shows the model. Only
// the turn's goroutine calls it.
func (t *promptTurn) contextDelta(ctx context.Context) string {
	s := t.s
	w := s.ws.watcher
	if w == nil {
		return ""
	}
	// The hashes of the read set; a text is read from the store only for a
	// file that changed.
	hashes, err := t.db.Memory().ReadSet(ctx, s.id)
	if err != nil {
		t.log.Warn("context delta: read set", "err", err)
		return ""
	}
	seen := make(map[string]watch.Seen, len(hashes))
	for p, h := range hashes {
		seen[p] = watch.Seen{Hash: h, Load: func() []byte {
			b, err := t.db.Memory().SeenContent(ctx, s.id, p)
			if err != nil {
				t.log.Warn("context delta: read set", "err", err)
			}
			return b
		}}
	}
	var stale []string
	if !s.staleChecked {
		// A tree watched in part watches what the model has seen (a no-op
		// otherwise).
		w.Touch(time.Now(), slices.Collect(maps.Keys(seen))...)
		// The first delta of a session reopened from the store also covers
		// files that changed while no watcher ran (the daemon was down).
		stale = watch.StaleFiles(s.ws.root, seen)
		s.staleChecked = true
	}
	delta, err := w.DeltaWith(ctx, s.since, seen, watch.DeltaCaps{}, stale)
	if err != nil {
		t.log.Warn("context delta", "err", err)
		return ""
	}
	s.since = delta.Next
	bg := context.WithoutCancel(ctx)
	for p, v := range delta.Updated {
		if len(v.Content) > maxSeenContent {
			v.Content = nil
		}
		if err := t.db.Memory().SetSeen(bg, s.id, p, store.Seen{Hash: v.Hash, Content: v.Content}); err != nil {
			t.log.Warn("context delta: update read set", "err", err)
		}
	}
	for _, p := range delta.Forget {
		if err := t.db.Memory().ForgetSeen(bg, s.id, p); err != nil {
			t.log.Warn("context delta: update read set", "err", err)
		}
	}
	if note := w.ScopeNote(); note != "" && !s.toldScope {
		// Once per session: the item stays in its transcript.
		s.toldScope = true
		if delta.Text == "" {
			return note
		}
		return note + "\n\n" + delta.Text
	}
	return delta.Text
}
