package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
		if c.baselineLost() {
			c.warmUp(true)
		}
	}()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return "", ErrClosed
	}

	started := time.Now()
	// Recorded even when ctx is already cancelled: a cancelled turn is
	// still a turn the user asked for.
	turn, err := c.db.BeginTurn(context.WithoutCancel(ctx), c.id)
	if err != nil {
		return "", fmt.Errorf("begin turn: %w", err)
	}
	c.client.streaming.Add(1)
	stop, err := c.run(ctx, turn.ID, input, sink)
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
	ectx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if eerr := c.db.EndTurn(ectx, turn.ID, status, string(stop), msg); eerr != nil && err == nil {
		err = fmt.Errorf("end turn: %w", eerr)
	}
	return stop, err
}

func (c *Conversation) run(ctx context.Context, turnID int64, input []json.RawMessage, sink Sink) (StopReason, error) {
	c.awaitWarmup(ctx)
	// A tool output that failed to commit in an earlier turn would make
	// every request invalid: answer such calls first.
	c.mu.Lock()
	broken := c.unanswered
	c.mu.Unlock()
	if broken {
		if err := c.repair(context.WithoutCancel(ctx), turnID); err != nil {
			return "", err
		}
		c.mu.Lock()
		c.unanswered = false
		c.mu.Unlock()
	}
	var user []store.NewItem
	for _, it := range input {
		user = append(user, store.NewItem{Origin: store.OriginInput, Data: it})
	}
	// The user's message is kept even if the turn is cancelled before any
	// request: it shows in the history and goes out with the next one.
	if err := c.commit(context.WithoutCancel(ctx), turnID, user); err != nil {
		return "", err
	}
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	for step := 0; step < maxRequestsPerTurn; step++ {
		r, err := c.request(ctx, turnID, sink)
		if err != nil {
			if ctx.Err() != nil {
				return StopCancelled, nil
			}
			return "", err
		}
		// The output is in the store already (exchange commits it with the
		// request's end).
		var calls []ToolCall
		for _, it := range r.output {
			if h := readItem(it); h.Type == "function_call" {
				calls = append(calls, ToolCall{CallID: h.CallID, Name: h.Name, Arguments: h.Arguments})
			}
		}
		if len(calls) == 0 {
			switch r.incomplete {
			case "":
				return StopEndTurn, nil
			case "content_filter":
				return StopRefusal, nil
			default:
				return StopMaxTokens, nil
			}
		}
		if stop, err := c.runTools(ctx, turnID, calls, sink); stop != "" || err != nil {
			return stop, err
		}
	}
	return StopMaxTurnRequests, nil
}

// runTools runs the calls of one response in order and commits each output
// as soon as it exists. After cancellation the remaining calls are answered
// as cancelled (not run), so the transcript stays valid for the next turn.
func (c *Conversation) runTools(ctx context.Context, turnID int64, calls []ToolCall, sink Sink) (StopReason, error) {
	for _, call := range calls {
		var res ToolResult
		if ctx.Err() != nil {
			res = ToolResult{Output: "error: cancelled by the user before this tool ran", IsError: true}
		} else {
			if sink != nil {
				sink.ToolCall(call, "in_progress", nil)
			}
			if c.tools == nil {
				res = ToolResult{Output: fmt.Sprintf("error: no tool named %q is available", call.Name), IsError: true}
			} else {
				res = c.tools.Run(ctx, call)
			}
		}
		item := store.NewItem{Origin: store.OriginInput, Data: functionCallOutput(call.CallID, res.Output, res.Images...), View: res.view()}
		if err := c.commit(context.WithoutCancel(ctx), turnID, []store.NewItem{item}); err != nil {
			c.mu.Lock()
			c.unanswered = true // the next turn answers the calls left without output
			c.mu.Unlock()
			return "", err
		}
		if sink != nil {
			status := "completed"
			if res.IsError {
				status = "failed"
			}
			sink.ToolCall(call, status, &res)
		}
	}
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	return "", nil
}
