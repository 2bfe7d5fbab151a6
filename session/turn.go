package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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
		if c.baselineLost() {
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
	turn, err := c.db.BeginTurn(context.WithoutCancel(ctx), c.id)
	if err != nil {
		return "", storeErr(fmt.Errorf("begin turn: %w", err))
	}
	c.client.streaming.Add(1)
	stop, err := body(turn.ID)
	if ferr := c.flushPending(context.WithoutCancel(ctx), turn.ID); ferr != nil && err == nil {
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
	if eerr := c.db.EndTurn(context.WithoutCancel(ctx), turn.ID, status, string(stop), msg); eerr != nil && err == nil {
		err = storeErr(fmt.Errorf("end turn: %w", eerr))
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
	// Committed at once, before any request: what the user typed survives
	// a daemon killed before the request goes out, and shows in the
	// history even if the turn is cancelled.
	c.mu.Lock()
	c.turnStart = len(c.transcript) + len(c.pending)
	c.mu.Unlock()
	c.stage(user)
	if err := c.flushPending(context.WithoutCancel(ctx), turnID); err != nil {
		return "", err
	}
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	compacted := false // at most once a turn: a view still past the threshold must not compact on every request
	for step := 0; step < maxRequestsPerTurn; step++ {
		if !compacted && c.overWindow() {
			compacted = true
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
		if h := readItem(it); h.Type == "function_call" {
			calls = append(calls, ToolCall{CallID: h.CallID, Name: h.Name, Arguments: h.Arguments})
		}
	}
	defer r.early.stop()
	if len(calls) > 0 {
		return c.runTools(ctx, turnID, calls, sink, r.staged, r.early)
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

// maxConcurrentTools bounds the read-only calls of one response that run
// at once.
const maxConcurrentTools = 8

// slowReads is how long reads whose calls are only staged run before the
// calls are stored anyway, so that the editor can show them running.
const slowReads = 50 * time.Millisecond

// runTools runs the calls of one response and stages each output, in call
// order: a read's for the next request (or the end of the turn), to be
// committed with its row; any other call's is committed at once. Consecutive calls
// to tools that may run concurrently (ConcurrentTools: reads) run side by
// side; the others run one at a time, in order, with their permission flow.
// After cancellation the remaining calls are answered as cancelled (not
// run), so the transcript stays valid for the next turn. staged says the
// calls themselves are staged, not stored (reply.staged: they are all
// reads): the editor then hears they ran, and finished, once the next
// request has stored them.
// early holds the reads that started while the response arrived: their
// results are used rather than running them again.
func (c *Conversation) runTools(ctx context.Context, turnID int64, calls []ToolCall, sink Sink, staged bool, early *earlyReads) (StopReason, error) {
	run := func(call ToolCall) ToolResult {
		if r := early.take(call); r != nil {
			<-r.done
			return r.res
		}
		return c.runTool(ctx, call)
	}
	conc, _ := c.tools.(ConcurrentTools)
	for i := 0; i < len(calls); {
		j := i + 1
		if conc != nil && ctx.Err() == nil && conc.Concurrent(calls[i].Name) {
			for j < len(calls) && j-i < maxConcurrentTools && conc.Concurrent(calls[j].Name) {
				j++
			}
		}
		group := calls[i:j]
		reads := conc != nil && conc.Concurrent(group[0].Name)
		results := make([]ToolResult, len(group))
		if ctx.Err() != nil {
			for k := range group {
				results[k] = ToolResult{Output: "error: cancelled by the user before this tool ran", IsError: true}
			}
		} else {
			// The editor hears a call runs once the call is stored.
			for _, call := range group {
				if sink != nil && !staged {
					sink.ToolCall(call, "in_progress", nil)
				}
			}
			switch {
			case early.finished(group):
				for k, call := range group {
					results[k] = run(call)
				}
			case len(group) == 1 && !staged:
				results[0] = run(group[0])
			default:
				done := make(chan struct{})
				var wg sync.WaitGroup
				for k, call := range group {
					wg.Add(1)
					go func() {
						defer wg.Done()
						results[k] = run(call)
					}()
				}
				go func() {
					wg.Wait()
					close(done)
				}()
				if staged {
					// Reads that take long (a grep of a large tree) are
					// shown running: what is staged is stored now, at the
					// cost of a commit more in this round trip.
					t := time.NewTimer(slowReads)
					select {
					case <-done:
					case <-t.C:
						err := c.flushPending(context.WithoutCancel(ctx), turnID)
						if err != nil {
							<-done
							return "", err
						}
						staged = false
						for _, call := range group {
							if sink != nil {
								sink.ToolCall(call, "in_progress", nil)
							}
						}
					}
					t.Stop()
				}
				<-done
			}
		}
		for k, call := range group {
			res := &results[k]
			item := store.NewItem{Origin: store.OriginInput, Data: functionCallOutput(call.CallID, res.Output, res.Images...), View: res.view()}
			var seen []store.SeenWrite
			if res.Seen != nil {
				seen = append(seen, *res.Seen)
			}
			// The editor hears that the call finished once its output is
			// stored: with the next request for a read, at once otherwise.
			staged := staged // as it is now: a slow group after this one may store the calls early
			c.stageThen([]store.NewItem{item}, seen, func(stored bool) {
				if sink == nil {
					return
				}
				status := "completed"
				if res.IsError || !stored {
					status = "failed"
				}
				if staged && stored {
					sink.ToolCall(call, "in_progress", nil) // the call is stored now, with its output
				}
				sink.ToolCall(call, status, res)
			})
			if !reads {
				// A call that may have changed something is committed at
				// once: a daemon killed before the next request must not
				// forget that it ran.
				if err := c.flushPending(context.WithoutCancel(ctx), turnID); err != nil {
					return "", err
				}
			}
		}
		i = j
	}
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	return "", nil
}

func (c *Conversation) runTool(ctx context.Context, call ToolCall) ToolResult {
	if c.tools == nil {
		return ToolResult{Output: fmt.Sprintf("error: no tool named %q is available", call.Name), IsError: true}
	}
	return c.tools.Run(ctx, call)
}
