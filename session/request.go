package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// reply is a response that reached response.completed or
// response.incomplete.
type reply struct {
	id         string
	incomplete string // the incomplete reason, "" when completed
	output     []json.RawMessage
	usage      store.Usage

	// staged: the response only calls reads, and it is staged with its
	// end rather than stored (send); the next request's commit stores it.
	staged bool
	// early: its reads started before it ended; whoever acts on the
	// reply stops them (act).
	early *earlyReads
}

// exchange sends one request for the conversation's current transcript
// (incremental when it can be), reads its response to the terminal event
// and, on success, commits the output items with the request's end before
// returning them. sink may be nil (warm-up). It owns the lane from send to
// the terminal event; on cancellation it aborts the response.
func (c *Conversation) exchange(ctx context.Context, turnID int64, generate bool, sink Sink) (*reply, error) {
	return c.send(ctx, turnID, generate, sink, nil, nil)
}

// exchangeAside sends the transcript (or view, when not nil: replay forms
// that replace it, sent in full) plus aside (a question about it, such as
// the compaction prompt) and returns the answer, which is not committed to
// the transcript: the request is logged, the transcript and the baseline
// stay as they were.
func (c *Conversation) exchangeAside(ctx context.Context, turnID int64, view, aside []json.RawMessage) (*reply, error) {
	return c.send(ctx, turnID, true, nil, view, aside)
}

func (c *Conversation) send(ctx context.Context, turnID int64, generate bool, sink Sink, view, aside []json.RawMessage) (*reply, error) {
	c.mu.Lock()
	lane := c.lane
	c.mu.Unlock()
	if !c.client.api.Lanes() {
		lane = ""
	}
	conn, err := c.client.api.Link(ctx, c.client.keyFor(c), lane)
	if err != nil {
		return nil, err
	}
	if sink != nil {
		if n := c.client.api.TakeNotice(); n != "" {
			sink.Notice(n)
		}
	}
	if !generate && conn.Transport() == "http" {
		// Over HTTP with store:false there is nothing to warm.
		return nil, errNoWarmupOverHTTP
	}
	if err := conn.Acquire(ctx, lane); err != nil {
		return nil, err
	}

	c.convert()
	c.mu.Lock()
	full := append([]json.RawMessage(nil), c.inputLocked()...)
	pending, pendingSeen, pendingEnd := c.pending, c.pendingSeen, c.pendingEnd
	for _, it := range pending {
		full = replayForms(full, []json.RawMessage{it.Data})
	}
	base := c.base
	if view != nil {
		full, base = append([]json.RawMessage(nil), view...), nil
	}
	full = append(full, aside...)
	c.mu.Unlock()
	set, key, err := c.settings()
	if err != nil {
		conn.Release(lane)
		return nil, err
	}
	items, prev, reason := plan(base, conn, lane, key, full, c.client.Config().DisableIncremental)

	ev := responses.Create{Type: "response.create", Settings: set, Encoded: key, StreamID: lane, PreviousResponseID: prev, Input: items}
	kind := store.KindIncremental
	switch {
	case !generate:
		f := false
		ev.Generate = &f
		kind = store.KindWarmup
	case prev == "":
		kind = store.KindFull
	}
	frame, err := ev.Frame()
	if err != nil {
		conn.Release(lane)
		return nil, err
	}
	if prev != "" {
		// What the full request would have cost more: the items left out
		// (each with its comma) less the previous_response_id member. The
		// first request after an empty warm-up leaves nothing out: it saved
		// nothing, rather than a few bytes less than nothing.
		saved := -len(`,"previous_response_id":""`) - len(prev)
		for _, it := range full[:len(full)-len(items)] {
			saved += len(it) + 1
		}
		if saved > 0 {
			c.client.counters.bytesSaved.Add(int64(saved))
		}
	}
	if kind == store.KindWarmup && reason == "" {
		reason = reasonWarmup
	}
	sent := time.Now()
	// What the request carries that the store does not hold yet (the
	// turn's staged response and outputs) is committed with its row, before
	// it is sent, in one transaction.
	reqID, _, err := c.db.InsertRequestAfter(ctx, store.Request{
		SessionID: c.id, TurnID: turnID, Conn: conn.Name(), Kind: kind, FullReason: reason,
		PreviousResponseID: prev, BytesSent: int64(len(frame)), InputItems: len(items),
		Status: "sent", Sent: sent,
	}, store.Staged{End: pendingEnd, Items: pending, Seen: pendingSeen})
	if err != nil {
		conn.Release(lane)
		return nil, storeErr(fmt.Errorf("record request: %w", err))
	}
	tell := c.committed(len(pending), len(pendingSeen))
	c.count(kind, len(frame))

	st, err := conn.Send(ctx, lane, frame)
	tell()
	if err != nil {
		c.finish(reqID, "", "failed", err, time.Time{})
		return nil, err
	}
	r, first, err := c.read(ctx, st, sink)
	if err != nil {
		c.forgetBaseline()
		status := "failed"
		if ctx.Err() != nil {
			status = "cancelled"
		}
		switch responses.Judge(err, 0, 0).Stream {
		case responses.WalkAway:
			c.abort(conn, st)
		case responses.DropConn:
			conn.Abort(st, false)
		}
		id := ""
		var re *responses.ResponseError
		if errors.As(err, &re) {
			id = re.ResponseID
		}
		c.finish(reqID, id, status, err, first)
		return nil, err
	}
	status := store.RequestCompleted
	if r.incomplete != "" {
		status = store.RequestIncomplete
	}
	out := make([]store.NewItem, len(r.output))
	for i, it := range r.output {
		out[i] = store.NewItem{Origin: store.OriginOutput, Data: it}
	}
	if aside != nil {
		out = nil // an answer aside is the caller's, not the transcript's
	}
	// The output is committed with the request's end, in one transaction,
	// before anything acts on it: a tool never runs for an item the store
	// does not hold. Reads are the exception: they change nothing, so a
	// response that only calls reads is staged instead, with its end, and
	// committed with the reads' outputs and the next request's row: a read
	// round trip commits once. The editor hears of those calls once they
	// are stored (runTools).
	end := &store.Completion{ID: reqID, ResponseID: r.id, Status: status, FirstEvent: first, Finished: time.Now(), Usage: r.usage}
	stage := aside == nil && sink != nil && c.onlyReads(r.output)
	c.mu.Lock()
	stage = stage && len(c.pending) == 0 && c.pendingEnd == nil // nothing may come before the response
	c.mu.Unlock()
	if !stage {
		if _, err := c.db.CommitStaged(context.WithoutCancel(ctx), c.id, turnID, store.Staged{End: end, Items: out}); err != nil {
			c.forgetBaseline()
			r.early.stop()
			return nil, storeErr(fmt.Errorf("commit the response: %w", err))
		}
	}
	c.client.counters.addUsage(r.usage)
	if aside != nil {
		return r, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.usage.Input > 0 {
		c.lastInput = int(r.usage.Input)
	}
	if stage {
		c.pending, c.pendingEnd, r.staged = out, end, true
		c.base = &baseline{conn: conn, lane: lane, settings: key, input: full, output: replayForms(nil, r.output), responseID: r.id}
		return r, nil
	}
	n := len(c.inputLocked())
	c.transcript = append(c.transcript, r.output...)
	in := c.inputLocked()
	c.base = &baseline{conn: conn, lane: lane, settings: key, input: full, output: in[n:len(in):len(in)], responseID: r.id}
	return r, nil
}

// onlyReads reports whether output calls tools and every one of them may
// run concurrently (ConcurrentTools: reads, which change nothing).
func (c *Conversation) onlyReads(output []json.RawMessage) bool {
	conc, ok := c.tools.(ConcurrentTools)
	if !ok {
		return false
	}
	calls := 0
	for _, it := range output {
		if h := readItem(it); h.Type == "function_call" {
			if !conc.Concurrent(h.Name) {
				return false
			}
			calls++
		}
	}
	return calls > 0
}

func (c *Conversation) count(kind store.RequestKind, n int) {
	k := &c.client.counters
	k.bytesSent.Add(int64(n))
	switch kind {
	case store.KindWarmup:
		k.warmups.Add(1)
	case store.KindFull:
		k.full.Add(1)
	default:
		k.incremental.Add(1)
	}
}

func (c *Conversation) finish(reqID int64, respID, status string, err error, first time.Time) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	// The request row is bookkeeping: record it even when the turn's
	// context is gone.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ferr := c.db.FinishRequest(ctx, reqID, respID, status, msg, first, time.Now()); ferr != nil {
		c.log.Warn("record request outcome", "err", ferr)
	}
}

func (c *Conversation) forgetBaseline() {
	c.mu.Lock()
	c.base = nil
	c.mu.Unlock()
}

// abort stops an in-flight response. There is no cancel event: the socket
// must close. When other lanes are busy on it, the conversation walks away
// from its lane instead (discarding what still arrives) so that siblings'
// turns survive, and continues on a fresh lane. Over HTTP only the
// request is cancelled.
func (c *Conversation) abort(conn responses.Link, st *responses.Stream) {
	conn.Abort(st, c.client.api.Lanes())
	if st.Abandoned() {
		c.mu.Lock()
		c.lane = c.client.api.NewLane()
		c.base = nil
		c.mu.Unlock()
	}
}

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
		switch e.Type {
		case "response.output_text.delta":
			if sink != nil && e.Delta != "" {
				sink.Text(e.Delta)
			}
		case "response.reasoning_summary_text.delta":
			if sink != nil && e.Delta != "" {
				sink.Thought(e.Delta)
			}
		case "response.reasoning_summary_part.added":
			// Parts of one summary are paragraphs: keep them apart.
			if sink != nil && e.SummaryIndex > 0 {
				sink.Thought("\n\n")
			}
		case "response.output_item.added":
			if sink != nil {
				if h := readItem(e.Item); h.Type == "function_call" {
					sink.ToolCall(ToolCall{CallID: h.CallID, Name: h.Name}, "pending", nil)
				}
			}
		case "response.output_item.done":
			// A read the model has finished calling starts now, while
			// the rest of the response arrives (earlyReads).
			if sink != nil {
				if h := readItem(e.Item); h.Type == "function_call" {
					early = c.startEarly(ctx, early, ToolCall{CallID: h.CallID, Name: h.Name, Arguments: h.Arguments})
				}
			}
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
	}
}
