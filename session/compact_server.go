package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/transcript"
	"github.com/hearthd/hearth/store"
)

// With Config.Compaction = CompactServer a conversation compacts with the
// API's own compaction, POST {base}/responses/compact: the view goes up
// whole, and what comes back — the user's messages and an encrypted
// compaction item that stands for everything else — is the new view after
// the session's initial items. Those items are stored as the session's
// (the transcript is the truth: a restart rebuilds the view from them),
// marked so that session/load does not show the user's messages twice
// (FromCompaction). Any failure — a server without the endpoint, a
// refusal, an answer without a compaction item — leaves the view as it was,
// and compact falls back to the local summary.

// FromCompaction reports whether a stored item's view marks it as part of
// an API compaction's output, which an editor's replay leaves out.
func FromCompaction(view json.RawMessage) bool { return bytes.Equal(view, transcript.CompactionView) }

// Shown is the kind of a stored item kept for the editor only
// (transcript.ShownCancelled, ShownCommand or ShownNotice), false for the
// others.
func Shown(view json.RawMessage) (string, bool) { return transcript.ShownKind(view) }

// The kinds of items kept for the editor only (transcript's).
const (
	ShownCancelled = transcript.ShownCancelled
	ShownCommand   = transcript.ShownCommand
	ShownNotice    = transcript.ShownNotice
)

// compactOnServer compacts the view with the API's compaction and records
// it. Nothing changes when it fails.
func (c *Conversation) compactOnServer(ctx context.Context, turnID int64, why string) error {
	set, _, err := c.line.settings()
	if err != nil {
		return err
	}
	guide, err := c.line.head()
	if err != nil {
		return err
	}
	// The view as a full request sends it: the guidance first, kept, as
	// the initial items are, out of what the compaction returns.
	view := append(append([]json.RawMessage(nil), guide...), c.tr.Input()...)
	started := time.Now()
	res, output, err := c.line.compactParts(ctx, set, view, len(guide)+c.tr.View().InitialCount())
	if err != nil {
		return err
	}
	if _, err := c.tr.CompactedByServer(ctx, turnID, res.ID, why, output); err != nil {
		return err
	}
	c.log.Info("the API compacted the view", "items", len(view), "into", len(output), "input_tokens", res.Usage.Input,
		"output_tokens", res.Usage.Output, "took", time.Since(started))
	return nil
}

// compactParts sends view to the API's compaction: whole when it fits
// CompactAt of a known window, else in parts, oldest first, each with the
// output of the part before (nextPart cuts them as it does for the local
// summary), so no request is over the window. It returns the last answer
// and its output less the initial items (view[:initial]) it repeats, which
// must hold a compaction item.
func (l *line) compactParts(ctx context.Context, set responses.Settings, view []json.RawMessage, initial int) (*responses.Compacted, []json.RawMessage, error) {
	cfg := l.config()
	head, body := view[:initial:initial], view[initial:]
	budget := int(cfg.CompactAt * float64(cfg.ContextWindow))
	var carried []json.RawMessage // the output so far, as replay forms
	for i := 0; ; {
		part, next := body[i:], len(body)
		if cfg.ContextWindow > 0 {
			fixed := (len(set.Key())+3)/4 + tokensOf(head...) + tokensOf(carried...)
			part, next = nextPart(body, i, budget-fixed)
		}
		in := append(append(append([]json.RawMessage(nil), head...), carried...), part...)
		res, err := l.client.api.Compact(ctx, responses.CompactRequestFor(set, in))
		if err != nil {
			return nil, nil, fmt.Errorf("compact: the API's compaction: %w", err)
		}
		l.client.counters.bytesSent.Add(int64(res.Sent))
		l.client.counters.addUsage(store.Usage{Input: res.Usage.Input, Cached: res.Usage.Cached, Output: res.Usage.Output, Reasoning: res.Usage.Reasoning})
		var out []json.RawMessage
		sealed := false
		for _, it := range res.Output {
			if form, ok := transcript.ReplayForm(it); ok && slices.ContainsFunc(head, func(f json.RawMessage) bool { return bytes.Equal(f, form) }) {
				continue // the session's initial items are hearth's to keep, first
			}
			sealed = sealed || readItem(it).Type == "compaction"
			out = append(out, it)
		}
		if !sealed {
			return nil, nil, errors.New("compact: the API's compaction answered without a compaction item")
		}
		if next == len(body) {
			return res, out, nil
		}
		carried, i = transcript.ReplayForms(nil, out), next
	}
}
