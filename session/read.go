package session

import (
	"context"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// read consumes a response's events to its terminal event, relaying text
// and function-call progress to sink.
func (c *Conversation) read(ctx context.Context, st *responses.Stream, sink Sink) (r *reply, first time.Time, err error) {
	cfg := c.client.Config()
	var early *earlyReads
	defer func() {
		if err != nil {
			early.stop()
		}
	}()
	for {
		e, err := st.Next(ctx, first.IsZero(), cfg.FirstEventTimeout, cfg.IdleTimeout)
		if err != nil {
			return nil, first, err
		}
		if first.IsZero() {
			first = time.Now()
		}
		if e.Terminal() {
			res, err := st.End(e)
			if err != nil {
				return nil, first, err
			}
			u := res.Usage
			return &reply{id: res.ID, incomplete: res.Incomplete, output: res.Output, early: early,
				usage: store.Usage{Input: u.Input, Cached: u.Cached, Output: u.Output, Reasoning: u.Reasoning}}, first, nil
		}
		if sink != nil {
			early = c.relay(ctx, e, sink, early)
		}
	}
}

// relay tells sink what event e of a turn's response shows: text and
// reasoning deltas, a tool call begun (a function call, or a custom tool's,
// whose input deltas — response.custom_tool_call_input.delta — like a
// function call's argument deltas, are not relayed: the call shows once
// it is complete). A read the model has finished
// calling starts at once, while the rest of the response arrives
// (earlyReads): it returns early, or the earlyReads it started.
func (c *Conversation) relay(ctx context.Context, e *responses.Event, sink Sink, early *earlyReads) *earlyReads {
	switch e.Type {
	case "response.output_text.delta":
		if e.Delta != "" {
			sink.Text(e.Delta)
		}
	case "response.reasoning_summary_text.delta":
		if e.Delta != "" {
			sink.Thought(e.Delta)
		}
	case "response.reasoning_summary_part.added":
		// Parts of one summary are paragraphs: keep them apart.
		if e.SummaryIndex > 0 {
			sink.Thought("\n\n")
		}
	case "response.output_item.added":
		if call, ok := readItem(e.Item).call(); ok {
			sink.ToolCall(ToolCall{CallID: call.CallID, Name: call.Name, Custom: call.Custom}, "pending", nil)
		}
	case "response.output_item.done":
		if call, ok := readItem(e.Item).call(); ok {
			early = c.startEarly(ctx, early, call)
		}
	}
	return early
}
