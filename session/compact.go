package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// Compaction: a session that outgrows the model's context window goes on
// from a summary. The model is asked for a hand-off summary of everything
// so far (one request chained on the baseline, its answer kept out of the
// transcript); the model's view becomes the session's initial items, the
// summary, and the running turn's items when they are small. The stored
// items stay — inspect and session/load show the whole history — and the
// compaction point is stored, so a restart re-warms the compacted view.
// The new view is warmed at once, so the next request is incremental.

// compactionPrompt asks for the hand-off summary.
const compactionPrompt = "Your context window is nearly full: this conversation will go on from a summary. " +
	"Write a hand-off summary for yourself: the user's goals and constraints, what was done and decided, " +
	"the code involved (paths and names), what is in progress and what is left to do. " +
	"Be specific and complete; answer with the summary only, without calling a tool. The summary replaces everything above it."

// summaryPrefix opens the summary item in the compacted view.
const summaryPrefix = "Summary of the conversation so far (earlier messages were compacted; the user can see them all):\n\n"

// Why a conversation was compacted.
const (
	CompactWindow  = "context window" // past Config.CompactAt of the window
	CompactRefused = "context_length_exceeded"
	CompactUser    = "asked by the user"
)

// viewAfter makes the transcript the compacted view of items under c.
// Called by Open before the conversation is shared.
func (c *Conversation) viewAfter(items []store.Item, last store.Compaction) {
	for _, it := range items[:c.initialN] {
		c.ledger.committed = append(c.ledger.committed, it.Data)
	}
	c.ledger.committed = append(c.ledger.committed, summaryItem(last.Summary))
	c.prefix, c.through = len(c.ledger.committed), last.ThroughSeq
	for _, it := range items {
		if it.Seq > last.ThroughSeq {
			c.ledger.committed = append(c.ledger.committed, it.Data)
		}
	}
}

func summaryItem(summary string) json.RawMessage {
	return UserMessage(summaryPrefix + summary)
}

// seqOf is the store's seq of transcript item i (at or after c.prefix).
// Stored items have no gaps, so the view's items after through are
// numbered from through+1. Called with c.mu held.
func (c *Conversation) seqOfLocked(i int) int64 {
	if c.prefix == 0 {
		return int64(i) + 1
	}
	return c.through + int64(i-c.prefix) + 1
}

// overWindow says whether the view, as the last response counted it plus
// what is staged, is past the compaction threshold.
func (c *Conversation) overWindow() bool {
	cfg := c.client.Config()
	if cfg.ContextWindow <= 0 {
		return false
	}
	c.mu.Lock()
	tokens := c.lastInput
	for _, it := range c.ledger.staged {
		tokens += len(it.Data) / 4
	}
	c.mu.Unlock()
	return float64(tokens) > cfg.CompactAt*float64(cfg.ContextWindow)
}

// Compact compacts the conversation now, as a turn of its own (the user's
// /compact). It returns the turn's stop reason.
func (c *Conversation) Compact(ctx context.Context, sink Sink) (StopReason, error) {
	return c.asTurn(ctx, func(turnID int64) (StopReason, error) {
		c.mu.Lock()
		c.turnStart = len(c.ledger.committed)
		c.mu.Unlock()
		if err := c.compact(ctx, turnID, sink, CompactUser); err != nil {
			if ctx.Err() != nil {
				return StopCancelled, nil
			}
			return "", err
		}
		return StopEndTurn, nil
	})
}

// compact replaces the model's view by [initial items, summary, the running
// turn's items when they are small] and warms it. The turn owns c.
func (c *Conversation) compact(ctx context.Context, turnID int64, sink Sink, why string) error {
	if err := c.flush(context.WithoutCancel(ctx), turnID); err != nil {
		return err
	}
	summary, respID, err := c.summarize(ctx, turnID)
	if err != nil {
		return err
	}

	cfg := c.client.Config()
	c.mu.Lock()
	n := len(c.ledger.committed)
	// Keep the running turn's items if they are small (a quarter of the
	// window); the summary covers them too.
	keep := max(c.turnStart, c.prefix, c.initialN)
	size := 0
	for _, it := range c.ledger.committed[keep:] {
		size += len(it) / 4
	}
	if cfg.ContextWindow > 0 && size > cfg.ContextWindow/4 || keep > n {
		keep = n
	}
	through := c.seqOfLocked(keep) - 1
	initial := append([]json.RawMessage(nil), c.ledger.committed[:c.initialN]...)
	tail := append([]json.RawMessage(nil), c.ledger.committed[keep:]...)
	before := n
	c.mu.Unlock()

	if _, err := c.db.AddCompaction(context.WithoutCancel(ctx), store.Compaction{SessionID: c.id, ThroughSeq: through,
		Summary: summary, ResponseID: respID, Reason: why}); err != nil {
		return storeErr(fmt.Errorf("compact: %w", err))
	}
	c.mu.Lock()
	c.ledger.committed = append(append(initial, summaryItem(summary)), tail...)
	c.prefix, c.through = len(initial)+1, through
	c.turnStart = c.prefix
	c.input, c.converted = nil, 0
	c.base = nil
	c.lastInput = 0
	after := len(c.ledger.committed)
	c.mu.Unlock()
	if sink != nil {
		sink.Notice(fmt.Sprintf("hearth: compacted this session (%s): %d items are now a summary and %d items; "+
			"the whole history stays in `hearth inspect %s`.", why, before, after, c.id))
	}
	c.log.Info("compacted", "why", why, "items_before", before, "items_after", after, "through", through)
	// The next request chains on the compacted view.
	if _, err := c.exchange(ctx, turnID, false, nil); err != nil && !errors.Is(err, errNoWarmupOverHTTP) {
		c.log.Info("warm-up of the compacted view failed; the next request is full", "err", err)
	}
	return nil
}

// summarize asks the model for the hand-off summary of the view, aside
// from the transcript; a view past the window already is summarized from
// its newer half.
func (c *Conversation) summarize(ctx context.Context, turnID int64) (summary, respID string, err error) {
	ask := []json.RawMessage{UserMessage(compactionPrompt)}
	r, err := c.exchangeAside(ctx, turnID, nil, ask)
	if err != nil && responses.Classify(err) == responses.KindContextLength {
		// The view is past the window already: summarize its newer half
		// (with the initial items), in full.
		r, err = c.exchangeAside(ctx, turnID, c.newerHalf(), ask)
	}
	if err != nil {
		return "", "", fmt.Errorf("compact: the summary request: %w", err)
	}
	for _, it := range r.output {
		if h := readItem(it); h.Type == "message" {
			summary += outputText(it)
		}
	}
	if strings.TrimSpace(summary) == "" {
		return "", "", errors.New("compact: the model wrote no summary")
	}
	return summary, r.id, nil
}

// newerHalf is the view's initial items and the newer half of the rest, as
// replay forms, cut where no function call is left without its output.
func (c *Conversation) newerHalf() []json.RawMessage {
	c.convert()
	c.mu.Lock()
	in := c.inputLocked()
	view := append([]json.RawMessage(nil), in...)
	initial := min(c.initialN, len(view))
	c.mu.Unlock()
	cut := initial + (len(view)-initial)/2
	for cut < len(view) && isOutput(readItem(view[cut]).Type) {
		cut++ // an output whose call was cut away would be refused
	}
	return append(view[:initial:initial], view[cut:]...)
}

// outputText joins the text parts of an output message item.
func outputText(item json.RawMessage) string {
	var m struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(item, &m)
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == "output_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
