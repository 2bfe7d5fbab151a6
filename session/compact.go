package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/transcript"
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

// Why a conversation was compacted.
const (
	CompactWindow  = "context window" // past Config.CompactAt of the window
	CompactRefused = "context_length_exceeded"
	CompactUser    = "asked by the user"
)

// summaryItem opens the compacted view (transcript.SummaryItem).
func summaryItem(summary string) json.RawMessage { return transcript.SummaryItem(summary) }

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

// Compact compacts the conversation now, as a turn of its own (the user's
// /compact). It returns the turn's stop reason.
func (c *Conversation) Compact(ctx context.Context, sink Sink) (StopReason, error) {
	return c.CompactAsked(ctx, "", sink)
}

// CompactAsked is Compact for a command the user typed (said, "/compact"):
// the editor's replay of the session shows it, then the notice.
func (c *Conversation) CompactAsked(ctx context.Context, said string, sink Sink) (StopReason, error) {
	return c.asTurn(ctx, func(turnID int64) (StopReason, error) {
		c.tr.StartTurn()
		if said != "" {
			if err := c.tr.Turns().KeepShown(context.WithoutCancel(ctx), turnID, transcript.ShownCommand, said); err != nil {
				return "", err
			}
		}
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
// writes (summarize), which the transcript records with the view it makes
// (Transcript.Compacted). The sink is shown it as it runs
// (CompactionSink), or told once it is done. The turn owns c.
func (c *Conversation) compact(ctx context.Context, turnID int64, sink Sink, why string) error {
	if err := c.tr.Flush(context.WithoutCancel(ctx), turnID); err != nil {
		return err
	}
	shown := startCompaction(sink)
	before := c.tr.View().Len()
	how, summary, err := c.replaceView(ctx, turnID, why)
	if err != nil {
		shown.ended(ctx, err)
		return err
	}
	after := c.tr.View().Len()
	if sink != nil {
		note := fmt.Sprintf("hearth: compacted this session (%s) with %s: %d items are now %d; "+
			"the whole history stays in `hearth inspect %s`.", why, how, before, after, c.id)
		shown.completed(note, summary)
		if err := c.tr.Turns().KeepCompaction(context.WithoutCancel(ctx), turnID, shown.id, note, summary); err != nil {
			return err
		}
	}
	c.log.Info("compacted", "why", why, "how", how, "items_before", before, "items_after", after)
	// The next request chains on the compacted view.
	if _, err := c.exchange(ctx, turnID, false, nil); err != nil && !errors.Is(err, errNoWarmupOverHTTP) {
		c.log.Info("warm-up of the compacted view failed; the next request is full", "err", err)
	}
	return nil
}

// replaceView makes the compacted view: how says with what, summary is the
// model's when it wrote one (the API's compaction shows none).
func (c *Conversation) replaceView(ctx context.Context, turnID int64, why string) (how, summary string, err error) {
	if c.Config().Compaction == CompactServer {
		if err = c.compactOnServer(ctx, turnID, why); err == nil {
			return "the API's compaction", "", nil
		}
		if ctx.Err() != nil {
			return "", "", err
		}
		c.log.Info("the API's compaction failed; compacting with a summary", "err", err)
	}
	summary, respID, err := c.summarize(ctx, turnID)
	if err != nil {
		return "", "", err
	}
	if err := c.tr.Compacted(ctx, summary, respID, why, c.Config().ContextWindow); err != nil {
		return "", "", err
	}
	return "a summary", summary, nil
}

// summarize asks the model for the hand-off summary of the view, aside
// from the transcript: chained on the baseline when the view and the
// question fit the window, else (or when Judge says to make it smaller) in
// parts no larger than the window holds (summarizeParts). Each summary
// request goes through its failures as any model request (judged).
func (c *Conversation) summarize(ctx context.Context, turnID int64) (summary, respID string, err error) {
	cfg := c.Config()
	ask := []json.RawMessage{UserMessage(compactionPrompt)}
	size := c.line.nextInput() + tokensOf(ask...)
	budget := int(cfg.CompactAt * float64(cfg.ContextWindow)) // 0 when the window is unknown
	if cfg.ContextWindow <= 0 || size <= cfg.ContextWindow {
		r, v, err := c.judged(ctx, func() (*reply, error) { return c.exchangeAside(ctx, turnID, nil, ask) }, nil, nil, nil)
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
