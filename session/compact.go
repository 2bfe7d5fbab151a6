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
	if last.Summary != "" { // else the API compacted: its output is stored after ThroughSeq
		c.ledger.committed = append(c.ledger.committed, summaryItem(last.Summary))
	}
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

// tokensOf estimates the tokens of items as the model counts them: four
// bytes of JSON a token, as the API's tokenizers average on English and
// code (the simulator counts exactly so).
func tokensOf(items ...json.RawMessage) int {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	return (n + 3) / 4
}

// countedLocked records what a response's usage says of the view: its input
// and output tokens, and how many items of the view they cover (the output
// is committed, or staged first in line). A server that reports no usage
// leaves the estimate to the items' bytes. Called with c.mu held.
func (c *Conversation) countedLocked(r *reply) {
	if r.usage.Input <= 0 {
		return
	}
	c.lastInput, c.lastOutput = int(r.usage.Input), int(r.usage.Output)
	c.counted = len(c.ledger.committed)
	if r.staged {
		c.counted += len(r.output)
	}
}

// nextInput estimates the input tokens of the next request: the last
// response's input and output tokens (its usage: the server's own count of
// all but what came since) plus the items since, by their bytes. Without
// usage (a view just opened or compacted) it counts the whole view and the
// settings (instructions, tools) by their bytes.
func (c *Conversation) nextInput() int {
	_, key, err := c.settings()
	if err != nil {
		key = nil // the request will fail on its own; the estimate goes without
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	committed, staged := c.ledger.committed, c.ledger.staged
	from, n := 0, len(key)
	if c.lastInput > 0 && c.counted <= len(committed)+len(staged) {
		from, n = c.counted, 4*(c.lastInput+c.lastOutput)
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

// overWindow says whether the next request would be past the compaction
// threshold (CompactAt of a known window) and the view has grown since the
// last compaction: a view still past the threshold right after one (its
// initial items, the summary and the running turn's items) is not
// compacted again until something new is added to it.
func (c *Conversation) overWindow() bool {
	cfg := c.Config()
	if cfg.ContextWindow <= 0 {
		return false
	}
	c.mu.Lock()
	grown := c.ledger.next() > c.compactedAt
	c.mu.Unlock()
	return grown && float64(c.nextInput()) > cfg.CompactAt*float64(cfg.ContextWindow)
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

// compact replaces the model's view by a shorter one and warms it: with
// the API's compaction when Config.Compaction asks for it
// (compactOnServer), else, or when that fails, with a summary the model
// writes (compactLocally). The turn owns c.
func (c *Conversation) compact(ctx context.Context, turnID int64, sink Sink, why string) error {
	if err := c.flush(context.WithoutCancel(ctx), turnID); err != nil {
		return err
	}
	c.mu.Lock()
	before := len(c.ledger.committed)
	c.mu.Unlock()
	how := "the API's compaction"
	err := errors.New("not asked for")
	if c.Config().Compaction == CompactServer {
		if err = c.compactOnServer(ctx, turnID, why); err != nil && ctx.Err() == nil {
			c.log.Info("the API's compaction failed; compacting with a summary", "err", err)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		if err := c.compactLocally(ctx, turnID, why); err != nil {
			return err
		}
		how = "a summary"
	}
	c.mu.Lock()
	after := len(c.ledger.committed)
	c.mu.Unlock()
	if sink != nil {
		sink.Notice(fmt.Sprintf("hearth: compacted this session (%s) with %s: %d items are now %d; "+
			"the whole history stays in `hearth inspect %s`.", why, how, before, after, c.id))
	}
	c.log.Info("compacted", "why", why, "how", how, "items_before", before, "items_after", after)
	// The next request chains on the compacted view.
	if _, err := c.exchange(ctx, turnID, false, nil); err != nil && !errors.Is(err, errNoWarmupOverHTTP) {
		c.log.Info("warm-up of the compacted view failed; the next request is full", "err", err)
	}
	return nil
}

// compactLocally makes the view [initial items, summary, the running turn's
// items when they are small], the summary the model's (summarize), and
// records the compaction.
func (c *Conversation) compactLocally(ctx context.Context, turnID int64, why string) error {
	summary, respID, err := c.summarize(ctx, turnID)
	if err != nil {
		return err
	}

	cfg := c.Config()
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
	c.mu.Unlock()

	if _, err := c.db.AddCompaction(context.WithoutCancel(ctx), store.Compaction{SessionID: c.id, ThroughSeq: through,
		Summary: summary, ResponseID: respID, Reason: why}); err != nil {
		return storeErr(fmt.Errorf("compact: %w", err))
	}
	c.adopt(append(append(initial, summaryItem(summary)), tail...), len(initial)+1, len(initial)+1, through)
	return nil
}

// adopt makes view the model's view: its items from prefix on are the
// stored items after through, and those from turn on the running turn's
// (kept as they were). Nothing of the old view's counts or baseline holds
// for it.
func (c *Conversation) adopt(view []json.RawMessage, prefix, turn int, through int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ledger.committed = view
	c.prefix, c.through = prefix, through
	c.turnStart = turn
	c.input, c.converted = nil, 0
	c.base = nil
	c.lastInput, c.lastOutput, c.counted = 0, 0, 0
	c.compactedAt = len(view)
}

// summarize asks the model for the hand-off summary of the view, aside
// from the transcript: chained on the baseline when the view and the
// question fit the window, else (or when Judge says to make it smaller) in
// parts no larger than the window holds (summarizeParts). Each summary
// request goes through its failures as any model request (judged).
func (c *Conversation) summarize(ctx context.Context, turnID int64) (summary, respID string, err error) {
	cfg := c.Config()
	ask := []json.RawMessage{UserMessage(compactionPrompt)}
	size := c.nextInput() + tokensOf(ask...)
	budget := int(cfg.CompactAt * float64(cfg.ContextWindow)) // 0 when the window is unknown
	if cfg.ContextWindow <= 0 || size <= cfg.ContextWindow {
		r, v, err := c.judged(ctx, func() (*reply, error) { return c.exchangeAside(ctx, turnID, nil, ask) }, nil, nil)
		if err == nil {
			return summaryOf(r)
		}
		if v.Action != responses.Compact {
			return "", "", fmt.Errorf("compact: the summary request: %w", err)
		}
		// The server's window is smaller than the view: half of it fits
		// (summarizeParts halves the view's items when budget is 0).
		if budget >= size {
			budget = 0
		}
	}
	return c.summarizeParts(ctx, turnID, budget, ask)
}

// summaryOf is the text of a summary request's answer.
func summaryOf(r *reply) (summary, respID string, err error) {
	for _, it := range r.output {
		if h := readItem(it); h.Type == "message" {
			summary += outputText(it)
		}
	}
	if strings.TrimSpace(summary) == "" {
		return "", "", errNoSummary
	}
	return summary, r.id, nil
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
