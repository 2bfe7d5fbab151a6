package session

import (
	"context"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// read consumes a response's events to its terminal event, relaying text
// and function-call progress to sink.
func (l *line) read(ctx context.Context, st *responses.Stream, sink Sink) (r *reply, first time.Time, err error) {
	cfg := l.client.Config()
	var early *earlyReads
	var running searches // the hosted web_search's: shown, never run here
	defer func() {
		if err != nil {
			early.stop()
			running.fail(sink)
		}
	}()
	if sink != nil {
		// Text that streams while this loop waits goes to the sink from
		// the connection's reader, in order (Stream.OnDeltas).
		st.OnDeltas(func(typ, text string) { relayText(typ, text, sink) })
	}
	for {
		e, err := st.Next(ctx, first.IsZero(), cfg.FirstEventTimeout, cfg.IdleTimeout)
		if err != nil {
			return nil, first, err
		}
		if first.IsZero() {
			first = time.Now()
		}
		if e.Type == "response.created" && e.Response != nil {
			l.steer.created(st, e.Response.ID)
		}
		if e.Terminal() {
			res, err := st.End(e)
			if err != nil {
				return nil, first, err
			}
			u := res.Usage
			return &reply{id: res.ID, incomplete: res.Incomplete, output: res.Output, early: early, successor: e.Continued(),
				usage: store.Usage{Input: u.Input, Cached: u.Cached, Output: u.Output, Reasoning: u.Reasoning}}, first, nil
		}
		if sink != nil && !running.relay(e, sink) {
			early = l.relay(ctx, st, e, sink, early)
		}
	}
}

// relay tells sink what event e of a turn's response shows: text and
// reasoning deltas (with those queued right behind e, at once), a tool
// call begun (a function call, or a custom tool's, whose input deltas —
// response.custom_tool_call_input.delta — like a function call's argument
// deltas, are not relayed: the call shows once it is complete). A read the
// model has finished calling starts at once, while the rest of the
// response arrives (earlyReads): it returns early, or the earlyReads it
// started.
func (l *line) relay(ctx context.Context, st *responses.Stream, e *responses.Event, sink Sink, early *earlyReads) *earlyReads {
	switch e.Type {
	case "response.output_text.delta", "response.reasoning_summary_text.delta":
		relayText(e.Type, st.JoinDeltas(e), sink)
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
			early = l.box.startEarly(ctx, early, call)
		}
	}
	return early
}

// relayText tells sink the text of deltas of type typ: the answer's, or
// the reasoning summary's; other deltas (a call's arguments) show nothing.
func relayText(typ, text string, sink Sink) {
	if text == "" {
		return
	}
	switch typ {
	case "response.output_text.delta":
		sink.Text(text)
	case "response.reasoning_summary_text.delta":
		sink.Thought(text)
	}
}
