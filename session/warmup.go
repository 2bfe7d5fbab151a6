package session

import (
	"context"
	"errors"
	"time"

	"github.com/hearthd/hearth/session/responses"
)

// warmup is a generate:false request in flight or done. Created by Warm,
// owned by the conversation (its goroutine is in Conversation.wg); the
// first turn consumes it.
type warmup struct {
	started  time.Time
	deadline time.Duration // its total deadline, which the first turn's wait shares
	done     chan struct{} // closed when the request ended
	err      error         // set before done is closed
	cancel   context.CancelFunc
}

// Warm sends, in the background, the conversation's real instructions,
// tools and transcript with generate:false, so that the next prompt goes
// out as previous_response_id plus the user's message only. It returns at
// once; a warm-up already running is not repeated, and none is sent while
// the server holds the conversation's baseline (a fork's, continued from
// its parent's response).
func (c *Conversation) Warm() {
	if c.line.holds() {
		return
	}
	c.warmUp(false)
}

// rewarm rebuilds the server's baseline after the connection was lost, in
// the background, unless a turn is running (its next request is full
// anyway, and the turn's end re-warms).
func (c *Conversation) rewarm() {
	select {
	case c.turn <- struct{}{}:
		<-c.turn
	default:
		return // the turn's end re-warms
	}
	c.warmUp(true)
}

func (c *Conversation) warmUp(again bool) {
	if c.client.api.HTTPMode() {
		return // nothing to warm when every request is full
	}
	if w := c.Config().ContextWindow; w > 0 && c.line.nextInput() > w {
		// It would be refused for its length: the next turn compacts first.
		c.log.Info("not warming a view past the model's window", "window", w)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if w := c.warm; w != nil {
		select {
		case <-w.done:
		default:
			return
		}
	}
	deadline := warmupDeadline(c.Config(), c.tr.View().Bytes())
	ctx, cancel := context.WithTimeout(c.ctx, deadline)
	w := &warmup{started: time.Now(), deadline: deadline, done: make(chan struct{}), cancel: cancel}
	c.warm = w
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		gauge := &c.client.warming
		if again {
			gauge = &c.client.rewarming
		}
		gauge.Add(1)
		_, err := c.exchange(ctx, 0, false, nil)
		if err != nil && judge(err).Action == responses.Rewarm {
			_, err = c.exchange(ctx, 0, false, nil) // once more, on a connection of its own
		}
		gauge.Add(-1)
		if err != nil && !errors.Is(err, errNoWarmupOverHTTP) {
			c.log.Info("warm-up failed; the next turn goes without it", "err", err, "rewarm", again)
		}
		w.err = err
		close(w.done)
	}()
}

// awaitWarmup waits for a running warm-up within what is left of its total
// deadline (never a second full timeout). On timeout or cancellation it
// aborts the warm-up; either way the turn proceeds.
func (c *Conversation) awaitWarmup(ctx context.Context) {
	c.mu.Lock()
	w := c.warm
	c.mu.Unlock()
	if w == nil {
		return
	}
	remaining := w.deadline - time.Since(w.started)
	if remaining < 0 {
		remaining = 0
	}
	t := time.NewTimer(remaining)
	defer t.Stop()
	select {
	case <-w.done:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	w.cancel()
	<-w.done
}

// WarmupDone returns a channel closed when the latest warm-up has ended,
// and its error; nil channel when none was started. Tests and status use it.
func (c *Conversation) WarmupDone() (<-chan struct{}, func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warm == nil {
		return nil, func() error { return nil }
	}
	w := c.warm
	return w.done, func() error { <-w.done; return w.err }
}

// warmupBytesPerSecond is how much transcript a warm-up's deadline allows
// per second beyond HEARTH_WARMUP_TIMEOUT: a re-warm must upload and the
// server process the whole transcript, and one cancelled half-way is paid
// twice (the next prompt resends everything in full). 32 KiB/s is ten
// times slower than a server charging 3 ms per KiB.
const warmupBytesPerSecond = 32 << 10

// warmupDeadline is the total deadline of a warm-up of a transcript of n
// bytes (as stored: close enough to their replay forms):
// HEARTH_WARMUP_TIMEOUT, plus time in proportion to the transcript's size.
func warmupDeadline(cfg Config, n int) time.Duration {
	return cfg.WarmupTimeout + time.Duration(n)*time.Second/warmupBytesPerSecond
}
