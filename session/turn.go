package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// StopReason says why a turn ended; the values are ACP's.
type StopReason string

const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// maxRequestsPerTurn bounds a runaway tool loop.
const maxRequestsPerTurn = 200

// Prompt runs one turn: it commits input (the user's message items), then
// loops model request → tools → model request until the model stops. Turns
// run one at a time; a second Prompt waits for the first. Cancelling ctx
// aborts the in-flight response and ends the turn as cancelled (no error).
func (c *Conversation) Prompt(ctx context.Context, input []json.RawMessage, sink Sink) (StopReason, error) {
	return c.asTurn(ctx, func(turnID int64) (StopReason, error) { return c.run(ctx, turnID, input, sink) })
}

// asTurn runs body as one turn of the conversation: it waits for the turn
// token, records the turn's beginning and end, and commits what the turn
// staged.
func (c *Conversation) asTurn(ctx context.Context, body func(turnID int64) (StopReason, error)) (StopReason, error) {
	select {
	case c.turn <- struct{}{}:
	default:
		select {
		case c.turn <- struct{}{}:
		case <-ctx.Done():
			return StopCancelled, nil // never started: another turn held the session
		}
	}
	defer func() {
		<-c.turn
		// After the token is back, so that a loss rewarm skipped while the
		// turn ran is never missed.
		if c.line.lost() {
			c.warmUp(true)
		}
	}()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return "", responses.ErrClosed
	}

	started := time.Now()
	// Recorded even when ctx is already cancelled: a cancelled turn is
	// still a turn the user asked for.
	turnID, err := c.tr.Turns().BeginTurn(context.WithoutCancel(ctx))
	if err != nil {
		return "", err
	}
	c.client.streaming.Add(1)
	stop, err := body(turnID)
	if ferr := c.tr.Flush(context.WithoutCancel(ctx), turnID); ferr != nil && err == nil {
		err = ferr
	}
	c.client.streaming.Add(-1)
	c.client.lastTurn.Store(int64(time.Since(started)))

	status, msg := store.TurnCompleted, ""
	switch {
	case errors.Is(context.Cause(ctx), ErrShutdown):
		status, msg = store.TurnInterrupted, ErrShutdown.Error()
	case err != nil:
		status, msg = store.TurnFailed, err.Error()
	case stop == StopCancelled:
		status = store.TurnCancelled
	}
	// Without a deadline of its own, like every other write of the turn: a
	// write that waits for the one writer connection behind many sessions'
	// (hundreds of turns at once) must not turn an answered turn into a
	// failed one and leave it running in the store.
	if eerr := c.tr.Turns().EndTurn(context.WithoutCancel(ctx), turnID, status, string(stop), msg); eerr != nil && err == nil {
		err = eerr
	}
	return stop, err
}

func (c *Conversation) run(ctx context.Context, turnID int64, input []json.RawMessage, sink Sink) (StopReason, error) {
	c.awaitWarmup(ctx)
	if err := c.tr.Mend(context.WithoutCancel(ctx), turnID, interrupted); err != nil {
		return "", err
	}
	var user []store.NewItem
	for _, it := range input {
		user = append(user, store.NewItem{Origin: store.OriginInput, Data: it})
	}
	// Committed at once, before any request: what the user typed survives
	// a daemon killed before the request goes out, and shows in the
	// history even if the turn is cancelled.
	c.tr.StartTurn()
	c.tr.Stage(user, nil, nil)
	if err := c.tr.Flush(context.WithoutCancel(ctx), turnID); err != nil {
		return "", err
	}
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	c.line.steer.opened(turnID)
	defer c.line.steer.closed()
	for step := 0; step < maxRequestsPerTurn; step++ {
		if c.line.overWindow() {
			if err := c.compact(ctx, turnID, sink, CompactWindow); err != nil {
				if ctx.Err() != nil {
					return StopCancelled, nil
				}
				return "", err
			}
		}
		r, err := c.request(ctx, turnID, sink)
		if err != nil {
			if ctx.Err() != nil {
				return StopCancelled, nil
			}
			return "", err
		}
		if stop, err := c.act(ctx, turnID, r, sink); stop != "" || err != nil {
			if stop == StopEndTurn && err == nil && !c.line.steer.closeUnless(c.tr.Steering().Steered) {
				continue // the user steered after the model answered: it answers that too
			}
			return stop, err
		}
	}
	return StopMaxTurnRequests, nil
}

// act runs the tools a response called, or says why the turn ends there
// (stop is "" when the loop goes on). The output is in the store, or staged
// with the reads' outputs when it only calls reads (reply.staged).
func (c *Conversation) act(ctx context.Context, turnID int64, r *reply, sink Sink) (StopReason, error) {
	var calls []ToolCall
	for _, it := range r.output {
		if call, ok := readItem(it).call(); ok {
			calls = append(calls, call)
		}
	}
	defer r.early.stop()
	if len(calls) > 0 {
		return c.box.runTools(ctx, turnID, calls, sink, r.staged, r.early)
	}
	if r.unanswered {
		return "", nil
	}
	switch r.incomplete {
	case "":
		return StopEndTurn, nil
	case "content_filter":
		return StopRefusal, nil
	default:
		return StopMaxTokens, nil
	}
}
