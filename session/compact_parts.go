package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hearthd/hearth/session/responses"
)

// A view past the window cannot be summarized by one request: it would be
// refused for its length, as the view itself would. summarizeParts sends
// the oldest part that fits, in full (not chained), with the compaction
// prompt; then the next part after that part's summary; and so on until
// the rest fits, whose summary covers everything. No request carries more
// than budget tokens by hearth's estimate, and a part the server still
// refuses for its length (Judge's Compact) is tried again at half the
// budget.

// maxPartRefusals bounds the parts refused for their length in one
// compaction (each halves the room for items).
const maxPartRefusals = 3

// summarizeParts summarizes the view in parts of at most budget tokens
// each (the settings, the guidance, the initial items, the summary so far, the part and
// the prompt ask); budget 0 (the window is unknown, and the server refused
// the view) leaves room for half of the view's items.
func (c *Conversation) summarizeParts(ctx context.Context, turnID int64, budget int, ask []json.RawMessage) (summary, respID string, err error) {
	view := c.tr.Input()
	initial := min(c.tr.View().InitialCount(), len(view))
	_, key, err := c.line.settings()
	if err != nil {
		return "", "", err
	}
	guide, err := c.line.head() // prepare puts it first in each request
	if err != nil {
		return "", "", err
	}
	head, body := view[:initial:initial], view[initial:]
	fixed := (len(key)+3)/4 + tokensOf(guide...) + tokensOf(head...) + tokensOf(ask...)
	if budget <= 0 {
		budget = fixed + tokensOf(body...)/2
	}
	var carried []json.RawMessage // the summary of the parts before, as an item
	refusals := 0
	for i := 0; ; {
		room := budget - fixed - tokensOf(carried...)
		if room <= 0 {
			return "", "", fmt.Errorf("compact: the instructions, tools and the session's first items take %d of the %d tokens a summary request may hold", fixed, budget)
		}
		part, next := nextPart(body, i, room)
		in := append(append(append([]json.RawMessage(nil), head...), carried...), part...)
		r, v, err := c.judged(ctx, func() (*reply, error) { return c.exchangeAside(ctx, turnID, in, ask) }, nil, nil, nil)
		if err != nil {
			if v.Action == responses.Compact && refusals < maxPartRefusals {
				refusals++
				budget -= room / 2
				continue
			}
			return "", "", fmt.Errorf("compact: the summary request for items %d to %d of %d: %w", i+1, next, len(body), err)
		}
		text, id, err := summaryOf(r)
		if err != nil || next == len(body) {
			return text, id, err
		}
		c.log.Info("summarized the oldest part of a view past the window", "items", next-i, "left", len(body)-next)
		carried, i = []json.RawMessage{summaryItem(text)}, next
	}
}

// nextPart returns the items of body from i that one summary request
// takes: all of the rest when it fits room, else the longest run that fits
// and ends where nothing is left half (no call without its output, no
// reasoning without what it led to) — before a user's message when one
// such cut fits: whole turns — else the first such run with its long texts
// clipped to fit. next is where the following part starts.
func nextPart(body []json.RawMessage, i, room int) (part []json.RawMessage, next int) {
	if tokensOf(body[i:]...) <= room {
		return body[i:], len(body)
	}
	open := map[string]bool{}
	size, fit, turn, first := 0, -1, -1, -1
	for k := i; k < len(body); k++ {
		size += len(body[k])
		h := readItem(body[k])
		switch {
		case h.CallID != "" && strings.HasSuffix(h.Type, "_output"):
			delete(open, h.CallID)
		case h.CallID != "":
			open[h.CallID] = true
		}
		if len(open) > 0 || h.Type == "reasoning" {
			continue // a cut here would leave a call without its output, or reasoning without what it led to
		}
		if first < 0 {
			first = k + 1
		}
		if (size+3)/4 > room {
			break
		}
		fit = k + 1
		if fit < len(body) && readItem(body[fit]).Role == "user" {
			turn = fit
		}
	}
	switch {
	case turn > i:
		return body[i:turn], turn
	case fit > i:
		return body[i:fit], fit
	case first < 0:
		first = len(body)
	}
	unit := body[i:first]
	clipped := make([]json.RawMessage, 0, len(unit))
	for _, it := range unit {
		if it, ok := clipItem(it, room/len(unit)); ok {
			clipped = append(clipped, it)
		}
	}
	return clipped, first
}

// clipItem makes item fit about tokens, for a summary request: its long
// texts (a message's text parts, a call's arguments or input, an output)
// are clipped by ClipOutput; a reasoning item, sealed and uncuttable, is
// left out (ok false), which the API allows.
func clipItem(item json.RawMessage, tokens int) (json.RawMessage, bool) {
	if tokensOf(item) <= tokens {
		return item, true
	}
	var m map[string]any
	if err := json.Unmarshal(item, &m); err != nil {
		return item, true // not an object: sent as it is
	}
	if m["type"] == "reasoning" {
		return nil, false
	}
	each := max(tokens/4, 64)
	for _, k := range []string{"arguments", "input", "output"} {
		if s, ok := m[k].(string); ok {
			m[k] = ClipOutput(s, each)
		}
	}
	for _, k := range []string{"content", "output"} {
		parts, _ := m[k].([]any)
		for _, p := range parts {
			if p, ok := p.(map[string]any); ok {
				if s, ok := p["text"].(string); ok {
					p["text"] = ClipOutput(s, each)
				}
			}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return item, true
	}
	return b, true
}

// errNoSummary: a summary request answered without text.
var errNoSummary = errors.New("compact: the model wrote no summary")
