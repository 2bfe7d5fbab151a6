package sim

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// Cost is the simulated latency model. The zero value is free (every delay is zero), which is
// what tests want; benchmarks set it so that the transports' differences show up in time.
//
// A create costs, in order: PerRequest + PerInputKB × (KB of input the server must process)
// from the request's arrival (its parsing is part of it) to response.created, then FirstToken
// before the first output item, then one text or argument delta every 1/TokensPerSecond. The input the server must process is the request's
// own `input` field: for a chained request (previous_response_id) that is only the new items,
// for a full request it is the whole transcript — which is why incremental mode is faster.
// Handshake is paid once per WebSocket upgrade; HTTP requests pay no handshake (keep-alive).
type Cost struct {
	Handshake       time.Duration // delay before a WebSocket upgrade completes
	PerRequest      time.Duration // fixed overhead of every create (WebSocket or HTTP)
	PerInputKB      time.Duration // processing time per 1024 bytes of request input
	FirstToken      time.Duration // delay between response.in_progress and the first output item
	TokensPerSecond float64       // pace of text/argument deltas; 0 = no pacing
	// Precise ends each wait on time rather than when a timer fires: the
	// last preciseTail of it spins (yielding). An idle process's timers fire
	// up to a millisecond late here, and the last wait of a response makes
	// its answer that late, which a benchmark would count against the
	// client. It costs a core's time during output, so only benchmarks
	// that compare against the cost model (hearth bench) set it.
	Precise bool
}

// ReferenceCost is the cost model hearth's benchmarks default to (hearth
// bench, bench/peer.sh): the one issue 13 measured hearth and Codex CLI
// under — a 40 ms round trip, 30 ms of server time per request, 8 ms per
// 1,000 fresh input tokens (about 2 ms per KiB), 150 ms to the first token,
// 1,000 tokens/s. The simulator has no separate round-trip time: one RTT is
// folded into PerRequest and three (TCP, TLS, the upgrade) into Handshake.
// Illustrative, not a measurement of OpenAI's API.
func ReferenceCost() Cost {
	return Cost{Handshake: 120 * time.Millisecond, PerRequest: 70 * time.Millisecond,
		PerInputKB: 2 * time.Millisecond, FirstToken: 150 * time.Millisecond, TokensPerSecond: 1000}
}

// preciseTail is how much of a Precise wait spins.
const preciseTail = 1500 * time.Microsecond

// ProcessDelay is the time the server spends on a request carrying inputBytes of input before
// it answers with response.created. Received.ProcessDelay records it for every create.
func (c Cost) ProcessDelay(inputBytes int) time.Duration {
	return c.PerRequest + time.Duration(int64(c.PerInputKB)*int64(inputBytes)/1024)
}

// tokenGap is the pause between two consecutive deltas.
func (c Cost) tokenGap() time.Duration {
	if c.TokensPerSecond <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / c.TokensPerSecond)
}

// String prints the parameters in one line, for benchmarks to show next to their figures.
func (c Cost) String() string {
	s := fmt.Sprintf("handshake=%s per_request=%s per_input_kb=%s first_token=%s tokens_per_second=%g",
		c.Handshake, c.PerRequest, c.PerInputKB, c.FirstToken, c.TokensPerSecond)
	if c.Precise {
		s += " precise"
	}
	return s
}

// pacer keeps one response to its cost model's schedule: every wait lasts
// until an absolute time, the previous one's plus d, so a timer that fires
// late (a loaded machine) shortens the next wait instead of delaying
// everything after it. Without it the lateness of a response's hundreds of
// token gaps added up to milliseconds the client was then measured by. A
// pacer lives as long as its response.
type pacer struct {
	due     time.Time
	precise bool // Cost.Precise
}

// newPacer starts a schedule at start: when the request arrived, so that
// the server's own parsing and bookkeeping are part of the processing time
// the cost model charges, as they are on a real server, not time added to it.
func newPacer(c Cost, start time.Time) *pacer { return &pacer{due: start, precise: c.Precise} }

// catchUp moves a schedule that has fallen behind to now: the next wait
// then lasts its whole d.
func (p *pacer) catchUp() {
	if now := time.Now(); p.due.Before(now) {
		p.due = now
	}
}

// wait blocks until d after the schedule's previous point.
func (p *pacer) wait(ctx context.Context, d time.Duration) error {
	if d > 0 {
		p.due = p.due.Add(d)
	}
	if !p.precise {
		return wait(ctx, time.Until(p.due))
	}
	if err := wait(ctx, time.Until(p.due)-preciseTail); err != nil {
		return err
	}
	for time.Now().Before(p.due) {
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
	}
	return nil
}

// wait blocks for d of simulated latency, returning early with ctx's error when the request's
// connection closes or the server shuts down.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
